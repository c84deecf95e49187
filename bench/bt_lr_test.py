"""Benchmark: bt_lr_test through SQL on 1M matches among 50k players (target: at most 15 s; at 10M, 60 s).

The data are the cached Elo benchmark set (``bench/.data/elo_1000000.duckdb``: matchmaking by similar
rating, drifting skills, draws), so every test has real work to do. Timed in a fresh child process:
``CREATE TABLE t AS SELECT * FROM bt_lr_test('src.main.matches')`` with the default parameters (
random orders for the permutation test: 199), after a warm-up on 10k rows; median of ``--repeats``. Prints the
tests' results too. Nothing is asserted about timings.

    .venv/bin/python bench/bt_lr_test.py [--repeats 3] [--size 1000000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

#: Seconds allowed per size (issue 7 at 1M, issues 15 and 34 at 10M); other sizes have no target.
TARGET_SECONDS = {1_000_000: 15.0, 10_000_000: 60.0}
N_PLAYERS = 50_000


def run_child(args) -> int:
    con = common.benchmark_connection(args.data)
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchall()[0][0]
    con.execute("CREATE TABLE warm AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT 10000")
    con.execute("SELECT * FROM bt_lr_test('warm')").fetchall()
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM bt_lr_test('src.main.matches')")
        times.append(time.perf_counter() - started)
    rows = con.execute(
        "SELECT test, n_players, n_games, round(statistic, 4), df, p_value FROM t ORDER BY test"
    ).fetchall()
    common.emit_result({"n": n, "times": times, "rows": [list(r) for r in rows], "peak": common.maxrss_bytes()})
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return run_child(args)
    print("\n".join(common.machine_lines()))
    data = common.matches_file(f"elo_{args.size}", args.size, N_PLAYERS)
    result = common.run_child([__file__, "--child", "--data", str(data), "--repeats", str(args.repeats)])
    median = common.median(result["times"])
    print(
        f"\nbt_lr_test over {result['n']:,} matches among {N_PLAYERS:,} players: "
        f"median {median:.2f} s (runs {', '.join(f'{t:.2f}' for t in result['times'])}), "
        f"{result['n'] / median / 1e3:.0f}k matches/s, peak RSS {result['peak'] / common.GB:.2f} GB"
        + (
            f"; target <= {target:.0f} s: {'met' if median <= target else 'NOT met'}"
            if (target := TARGET_SECONDS.get(args.size))
            else ""
        )
    )
    print(
        common.format_table(
            ["test", "players", "games", "statistic", "df", "p"], [[str(x) for x in row] for row in result["rows"]]
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
