"""BAR, the Bayesian Approximation Ranking of Weng & Lin ("A Bayesian Approximation Method for Online Ranking",
JMLR 2011, Algorithm 1 with the Bradley-Terry full-pair model), as the Elo-MMR reference implementation runs it
(its ``BAR``): each contest is treated as one highly informative match against the field.

Per contest, every participant's sd first grows by the drift τ (σ ← sqrt(σ² + τ²)); then with
σ_p² = β²/ω (ω the contest weight) and s_ij the result of i against j (1 ahead, ½ tied, 0 behind; j over
everyone, i included)::

    c_ij = sqrt(σ_i² + σ_j² + 2σ_p²),  P_ij = F((μ_i - μ_j)/c_ij),  F the logistic cdf with sd 1
    μ_i' = μ_i + σ_i² Σ_j (s_ij - P_ij)/c_ij / n
    σ_i' = σ_i sqrt(max(1 - σ_i²/(4(σ_i² + 2σ_p²)), κ))

(the reference fixes the information at ¼/(σ_i² + 2σ_p²), "one highly informative match"). The system has no performance
of its own: the performance column is NaN.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import polars as pl

from .._numba import kernel, parallel_kernel
from ..contests import PreparedContests
from ..parameters import Parameter
from .contest_state import ContestStart
from .contest_system import ContestSystem, run_fixed_kernel
from .glicko_contest import BETA, logistic
from .standings import tie_ranges

PLAYER_FIELDS = ("rating", "sd")


@parallel_kernel
def _bar_contest(mu, sig, first_place, sig_perf_sq, kappa, out_mu, out_sig):
    n = mu.shape[0]
    for i in numba.prange(n):
        old_sq = sig[i] * sig[i]
        update = 0.0
        for j in range(n):
            outcome = 1.0 if first_place[i] < first_place[j] else (0.5 if first_place[i] == first_place[j] else 0.0)
            c = math.sqrt(old_sq + sig[j] * sig[j] + 2.0 * sig_perf_sq)
            update += (outcome - logistic((mu[i] - mu[j]) / c)) / c
        update /= n
        information = 0.25 / (old_sq + 2.0 * sig_perf_sq) * old_sq
        out_sig[i] = sig[i] * math.sqrt(max(kappa, 1.0 - information))
        out_mu[i] = mu[i] + update * old_sq


@kernel
def bar_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (rating, sd per slot) in place; outputs by input row.
    ``settings``: (β, τ, κ)."""
    order, contest_start, contest_weight, state, rank = contests
    rating, sd = players
    beta, drift, kappa = settings
    n_players, performance, rating_before, sd_before, rating_after, sd_after = outputs
    largest = 0
    for c in range(contest_start.shape[0] - 1):
        largest = max(largest, contest_start[c + 1] - contest_start[c])
    mu = np.empty(largest)
    sig = np.empty(largest)
    first_place = np.empty(largest)
    last_place = np.empty(largest)
    new_mu = np.empty(largest)
    new_sig = np.empty(largest)
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        n = contest_start[c + 1] - first
        tie_ranges(order, first, n, rank, first_place, last_place)
        for k in range(n):
            s = state[order[first + k]]
            mu[k] = rating[s]
            sig[k] = math.hypot(sd[s], drift)
        _bar_contest(mu[:n], sig[:n], first_place[:n], beta * beta / contest_weight[c], kappa, new_mu[:n], new_sig[:n])
        for k in range(n):
            row = order[first + k]
            s = state[row]
            n_players[row] = n
            performance[row] = np.nan
            rating_before[row] = mu[k]
            sd_before[row] = sig[k]
            rating[s] = new_mu[k]
            sd[s] = new_sig[k]
            rating_after[row] = new_mu[k]
            sd_after[row] = new_sig[k]


def run_bar(prepared: PreparedContests, priors, params: dict, start: ContestStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (params["beta"], params["drift"], params["kappa"])
    return run_fixed_kernel("bar", PLAYER_FIELDS, prepared, priors, params, start, bar_kernel, settings)


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


BAR = ContestSystem(
    name="bar",
    summary=(
        "BAR, the Bayesian Approximation Ranking (Weng & Lin 2011, as the Elo-MMR reference implementation "
        "runs it): each contest one highly informative match against the whole field."
    ),
    parameters=(
        Parameter("initial", 1500.0, "a finite newcomer rating"),
        Parameter("initial_sd", 350.0, "a finite newcomer sd > 0", _positive),
        Parameter("beta", BETA, "a finite performance scale β > 0", _positive),
        Parameter("drift", 35.0, "a finite sd drift τ >= 0 per contest", lambda v: math.isfinite(v) and v >= 0),
        Parameter("kappa", 1e-4, "a finite floor κ in (0, 1] on the sd's shrink factor", lambda v: 0 < v <= 1),
    ),
    run=run_bar,
)


def bar(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA,
    drift: float = 35.0,
    kappa: float = 1e-4,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """BAR over a ``contest_results`` table, one update per contest (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω: the performance scale is β/√ω).
    initial, initial_sd : a newcomer's rating and sd (1500, 350).
    beta : the performance scale β (the reference's 400·(π/√3)/ln 10 ≈ 315.1).
    drift : the sd drift τ added before each contest a player enters (35).
    kappa : the floor κ on the factor 1 - σ²/(4(σ² + 2σ_p²)) that shrinks the sd (1e-4).
    priors, state, chunk_size : as for :func:`duckrate.elo_mmr`.
    """
    return BAR.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        drift=drift,
        kappa=kappa,
    )[0]
