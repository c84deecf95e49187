"""What the table-in/table-out UDF pattern costs with no rating maths at all, beside elo_replay (issue 2).

    .venv/bin/python bench/udf_floor.py [--size 10000000] [--repeats 3]

DuckDB's Python API registers only scalar functions, so a replay is a table macro that packs the table into
one LIST(STRUCT) value, calls a vectorised Arrow UDF, and unnests the result (shared/DUCKDB-NOTES.md). On
bench/elo.py's data (50k players, one league) this times, each step in a fresh process (peak RSS is that
process's ``VmHWM``): copying the input table (DuckDB alone, parallel); packing the lists elo_replay packs; the same macro
shape with a UDF that returns precomputed, zero-copy columns of the right length (11 numbers, plus the
two passthrough columns unnested beside them), unnested and written; and elo_replay itself. The third is
the floor any replay through this pattern pays before reading, sorting or rating anything.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

import _common as common
from elo import N_PLAYERS, SEED

N_FIELDS = 11  # numbers elo_replay's UDF returns per match besides names (seq, score, forecast, 4 ratings, ...)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--step", type=int, help=argparse.SUPPRESS)  # in a child: run this step only
    args = parser.parse_args(argv)
    if args.step is None:
        for line in common.machine_lines():
            print(line)
    data = common.matches_file(f"elo_{args.size}", args.size, N_PLAYERS, n_leagues=1, seed=SEED, log=print)
    if args.step is None:
        rows = []
        for step in range(4):
            result = common.run_child([__file__, "--size", str(args.size), "--repeats", str(args.repeats), "--step", str(step)])
            seconds = result["seconds"]
            rows.append([result["name"], f"{common.median(seconds):.2f}", " ".join(f"{s:.2f}" for s in seconds),
                         f"{args.size / common.median(seconds) / 1e6:.2f}M", f"{result['peak'] / common.GB:.2f}"])
        print(common.format_table(["step (fresh process)", "s (median)", "runs", "matches/s", "peak RSS GB"], rows))
        return 0
    con = common.benchmark_connection(data)
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchall()[0][0]

    from duckrate.sql import replay_udf

    fields = [(f"c{i}", pa.float64()) for i in range(N_FIELDS)]
    result = pa.StructArray.from_arrays([pa.array(np.full(n, float(i))) for i in range(N_FIELDS)], fields=[pa.field(*f) for f in fields])

    def noop_udf(passthrough, matches):
        return pa.ListArray.from_arrays(pa.array([0, n], pa.int32()), result)

    con.create_function("duckrate_bench_noop_udf", noop_udf, None,
                        "STRUCT(" + ", ".join(f"{name} DOUBLE" for name, _ in fields) + ")[]", type="arrow")
    packed = replay_udf.packed_matches_sql().replace("query_table(tbl)", "src.main.matches")
    lists = f"list(m) AS match_list, list(struct_pack(match_id := m.match_id, played_at := m.played_at)) AS passthrough FROM {packed} AS m"
    steps = [
        ("copy the input table", "CREATE OR REPLACE TABLE r AS SELECT * FROM src.main.matches"),
        ("pack the lists only", f"SELECT len(match_list), len(passthrough) FROM (SELECT {lists})"),
        ("pack + no-op UDF + unnest + write", f"""CREATE OR REPLACE TABLE r AS WITH packed AS (SELECT {lists})
            SELECT unnest(packed.passthrough, recursive := true),
                   unnest(duckrate_bench_noop_udf(packed.passthrough, packed.match_list), recursive := true) FROM packed"""),
        ("elo_replay (k 32)", "CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches', k := 32)"),
    ]
    name, query = steps[args.step]
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        con.execute(query).fetchall()
        seconds.append(time.perf_counter() - started)
    common.emit_result({"name": name, "seconds": seconds, "peak": common.hwm_bytes() or common.maxrss_bytes()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
