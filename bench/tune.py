"""Benchmark: tuning (``tune``), against the loop a user would write without it.

Targets (issue "Answer the user's real question"): a 20-point Elo grid over 1M matches in at most 10 s, and
every default grid of the demo's systems over the demo data in at most 60 s, on this 2-core machine.

Cases, each in a fresh child process (its peak RSS is its own):

- ``elo_1m``: ``SELECT * FROM tune('elo', 'src.main.matches', grid := {'k': [20 values]})`` over the cached
  1M-match file (50k players), after a warm-up on 10k rows; beside it, in the same child, the loop it replaces:
  for each K, ``duckrate.elo(frame, k=K)`` and ``duckrate.calibration_summary`` on the holdout part (the
  same numbers; checked equal to 1e-12), timed serially;
- ``demo``: ``tune(system, ...)`` with each system's default grid (and the demo's fixed parameters) for every
  two-player system of the demo, over the demo seed's valid matches (30k), one query per system.

Usage (from the repository root)::

    .venv/bin/python bench/tune.py
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

GRID_K = [4.0 + 3.0 * i for i in range(20)]
DEMO_SYSTEMS = ("elo", "glicko", "glicko2", "trueskill", "chance", "elo2k", "pairwise")
DEMO_FIXED = {"elo": {"k": 20, "advantage": 35}, "glicko": {"period_length": 0.25}, "glicko2": {"period_length": 0.25}}
DEMO_MATCHES_SQL = """
SELECT game_id AS match_id, try_strptime(played_at, '%Y-%m-%d %H:%M:%S') AS played_at, white AS player_a,
       black AS player_b,
       CASE result WHEN '1-0' THEN 1.0 WHEN '1/2-1/2' THEN 0.5 WHEN '0-1' THEN 0.0 END AS score_a, league
FROM read_csv('seeds/demo_matches.csv', all_varchar := true)
"""


def child_elo_1m() -> None:
    import json

    import polars as pl

    import duckrate

    data = common.matches_file("elo_1000000", 1_000_000, 50_000, seed=0)
    con = common.benchmark_connection(data)
    con.execute("CREATE TABLE warm AS SELECT * FROM src.main.matches LIMIT 10000")
    con.execute("SELECT count(*) FROM tune('elo', 'warm', grid := {'k': [16.0, 32.0]})").fetchall()
    baseline = common.rss_bytes()
    common.reset_hwm()
    grid = "{'k': [" + ", ".join(str(k) for k in GRID_K) + "]}"
    started = time.perf_counter()
    table = con.sql(f"SELECT * FROM tune('elo', 'src.main.matches', grid := {grid})").pl()
    seconds = time.perf_counter() - started
    peak = common.hwm_bytes() or common.maxrss_bytes()
    frame = con.sql("SELECT * FROM src.main.matches").pl()
    started = time.perf_counter()
    loop = []
    for k in GRID_K:
        replay = duckrate.elo(frame, k=k)
        held_out = replay.filter(pl.col("seq") > math.floor(0.1 * replay.height)).with_columns(system=pl.lit("elo"))
        loop.append(duckrate.calibration_summary(held_out)["log_loss"][0])
    loop_seconds = time.perf_counter() - started
    ours = [table.filter(pl.col("params") == json.dumps({"k": k}))["log_loss"][0] for k in GRID_K]
    worst = max(abs(a - b) for a, b in zip(ours, loop))
    common.emit_result(
        {
            "seconds": seconds,
            "loop_seconds": loop_seconds,
            "rows": 1_000_000 * len(GRID_K),
            "peak_gb": (peak - baseline) / 1e9,
            "worst": worst,
        }
    )


def child_demo() -> None:
    import duckdb

    import duckrate

    con = duckdb.connect()
    duckrate.register(con)
    con.execute(
        f"CREATE TABLE m AS SELECT * FROM ({DEMO_MATCHES_SQL}) WHERE played_at IS NOT NULL AND score_a IS NOT NULL "
        "AND player_a IS NOT NULL AND player_b IS NOT NULL AND player_a <> player_b AND match_id IS NOT NULL "
        "QUALIFY count(*) OVER (PARTITION BY match_id) = 1"  # the seed's deliberately bad rows, as staging drops them
    )
    con.execute("CREATE TABLE warm AS SELECT * FROM m LIMIT 500")
    for system in DEMO_SYSTEMS:  # compile outside the timing
        con.execute(f"SELECT count(*) FROM tune('{system}', 'warm', grid := NULL)").fetchall()
    rows = con.execute("SELECT count(*) FROM m").fetchone()[0]
    common.reset_hwm()
    baseline = common.rss_bytes()
    per_system = {}
    started = time.perf_counter()
    for system in DEMO_SYSTEMS:
        fixed = DEMO_FIXED.get(system)
        fixed_sql = "NULL" if fixed is None else "{" + ", ".join(f"'{k}': {v}" for k, v in fixed.items()) + "}"
        begun = time.perf_counter()
        sets = con.execute(f"SELECT count(*) FROM tune('{system}', 'm', fixed := {fixed_sql})").fetchone()[0]
        per_system[system] = (time.perf_counter() - begun, sets)
    seconds = time.perf_counter() - started
    peak = common.hwm_bytes() or common.maxrss_bytes()
    common.emit_result({"seconds": seconds, "rows": rows, "per_system": per_system, "peak_gb": (peak - baseline) / 1e9})


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=("elo_1m", "demo"))
    args = parser.parse_args(argv)
    if args.child == "elo_1m":
        child_elo_1m()
        return 0
    if args.child == "demo":
        child_demo()
        return 0
    print("\n".join(common.machine_lines(("duckrate", "duckdb", "numba", "numpy", "polars"))))
    elo = common.run_child([__file__, "--child", "elo_1m"])
    demo = common.run_child([__file__, "--child", "demo"])
    rows = [
        [
            "20-point Elo grid, 1M matches",
            f"{elo['seconds']:.2f}",
            f"{elo['rows'] / elo['seconds'] / 1e6:.1f}M",
            f"{elo['peak_gb']:.2f}",
            f"{elo['loop_seconds']:.2f}",
            f"{elo['loop_seconds'] / elo['seconds']:.1f}x",
            f"{elo['worst']:.1e}",
            "yes" if elo["seconds"] <= 10 else "no",
        ],
        [
            f"default grids of {len(DEMO_SYSTEMS)} systems, demo ({demo['rows']:,} matches)",
            f"{demo['seconds']:.2f}",
            "",
            f"{demo['peak_gb']:.2f}",
            "",
            "",
            "",
            "yes" if demo["seconds"] <= 60 else "no",
        ],
    ]
    headers = ["case", "s, tune", "match-replays/s", "peak GB", "s, loop of replays", "loop / tune", "max diff", "met"]
    print(common.format_table(headers, rows))
    print(
        "demo, per system (s, parameter sets x leagues): "
        + ", ".join(f"{name} {s:.2f} ({n})" for name, (s, n) in demo["per_system"].items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
