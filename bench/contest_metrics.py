"""Benchmark: ``contest_metrics`` over a Codeforces-sized contest history, both definitions in one run.

Target: ``definition := 'reference'`` (the Elo-MMR reference implementation's metric, the default) in at most
5 s on 2.75M result rows (1,000 contests x 2,750 players from a pool of 300,000), Polars preparation
included. ``'all_contests'`` (the earlier O(|P|^2)-per-contest average) is timed on the same replay for
comparison (one run: it takes about a minute).

Data: ``duckrate.synthetic.generate_contests(1000, 2750, 300_000, seed=2020)`` (cached by ``bench/elo_mmr.py``'s
helper as ``bench/.data/contests_1000_2750_300000.parquet``), replayed once by ``duckrate.elo_mmr`` with its
defaults and cached as ``bench/.data/contest_replay_1000_2750_300000.parquet`` (a child process; a minute or two
the first time). Each case runs in a fresh child process (see ``_common``): the replay is loaded (untimed),
the kernels are compiled or loaded on a small slice (untimed), then ``duckrate.contest_metrics(replay,
definition=...)`` is timed; the SQL mart ``contest_metrics('replay')`` (the same replay as a DuckDB table) is
timed once too and checked equal to the Python result. Peak memory is the child's ``VmHWM`` after loading
(reset before the timed calls), next to the resident size of the loaded replay.

Usage (from the repository root)::

    .venv/bin/python bench/contest_metrics.py
    .venv/bin/python bench/contest_metrics.py --skip-all-contests --repeats 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

N_CONTESTS, PER_CONTEST, POOL = 1000, 2750, 300_000
TARGET_SECONDS = 5.0
REPLAY_PATH = common.DATA_DIR / f"contest_replay_{N_CONTESTS}_{PER_CONTEST}_{POOL}.parquet"


def child_prepare(_args) -> None:
    """Generate (or load) the contests and replay them with Elo-MMR into :data:`REPLAY_PATH`."""
    import polars as pl
    from elo_mmr import contests

    import duckrate

    started = time.perf_counter()
    results = contests(N_CONTESTS, PER_CONTEST, POOL)
    replay = duckrate.elo_mmr(results).with_columns(pl.lit("elo_mmr").alias("system"))
    partial = REPLAY_PATH.with_name(REPLAY_PATH.name + ".partial")
    replay.write_parquet(partial)
    partial.replace(REPLAY_PATH)
    common.emit_result({"rows": replay.height, "seconds": time.perf_counter() - started})


def child_measure(args) -> None:
    import polars as pl

    import duckrate

    replay = pl.read_parquet(REPLAY_PATH)
    loaded_gb = common.rss_bytes() / common.GB
    small = replay.filter(pl.col("seq") <= 20)
    duckrate.contest_metrics(small, definition=args.definition)  # compile / load the kernels
    common.reset_hwm()
    seconds, result = [], None
    for _ in range(args.repeats):
        started = time.perf_counter()
        result = duckrate.contest_metrics(replay, definition=args.definition)
        seconds.append(time.perf_counter() - started)
    hwm_gb = (common.hwm_bytes() or 0) / common.GB
    sql_s, sql_equal = None, None
    if args.sql:
        import duckdb

        con = duckrate.register(duckdb.connect())
        con.execute(f"SET temp_directory = '{common.DUCKDB_TEMP_DIR}'")
        con.register("frame", replay)
        con.execute("CREATE TABLE replay AS SELECT * FROM frame")
        con.unregister("frame")
        call = f"SELECT * FROM contest_metrics('replay', definition := '{args.definition}')"
        con.execute(call).fetchall()
        started = time.perf_counter()
        sql = con.sql(call).pl()
        sql_s = time.perf_counter() - started
        sql_equal = sql.sort("league", "system").equals(result.sort("league", "system"))
        con.close()
    common.emit_result(
        {
            "rows": replay.height,
            "contests": int(replay["seq"].max()),
            "seconds": seconds,
            "sql_s": sql_s,
            "sql_equal": sql_equal,
            "loaded_gb": loaded_gb,
            "hwm_gb": hwm_gb,
            "pair_inversion": float(result["pair_inversion"][0]),
            "rank_deviation": float(result["rank_deviation"][0]),
            "n": int(result["n"][0]),
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--skip-all-contests", action="store_true")
    parser.add_argument("--child", choices=["prepare", "measure"])
    parser.add_argument("--definition", default="reference")
    parser.add_argument("--sql", action="store_true")
    args = parser.parse_args()
    if args.child == "prepare":
        child_prepare(args)
        return 0
    if args.child == "measure":
        child_measure(args)
        return 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    print("\n".join(common.machine_lines()))
    common.DATA_DIR.mkdir(parents=True, exist_ok=True)
    if not REPLAY_PATH.exists():
        log(
            f"replaying {N_CONTESTS:,} contests x {PER_CONTEST:,} players -> {REPLAY_PATH.relative_to(common.REPO_ROOT)}"
        )
        prepared = common.run_child([__file__, "--child", "prepare"], timeout=3600)
        log(f"  done in {prepared['seconds']:.0f} s")
    cases = [("reference", True)] + ([] if args.skip_all_contests else [("all_contests", False)])
    rows, failed = [], False
    for definition, sql in cases:
        log(f"contest_metrics, definition {definition!r} ...")
        child = [__file__, "--child", "measure", "--definition", definition, "--repeats", str(args.repeats)]
        r = common.run_child(child + (["--sql"] if sql else []), timeout=3600)
        seconds = common.median(r["seconds"])
        met = "yes" if seconds <= TARGET_SECONDS else "no"
        failed |= r["sql_equal"] is False
        rows.append(
            [
                definition,
                f"{r['rows']:,}",
                f"{seconds:.2f} ({', '.join(f'{s:.2f}' for s in r['seconds'])})",
                f"{r['rows'] / seconds / 1e6:.2f}",
                "-" if r["sql_s"] is None else f"{r['sql_s']:.2f}",
                "-" if r["sql_equal"] is None else ("yes" if r["sql_equal"] else "NO"),
                f"{r['loaded_gb']:.2f}",
                f"{r['hwm_gb']:.2f}",
                f"{r['pair_inversion']:.4f}",
                f"{r['rank_deviation']:.4f}",
                f"{r['n']:,}",
                f"≤ {TARGET_SECONDS:g} s: {met}" if definition == "reference" else "-",
            ]
        )
    print()
    print(
        f"contest_metrics over an Elo-MMR replay of {N_CONTESTS:,} contests x {PER_CONTEST:,} players "
        f"(pool {POOL:,}), defaults otherwise (min_history 5 / min_contests 5, warm-up 10%):"
    )
    headers = [
        "definition",
        "rows",
        "s, Python (median; runs)",
        "M rows/s",
        "s, SQL",
        "SQL = Python",
        "loaded GB",
        "peak GB",
        "pair inversion",
        "rank deviation",
        "n",
        "target",
    ]
    print(common.format_table(headers, rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
