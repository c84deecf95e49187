"""Glicko for ranked contests, as the Elo-MMR reference implementation runs it (its ``Glicko``; Ebtekar & Liu
2021 use it as a baseline): each contest is treated as one highly informative match against the field.

Per contest, every participant's sd first grows by the drift τ (σ ← sqrt(σ² + τ²)); then with
σ_p = β/√ω (ω the contest weight), q = (π/√3)/σ_p and s_ij the result of i against j (1 ahead, ½ tied,
0 behind; j over everyone, i included)::

    P_ij = F((μ_i - μ_j)/sqrt(σ_j² + σ_p²)),  F the logistic cdf with sd 1
    g_j = 1/sqrt(1 + σ_j²/σ_p²)
    σ_i' = 1/sqrt(1/σ_i² + q²/4),   μ_i' = μ_i + q σ_i'² Σ_j g_j (s_ij - P_ij) / n

(the reference fixes the information at ¼, "one highly informative match"). The system has no performance
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
from .standings import tie_ranges

TANH_MULTIPLIER = math.pi / math.sqrt(3.0)
BETA = 400.0 * TANH_MULTIPLIER / math.log(10.0)
PLAYER_FIELDS = ("rating", "sd")


@kernel
def logistic(z):
    """The logistic cdf with sd 1 (the reference's standard_logistic_cdf): ½ + ½ tanh(z π/(2√3))."""
    return 0.5 + 0.5 * math.tanh(0.5 * TANH_MULTIPLIER * z)


@parallel_kernel
def _glicko_contest(mu, sig, first_place, sig_perf, out_mu, out_sig):
    n = mu.shape[0]
    q = TANH_MULTIPLIER / sig_perf
    g = np.empty(n)  # each opponent's g_j and logistic scale depend on j alone
    scale = np.empty(n)
    for j in range(n):
        g[j] = 1.0 / math.hypot(1.0, sig[j] / sig_perf)
        scale[j] = math.hypot(sig[j], sig_perf)
    for i in numba.prange(n):
        update = 0.0
        for j in range(n):
            outcome = 1.0 if first_place[i] < first_place[j] else (0.5 if first_place[i] == first_place[j] else 0.0)
            update += g[j] * (outcome - logistic((mu[i] - mu[j]) / scale[j]))
        update /= n
        new_sig = math.sqrt(1.0 / (sig[i] ** -2.0 + 0.25 * q * q))
        out_sig[i] = new_sig
        out_mu[i] = mu[i] + update * q * new_sig * new_sig


@kernel
def glicko_contest_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (rating, sd per slot) in place; outputs by input row.
    ``settings``: (β, τ)."""
    order, contest_start, contest_weight, state, rank = contests
    rating, sd = players
    beta, drift = settings
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
        _glicko_contest(mu[:n], sig[:n], first_place[:n], beta / math.sqrt(contest_weight[c]), new_mu[:n], new_sig[:n])
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


def run_glicko_contest(prepared: PreparedContests, priors, params: dict, start: ContestStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (params["beta"], params["drift"])
    return run_fixed_kernel(
        "glicko_contest", PLAYER_FIELDS, prepared, priors, params, start, glicko_contest_kernel, settings
    )


def _positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


GLICKO_CONTEST = ContestSystem(
    name="glicko_contest",
    summary=(
        "Glicko for ranked contests (Glickman 1999, as the Elo-MMR reference implementation runs it): each "
        "contest one highly informative match against the whole field."
    ),
    parameters=(
        Parameter("initial", 1500.0, "a finite newcomer rating"),
        Parameter("initial_sd", 350.0, "a finite newcomer sd > 0", _positive),
        Parameter("beta", BETA, "a finite performance scale β > 0", _positive),
        Parameter("drift", 35.0, "a finite sd drift τ >= 0 per contest", lambda v: math.isfinite(v) and v >= 0),
    ),
    run=run_glicko_contest,
)


def glicko_contest(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA,
    drift: float = 35.0,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Glicko over a ``contest_results`` table, one update per contest (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω: the performance scale is β/√ω).
    initial, initial_sd : a newcomer's rating and sd (1500, 350).
    beta : the performance scale β (the reference's 400·(π/√3)/ln 10 ≈ 315.1).
    drift : the sd drift τ added before each contest a player enters (35).
    priors, state, chunk_size : as for :func:`duckrate.elo_mmr`.
    """
    return GLICKO_CONTEST.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        drift=drift,
    )[0]
