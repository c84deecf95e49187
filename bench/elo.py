"""Benchmark: Elo through SQL on generated data (50k players).

Targets (issue "Elo through SQL on generated data"): on this 2-core machine, 1M matches in at most
0.5 s and 10M matches in at most 3 s with peak memory under 4 GB, printing matches/s and the ratio
against a pure-Python loop on the same data in the same run. Nothing is asserted about timings; the
script prints a table to paste into BENCHMARKS.md. It exits non-zero only if a run fails or if the
pure-Python loop and duckrate disagree on the final ratings.

For each size, in a fresh child process (so its peak RSS is that of this replay alone):

1. attach the cached data ``bench/.data/elo_<n>.duckdb`` read-only as ``src`` to an in-memory
   connection and register duckrate; record the RSS (the baseline);
2. warm up on a 10k-row table (numba kernels, UDF machinery);
3. time ``CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches', k := 32)``
   (the replay materialised; ``r`` is dropped, untimed, after each run) and
   ``SELECT count(*), sum(rating_a_after), sum(expected_a) FROM elo_replay(...)`` (computed, not
   written), ``--repeats`` times each, reporting medians; record the peak RSS;
4. time a pure-Python Elo loop (dict of ratings, K = 32) over the first ``--python-sample`` matches in
   replay order (rows fetched before timing), and check that its final ratings equal those of
   ``elo_replay`` on a table of exactly those rows to 1e-9.

Usage (from the repository root)::

    .venv/bin/python bench/elo.py                      # 1M and 10M, 3 repeats
    .venv/bin/python bench/elo.py --quick              # 100k and 1M, 1 repeat
    .venv/bin/python bench/elo.py --sizes 1000000 --repeats 5 --python-sample 500000
    .venv/bin/python bench/elo.py --sizes 10000000 --repeats 1 --memory-limit 1GB   # issue 34 item 4
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

N_PLAYERS = 50_000
SEED = 20_240_101
K = 32.0
WARMUP_ROWS = 10_000
TOLERANCE = 1e-9
TARGET_SECONDS = {1_000_000: 0.5, 10_000_000: 3.0}
TARGET_PEAK_GB = {10_000_000: 4.0}

MATERIALISE_SQL = "CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches', k := 32)"
NOT_WRITTEN_SQL = "SELECT count(*), sum(rating_a_after), sum(expected_a) FROM elo_replay('src.main.matches', k := 32)"
# Final rating of each player: the rating after their last match (one league, so seq is the replay order).
FINAL_RATINGS_SQL = """
WITH r AS (SELECT * FROM elo_replay('sample', k := 32)),
sides AS (
    SELECT player_a AS player, seq, rating_a_after AS rating FROM r
    UNION ALL
    SELECT player_b AS player, seq, rating_b_after AS rating FROM r
)
SELECT player, arg_max(rating, seq) FROM sides GROUP BY player
"""


def python_elo(rows, k: float = K, initial: float = 1500.0) -> dict:
    """The peer's loop: plain pure-Python Elo over ``(player_a, player_b, score_a)`` rows in replay order."""
    ratings = {}
    get = ratings.get
    for player_a, player_b, score_a in rows:
        rating_a = get(player_a, initial)
        rating_b = get(player_b, initial)
        expected_a = 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))
        change = k * (score_a - expected_a)
        ratings[player_a] = rating_a + change
        ratings[player_b] = rating_b - change
    return ratings


def python_elo_table(con, table: str, n: int, k: float = K, initial: float = 1500.0) -> None:
    """The peer doing duckrate's whole job in plain Python: read the matches in replay order, replay,
    and write one row per match (seq, forecast, ratings before and after) back as table ``py``."""
    import pyarrow as pa

    rows = con.execute(
        f"SELECT match_id, played_at, player_a, player_b, score_a FROM {table} ORDER BY played_at, match_id LIMIT {n}"
    ).fetchall()
    ratings = {}
    get = ratings.get
    columns = {
        name: []
        for name in ("seq", "expected_a", "rating_a_before", "rating_b_before", "rating_a_after", "rating_b_after")
    }
    for seq, (_, _, player_a, player_b, score_a) in enumerate(rows, start=1):
        rating_a = get(player_a, initial)
        rating_b = get(player_b, initial)
        expected_a = 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 400.0))
        change = k * (score_a - expected_a)
        ratings[player_a] = rating_a + change
        ratings[player_b] = rating_b - change
        columns["seq"].append(seq)
        columns["expected_a"].append(expected_a)
        columns["rating_a_before"].append(rating_a)
        columns["rating_b_before"].append(rating_b)
        columns["rating_a_after"].append(rating_a + change)
        columns["rating_b_after"].append(rating_b - change)
    ids, times, players_a, players_b, scores = zip(*rows) if rows else ((),) * 5
    result = pa.table(
        {
            "match_id": list(ids),
            "played_at": list(times),
            "player_a": list(players_a),
            "player_b": list(players_b),
            "score_a": list(scores),
            **columns,
        }
    )
    con.register("python_elo_result", result)
    con.execute("CREATE OR REPLACE TABLE py AS SELECT * FROM python_elo_result")
    con.unregister("python_elo_result")


# --------------------------------------------------------------------------------------------
# Child: one size, fresh process
# --------------------------------------------------------------------------------------------


def run_child(args) -> int:
    con = common.benchmark_connection(args.data)
    if args.memory_limit:
        con.execute(f"SET memory_limit = '{args.memory_limit}'")
    rss_attached = common.rss_bytes()
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchone()[0]

    # Warm-up: load (or compile) the numba kernels and exercise both query shapes on a small table.
    con.execute(f"CREATE TABLE warm AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {WARMUP_ROWS}")
    con.execute("CREATE TABLE warm_r AS SELECT * FROM elo_replay('warm', k := 32)")
    con.execute("SELECT count(*), sum(rating_a_after), sum(expected_a) FROM elo_replay('warm', k := 32)").fetchall()
    con.execute("DROP TABLE warm_r")
    con.execute("DROP TABLE warm")
    rss_warm = common.rss_bytes()

    # ru_maxrss (and VmHWM) so far: attach and warm-up. Resetting VmHWM between the two phases
    # attributes the peak to each query; it also resets what getrusage reports for this process
    # (Linux reads ru_maxrss from the same counter), so the overall peak is the max of the three.
    maxrss_before = common.maxrss_bytes()
    hwm_resettable = common.reset_hwm()
    materialised = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        con.execute(MATERIALISE_SQL)
        materialised.append(time.perf_counter() - started)
        written = con.execute("SELECT count(*) FROM r").fetchone()[0]
        if written != n:
            raise SystemExit(f"elo_replay wrote {written} rows for {n} matches")
        con.execute("DROP TABLE r")
    hwm_materialised = common.hwm_bytes()

    common.reset_hwm()
    not_written = []
    checksum = None
    for _ in range(args.repeats):
        started = time.perf_counter()
        checksum = con.execute(NOT_WRITTEN_SQL).fetchone()
        not_written.append(time.perf_counter() - started)
        if checksum[0] != n:
            raise SystemExit(f"elo_replay returned {checksum[0]} rows for {n} matches")
    hwm_not_written = common.hwm_bytes()
    maxrss = common.maxrss_bytes()

    # Peer: pure-Python loop on the first `sample` matches in replay order; only the loop is timed.
    sample = min(args.python_sample, n)
    started = time.perf_counter()
    rows = con.execute(
        f"SELECT player_a, player_b, score_a FROM src.main.matches ORDER BY played_at, match_id LIMIT {sample}"
    ).fetchall()
    fetch_seconds = time.perf_counter() - started
    python_seconds = []
    ratings = {}
    for _ in range(args.repeats):
        started = time.perf_counter()
        ratings = python_elo(rows)
        python_seconds.append(time.perf_counter() - started)

    same_job_seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        python_elo_table(con, "src.main.matches", sample)
        same_job_seconds.append(time.perf_counter() - started)
    con.execute("DROP TABLE py")

    con.execute(f"CREATE TABLE sample AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {sample}")
    final = dict(con.execute(FINAL_RATINGS_SQL).fetchall())
    missing = sorted(set(ratings) ^ set(final))
    max_diff = max((abs(final[p] - ratings[p]) for p in ratings if p in final), default=0.0)
    worst = max((p for p in ratings if p in final), key=lambda p: abs(final[p] - ratings[p]), default=None)

    common.emit_result(
        {
            "n": n,
            "materialised": materialised,
            "not_written": not_written,
            "checksum": [checksum[1], checksum[2]],
            "rss_attached": rss_attached,
            "rss_warm": rss_warm,
            "peak": max(maxrss_before, maxrss, hwm_materialised or 0, hwm_not_written or 0),
            "maxrss_before": maxrss_before,
            "maxrss": maxrss,
            "hwm_materialised": hwm_materialised if hwm_resettable else None,
            "hwm_not_written": hwm_not_written if hwm_resettable else None,
            "python_sample": sample,
            "python_seconds": python_seconds,
            "python_same_job_seconds": same_job_seconds,
            "fetch_seconds": fetch_seconds,
            "players_compared": len(ratings),
            "players_mismatched": missing[:5],
            "n_players_mismatched": len(missing),
            "max_diff": max_diff,
            "worst_player": worst,
            "worst": [ratings.get(worst), final.get(worst)] if worst is not None else None,
        }
    )
    return 0


# --------------------------------------------------------------------------------------------
# Parent: data, one child per size, report
# --------------------------------------------------------------------------------------------


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _ratio(value: float) -> str:
    return f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


def _report(results: list[dict], args) -> bool:
    headers = [
        "matches",
        "matches/s",
        "s (median)",
        "s (not written)",
        "peak RSS GB",
        "replay RSS GB",
        "x Python (same job)",
        "x Python loop",
        "target",
        "met",
    ]
    rows = []
    agreement_ok = True
    for result in results:
        n = result["n"]
        seconds = common.median(result["materialised"])
        seconds_nw = common.median(result["not_written"])
        peak = result["peak"]
        replay = peak - result["rss_attached"]
        rate = n / seconds
        python_rate = result["python_sample"] / common.median(result["python_seconds"])
        same_job_rate = result["python_sample"] / common.median(result["python_same_job_seconds"])
        targets, met = [], []
        if n in TARGET_SECONDS:
            targets.append(f"<= {TARGET_SECONDS[n]:g} s")
            met.append("yes" if seconds <= TARGET_SECONDS[n] else "NO")
        if n in TARGET_PEAK_GB:
            targets.append(f"< {TARGET_PEAK_GB[n]:g} GB")
            met.append("yes" if peak < TARGET_PEAK_GB[n] * common.GB else "NO")
        rows.append(
            [
                common.human_count(n),
                f"{rate / 1e6:.2f}M",
                f"{seconds:.3f}",
                f"{seconds_nw:.3f}",
                f"{peak / common.GB:.2f}",
                f"{replay / common.GB:.2f}",
                _ratio(rate / same_job_rate),
                _ratio(rate / python_rate),
                ", ".join(targets) or "-",
                ", ".join(met) or "-",
            ]
        )
        if result["n_players_mismatched"] or result["max_diff"] > TOLERANCE:
            agreement_ok = False

    print()
    print(common.format_table(headers, rows))
    print()
    print(
        f"Elo, K = 32, {N_PLAYERS:,} players, generate_matches(n, {N_PLAYERS}, n_leagues=1, seed={SEED}); "
        f"median of {args.repeats} run(s) per size, each size in a fresh process."
    )
    print(
        "matches/s and s (median): CREATE OR REPLACE TABLE r AS SELECT * FROM elo_replay('src.main.matches', k := 32)"
    )
    print("  (in-memory connection, data ATTACHed read-only from a DuckDB file; r dropped between runs, untimed).")
    print("s (not written): SELECT count(*), sum(rating_a_after), sum(expected_a) FROM elo_replay(...).")
    print(
        "peak RSS: the child's peak resident set (ru_maxrss / VmHWM) over all its runs; "
        "replay RSS: peak minus the RSS right after ATTACH + register."
    )
    print("x Python (same job): duckrate matches/s (materialised) / plain Python doing the same job on the first")
    print("  --python-sample matches: SELECT ... ORDER BY played_at, match_id, a dict loop producing seq, forecast and")
    print("  ratings before/after, and CREATE TABLE from the result (all timed), same run.")
    print("x Python loop: the same against the bare dict loop alone (rows already fetched, nothing written): the")
    print("  strictest comparison, since duckrate's time includes reading, validating, sorting and writing.")
    print("GB = 10^9 bytes.")
    print()
    for result in results:
        n = common.human_count(result["n"])
        python_rate = result["python_sample"] / common.median(result["python_seconds"])
        runs = ", ".join(f"{s:.3f}" for s in result["materialised"])
        runs_nw = ", ".join(f"{s:.3f}" for s in result["not_written"])
        print(f"{n}: materialised runs {runs} s; not written {runs_nw} s")
        line = (
            f"{n}: RSS after attach {result['rss_attached'] / common.GB:.2f} GB, after warm-up "
            f"{result['rss_warm'] / common.GB:.2f} GB, peak {result['peak'] / common.GB:.2f} GB"
        )
        if result["hwm_materialised"] is not None:
            line += (
                f" (VmHWM while materialising {result['hwm_materialised'] / common.GB:.2f} GB, "
                f"while not written {result['hwm_not_written'] / common.GB:.2f} GB)"
            )
        else:
            line += f" (ru_maxrss {result['maxrss'] / common.GB:.2f} GB)"
        print(line)
        same_job = result["python_sample"] / common.median(result["python_same_job_seconds"])
        print(
            f"{n}: plain Python doing the same job on the first {result['python_sample']:,} matches: "
            f"{same_job / 1e6:.3f}M matches/s (runs {', '.join(f'{s:.3f}' for s in result['python_same_job_seconds'])} s)"
        )
        print(
            f"{n}: pure-Python loop on the first {result['python_sample']:,} matches: "
            f"{python_rate / 1e6:.3f}M matches/s (runs {', '.join(f'{s:.3f}' for s in result['python_seconds'])} s; "
            f"fetching the rows as tuples, not timed in the ratio, took {result['fetch_seconds']:.3f} s)"
        )
        status = "ok" if not result["n_players_mismatched"] and result["max_diff"] <= TOLERANCE else "FAILED"
        print(
            f"{n}: agreement: {status} ({result['players_compared']:,} players, "
            f"max |duckrate - python| = {result['max_diff']:.3g}, tolerance {TOLERANCE:g})"
        )
        if status != "ok":
            if result["n_players_mismatched"]:
                print(
                    f"{n}:   {result['n_players_mismatched']} player(s) in only one side, e.g. {result['players_mismatched']}"
                )
            print(
                f"{n}:   worst player {result['worst_player']}: python {result['worst'][0]!r}, duckrate {result['worst'][1]!r}"
            )
    print()
    print(f"agreement: {'ok' if agreement_ok else 'FAILED'}")
    return agreement_ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000], help="numbers of matches")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per query and size (median reported)")
    parser.add_argument("--python-sample", type=int, default=200_000, help="matches for the pure-Python peer")
    parser.add_argument("--quick", action="store_true", help="sizes 100k and 1M, 1 repeat")
    parser.add_argument("--memory-limit", default=None, help="DuckDB memory_limit, e.g. 1GB (default: DuckDB's)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.python_sample < 1 or any(size < 1 for size in args.sizes):
        parser.error("--sizes, --repeats and --python-sample must be positive")
    if args.child:
        return run_child(args)
    if args.quick:
        args.sizes, args.repeats = [100_000, 1_000_000], 1

    print("# duckrate benchmark: Elo through SQL")
    print(f"DuckDB memory_limit: {args.memory_limit or 'default (80% of RAM)'}")
    print()
    for line in common.machine_lines():
        print(line)
    sys.stdout.flush()

    results = []
    for size in args.sizes:
        data = common.matches_file(f"elo_{size}", size, N_PLAYERS, n_leagues=1, seed=SEED, log=_log)
        _log(f"running {size:,} matches ...")
        results.append(
            common.run_child(
                [
                    str(Path(__file__).resolve()),
                    "--child",
                    "--data",
                    str(data),
                    "--repeats",
                    str(args.repeats),
                    "--python-sample",
                    str(args.python_sample),
                ]
                + (["--memory-limit", args.memory_limit] if args.memory_limit else [])
            )
        )
    return 0 if _report(results, args) else 1


if __name__ == "__main__":
    raise SystemExit(main())
