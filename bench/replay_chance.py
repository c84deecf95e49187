"""Benchmark: the luck-aware grid system (``chance_replay``) through SQL, fast path against the naive one.

Targets (issue "The luck-aware grid system for games of chance"): at least 20,000 matches/s over 1M
matches among 50k players and at least 2,000 matches/s among 30 players (dense play), each against the
naive O(n²) algorithm on the same data in the same run; memory per player under 10 KB. The paper's
production figure is about 170 matches/s per vCPU (Duelyst II, FFT).

Two cases, each in a fresh child process (so its peak RSS is its own):

- ``sparse``: the Elo benchmark's cached file ``bench/.data/elo_<n>.duckdb`` (50k players, one league,
  ``generate_matches(n, 50000, seed=20240101)``, ~21% draws);
- ``dense``: ``bench/.data/chance_dense_<n>.duckdb``, ``generate_matches(n, 30, seed=20240101)``.

In each child: attach the file read-only, register duckrate, warm up on 10k rows (kernels, the luck
matrix's factorisation), then time

1. ``CREATE OR REPLACE TABLE r AS SELECT * FROM chance_replay('src.main.matches')`` (default parameters:
   ``algorithm := 'fast'``) over the whole table, ``--repeats`` times (median);
2. the same statement over the first ``--naive-sample`` matches in replay order (a table ``sample``) with
   ``algorithm := 'fast'`` and with ``algorithm := 'naive'``, same run;
3. check that both algorithms give the same final ratings and sds on the sample (tolerance 1e-9 points).

The ratio reported is fast matches/s (whole table) over naive matches/s (sample); the sample's fast rate
is printed too. Memory: the state is one float64 vector per player (8 bytes x grid points); the child's
peak RSS and its growth during the replay are printed beside it.

Usage (from the repository root)::

    .venv/bin/python bench/replay_chance.py                 # 1M sparse, 200k dense, 3 repeats
    .venv/bin/python bench/replay_chance.py --quick         # 1M sparse, 50k dense, 1 repeat, smaller naive samples
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

SEED = 20_240_101
WARMUP_ROWS = 10_000
TOLERANCE = 1e-9  # display points, fast against naive on the sample
TARGETS = {"sparse": 20_000.0, "dense": 2_000.0}  # matches/s
MEMORY_TARGET_BYTES = 10_000
PLAYERS = {"sparse": 50_000, "dense": 30}

FINAL_SQL = """
WITH r AS (SELECT * FROM chance_replay('sample', algorithm := '{algorithm}')),
sides AS (
    SELECT player_a AS player, seq, rating_a_after AS rating, sd_a_after AS sd FROM r
    UNION ALL
    SELECT player_b AS player, seq, rating_b_after AS rating, sd_b_after AS sd FROM r
)
SELECT player, arg_max(rating, seq), arg_max(sd, seq) FROM sides GROUP BY player
"""


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Child: one case, fresh process
# --------------------------------------------------------------------------------------------


def _time(con, table: str, algorithm: str, repeats: int, expected_rows: int) -> list[float]:
    return common.time_replay(con, f"chance_replay('{table}', algorithm := '{algorithm}')", repeats, expected_rows)


def run_child(args) -> int:
    from duckrate.systems.chance.grid import grid
    from duckrate.systems.chance.lowrank import factors
    from duckrate.systems.chance.replay import CHANCE

    con = common.benchmark_connection(args.data)
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchone()[0]
    players = con.execute(
        "SELECT count(*) FROM (SELECT player_a FROM src.main.matches UNION SELECT player_b FROM src.main.matches)"
    ).fetchone()[0]
    draws = con.execute("SELECT avg((score_a = 0.5)::DOUBLE) FROM src.main.matches").fetchone()[0]

    con.execute(f"CREATE TABLE warm AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {WARMUP_ROWS}")
    _time(con, "warm", "fast", 1, min(WARMUP_ROWS, n))
    con.execute("CREATE TABLE warm_small AS SELECT * FROM warm LIMIT 100")  # compiles the naive kernels
    _time(con, "warm_small", "naive", 1, min(100, n))
    con.execute("DROP TABLE warm")
    con.execute("DROP TABLE warm_small")
    rss_before = common.rss_bytes()
    common.reset_hwm()

    whole = _time(con, "src.main.matches", "fast", args.repeats, n)
    hwm = common.hwm_bytes()
    peak = max(common.maxrss_bytes(), hwm or 0)

    sample = min(args.naive_sample, n)
    con.execute(f"CREATE TABLE sample AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {sample}")
    fast_sample = _time(con, "sample", "fast", args.repeats, sample)
    naive_sample = _time(con, "sample", "naive", args.naive_repeats, sample)
    final = {}
    for algorithm in ("fast", "naive"):
        final[algorithm] = {p: (r, s) for p, r, s in con.execute(FINAL_SQL.format(algorithm=algorithm)).fetchall()}
    common_players = set(final["fast"]) & set(final["naive"])
    diffs = [
        max(abs(final["fast"][p][0] - final["naive"][p][0]), abs(final["fast"][p][1] - final["naive"][p][1]))
        for p in common_players
    ]
    defaults = CHANCE.defaults
    rank = factors(0, defaults["beta"], 1.0, defaults["grid_points"], defaults["grid_max"])[2]
    rank_draw = factors(0, defaults["beta"], 0.5, defaults["grid_points"], defaults["grid_max"])[2]
    common.emit_result(
        {
            "n": n,
            "players": players,
            "draws": draws,
            "whole": whole,
            "sample": sample,
            "fast_sample": fast_sample,
            "naive_sample": naive_sample,
            "rss_before": rss_before,
            "hwm": hwm,
            "peak": peak,
            "state_bytes": 8 * len(grid(defaults["grid_points"], defaults["grid_max"])),
            "rank": rank,
            "rank_draw": rank_draw,
            "players_compared": len(common_players),
            "players_mismatched": len(set(final["fast"]) ^ set(final["naive"])),
            "max_diff": max(diffs, default=0.0),
        }
    )
    return 0


# --------------------------------------------------------------------------------------------
# Parent: data, one child per case, report
# --------------------------------------------------------------------------------------------


def _report(results: dict, args) -> bool:
    headers = [
        "case",
        "players",
        "matches",
        "fast matches/s",
        "s (median)",
        "naive sample",
        "naive matches/s",
        "fast on sample",
        "ratio",
        "peak RSS GB",
        "target",
        "met",
    ]
    rows, ok = [], True
    for case, result in results.items():
        n, sample = result["n"], result["sample"]
        rate = n / common.median(result["whole"])
        naive_rate = sample / common.median(result["naive_sample"])
        fast_sample_rate = sample / common.median(result["fast_sample"])
        met = rate >= TARGETS[case]
        rows.append(
            [
                case,
                f"{result['players']:,}",
                common.human_count(n),
                f"{rate:,.0f}",
                f"{common.median(result['whole']):.2f}",
                common.human_count(sample),
                f"{naive_rate:,.0f}",
                f"{fast_sample_rate:,.0f}",
                f"{rate / naive_rate:.0f}x",
                f"{result['peak'] / common.GB:.2f}",
                f">= {TARGETS[case]:,.0f}/s",
                "yes" if met else "NO",
            ]
        )
        ok &= result["players_mismatched"] == 0 and result["max_diff"] <= TOLERANCE
    print()
    print(common.format_table(headers, rows))
    print()
    first = next(iter(results.values()))
    state = first["state_bytes"]
    print(
        f"memory per player: one float64 vector of {state // 8:,} grid points = {state:,} bytes "
        f"(target < {MEMORY_TARGET_BYTES:,}: {'yes' if state < MEMORY_TARGET_BYTES else 'NO'}); "
        f"50k players: {50_000 * state / 1e6:.0f} MB of state."
    )
    for case, result in results.items():
        growth = (result["hwm"] or result["peak"]) - result["rss_before"]
        print(
            f"{case}: RSS before the timed runs {result['rss_before'] / common.GB:.2f} GB, peak while replaying "
            f"{(result['hwm'] or result['peak']) / common.GB:.2f} GB: +{growth / 1e6:,.0f} MB for "
            f"{result['players']:,} players and {result['n']:,} output rows "
            f"({growth / result['players']:,.0f} bytes per player, output included)"
        )
    print()
    print(
        f"chance_replay, default parameters (beta 0.8, prior_sd 0.7, drift_sd 0.03, 1001 grid points, M = 7, "
        f"logistic, gaussian); generate_matches(n, players, seed={SEED}), one league."
    )
    print(
        "fast: CREATE OR REPLACE TABLE r AS SELECT * FROM chance_replay('<table>', algorithm := 'fast') "
        f"(in-memory connection, data ATTACHed read-only; reading, validating, sorting and writing all timed), "
        f"median of {args.repeats}."
    )
    print(
        f"naive: the same with algorithm := 'naive' on the first --naive-sample matches in replay order "
        f"(median of {args.naive_repeats}); 'fast on sample' is the fast path on that same table. "
        "ratio = fast matches/s (whole table) / naive matches/s."
    )
    print(
        f"low-rank factors of the luck matrix: rank {first['rank']} (win/loss), {first['rank_draw']} (draw); "
        f"draws in the data: {100 * first['draws']:.0f}% (sparse)."
    )
    for case, result in results.items():
        print(
            f"{case}: runs whole {', '.join(f'{s:.2f}' for s in result['whole'])} s; sample fast "
            f"{', '.join(f'{s:.3f}' for s in result['fast_sample'])} s; naive "
            f"{', '.join(f'{s:.2f}' for s in result['naive_sample'])} s"
        )
        status = "ok" if result["players_mismatched"] == 0 and result["max_diff"] <= TOLERANCE else "FAILED"
        print(
            f"{case}: fast vs naive on the sample, {result['players_compared']:,} players: max |difference| of "
            f"final rating/sd = {result['max_diff']:.3g} points (tolerance {TOLERANCE:g}): {status}"
        )
    print()
    print(f"agreement: {'ok' if ok else 'FAILED'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sparse-size", type=int, default=1_000_000, help="matches among 50k players")
    parser.add_argument("--dense-size", type=int, default=200_000, help="matches among 30 players")
    parser.add_argument("--naive-sample", type=int, default=10_000, help="matches replayed by the naive algorithm")
    parser.add_argument("--repeats", type=int, default=3, help="timed fast runs (median reported)")
    parser.add_argument("--naive-repeats", type=int, default=1, help="timed naive runs (median reported)")
    parser.add_argument("--quick", action="store_true", help="1M sparse, 50k dense, 1 repeat, naive on 3k matches")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.sparse_size, args.dense_size, args.naive_sample, args.repeats, args.naive_repeats) < 1:
        parser.error("sizes and repeats must be positive")
    if args.child:
        return run_child(args)
    if args.quick:
        args.dense_size, args.repeats, args.naive_sample = 50_000, 1, 3_000

    print("# duckrate benchmark: the luck-aware grid system (chance) through SQL")
    print()
    for line in common.machine_lines():
        print(line)
    sys.stdout.flush()
    cases = {
        "sparse": common.matches_file(
            f"elo_{args.sparse_size}", args.sparse_size, PLAYERS["sparse"], seed=SEED, log=_log
        ),
        "dense": common.matches_file(
            f"chance_dense_{args.dense_size}", args.dense_size, PLAYERS["dense"], seed=SEED, log=_log
        ),
    }
    results = {}
    for case, data in cases.items():
        _log(f"running {case} ({data.name}) ...")
        results[case] = common.run_child(
            [
                str(Path(__file__).resolve()),
                "--child",
                "--data",
                str(data),
                "--repeats",
                str(args.repeats),
                "--naive-sample",
                str(args.naive_sample),
                "--naive-repeats",
                str(args.naive_repeats),
            ]
        )
    return 0 if _report(results, args) else 1


if __name__ == "__main__":
    raise SystemExit(main())
