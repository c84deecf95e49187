"""Benchmark: Elo replays on Spark (``duckrate.spark``, issue 20) against the DuckDB path, on one machine.

10M matches in 1,000 leagues (``duckrate.synthetic.generate_matches``), each path in a fresh process:

* ``duckdb``: ``CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches')`` on the cached
  DuckDB file (as ``bench/elo.py``), ``--repeats`` times;
* ``spark``: a ``local[2]`` session (driver memory ``--driver-memory``); the matches read from a Parquet copy
  of the same table; ``duckrate.spark.replay_with_state(matches, 'elo')`` and both results written as
  Parquet, ``--repeats`` times (the session's start-up is reported apart). After the timing, DuckDB reads
  the written rows back and checks every rating bit for bit against its own replay;
* ``league``: one league of ``--league-matches`` matches through the same Spark call, for the memory one
  league's task needs: the peak RSS of the Python workers (pyspark.daemon's children) over a one-league
  baseline of 10k matches gives the bytes per match of a league held by one task;
* ``sliced``: the same league with ``chunk_size`` a quarter of it: Spark replays it in four time slices, one
  round each, every slice's task continuing the state the one before left; its workers' peak against the
  whole league's shows the memory a task holds bounded by the slice, and the rows are checked bit for bit
  against DuckDB's replay of the league.

Memory: the peak of the summed RSS of the process tree (driver Python + JVM + Python workers), sampled
every 50 ms. The expected result on one machine: DuckDB wins (no JVM, no Arrow hand-over between two
runtimes, no shuffle); the figures feed the sizing section of docs/spark.md.

Usage (from the repository root)::

    .venv/bin/python bench/spark_replay.py            # 10M / 1,000 leagues, 3 repeats, a 2M-match league
    .venv/bin/python bench/spark_replay.py --quick    # 1M / 100 leagues, 1 repeat, a 500k-match league
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

SEED = 20_251_127
PLAYERS_PER_LEAGUE = 200
#: What a Spark Python worker's command line contains (pyspark.daemon and the workers it forks).
SPARK_WORKERS = ("pyspark.daemon", "pyspark/daemon", "pyspark.worker")


def _parquet_copy(data: Path) -> Path:
    """A Parquet copy of the cached table (untimed), made once next to it."""
    import duckdb

    out = data.with_suffix(".parquet")
    if out.exists() and out.stat().st_mtime >= data.stat().st_mtime:
        return out
    con = duckdb.connect(str(data), read_only=True)
    con.execute(f"COPY (SELECT * FROM matches) TO '{out}.partial' (FORMAT parquet)")
    con.close()
    os.replace(f"{out}.partial", out)
    return out


def _session(driver_memory: str):
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    return (
        SparkSession.builder.master("local[2]")
        .appName("duckrate-bench")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.local.dir", str(common.DATA_DIR / "spark_tmp"))
        .getOrCreate()
    )


def child_duckdb(args) -> None:
    con = common.benchmark_connection(args.data)
    rows = con.execute("SELECT count(*) FROM src.main.matches").fetchone()[0]
    common.reset_hwm()
    seconds = common.time_replay(con, "elo_replay('src.main.matches')", args.repeats, rows)
    common.emit_result({"seconds": seconds, "hwm_gb": (common.hwm_bytes() or 0) / common.GB, "rows": rows})


def child_spark(args) -> None:
    started = time.perf_counter()
    with common.TreeMemory(interval=0.05, watch=SPARK_WORKERS) as memory:
        spark = _session(args.driver_memory)
        spark.sparkContext.setLogLevel("ERROR")
        import duckrate.spark

        session_seconds = time.perf_counter() - started
        out = common.DATA_DIR / f"spark_out_{args.label}"
        seconds = []
        for _ in range(args.repeats):
            shutil.rmtree(out, ignore_errors=True)
            began = time.perf_counter()
            matches = spark.read.parquet(str(args.parquet))
            rows, state = duckrate.spark.replay_with_state(matches, "elo", chunk_size=args.chunk_size)
            rows.write.parquet(str(out / "rows"))
            state.write.parquet(str(out / "state"))
            seconds.append(time.perf_counter() - began)
        spark.stop()
    result = {
        "seconds": seconds,
        "session_seconds": session_seconds,
        "peak_gb": memory.peak() / common.GB,
        "worker_peak_gb": memory.peak_watched / common.GB,
        "out": str(out),
    }
    common.emit_result(result)


def child_check(args) -> None:
    """DuckDB's replay of the same table against the rows Spark wrote: every rating equal, bit for bit."""
    con = common.benchmark_connection(args.data)
    con.execute("CREATE TABLE r AS SELECT * FROM elo_replay('src.main.matches')")
    out = Path(args.out) / "rows" / "*.parquet"
    differing, total = con.execute(
        f"""SELECT count(*) FILTER (WHERE s.match_id IS NULL OR r.rating_a_after IS DISTINCT FROM s.rating_a_after
                   OR r.rating_b_after IS DISTINCT FROM s.rating_b_after OR r.expected_a IS DISTINCT FROM s.expected_a),
                   count(*)
            FROM r LEFT JOIN read_parquet('{out}') s USING (match_id)"""
    ).fetchone()
    written = con.execute(f"SELECT count(*) FROM read_parquet('{out}')").fetchone()[0]
    common.emit_result({"differing": differing, "rows": total, "written": written})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=10_000_000)
    parser.add_argument("--leagues", type=int, default=1_000)
    parser.add_argument("--league-matches", type=int, default=2_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--driver-memory", default="12g")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", choices=["duckdb", "spark", "check", "parquet"])
    parser.add_argument("--data", type=Path)
    parser.add_argument("--parquet", type=Path)
    parser.add_argument("--label", default="main")
    parser.add_argument("--out")
    parser.add_argument("--chunk-size", type=int)
    parser.add_argument("--slice-matches", type=int, help="the league's slices (default: a quarter of the league)")
    args = parser.parse_args()
    if args.child:
        if args.child == "parquet":
            _parquet_copy(args.data)
            common.emit_result({"parquet": str(args.data.with_suffix(".parquet"))})
            return 0
        {"duckdb": child_duckdb, "spark": child_spark, "check": child_check}[args.child](args)
        return 0
    if args.quick:
        args.matches, args.leagues, args.league_matches, args.repeats = 1_000_000, 100, 500_000, 1

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    print("\n".join(common.machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "pyspark"))))
    n = args.matches
    data = common.matches_file(
        f"spark_{n}_{args.leagues}", n, PLAYERS_PER_LEAGUE * args.leagues, args.leagues, SEED, log=log
    )
    league = common.matches_file(f"spark_league_{args.league_matches}", args.league_matches, 20_000, 1, SEED, log=log)
    baseline = common.matches_file("spark_league_10000", 10_000, 500, 1, SEED, log=log)
    parquet = {}
    for path in (data, league, baseline):
        common.run_child([__file__, "--child", "parquet", "--data", str(path)])
        parquet[path] = path.with_suffix(".parquet")

    log(f"duckdb: {n:,} matches ...")
    duck = common.run_child([__file__, "--child", "duckdb", "--data", str(data), "--repeats", str(args.repeats)])
    log("spark ...")
    spark = common.run_child(
        [__file__, "--child", "spark", "--parquet", str(parquet[data]), "--repeats", str(args.repeats)]
        + ["--driver-memory", args.driver_memory, "--label", "main"]
    )
    log("check ...")
    check = common.run_child([__file__, "--child", "check", "--data", str(data), "--out", spark["out"]])
    runs = {}
    slice_matches = args.slice_matches or args.league_matches // 4
    for label, path, chunk in (
        ("baseline", baseline, args.league_matches),
        ("league", league, args.league_matches),
        ("sliced", league, slice_matches),
    ):
        log(f"spark, one league ({label}) ...")
        runs[label] = common.run_child(
            [__file__, "--child", "spark", "--parquet", str(parquet[path]), "--repeats", "1"]
            + ["--driver-memory", args.driver_memory, "--label", label, "--chunk-size", str(chunk)]
        )
    sliced_check = common.run_child(
        [__file__, "--child", "check", "--data", str(league), "--out", runs["sliced"]["out"]]
    )

    duck_s, spark_s = common.median(duck["seconds"]), common.median(spark["seconds"])
    rows = [
        ["DuckDB macro", f"{duck_s:.2f}", f"{n / duck_s / 1e6:.2f}", f"{duck['hwm_gb']:.2f}", "1.0x", "—"],
        [
            "duckrate.spark, local[2]",
            f"{spark_s:.2f}",
            f"{n / spark_s / 1e6:.2f}",
            f"{spark['peak_gb']:.2f} (workers {spark['worker_peak_gb']:.2f})",
            f"{spark_s / duck_s:.1f}x",
            f"{spark['session_seconds']:.1f}",
        ],
    ]
    print()
    print(
        f"Elo over {n:,} matches in {args.leagues:,} leagues ({PLAYERS_PER_LEAGUE} players each), median of {args.repeats}"
    )
    print(common.format_table(["path", "s", "M matches/s", "peak GB", "time vs DuckDB", "session start s"], rows))
    per_match = (
        (runs["league"]["worker_peak_gb"] - runs["baseline"]["worker_peak_gb"])
        * common.GB
        / (args.league_matches - 10_000)
    )
    league_s = common.median(runs["league"]["seconds"])
    print()
    print(
        f"One league of {args.league_matches:,} matches: {league_s:.2f} s, Python worker peak "
        f"{runs['league']['worker_peak_gb']:.2f} GB (10k-match league: {runs['baseline']['worker_peak_gb']:.2f} GB): "
        f"{per_match:.0f} bytes per match held by the league's task"
    )
    sliced_s = common.median(runs["sliced"]["seconds"])
    print(
        f"The same league in slices of {slice_matches:,} matches (chunk_size; "
        f"{-(-args.league_matches // slice_matches)} rounds): {sliced_s:.2f} s, Python worker peak "
        f"{runs['sliced']['worker_peak_gb']:.2f} GB; {sliced_check['differing']} of {sliced_check['rows']:,} rows "
        "differ from DuckDB's replay of the league"
    )
    print(
        f"Check: {check['written']:,} rows written by Spark, {check['differing']} of {check['rows']:,} differ from "
        "DuckDB's replay (ratings and expected scores, bit for bit)"
    )
    print(
        json.dumps(
            {"per_match_bytes": per_match, "spark_matches_per_s": n / spark_s, "duckdb_matches_per_s": n / duck_s}
        )
    )
    sliced_ok = not sliced_check["differing"] and sliced_check["written"] == args.league_matches
    return 1 if check["differing"] or check["written"] != n or not sliced_ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
