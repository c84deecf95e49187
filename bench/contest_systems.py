"""Benchmark: every contest system beside the Elo-MMR reference implementation's same system (``elo-mmr-py``,
its Rust bindings), at Codeforces size and at 100 x 500.

Targets (issue "Ranked contests: the Elo-MMR paper's whole comparison"): each system over a Codeforces-sized
history (1,000 contests x 2,750 players from a pool of 300,000: 2.75M results) in at most 60 s on this 2-core
machine, and faster than ``elo-mmr-py``'s same system. The paper's 24-core figures for the real Codeforces
history: Codeforces 212.9 s, TopCoder 72.5 s, TrueSkill 67.2 s, Elo-MMχ 31.4 s, Elo-MMR 35.4 s.

Each case runs in a fresh child process (``_common.run_child``): data loaded and kernels compiled or loaded on
a small slice (untimed), then one timed run of the Python function (``duckrate.<system>(results, ...)``).
The peer runs in its own child with ``RAYON_NUM_THREADS`` = 1 and 2: ``Rater(system).extend(contests)``
timed, the ``Contest`` objects built beforehand. At Codeforces size the peer is too slow to run whole here
(its O(n²) systems take hours on two cores), so it is timed on the first ``--peer-contests`` contests and its
time extrapolated linearly to 1,000 contests (printed as such); duckrate is timed on the same prefix too, so
the ratio is measured on the same work, and on the whole history for the target. The max rating difference
is between the final ratings of every player after the prefix (Codeforces size) or the whole history.

duckrate's parameters are the reference's defaults (Elo-MMR: β = 80√6, γ = 80√0.2, every history factor kept,
as the reference's ``mmr``; ``max_opponents := 100, max_history := 100`` against its ``mmr-fast``).

Usage (from the repository root)::

    .venv/bin/python bench/contest_systems.py
    .venv/bin/python bench/contest_systems.py --skip-large
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

LARGE = (1000, 2750, 300_000)
SMALL = (100, 500, 2000)
TARGET_SECONDS = 60.0
MMR = {"beta": 80 * math.sqrt(6), "drift": 80 * math.sqrt(0.2), "history_tolerance": 0.0}
# name shown, duckrate function, its parameters, the peer's system name
CASES = {
    "codeforces": ("codeforces", {}, "cfsys"),
    "topcoder": ("topcoder", {}, "tcsys"),
    "trueskill_contest": ("trueskill_contest", {}, "trueskill"),
    "elo_mmr gaussian (Elo-MMχ)": ("elo_mmr", {**MMR, "variant": "gaussian"}, "mmx"),
    "elo_mmr (Elo-MMR)": ("elo_mmr", MMR, "mmr"),
    "elo_mmr max_opponents 100": ("elo_mmr", {**MMR, "max_opponents": 100, "max_history": 100}, "mmr-fast"),
    "glicko_contest": ("glicko_contest", {}, "glicko"),
    "bar": ("bar", {}, "bar"),
}


def contests(size):
    import polars as pl

    from duckrate.synthetic import generate_contests

    n_contests, per_contest, pool = size
    common.DATA_DIR.mkdir(parents=True, exist_ok=True)
    path = common.DATA_DIR / f"contests_{n_contests}_{per_contest}_{pool}.parquet"
    if not path.exists():
        generate_contests(n_contests, per_contest, pool, seed=2020).write_parquet(path)
    return pl.read_parquet(path).drop("league")


def prefix(results, n_contests):
    import polars as pl

    ids = results.select(pl.col("contest_id").unique().sort()).to_series()[:n_contests]
    return results.filter(pl.col("contest_id").is_in(ids.implode()))


def final_ratings(rows) -> dict:
    import polars as pl

    last = rows.sort("seq").group_by("player", maintain_order=True).agg(pl.col("rating_after").last())
    return dict(zip(last["player"].to_list(), last["rating_after"].to_list()))


def child_duckrate(args) -> None:
    import duckrate

    function, params, _ = CASES[args.case]
    results = contests(LARGE if args.size == "large" else SMALL)
    if args.contests:
        results = prefix(results, args.contests)
    run = getattr(duckrate, function)
    run(prefix(results, 3), **params)  # compile or load the kernels
    common.reset_hwm()
    start = time.perf_counter()
    rows = run(results, **params)
    seconds = time.perf_counter() - start
    common.emit_result(
        {
            "seconds": seconds,
            "rows": rows.height,
            "peak_gb": (common.hwm_bytes() or common.maxrss_bytes()) / common.GB,
            "ratings": final_ratings(rows),
        }
    )


def child_peer(args) -> None:
    import polars as pl
    from elo_mmr_py import Contest, Rater

    system = CASES[args.case][2]
    results = contests(LARGE if args.size == "large" else SMALL)
    if args.contests:
        results = prefix(results, args.contests)
    built = []
    for (contest_id,), part in results.sort("played_at", "contest_id", "rank", "player").group_by(
        ["contest_id"], maintain_order=True
    ):
        ranks = part["rank"].to_list()
        first, last = {}, {}
        for place, rank in enumerate(ranks):
            first.setdefault(rank, place)
            last[rank] = place
        built.append(
            Contest([(p, first[r], last[r]) for p, r in zip(part["player"].to_list(), ranks)], str(contest_id))
        )
    rater = Rater(system)
    start = time.perf_counter()
    rater.extend(built)
    seconds = time.perf_counter() - start
    ratings = {name: rating.mu for name, rating in rater.ratings.items()}
    del pl
    common.emit_result({"seconds": seconds, "ratings": ratings})


def run_case(case: str, size: str, contests_: int | None, peer_threads: int | None) -> dict:
    argv = [__file__, "--child", "peer" if peer_threads else "duckrate", "--case", case, "--size", size]
    if contests_:
        argv += ["--contests", str(contests_)]
    if peer_threads:
        os.environ["RAYON_NUM_THREADS"] = str(peer_threads)
    try:
        return common.run_child(argv)
    finally:
        os.environ.pop("RAYON_NUM_THREADS", None)


def max_difference(ours: dict, theirs: dict) -> float:
    return max(abs(ours[name] - theirs[name]) for name in theirs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", choices=("duckrate", "peer"))
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--size", choices=("large", "small"), default="large")
    parser.add_argument("--contests", type=int, default=None)
    parser.add_argument("--peer-contests", type=int, default=20, help="Codeforces size: contests the peer rates")
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--cases", nargs="*", default=sorted(CASES, key=list(CASES).index))
    args = parser.parse_args(argv)
    if args.child == "duckrate":
        child_duckrate(args)
        return 0
    if args.child == "peer":
        child_peer(args)
        return 0

    print("\n".join(common.machine_lines(("duckrate", "numba", "numpy", "polars", "elo-mmr-py"))))
    for size in ("small",) + (() if args.skip_large else ("large",)):
        n_contests = (SMALL if size == "small" else LARGE)[0]
        per = (SMALL if size == "small" else LARGE)[1]
        print(f"\n## {n_contests} contests x {per} players")
        rows = []
        for case in args.cases:
            peer_contests = args.peer_contests if size == "large" else None
            ours_prefix = run_case(case, size, peer_contests, None) if peer_contests else None
            ours = run_case(case, size, None, None)
            ours_prefix = ours_prefix or ours
            peers = {threads: run_case(case, size, peer_contests, threads) for threads in (1, 2)}
            scale = n_contests / peer_contests if peer_contests else 1.0
            met = ours["seconds"] <= TARGET_SECONDS if size == "large" else True
            rows.append(
                [
                    case,
                    f"{ours['seconds']:.2f}",
                    f"{ours['rows'] / ours['seconds'] / 1e3:.0f}k",
                    f"{ours['peak_gb']:.2f}",
                    f"{ours_prefix['seconds']:.2f}" if peer_contests else "",
                    *(
                        f"{peers[t]['seconds']:.2f}"
                        + (f" (~{peers[t]['seconds'] * scale:.0f})" if peer_contests else "")
                        for t in (1, 2)
                    ),
                    f"{min(peers[t]['seconds'] for t in (1, 2)) / ours_prefix['seconds']:.1f}x",
                    f"{max_difference(ours_prefix['ratings'], peers[2]['ratings']):.1e}",
                    ("yes" if met and ours_prefix["seconds"] < min(p["seconds"] for p in peers.values()) else "no"),
                ]
            )
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
        headers = [
            "system",
            "s, duckrate",
            "results/s",
            "peak GB",
            f"s, duckrate, first {args.peer_contests}" if size == "large" else "",
            "s, peer 1 thread" + (" (extrapolated)" if size == "large" else ""),
            "s, peer 2 threads" + (" (extrapolated)" if size == "large" else ""),
            "peer / duckrate",
            "max rating diff",
            "met",
        ]
        print(common.format_table(headers, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
