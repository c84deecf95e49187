"""Benchmark: Bradley-Terry for arena leaderboards (issue 19) beside arena-rank and evalica, in one run.

Targets (this 2-core machine): at least as fast as the fastest peer on every row where both compute the same
thing, and the arena-shaped fit with sandwich intervals and three style covariates in at most 3 s. Nothing is
asserted about timings; the script prints tables to paste into BENCHMARKS.md and exits non-zero only when a
run fails or a check disagrees.

Data (``duckrate.synthetic.generate_battles``, cached as Parquet under ``bench/.data/``):

* ``arena``: 130 models, 1.5M battles, 10% ties, adaptive pair sampling, three style covariates;
* ``1M``: 1M battles among 50k players and ``10M``: 10M battles among 185k players, no covariates (the
  generator's tie chain keeps the plain MLE finite, so every library fits the same estimator).

Rows, each library in a fresh process (its peak memory is its own):

* ``fit``: point estimate only (duckrate ``uncertainty := 'none'``; arena-rank ``ci_method=None``;
  evalica ``bradley_terry``);
* ``fit + sandwich``: duckrate ``'sandwich'`` (exact dense up to 1000 players, ``sandwich_sparse`` above);
  arena-rank's sandwich (dense n x n Hessian and score covariance);
* ``fit + bootstrap``: 100 resamples (duckrate ``'bootstrap'``; arena-rank ``ci_method='bootstrap'`` on
  two spawned workers; evalica ``bootstrap`` over rows). Where a peer's 100 resamples would take far
  longer than the rest of the run, it runs ``--peer-resamples`` and the table says so and extrapolates;
* ``fit + sandwich + covariates`` (arena set): duckrate ``covariates := [...], reweight :=
  'inverse_pair_frequency'``; arena-rank's ``ContextualBradleyTerry`` with the same weights, no ridge on
  the coefficients (``reg=0``) and raw features: the same estimator. Also timed through SQL.

Timings: duckrate's ``bt_fit`` call on a Polars frame (numba warmed up on a small head first); arena-rank's
dataset construction + ``fit`` (+ intervals), measured inside its process after JAX's start-up and a
warm-up fit; evalica's ``bradley_terry`` (+ ``bootstrap``), after a warm-up. Every library runs at its
default tolerance; the ``max |Δ|`` column is each result's distance (rating points) from duckrate's fit at a
gradient norm of 1e-11, so a fast-but-loose peer shows as such. arena-rank and evalica run in their own venv
(``tests/helpers/bt_peers.py``; arena-rank pins numpy and jax versions of its own).

Usage (from the repository root)::

    .venv/bin/python bench/bt_arena.py            # all three sets
    .venv/bin/python bench/bt_arena.py --quick    # the arena set only
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _common as common

SEED = 20_251_123
STYLE = ["len_diff", "md_headers_diff", "bold_diff"]
SETS = {
    "arena": {"n_models": 130, "n_battles": 1_500_000, "n_covariates": 3, "adaptive": True},
    "1M": {"n_models": 50_000, "n_battles": 1_000_000, "n_covariates": 0, "adaptive": False},
    "10M": {"n_models": 185_000, "n_battles": 10_000_000, "n_covariates": 0, "adaptive": False},
}
ROWS = ("fit", "sandwich", "bootstrap", "covariates")
ROW_LABEL = {
    "fit": "fit",
    "sandwich": "fit + sandwich",
    "bootstrap": "fit + 100 bootstrap",
    "covariates": "fit + sandwich + covariates",
}
RESAMPLES = 100
TARGET_COVARIATES_SECONDS = 3.0
POINTS = 400.0 / math.log(10.0)
DATA_FORMAT = 1


def _data_path(name: str) -> Path:
    return common.DATA_DIR / f"battles_{name}_v{DATA_FORMAT}.parquet"


def _reference_path(name: str, row: str) -> Path:
    return common.DATA_DIR / f"battles_{name}_v{DATA_FORMAT}_{row}_reference.parquet"


# --------------------------------------------------------------------------------------------
# Children
# --------------------------------------------------------------------------------------------


def child_generate(args) -> None:
    from duckrate.synthetic import generate_battles

    spec = SETS[args.set]
    frame = generate_battles(
        spec["n_models"],
        spec["n_battles"],
        SEED,
        n_covariates=spec["n_covariates"],
        adaptive=spec["adaptive"],
    )
    path = _data_path(args.set)
    partial = path.with_suffix(".partial")
    frame.write_parquet(partial)
    partial.replace(path)
    common.emit_result({"rows": frame.height})


def _read(name: str, covariates: bool):
    import polars as pl

    columns = ["match_id", "played_at", "player_a", "player_b", "score_a"] + (STYLE if covariates else [])
    return pl.read_parquet(_data_path(name), columns=columns)


def _options(row: str) -> dict:
    if row == "fit":
        return {"uncertainty": "none"}
    if row == "sandwich":
        return {"uncertainty": "sandwich"}
    if row == "bootstrap":
        return {"uncertainty": "bootstrap", "resamples": RESAMPLES}
    return {"uncertainty": "sandwich", "covariates": STYLE, "reweight": "inverse_pair_frequency"}


def _reference(name: str, row: str, frame):
    """duckrate's fit at a gradient norm of 1e-11 (cached): the yardstick of every library's ratings."""
    import polars as pl

    import duckrate

    path = _reference_path(name, row)
    if path.exists():
        return pl.read_parquet(path)
    options = {key: value for key, value in _options(row).items() if key != "resamples"}
    options["uncertainty"] = "sandwich" if row in ("sandwich", "covariates") else "none"
    fit = duckrate.bt_fit(frame, tol=1e-11, **options)
    fit.write_parquet(path)
    return fit


def _distance(reference, players, ratings) -> float:
    """max |rating - reference| in points over players, both as 1500-centred (mean-zero θ) ratings."""
    import numpy as np
    import polars as pl

    ours = reference.filter(pl.col("kind") == "player")
    theirs = pl.DataFrame({"player": list(players), "peer": np.asarray(ratings, dtype=np.float64)})
    joined = ours.join(theirs, on="player", how="inner")
    if joined.height != ours.height:
        raise SystemExit(f"peer reported {theirs.height} players, duckrate {ours.height}")
    peer = joined["peer"].to_numpy()
    peer = peer - peer.mean() + joined["rating"].to_numpy().mean()
    return float(np.max(np.abs(peer - joined["rating"].to_numpy())))


def child_duckrate(args) -> None:
    import numpy as np
    import polars as pl

    import duckrate

    frame = _read(args.set, args.row == "covariates")
    options = _options(args.row)
    from duckrate.synthetic import generate_battles

    warm = generate_battles(40, 20_000, 1, n_covariates=3 if args.row == "covariates" else 0)
    duckrate.bt_fit(warm, **{**options, "resamples": 2} if args.row == "bootstrap" else options)
    reference = _reference(args.set, args.row, frame)
    common.reset_hwm()
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        fit = duckrate.bt_fit(frame, **options)
        seconds.append(time.perf_counter() - started)
    players = fit.filter(pl.col("kind") == "player")
    result = {
        "seconds": seconds,
        "hwm_gb": (common.hwm_bytes() or 0) / common.GB,
        "uncertainty": players["uncertainty"][0],
        "distance": _distance(reference, players["player"].to_list(), players["rating"].to_numpy()),
        "players": players.height,
        "rows": frame.height,
    }
    if args.row in ("sandwich", "covariates"):
        ours = reference.filter(pl.col("kind") == "player")["sd"].to_numpy()
        result["sd_rel_to_reference"] = float(np.max(np.abs(players["sd"].to_numpy() / ours - 1.0)))
    if args.row == "covariates":
        coefficients = fit.filter(pl.col("kind") == "covariate")
        result["coefficients"] = dict(zip(coefficients["player"].to_list(), coefficients["rating"].to_list()))
        result["coefficient_sds"] = dict(zip(coefficients["player"].to_list(), coefficients["sd"].to_list()))
        result["sql_seconds"] = _sql_seconds(args.set, args.repeats)
    common.emit_result(result)


def _sql_seconds(name: str, repeats: int) -> list[float]:
    """The covariates row through SQL: ``CREATE TABLE r AS SELECT * FROM bt_fit('battles', ...)`` on a
    DuckDB view over the Parquet file."""
    import duckdb

    import duckrate

    con = duckdb.connect()
    duckrate.register(con)
    con.execute(f"CREATE VIEW battles AS SELECT * FROM read_parquet('{_data_path(name)}')")
    call = (
        "bt_fit('battles', uncertainty := 'sandwich', covariates := "
        + "["
        + ", ".join(f"'{column}'" for column in STYLE)
        + "], reweight := 'inverse_pair_frequency')"
    )
    con.execute(f"CREATE OR REPLACE TABLE r AS SELECT * FROM {call}")
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TABLE r AS SELECT * FROM {call}")
        seconds.append(time.perf_counter() - started)
    con.close()
    return seconds


def child_peer(args) -> None:
    import numpy as np
    from helpers import bt_peers

    frame = _read(args.set, args.row == "covariates")
    reference = _reference(args.set, args.row, frame)
    try:
        if args.library == "arena":
            options = {"ci_method": {"fit": None, "bootstrap": "bootstrap"}.get(args.row, "sandwich")}
            if args.row == "bootstrap":
                options.update(num_bootstrap=args.resamples, n_jobs=2)
            if args.row == "covariates":
                options.update(covariates=STYLE, reweighted=True, reg=0.0, normalize_features=False)
            peer = bt_peers.arena_rank(frame, timeout=args.timeout, **options)
            seconds = peer["seconds_dataset"] + peer["seconds_fit" if args.row == "fit" else "seconds_fit_ci"]
            ratings = peer["ratings"]
        else:
            peer = bt_peers.evalica_bt(
                frame, resamples=args.resamples if args.row == "bootstrap" else 0, timeout=args.timeout
            )
            seconds = peer["seconds_fit_ci"] if args.row == "bootstrap" else peer["seconds_fit"]
            ratings = 1500.0 + peer["log_scores"] * POINTS
    except bt_peers.PeerTooLarge as error:
        common.emit_result({"skipped": f"too large: {error}"})
        return
    except subprocess.TimeoutExpired:  # reported, not fatal
        common.emit_result({"skipped": f"no result within {args.timeout:.0f} s"})
        return
    result = {
        "seconds": [seconds],
        "resamples": args.resamples if args.row == "bootstrap" else None,
        "hwm_gb": max(peer.get("hwm_bytes") or 0, peer.get("children_maxrss_bytes") or 0) / common.GB,
        "distance": _distance(reference, peer["competitors"], ratings),
        "versions": peer.get("versions"),
    }
    if args.library == "arena" and args.row in ("sandwich", "covariates"):
        import polars as pl

        ours = reference.filter(pl.col("kind") == "player").sort("player")["sd"].to_numpy()
        result["sd_ratio_min"] = float(np.min(np.sqrt(peer["variances"]) / ours))
        result["sd_ratio_max"] = float(np.max(np.sqrt(peer["variances"]) / ours))
    if args.library == "evalica":
        result["converged"] = bool(peer["converged"])
        result["iterations"] = int(peer["iterations"])
    common.emit_result(result)


# --------------------------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------------------------


def _ensure_data(name: str, log) -> None:
    if _data_path(name).exists():
        return
    spec = SETS[name]
    log(f"generating {name}: {spec['n_battles']:,} battles among {spec['n_models']:,} players ...")
    common.DATA_DIR.mkdir(parents=True, exist_ok=True)
    for stale in common.DATA_DIR.glob(f"battles_{name}_v{DATA_FORMAT}_*_reference.parquet"):
        stale.unlink()
    common.run_child([__file__, "--child", "generate", "--set", name])


def _peer_resamples(name: str, library: str, requested: int) -> int:
    if name == "arena" or library == "evalica":
        return RESAMPLES
    return requested


def _seconds_cell(result: dict) -> str:
    if "skipped" in result:
        return "—"
    seconds = common.median(result["seconds"])
    resamples = result.get("resamples")
    if resamples and resamples != RESAMPLES:
        return f"{seconds:.2f} ({resamples} resamples; ≈{seconds * RESAMPLES / resamples:.0f} for 100)"
    return f"{seconds:.2f}"


def _comparable_seconds(result: dict) -> float | None:
    if "skipped" in result:
        return None
    seconds = common.median(result["seconds"])
    resamples = result.get("resamples")
    return seconds * RESAMPLES / resamples if resamples else seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", choices=list(SETS), default=list(SETS))
    parser.add_argument("--quick", action="store_true", help="the arena set only, one repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-resamples", type=int, default=4, help="arena-rank's resamples on the large sets")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds before a peer run is abandoned")
    parser.add_argument("--child", choices=["generate", "duckrate", "peer"])
    parser.add_argument("--set", choices=list(SETS))
    parser.add_argument("--row", choices=ROWS)
    parser.add_argument("--library", choices=["arena", "evalica"])
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    args = parser.parse_args()
    if args.child:
        {"generate": child_generate, "duckrate": child_duckrate, "peer": child_peer}[args.child](args)
        return 0
    if args.quick:
        args.sets, args.repeats = ["arena"], 1

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    print("\n".join(common.machine_lines(("duckrate", "duckdb", "polars", "numba", "numpy", "scipy"))))
    failures = []
    table_rows = []
    target_line = None
    for name in args.sets:
        _ensure_data(name, log)
        spec = SETS[name]
        rows = ROWS if spec["n_covariates"] else ROWS[:3]
        for row in rows:
            log(f"{name} {row}: duckrate ...")
            ours = common.run_child(
                [__file__, "--child", "duckrate", "--set", name, "--row", row, "--repeats", str(args.repeats)],
                timeout=7200,
            )
            peers = {}
            libraries = ["arena"] if row in ("sandwich", "covariates") else ["arena", "evalica"]
            for library in libraries:
                resamples = _peer_resamples(name, library, args.peer_resamples)
                log(f"{name} {row}: {library} ...")
                peers[library] = common.run_child(
                    [__file__, "--child", "peer", "--set", name, "--row", row, "--library", library]
                    + ["--resamples", str(resamples), "--timeout", str(args.timeout)],
                    timeout=args.timeout + 600,
                )
            fastest = [s for s in (_comparable_seconds(r) for r in peers.values()) if s is not None]
            our_seconds = common.median(ours["seconds"])
            met = "—" if not fastest else ("yes" if our_seconds <= min(fastest) else "NO")
            cells = [f"{spec['n_battles'] / 1e6:g}M / {spec['n_models']:,}", ROW_LABEL[row]]
            cells.append(f"{our_seconds:.2f}")
            cells.append(f"{ours['hwm_gb']:.2f}")
            cells.append(f"{spec['n_battles'] / our_seconds / 1e6:.2f}")
            for library in ("arena", "evalica"):
                result = peers.get(library)
                if result is None:
                    cells.append("n/a")
                    continue
                cell = _seconds_cell(result)
                if "skipped" in result:
                    cell = result["skipped"].split(":")[0].split(" (")[0]
                else:
                    cell += f" ({result['hwm_gb']:.1f} GB, Δ {result['distance']:.1g})"
                cells.append(cell)
            ratio = f"{min(fastest) / our_seconds:.1f}x" if fastest else "—"
            cells += [ratio, met, f"{ours['distance']:.1g}"]
            table_rows.append(cells)
            log("  " + " | ".join(cells))
            for library, result in peers.items():
                if "skipped" in result:
                    log(f"  {library}: {result['skipped']}")
                elif "sd_ratio_min" in result:
                    log(f"  arena-rank sd / duckrate sd: {result['sd_ratio_min']:.5f} .. {result['sd_ratio_max']:.5f}")
            if ours["distance"] > 1e-3:
                failures.append(f"{name} {row}: duckrate at its default tolerance is {ours['distance']:.2g} points off")
            if row == "covariates":
                sql = common.median(ours["sql_seconds"])
                target_line = (
                    f"arena set, sandwich + covariates: {our_seconds:.2f} s (Python), {sql:.2f} s (SQL); "
                    f"target {TARGET_COVARIATES_SECONDS:g} s: "
                    + ("met" if max(our_seconds, sql) <= TARGET_COVARIATES_SECONDS else "NOT met")
                    + "; coefficients (points per unit): "
                    + ", ".join(
                        f"{k} {v:.1f} ± {ours['coefficient_sds'][k]:.1f}" for k, v in ours["coefficients"].items()
                    )
                )
    headers = [
        "battles / players",
        "row",
        "duckrate s",
        "peak GB",
        "M battles/s",
        "arena-rank s (peak, max |Δ| pts)",
        "evalica s (peak, max |Δ| pts)",
        "vs fastest peer",
        "met",
        "duckrate max |Δ| pts",
    ]
    print()
    print(common.format_table(headers, table_rows))
    if target_line:
        print()
        print(target_line)
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(json.dumps({"ok": True}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
