"""Benchmark: continuing an Elo-MMR replay from its saved state, against one full replay in the same run.

A warehouse with a long contest history receives a few new contests: the incremental model runs
``elo_mmr_replay(new, state := saved)`` and ``elo_mmr_state(new, state := saved)`` instead of replaying
everything. Timed through SQL (median of ``--repeats``; kernels compiled beforehand):

* full: ``elo_mmr_replay`` over every contest (what a full rebuild does, plus ``elo_mmr_state`` over them);
* continue: the same two calls over the last ``--new`` contests only, from the state saved after the others.

Both outputs are checked equal (rows of the new contests, and the final state) before timing is
reported. Also printed: the size of the saved state (rows, and values per player row). Usage::

    .venv/bin/python bench/elo_mmr_incremental.py
    .venv/bin/python bench/elo_mmr_incremental.py --contests 300 --per-contest 500 --pool 20000 --new 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_lines
from elo_mmr import contests

ORDER = "kind, league, player, opponent, seq"


def timed(con, sql: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        con.execute(sql)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contests", type=int, default=1000)
    parser.add_argument("--per-contest", type=int, default=500)
    parser.add_argument("--pool", type=int, default=20_000)
    parser.add_argument("--new", type=int, default=10, help="contests passed to the continuation")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import duckdb

    import duckrate

    print("\n".join(machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "pyarrow"))))
    frame = contests(args.contests, args.per_contest, args.pool)
    con = duckrate.register(duckdb.connect())
    con.register("frame", frame)
    con.execute("CREATE TABLE results AS SELECT * FROM frame")
    con.execute(
        f"CREATE TABLE cut AS SELECT contest_id FROM (SELECT DISTINCT contest_id, played_at FROM results) "
        f"ORDER BY played_at DESC, contest_id DESC LIMIT {args.new}"
    )
    con.execute(
        "CREATE TABLE old_results AS SELECT * FROM results WHERE contest_id NOT IN (SELECT contest_id FROM cut)"
    )
    con.execute("CREATE TABLE new_results AS SELECT * FROM results WHERE contest_id IN (SELECT contest_id FROM cut)")
    con.execute("CREATE TABLE saved AS SELECT * FROM elo_mmr_state('old_results')")  # also compiles the kernels

    full_rows = timed(con, "CREATE OR REPLACE TABLE full_rows AS SELECT * FROM elo_mmr_replay('results')", args.repeats)
    full_state = timed(
        con, "CREATE OR REPLACE TABLE full_state AS SELECT * FROM elo_mmr_state('results')", args.repeats
    )
    new_rows = timed(
        con,
        "CREATE OR REPLACE TABLE new_rows AS SELECT * FROM elo_mmr_replay('new_results', state := 'saved')",
        args.repeats,
    )
    new_state = timed(
        con,
        "CREATE OR REPLACE TABLE new_state AS SELECT * FROM elo_mmr_state('new_results', state := 'saved')",
        args.repeats,
    )

    differing_rows = con.sql(
        "SELECT count(*) FROM (SELECT * FROM new_rows EXCEPT ALL SELECT * FROM full_rows "
        "WHERE contest_id IN (SELECT contest_id FROM cut))"
    ).fetchall()[0][0]
    differing_state = con.sql(
        "SELECT count(*) FROM ((SELECT * FROM new_state EXCEPT ALL SELECT * FROM full_state) "
        "UNION ALL (SELECT * FROM full_state EXCEPT ALL SELECT * FROM new_state))"
    ).fetchall()[0][0]
    assert differing_rows == 0 and differing_state == 0, (differing_rows, differing_state)
    rows, players, values = con.sql(
        "SELECT count(*), count(*) FILTER (kind = 'player'), avg(len(value)) FILTER (kind = 'player') FROM full_state"
    ).fetchall()[0]
    new_count = con.sql("SELECT count(*) FROM new_results").fetchall()[0][0]

    print(
        f"\n{args.contests:,} contests x {args.per_contest} players from {args.pool:,} ({frame.height:,} rows); "
        f"continuation over the last {args.new} contests ({new_count:,} rows); median of {args.repeats}"
    )
    print(f"full replay:   rows {full_rows:.2f} s + state {full_state:.2f} s = {full_rows + full_state:.2f} s")
    print(
        f"continuation:  rows {new_rows:.2f} s + state {new_state:.2f} s = {new_rows + new_state:.2f} s "
        f"({(full_rows + full_state) / (new_rows + new_state):.1f}x faster), equal to the full replay bit for bit"
    )
    print(
        f"saved state:   {rows:,} rows, {players:,} player rows of {values:.1f} values on average "
        f"(6 + 3 per kept history factor)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
