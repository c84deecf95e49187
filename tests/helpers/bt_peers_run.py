"""Runs one peer Bradley-Terry fit (arena-rank or evalica) on a Parquet file; the worker behind ``bt_peers``.

Run by a peer's interpreter (arena-rank's own venv, see ``bt_peers.arena_python``), never imported by
duckrate's tests: ``python bt_peers_run.py SPEC.json``. The spec names the library, the Parquet file (the
canonical match columns: ``player_a``, ``player_b``, ``score_a`` 1/0.5/0, plus covariate columns), the
options and an output ``.npz`` path. Arrays go to the ``.npz``; scalars (seconds, versions, memory) to
the last stdout line, prefixed ``@@bt-peers ``, as JSON.

Timings are taken here, after the imports, the Parquet read and a warm-up on a small head of the data
(JAX's backend start-up; arena-rank re-traces and re-compiles its L-BFGS loop on every ``fit``, which is
part of every real call and so stays inside the timings):

* ``seconds_dataset``: arena-rank's ``PairDataset.from_pandas`` / ``ContextualPairDataset.from_pandas``
  (factorising the names, mapping the ``winner`` strings, grouping identical rows, weights); evalica has
  no separate step (its ``indexing`` is inside its call);
* ``seconds_fit``: ``model.fit(dataset)`` (evalica: ``evalica.bradley_terry``);
* ``seconds_ci``: ``compute_ratings_and_cis`` after the fit (evalica: ``evalica.bootstrap``, which refits
  the point estimate first), ``seconds_fit_ci = seconds_fit + seconds_ci``.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time

RESULT_PREFIX = "@@bt-peers "
POINTS = 400.0 / math.log(10.0)
WARMUP_ROWS = 2_000


def _hwm_bytes() -> int | None:
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _memory() -> dict:
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return {"hwm_bytes": _hwm_bytes(), "children_maxrss_bytes": children or None}


def _read(path: str, columns: list[str]):
    import numpy as np
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=columns)
    frame = table.to_pandas()
    score = frame["score_a"].to_numpy(dtype=np.float64)
    if not np.all((score == 0.0) | (score == 0.5) | (score == 1.0)):
        raise ValueError("score_a must be 1, 0.5 or 0 for the peers (arena-rank's outcomes, evalica's winners)")
    return frame, score


def run_arena(spec: dict) -> tuple[dict, dict]:
    import jax
    import numpy as np
    from arena_rank.models.bradley_terry import BradleyTerry
    from arena_rank.models.contextual_bradley_terry import ContextualBradleyTerry
    from arena_rank.utils.data_utils import ContextualPairDataset, PairDataset

    covariates = list(spec.get("covariates") or [])
    frame, score = _read(spec["data"], ["player_a", "player_b", "score_a", *covariates])
    frame["winner"] = np.where(score == 1.0, "model_a", np.where(score == 0.0, "model_b", "tie"))
    ci_method = spec.get("ci_method")
    contextual = bool(covariates)

    def build(df):
        common = {
            "competitor_cols": ["player_a", "player_b"],
            "outcome_col": "winner",
            "reweighted": bool(spec["reweighted"]),
            "min_pair_count": int(spec["min_pair_count"]),
        }
        if contextual:
            return ContextualPairDataset.from_pandas(
                df, feature_cols=covariates, normalize_features=bool(spec["normalize_features"]), **common
            )
        return PairDataset.from_pandas(df, **common)

    def model_for(dataset):
        common = {
            "hessian_reg": float(spec["hessian_reg"]),
            "max_iter": int(spec["max_iter"]),
            "gtol": float(spec["gtol"]),
            "ftol": float(spec["ftol"]),
        }
        if contextual:
            return ContextualBradleyTerry(len(dataset.competitors), len(covariates), reg=float(spec["reg"]), **common)
        return BradleyTerry(len(dataset.competitors), **common)

    if ci_method == "bootstrap":
        # arena-rank's Pool uses the default start method, fork on Linux before Python 3.14: forked
        # workers of a process that has started JAX's threads hang. Spawn them afresh instead.
        import multiprocessing

        multiprocessing.set_start_method(spec.get("mp_start_method") or "spawn", force=True)

    def cis(model, dataset):
        return model.compute_ratings_and_cis(
            dataset,
            significance_level=float(spec["significance_level"]),
            ci_method=ci_method,
            num_bootstrap=int(spec["num_bootstrap"]),
            seed=int(spec["seed"]),
            n_jobs=int(spec["n_jobs"]),
        )

    if spec.get("warmup", True) and len(frame) > WARMUP_ROWS:
        head = frame.iloc[:WARMUP_ROWS]
        dataset = build(head)
        model = model_for(dataset).fit(dataset)
        jax.block_until_ready(model.params)
        if ci_method == "sandwich":
            jax.block_until_ready(cis(model, dataset))

    started = time.perf_counter()
    dataset = build(frame)
    jax.block_until_ready(dataset.as_dict())
    fitted_at = time.perf_counter()
    model = model_for(dataset).fit(dataset)
    params = jax.block_until_ready(model.params)
    done_fit = time.perf_counter()
    if ci_method is None:
        result = {
            "competitors": dataset.competitors,
            "ratings": params["ratings"] * model.alpha + model.init_rating,
            "rating_lower": None,
            "rating_upper": None,
            "variances": None,
        }
        if contextual:
            result["coeffs"] = params["coeffs"]
    else:
        result = cis(model, dataset)
    arrays = {
        key: np.asarray(value, dtype=np.float64)
        for key, value in result.items()
        if key != "competitors" and value is not None
    }
    done = time.perf_counter()

    arrays["competitors"] = np.asarray(result["competitors"], dtype=np.str_)
    scalars = {
        "library": "arena-rank",
        "n_rows": len(frame),
        "n_competitors": len(dataset.competitors),
        "n_dataset_rows": int(dataset.pairs.shape[0]),
        "seconds_dataset": fitted_at - started,
        "seconds_fit": done_fit - fitted_at,
        "seconds_ci": done - done_fit,
        "seconds_fit_ci": done - fitted_at,
        "init_rating": float(model.init_rating),
        "scale": float(model.alpha),
    }
    if ci_method == "bootstrap":
        import multiprocessing

        scalars["mp_start_method"] = multiprocessing.get_start_method()
    if contextual:
        features = np.asarray(frame[covariates].to_numpy(dtype=np.float64))
        if spec["normalize_features"]:
            mean, std = features.mean(axis=0), features.std(axis=0)
            std = np.where(std == 0, 1.0, std)
        else:
            mean, std = np.zeros(len(covariates)), np.ones(len(covariates))
        arrays["feature_mean"], arrays["feature_std"] = mean, std
        arrays["coeffs_points"] = arrays["coeffs"] * model.alpha / std
        if ci_method == "sandwich":
            # arena-rank computes but does not return the coefficients' variances: the same formula, untimed.
            hessian, gradient_cov, n_obs = _matrices(model, dataset, params, True, model.hessian_reg)
            inverse = np.linalg.inv(hessian)
            covariance = inverse @ gradient_cov @ inverse / n_obs
            arrays["coeff_variances"] = np.diag(covariance)[len(dataset.competitors) :].copy()
            arrays["coeff_sd_points"] = np.sqrt(arrays["coeff_variances"]) * model.alpha / std
    if ci_method == "sandwich" and spec.get("exact_sandwich"):
        arrays.update(_exact_sandwich(model, dataset, params, contextual))
    if spec.get("weights_out"):
        arrays["weights"] = np.asarray(dataset.weights, dtype=np.float64)
    return scalars, arrays


def _matrices(model, dataset, params, contextual: bool, hessian_reg: float):
    """arena-rank's own Hessian H and score covariance J at the fit (its ``compute_hessian_and_covariance``),
    with ``hessian_reg`` on H's diagonal, as float64 arrays, and the number they are averaged over (the
    contextual model's are means over its rows, the plain model's sums)."""
    import numpy as np

    if contextual:
        n_obs = dataset.pairs.shape[0]
        matrices = model.compute_hessian_and_covariance(
            params["ratings"], params["coeffs"], dataset.pairs, dataset.features, dataset.outcomes,
            dataset.weights, model.reg, hessian_reg, model.n_competitors, model.n_features, n_obs,
        )  # fmt: skip
    else:
        n_obs = 1
        matrices = model.compute_hessian_and_covariance(
            params["ratings"], dataset.pairs, dataset.outcomes, dataset.counts, dataset.opt_weights, hessian_reg,
            model.n_competitors,
        )  # fmt: skip
    hessian, gradient_cov = (np.asarray(matrix, dtype=np.float64) for matrix in matrices)
    return hessian, gradient_cov, n_obs


def _exact_sandwich(model, dataset, params, contextual: bool) -> dict:
    """The sandwich H⁺ J H⁺ from arena-rank's own H and J without its diagonal regulariser (untimed).

    arena-rank inverts ``H + εI``: H is singular (ratings are defined up to a common shift), and J·1 is zero
    only up to rounding, which the 1/ε eigenvalue of the inverse blows up when ε is tiny; with its default ε
    the intervals are genuinely, if slightly, narrower. The limit ε → 0 is the pseudo-inverse sandwich,
    taken here with a symmetric eigendecomposition. Returns ``exact_variances`` (rating points²) and, for
    the contextual model, ``exact_coeff_variances`` (natural units, arena-rank's feature scale).
    """
    import numpy as np

    hessian, gradient_cov, n_obs = _matrices(model, dataset, params, contextual, 0.0)
    inverse = np.linalg.pinv(hessian, rcond=1e-10, hermitian=True)
    covariance = inverse @ gradient_cov @ inverse / n_obs
    variances = np.diag(covariance).copy()
    n = model.n_competitors
    result = {"exact_variances": variances[:n] * model.alpha**2}
    if contextual:
        result["exact_coeff_variances"] = variances[n:]
    return result


def run_evalica(spec: dict) -> tuple[dict, dict]:
    import evalica
    import numpy as np

    frame, score = _read(spec["data"], ["player_a", "player_b", "score_a"])
    xs = frame["player_a"].to_numpy(dtype=object)
    ys = frame["player_b"].to_numpy(dtype=object)
    # score_a 1: the first (xs) wins, 0: the second (ys) wins, 0.5: a draw.
    x, y, draw = int(evalica.Winner.X), int(evalica.Winner.Y), int(evalica.Winner.Draw)
    codes = np.where(score == 1.0, x, np.where(score == 0.0, y, draw))
    lookup = {int(winner): winner for winner in evalica.Winner}
    winners = [lookup[code] for code in codes.tolist()]
    options = {"tolerance": float(spec["tolerance"]), "limit": int(spec["limit"])}

    if spec.get("warmup", True) and len(xs) > WARMUP_ROWS:
        evalica.bradley_terry(xs[:WARMUP_ROWS], ys[:WARMUP_ROWS], winners[:WARMUP_ROWS], **options)

    started = time.perf_counter()
    result = evalica.bradley_terry(xs, ys, winners, **options)
    done_fit = time.perf_counter()
    arrays = {
        "competitors": np.asarray(result.scores.index.astype(str), dtype=np.str_),
        "scores": result.scores.to_numpy(dtype=np.float64),
    }
    arrays["log_scores"] = np.log(arrays["scores"])
    scalars = {
        "library": "evalica",
        "n_rows": len(xs),
        "n_competitors": len(arrays["scores"]),
        "iterations": int(result.iterations),
        "converged": int(result.iterations) < int(spec["limit"]),
        "seconds_dataset": 0.0,
        "seconds_fit": done_fit - started,
        "solver": str(result.solver),
    }
    resamples = int(spec.get("resamples") or 0)
    if resamples:
        boot = evalica.bootstrap(
            evalica.bradley_terry,
            xs,
            ys,
            winners,
            n_resamples=resamples,
            bootstrap_method=spec["bootstrap_method"],
            random_state=int(spec["seed"]),
            **options,
        )
        done = time.perf_counter()
        order = boot.result.scores.index
        distribution = boot.distribution[order].to_numpy(dtype=np.float64)
        for key in ("low", "high", "stderr"):
            arrays[key] = getattr(boot, key).reindex(order).to_numpy(dtype=np.float64)
        arrays["bootstrap_competitors"] = np.asarray(order.astype(str), dtype=np.str_)
        arrays["log_sd"] = np.log(distribution).std(axis=0, ddof=1)
        scalars["seconds_ci"] = done - done_fit
        scalars["seconds_fit_ci"] = done - started
    return scalars, arrays


def _versions(library: str) -> dict:
    from importlib import metadata

    names = ("arena-rank", "jax", "jaxlib", "optax", "numpy", "pandas") if library == "arena" else ("evalica", "numpy")
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def main(argv: list[str]) -> int:
    with open(argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    library = spec["library"]
    runner = {"arena": run_arena, "evalica": run_evalica}[library]
    scalars, arrays = runner(spec)
    import numpy as np

    np.savez(spec["out"], **arrays)
    scalars.update(_memory())
    scalars["versions"] = _versions(library)
    scalars["python"] = sys.executable
    scalars["pid"] = os.getpid()
    sys.stdout.write(RESULT_PREFIX + json.dumps(scalars) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
