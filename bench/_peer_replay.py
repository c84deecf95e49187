"""Shared harness: one replay system through SQL against a pure-Python peer package.

Used by ``bench/replay_glicko2.py`` and ``bench/replay_trueskill.py``. For the given system, in one fresh child
process (so its peak RSS is that of this benchmark alone):

1. attach the cached generated data (``bench/.data/elo_<n>.duckdb``, the Elo benchmark's files: 50k
   players, one league) read-only and register duckrate; warm up the kernels on 10k rows;
2. time ``CREATE OR REPLACE TABLE r AS SELECT * FROM <system>_replay('src.main.matches')`` over the
   whole table ``--repeats`` times (median);
3. copy the first ``--peer-sample`` matches in replay order to a table ``sample``, time the same
   statement over it, and time the peer package replaying exactly those matches in the same order
   (rows fetched before timing; the peer's time is its loop only, so the ratio is conservative);
4. compare the final ratings of duckrate and the peer and report the largest difference.

Nothing about timings is asserted; the parent prints a table to paste into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import _common as common

N_PLAYERS = 50_000
SEED = 20_240_101
WARMUP_ROWS = 10_000

# Final state of each player: the after-values of their last match (one league, so seq is the order).
FINAL_SQL = """
WITH r AS (SELECT * FROM {system}_replay('sample'{params})),
sides AS (
    SELECT player_a AS player, seq, rating_a_after AS rating, sd_a_after AS sd FROM r
    UNION ALL
    SELECT player_b AS player, seq, rating_b_after AS rating, sd_b_after AS sd FROM r
)
SELECT player, arg_max(rating, seq), arg_max(sd, seq) FROM sides GROUP BY player
"""


@dataclass(frozen=True)
class PeerBenchmark:
    """What a system's benchmark script declares."""

    title: str
    system: str
    sql_params: str  # e.g. "" or ", tau := 0.5"
    peer_name: str  # PyPI distribution, for its version
    peer: Callable[[list], dict]  # rows (player_a, player_b, score_a) in replay order -> {player: (rating, sd)}
    target_seconds: float  # over --size matches through SQL
    target_ratio: float  # duckrate matches/s over peer matches/s on the same sample
    size: int = 1_000_000
    peer_sample: int = 100_000
    agreement_note: str = ""
    tolerance: float | None = None  # None: the difference is reported, not checked


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _time_replay(con, bench: PeerBenchmark, table: str, repeats: int, expected_rows: int) -> list[float]:
    return common.time_replay(con, f"{bench.system}_replay('{table}'{bench.sql_params})", repeats, expected_rows)


def run_child(bench: PeerBenchmark, args) -> int:
    con = common.benchmark_connection(args.data)
    rss_attached = common.rss_bytes()
    n = con.execute("SELECT count(*) FROM src.main.matches").fetchone()[0]

    con.execute(f"CREATE TABLE warm AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {WARMUP_ROWS}")
    _time_replay(con, bench, "warm", 1, min(WARMUP_ROWS, n))
    con.execute("DROP TABLE warm")

    whole = _time_replay(con, bench, "src.main.matches", args.repeats, n)
    peak = common.maxrss_bytes()

    sample = min(args.peer_sample, n)
    con.execute(f"CREATE TABLE sample AS SELECT * FROM src.main.matches ORDER BY played_at, match_id LIMIT {sample}")
    on_sample = _time_replay(con, bench, "sample", args.repeats, sample)
    rows = con.execute("SELECT player_a, player_b, score_a FROM sample ORDER BY played_at, match_id").fetchall()
    peer_seconds, peer_final = [], {}
    for _ in range(args.peer_repeats):
        started = time.perf_counter()
        peer_final = bench.peer(rows)
        peer_seconds.append(time.perf_counter() - started)

    final = {
        player: (rating, sd)
        for player, rating, sd in con.execute(FINAL_SQL.format(system=bench.system, params=bench.sql_params)).fetchall()
    }
    common_players = set(final) & set(peer_final)
    diffs = [max(abs(final[p][0] - peer_final[p][0]), abs(final[p][1] - peer_final[p][1])) for p in common_players]
    common.emit_result(
        {
            "n": n,
            "whole": whole,
            "sample": sample,
            "on_sample": on_sample,
            "peer_seconds": peer_seconds,
            "rss_attached": rss_attached,
            "peak": peak,
            "players": len(common_players),
            "players_mismatched": len(set(final) ^ set(peer_final)),
            "max_diff": max(diffs, default=0.0),
        }
    )
    return 0


def report(bench: PeerBenchmark, result: dict, args) -> bool:
    n, sample = result["n"], result["sample"]
    seconds = common.median(result["whole"])
    rate = n / seconds
    sample_rate = sample / common.median(result["on_sample"])
    peer_rate = sample / common.median(result["peer_seconds"])
    ratio = sample_rate / peer_rate
    agreement = result["players_mismatched"] == 0 and (bench.tolerance is None or result["max_diff"] <= bench.tolerance)
    headers = [
        "matches",
        "matches/s",
        "s (median)",
        "peak RSS GB",
        f"{common.human_count(sample)}: duckrate matches/s",
        f"{bench.peer_name} matches/s",
        "ratio",
        "target",
        "met",
    ]
    met = ["yes" if seconds <= bench.target_seconds else "NO", "yes" if ratio >= bench.target_ratio else "NO"]
    row = [
        common.human_count(n),
        f"{rate / 1e6:.2f}M",
        f"{seconds:.3f}",
        f"{result['peak'] / common.GB:.2f}",
        f"{sample_rate / 1e6:.3f}M",
        f"{peer_rate / 1e3:.1f}k",
        f"{ratio:.0f}x",
        f"<= {bench.target_seconds:g} s, >= {bench.target_ratio:g}x",
        ", ".join(met),
    ]
    print()
    print(common.format_table(headers, [row]))
    print()
    print(
        f"{bench.title}: {N_PLAYERS:,} players, generate_matches(n, {N_PLAYERS}, n_leagues=1, seed={SEED}); "
        f"median of {args.repeats} run(s), peer median of {args.peer_repeats}."
    )
    print(
        f"duckrate: CREATE OR REPLACE TABLE r AS SELECT * FROM {bench.system}_replay('<table>'{bench.sql_params}) "
        "(in-memory connection, data ATTACHed read-only; reading, validating, sorting and writing all timed)."
    )
    print(
        f"peer: {bench.peer_name} {common.package_version(bench.peer_name)} replaying the first "
        f"{sample:,} matches in the same order (its loop only; rows fetched beforehand)."
    )
    print(
        f"runs: whole {', '.join(f'{s:.3f}' for s in result['whole'])} s; sample "
        f"{', '.join(f'{s:.3f}' for s in result['on_sample'])} s; peer {', '.join(f'{s:.3f}' for s in result['peer_seconds'])} s"
    )
    print(f"peak RSS {result['peak'] / common.GB:.2f} GB (after attach {result['rss_attached'] / common.GB:.2f} GB)")
    check = "reported only" if bench.tolerance is None else f"tolerance {bench.tolerance:g}"
    print(
        f"final ratings vs the peer on {result['players']:,} players: max |difference| = {result['max_diff']:.3g} "
        f"({check}); players in one side only: {result['players_mismatched']}"
    )
    if bench.agreement_note:
        print(bench.agreement_note)
    print(f"agreement: {'ok' if agreement else 'FAILED'}")
    return agreement


def main(bench: PeerBenchmark, script: str, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"{bench.title} through SQL against {bench.peer_name}.")
    parser.add_argument("--size", type=int, default=bench.size, help="matches replayed through SQL")
    parser.add_argument("--peer-sample", type=int, default=bench.peer_sample, help="matches for the peer comparison")
    parser.add_argument("--repeats", type=int, default=3, help="timed duckrate runs (median reported)")
    parser.add_argument("--peer-repeats", type=int, default=1, help="timed peer runs (median reported)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.size, args.peer_sample, args.repeats, args.peer_repeats) < 1:
        parser.error("sizes and repeats must be positive")
    if args.child:
        return run_child(bench, args)
    print(f"# duckrate benchmark: {bench.title} through SQL")
    print()
    for line in common.machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "pyarrow", bench.peer_name)):
        print(line)
    sys.stdout.flush()
    data = common.matches_file(f"elo_{args.size}", args.size, N_PLAYERS, n_leagues=1, seed=SEED, log=_log)
    _log(f"running {args.size:,} matches ...")
    result = common.run_child(
        [
            script,
            "--child",
            "--data",
            str(data),
            "--size",
            str(args.size),
            "--peer-sample",
            str(args.peer_sample),
            "--repeats",
            str(args.repeats),
            "--peer-repeats",
            str(args.peer_repeats),
        ]
    )
    return 0 if report(bench, result, args) else 1
