"""Benchmark: Elo-MMR through SQL (``elo_mmr_replay``), against the PyPI ``elommr`` package.

Targets (issue "Elo-MMR for ranked contests with many players"):
* 100 contests x 500 players (pool 2,000) in at most 3 s, and at least 30x ``elommr`` on the same data
  in the same run (``elommr`` with its defaults; duckrate with the matching β = 80√6, γ = 80√0.2);
* a Codeforces-sized history, 1,000 contests x 3,000 players from a pool of 300,000, in at most 60 s.

Timed: the SQL macro over a DuckDB table (median of ``--repeats``; numba kernels compiled beforehand),
and ``elommr``'s ``round_update`` over the same contests (one run: it is slow). Data comes from
``duckrate.synthetic.generate_contests`` and is cached under ``bench/.data/`` (the 300k pool takes ~30 s
to generate). Usage (from the repository root)::

    .venv/bin/python bench/elo_mmr.py
    .venv/bin/python bench/elo_mmr.py --skip-large
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DATA_DIR, machine_lines

ELOMMR_PARAMS = f"beta := {80 * math.sqrt(6)}, drift := {80 * math.sqrt(0.2)}"


def contests(n_contests: int, per_contest: int, pool: int):
    import polars as pl

    from duckrate.synthetic import generate_contests

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = DATA_DIR / f"contests_{n_contests}_{per_contest}_{pool}.parquet"
    if not path.exists():
        generate_contests(n_contests, per_contest, pool, seed=2020).write_parquet(path)
    return pl.read_parquet(path)


def time_sql(frame, params: str, repeats: int) -> tuple[float, object]:
    import duckdb

    import duckrate

    con = duckdb.connect()
    duckrate.register(con)
    con.register("frame", frame)
    con.execute("CREATE TABLE results AS SELECT * FROM frame")
    call = f"SELECT * FROM elo_mmr_replay('results'{', ' + params if params else ''})"
    con.execute(f"SELECT count(*) FROM ({call})").fetchall()  # compile / load the kernels
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = con.execute(f"CREATE OR REPLACE TABLE replay AS {call}")
        times.append(time.perf_counter() - start)
    out = con.sql("SELECT * FROM replay").pl()
    con.close()
    return statistics.median(times), out


def time_elommr(frame) -> tuple[float, dict]:
    import elommr

    system = elommr.EloMMR()
    players, ratings = {}, {}
    groups = list(frame.sort("contest_id", "rank").group_by(["contest_id"], maintain_order=True))
    start = time.perf_counter()
    for (_contest,), group in groups:
        ranks, names = group["rank"].to_list(), group["player"].to_list()
        tied = {}
        for r in ranks:
            tied[r] = tied.get(r, 0) + 1
        standings = [
            (players.setdefault(name, elommr.Player()), r - 1, r - 2 + tied[r]) for name, r in zip(names, ranks)
        ]
        system.round_update(standings, contest_time=group["played_at"][0].timestamp())
    elapsed = time.perf_counter() - start
    for name, player in players.items():
        ratings[name] = player.approx_posterior.mu
    return elapsed, ratings


def main() -> int:
    import polars as pl

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    print("\n".join(machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "pyarrow", "elommr"))))

    small = contests(100, 500, 2000)
    ours, replay = time_sql(small, ELOMMR_PARAMS + ", history_tolerance := 0.0", args.repeats)
    peer, peer_ratings = time_elommr(small)
    last = (
        replay.sort("seq")
        .group_by("player", maintain_order=True)
        .agg(pl.col("rating_after").last().alias("replay_rating"))
    )
    worst = max(abs(row["replay_rating"] - peer_ratings[row["player"]]) for row in last.iter_rows(named=True))
    print(
        f"\n100 contests x 500 players ({small.height:,} rows): duckrate {ours:.3f} s "
        f"({small.height / ours:,.0f} rows/s; target <= 3 s), elommr {peer:.1f} s, ratio {peer / ours:,.0f}x "
        f"(target >= 30x); max |rating difference| {worst:.2e}"
    )
    if not args.skip_large:
        start = time.perf_counter()
        large = contests(1000, 3000, 300_000)
        print(f"\nCodeforces-sized data ready in {time.perf_counter() - start:.1f} s")
        for label, params in (("defaults", ""),):
            seconds, _ = time_sql(large, params, 1)
            print(
                f"1,000 contests x 3,000 players from 300k ({large.height:,} rows), {label}: {seconds:.1f} s "
                f"({large.height / seconds:,.0f} rows/s; target <= 60 s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
