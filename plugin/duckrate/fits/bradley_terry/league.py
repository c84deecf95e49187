"""One league's Bradley-Terry fit: the point estimate (pairs, or rows with covariates) and its uncertainty.

Everything here is in natural units (θ, α, β); :mod:`.fit` turns it into rows on the display scale.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from duckrate.core.errors import DuckrateInputError
from duckrate.fits.bradley_terry.contextual import contextual_fit, point_at
from duckrate.fits.bradley_terry.existence import check_existence, describe
from duckrate.fits.bradley_terry.model import evaluate
from duckrate.fits.bradley_terry.pairs import Pairs
from duckrate.fits.bradley_terry.sandwich import dense_sandwich, residuals, sparse_sandwich
from duckrate.fits.bradley_terry.solution import Runaway, Solution
from duckrate.fits.bradley_terry.solve import DEFAULT_MAX_ITER, NoFiniteOptimum, fit_pairs
from duckrate.fits.bradley_terry.uncertainty import (
    HESSIAN_HARD_LIMIT,
    HESSIAN_MAX_PLAYERS,
    Z_95,
    bootstrap_replicates,
    bootstrap_summary,
    dense_factor,
    hessian_variances,
    pair_border,
    sparse_variances,
)


@dataclass(frozen=True)
class LeagueData:
    """What one league's fit reads: its pairs (rows in canonical order), the covariates of each row
    (rows × k; a first column of ones when the side-A effect is fitted alongside covariates, else None)
    and each row's cluster code (None: every game its own cluster)."""

    pairs: Pairs
    precision: np.ndarray
    mu: np.ndarray
    features: np.ndarray | None
    cluster: np.ndarray | None


@dataclass
class LeagueFit:
    theta: np.ndarray
    sd: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    solution: Solution
    uncertainty: str
    resamples: int | None
    alpha: float | None
    coefficients: np.ndarray  # β (covariates only; α excluded), natural units
    coefficient_sd: np.ndarray
    coefficient_lower: np.ndarray
    coefficient_upper: np.ndarray


def _league_seed(seed: int, league_name) -> np.random.Generator:
    tag = zlib.crc32(("" if league_name is None else "L:" + str(league_name)).encode("utf-8"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, tag])))


def _no_finite_fit(failure: NoFiniteOptimum, name_of, where: str) -> DuckrateInputError:
    if failure.existence is not None:
        return DuckrateInputError(describe(failure.existence, name_of, where))
    suggestion = (
        "fit without home_advantage"
        if "side A" in failure.reason
        else "set prior_sd (e.g. prior_sd := 300) for a MAP fit"
    )
    return DuckrateInputError(f"{where}: no finite fit: {failure.reason}; {suggestion}")


def _point_estimate(data: LeagueData, params, theta0=None, coefficients0=None, row_scale=None, tol=None):
    """(solution, coefficients): α as the one coefficient on the pairs path; the covariate path's β
    (with α first when fitted)."""
    tol = params["tol"] if tol is None else tol
    if data.features is None:
        solution = fit_pairs(
            data.pairs,
            data.precision,
            data.mu,
            params["home_advantage"],
            params["method"] if theta0 is None else "newton",
            tol,
            params["max_iter"] if theta0 is None else None,
            theta0,
            0.0 if coefficients0 is None or not coefficients0.size else float(coefficients0[0]),
        )
        return solution, np.array([solution.alpha]) if params["home_advantage"] else np.empty(0)
    if not np.any(data.precision > 0.0) and row_scale is None:
        existence = check_existence(data.pairs)
        if not existence.exists:
            raise NoFiniteOptimum(existence)
    max_iter = params["max_iter"] if params["max_iter"] is not None else DEFAULT_MAX_ITER["newton"]
    try:
        return contextual_fit(
            data.pairs, data.features, data.precision, data.mu, tol, max_iter, theta0, coefficients0, row_scale
        )
    except Runaway as runaway:
        raise NoFiniteOptimum(None, "the ratings or the covariates' coefficients run to infinity") from runaway


def _features(data: LeagueData, params) -> np.ndarray:
    """The rows' covariates as the sandwich sees them (α's column of ones on the pairs path)."""
    if data.features is not None:
        return data.features
    rows = data.pairs.row_pair.shape[0]
    return np.ones((rows, 1)) if params["home_advantage"] else np.zeros((rows, 0))


def fit_league(data: LeagueData, params, anchor: int | None, league_name, name_of) -> LeagueFit:
    """Fit one league and its intervals (``params`` as resolved by :func:`.fit.resolve_parameters`)."""
    where = "bt_fit" if league_name is None else f"bt_fit, league {league_name!r}"
    pairs = data.pairs
    n = pairs.n_players
    with_priors = params["with_priors"]
    try:
        solution, coefficients = _point_estimate(data, params)
    except NoFiniteOptimum as failure:
        raise _no_finite_fit(failure, name_of, where) from None
    anchor_level = (params["anchor_rating"] - 1500.0) * params["natural_per_point"]

    def normalise(theta):
        theta = theta - theta.mean() if not with_priors else theta
        return theta + (anchor_level - theta[anchor]) if anchor is not None else theta

    theta = solution.theta + (anchor_level - solution.theta[anchor]) if anchor is not None else solution.theta
    k = coefficients.shape[0]
    nan = np.full(n, np.nan)
    sd, lower, upper = nan, nan, nan
    coef_sd = np.full(k, np.nan)
    coef_lower, coef_upper = coef_sd.copy(), coef_sd.copy()
    kind = params["uncertainty"]
    if kind == "auto":
        kind = "hessian" if n <= HESSIAN_MAX_PLAYERS else "sparse"
    used = None
    if kind in ("hessian", "sparse", "sandwich"):
        if kind == "hessian" and n > HESSIAN_HARD_LIMIT:
            raise DuckrateInputError(
                f"{where}: uncertainty := 'hessian' with {n} players needs a dense {n}x{n} inverse; "
                f"the limit is {HESSIAN_HARD_LIMIT} players: use 'sparse', 'sandwich', 'bootstrap' or 'none'"
            )
        if data.features is None:
            grad, curvature, diagonal = np.empty(n + 1), np.empty(pairs.n_pairs), np.empty(n + 1)
            evaluate(
                pairs.a,
                pairs.b,
                pairs.wins,
                pairs.losses,
                solution.theta,
                solution.alpha,
                data.mu,
                data.precision,
                grad,
                curvature,
                diagonal,
            )
            border = pair_border(pairs, curvature) if params["home_advantage"] else None
            u = None
        else:
            point = point_at(pairs, data.features, solution.theta, coefficients, data.mu, data.precision)
            curvature, diagonal, border, u = point.curvature, point.diagonal, point.border, point.residual
        centred = anchor is None and not with_priors  # MLE and ridge report θ mean-zero
        mle = not np.any(data.precision > 0.0)
        dense = kind == "hessian" or (kind == "sandwich" and n <= HESSIAN_MAX_PLAYERS)
        variance: np.ndarray | None  # None: belief propagation diverged
        if dense:
            if kind == "hessian":
                variance, coef_var = hessian_variances(pairs, curvature, data.precision, border, anchor, centred)
            else:
                factor = dense_factor(pairs, curvature, data.precision, border)
                features = _features(data, params)
                u = residuals(pairs, features, solution.theta, coefficients) if u is None else u
                variance, coef_var = dense_sandwich(factor, pairs, u, features, data.cluster, anchor, centred, mle)
        else:
            variance, coef_var = sparse_variances(pairs, curvature, diagonal, data.precision, border, anchor, centred)
            if variance is None:  # belief propagation diverged: too little information around some player
                kind = "bootstrap"
            elif kind == "sandwich":
                features = _features(data, params)
                u = residuals(pairs, features, solution.theta, coefficients) if u is None else u
                variance, coef_var = sparse_sandwich(
                    variance, pairs, curvature, diagonal, data.precision, border, u, features, data.cluster
                )
                kind = "sandwich_sparse"
        if variance is not None:
            sd = np.sqrt(np.maximum(variance, 0.0))
            lower, upper = theta - Z_95 * sd, theta + Z_95 * sd
            coef_sd = np.sqrt(np.maximum(coef_var, 0.0))
            coef_lower, coef_upper = coefficients - Z_95 * coef_sd, coefficients + Z_95 * coef_sd
    if kind == "bootstrap":
        refit_tol = max(params["tol"], 1e-7)

        def refit(sample, counts):
            if data.features is None:  # the pairs path refits the resampled pairs
                resample = LeagueData(sample, data.precision, data.mu, None, None)
                return _point_estimate(resample, params, solution.theta, coefficients, None, refit_tol)
            counts = counts.astype(np.float64)  # the row path weighs each row by its count
            return _point_estimate(data, params, solution.theta, coefficients, counts, refit_tol)

        try:
            replicates, replicate_coefficients, used = bootstrap_replicates(
                pairs,
                refit,
                normalise,
                params["resamples"],
                _league_seed(params["seed"], league_name),
                needs_existence=not np.any(data.precision > 0),
            )
        except NoFiniteOptimum:
            replicates, replicate_coefficients, used = np.empty((0, n)), np.empty((0, k)), 0
        sd, lower, upper = bootstrap_summary(replicates)
        coef_sd, coef_lower, coef_upper = bootstrap_summary(replicate_coefficients.reshape(used, k))
    alpha = None
    start = 0
    if params["home_advantage"]:
        alpha, start = float(coefficients[0]), 1
    return LeagueFit(
        theta=theta,
        sd=sd,
        lower=lower,
        upper=upper,
        solution=solution,
        uncertainty=kind,
        resamples=used,
        alpha=alpha,
        coefficients=coefficients[start:],
        coefficient_sd=coef_sd[start:],
        coefficient_lower=coef_lower[start:],
        coefficient_upper=coef_upper[start:],
    )
