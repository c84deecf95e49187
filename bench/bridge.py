"""The DuckDB bridge at 10M matches: elo_replay against the floor of writing the same table (issue 15, item 8).

    .venv/bin/python bench/bridge.py [--size 10000000] [--repeats 3]

Target: ``CREATE TABLE r AS SELECT * FROM elo_replay('m')`` at 10M matches within 3x of the floor,
``CREATE TABLE r AS SELECT *, <six computed columns> FROM m``, measured in the same run, with peak RSS under
3 GB. On bench/elo.py's data (50k players, one league), each step in a fresh process writing into a fresh
database file (peak RSS is that process's ``VmHWM``), ``--repeats`` runs each (median):

1. the floor: DuckDB alone copies the table and computes six columns, in parallel;
2. the old bridge with no maths: the table packed into one LIST(STRUCT), a UDF returning 11 precomputed
   zero-copy columns as one list, unnested beside the packed match_id and played_at, and written;
3. the new bridge with no maths: the kernel's columns collected chunk by chunk (``duckrate_collect``), a
   compute step that keeps 6 precomputed columns under a token, and the rows fetched by key on all
   threads (``duckrate_fetch_replay_nosd``) beside the scan's own columns, written;
4. ``elo_replay(k := 32)`` (the new bridge, with validation, the replay order, names and the kernel).
"""

from __future__ import annotations

import argparse
import time

import _common as common
import numpy as np
import pyarrow as pa
from elo import N_PLAYERS, SEED

TARGET_RATIO = 3.0
TARGET_PEAK_GB = 3.0
FLOOR = (
    "CREATE OR REPLACE TABLE r AS SELECT *, score_a * 2.0 AS c1, score_a * 3.0 AS c2, score_a * 4.0 AS c3, "
    "score_a * 5.0 AS c4, score_a * 6.0 AS c5, match_id + 1 AS c6 FROM src.main.matches"
)


def old_bridge(con, n: int) -> str:
    """Register the old pattern's no-op UDF and return its query (step 2)."""
    fields = [(f"c{i}", pa.float64()) for i in range(11)]
    result = pa.StructArray.from_arrays(
        [pa.array(np.full(n, float(i))) for i in range(11)], fields=[pa.field(*f) for f in fields]
    )

    def noop_udf(passthrough, matches):
        return pa.ListArray.from_arrays(pa.array([0, n], pa.int32()), result)

    con.create_function(
        "bench_noop_list_udf",
        noop_udf,
        None,
        "STRUCT(" + ", ".join(f"{name} DOUBLE" for name, _ in fields) + ")[]",
        type="arrow",
    )
    packed = """(SELECT match_id, played_at, score_a, hash(player_a) AS player_a, hash(player_b) AS player_b,
                        hash(league) AS league FROM src.main.matches)"""
    return f"""CREATE OR REPLACE TABLE r AS
        WITH packed AS (SELECT list(m) AS match_list, list(struct_pack(match_id := m.match_id, played_at := m.played_at)) AS passthrough
                        FROM {packed} AS m)
        SELECT unnest(packed.passthrough, recursive := true),
               unnest(bench_noop_list_udf(packed.passthrough, packed.match_list), recursive := true) FROM packed"""


def new_bridge(con, n: int) -> str:
    """Register a no-op compute step on the new bridge and return its query (step 3)."""
    from duckrate.sql import bridge, replay_udf
    from duckrate.systems.elo import ELO

    zeros = [np.arange(n, dtype=np.int64)] + [np.full(n, float(i)) for i in range(5)]

    def noop_compute(token, n_input):
        token, n_input = int(token[0].as_py()), int(n_input[0].as_py())
        rows, starts = bridge.COLLECTOR.take(token, "input", n_input)
        keys = rows.field(bridge.KEY_FIELD).to_numpy(zero_copy_only=False)
        return pa.array([bridge.STORE.put(token, keys, zeros, starts)], pa.int64())

    con.create_function("bench_noop_compute_udf", noop_compute, None, "BIGINT", type="arrow", side_effects=True)
    rows = replay_udf.rows_select(ELO, "src.main.matches", "duckrate_computed")
    collected = bridge.collected_ctes(
        {"input": replay_udf.packed_matches_sql().replace("query_table(tbl)", "src.main.matches")}
    )
    return f"""CREATE OR REPLACE TABLE r AS
        WITH {collected}, duckrate_computed AS MATERIALIZED (
            SELECT bench_noop_compute_udf(k.t, c.n_input) AS token FROM duckrate_token AS k, duckrate_collected AS c)
        {rows}"""


STEPS = (
    ("floor: copy + 6 computed columns (DuckDB alone)", lambda con, n: FLOOR),
    ("old bridge, no maths: pack list + UDF list + unnest + write", old_bridge),
    ("new bridge, no maths: collect + token + fetch + write", new_bridge),
    (
        "elo_replay (k 32)",
        lambda con, n: "CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches', k := 32)",
    ),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--step", type=int, help=argparse.SUPPRESS)  # in a child: run this step only
    args = parser.parse_args(argv)
    data = common.matches_file(f"elo_{args.size}", args.size, N_PLAYERS, n_leagues=1, seed=SEED, log=print)
    if args.step is None:
        for line in common.machine_lines():
            print(line)
        rows, floor = [], None
        for step in range(len(STEPS)):
            result = common.run_child(
                [__file__, "--size", str(args.size), "--repeats", str(args.repeats), "--step", str(step)]
            )
            seconds = common.median(result["seconds"])
            floor = floor or seconds
            rows.append(
                [
                    result["name"],
                    f"{seconds:.2f}",
                    " ".join(f"{s:.2f}" for s in result["seconds"]),
                    f"{args.size / seconds / 1e6:.2f}M",
                    f"{seconds / floor:.2f}x",
                    f"{result['peak'] / common.GB:.2f}",
                ]
            )
        print(
            common.format_table(
                ["step (fresh process, file database)", "s (median)", "runs", "matches/s", "x floor", "peak RSS GB"],
                rows,
            )
        )
        print(f"targets: elo_replay <= {TARGET_RATIO:g}x the floor, peak RSS < {TARGET_PEAK_GB:g} GB")
        return 0
    con = common.benchmark_connection(data, database=common.DATA_DIR / "bridge_out.duckdb")
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchall()[0][0]
    name, make = STEPS[args.step]
    query = make(con, n)
    if args.step == 3:  # compile or load the kernels first
        con.execute("CREATE TEMP TABLE warm AS SELECT * FROM src.main.matches LIMIT 10000")
        con.execute("SELECT count(*) FROM elo_replay('warm')").fetchall()
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        con.execute(query)
        seconds.append(time.perf_counter() - started)
        if con.execute("SELECT count(*) FROM r").fetchone()[0] != n:
            raise SystemExit(f"{name}: wrote a wrong number of rows")
        con.execute("DROP TABLE r")
        con.execute("CHECKPOINT")
    common.emit_result({"name": name, "seconds": seconds, "peak": common.hwm_bytes() or common.maxrss_bytes()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
