"""The contest forms of Glicko and BAR that the Elo-MMR reference implementation runs: each contest treated as
one highly informative match of every participant against the whole field (formulas in :mod:`.glicko_contest`
and :mod:`.bar`). Both grow each participant's sd by the drift first, then update every participant from
everyone's ratings before the contest; they differ only in that update, which :func:`field_match_kernel`
chooses by its ``rules`` setting.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.core.parameters import Parameter, nonnegative, positive
from duckrate.systems.logistic_sums import SERIES_TOLERANCE, contest_sums_fit, exact_sums, logistic_sum_at
from duckrate.systems.numerics import ELO_LOGISTIC_SD, TANH_MULTIPLIER
from duckrate.systems.standings import largest_contest, record_contest, tie_ranges

# The parameters both systems take after INITIAL and INITIAL_SD (BAR adds kappa).
BETA = Parameter("beta", ELO_LOGISTIC_SD, "a finite performance scale β > 0", positive)
DRIFT = Parameter("drift", 35.0, "a finite sd drift τ >= 0 per contest", nonnegative)
LEVEL_SCALE = 0.25  # the fit reaches G, H <= 0.25/max δ̄, below G(μ_j) >= 0.5/δ̄_j at every centre it is read at
GLICKO_RULES = 1
BAR_RULES = 2


@kernel
def glicko_field_update(mu, sig, first_place, last_place, sig_perf, out_mu, out_sig):
    """Glicko's field update. ``Σ_j g_j P_ij`` is one shared function of μ_i: with δ̄_j = sqrt(σ_j² + σ_p²)/q',
    q' = π/√3, ``g_j = σ_p/(q' δ̄_j)`` and ``P_ij = F_j(μ_i)``, so the sum is ``σ_p/q' · G(μ_i)`` with G of
    :mod:`.logistic_sums`, fitted once per contest (exactly below ``EXACT_BELOW`` participants or when no fit
    meets the tolerance: :func:`.logistic_sums.contest_sums_fit`); ``Σ_j g_j s_ij`` comes from sums of g over the places behind and tied (participants
    in rank order). O(n·m) per contest instead of O(n²)."""
    n = mu.shape[0]
    q = TANH_MULTIPLIER / sig_perf
    g = np.empty(n)  # each opponent's g_j and logistic scale depend on j alone
    dbar = np.empty(n)
    behind = np.zeros(n + 1)  # behind[k] = Σ_{j >= k} g_j
    for j in range(n):
        g[j] = 1.0 / math.hypot(1.0, sig[j] / sig_perf)
        dbar[j] = math.hypot(sig[j], sig_perf) / TANH_MULTIPLIER
    for j in range(n - 1, -1, -1):
        behind[j] = behind[j + 1] + g[j]
    total = behind[0]
    exact, fit = contest_sums_fit(mu, dbar, LEVEL_SCALE, SERIES_TOLERANCE)
    to_g = sig_perf / TANH_MULTIPLIER  # G and H in units of Σ g
    for i in range(n):
        ahead_of = behind[last_place[i] + 1]  # s_ij = 1
        tied = behind[first_place[i]] - ahead_of  # s_ij = ½ (i included)
        if exact:
            lower_sum, upper_sum = exact_sums(mu[i], mu, dbar)
            update = ahead_of + 0.5 * tied - to_g * lower_sum
        else:
            lower, value, _ = logistic_sum_at(fit, mu[i])
            if lower:  # value = G(μ_i): Σ_j g_j (s_ij - P_ij)
                update = ahead_of + 0.5 * tied - to_g * value
            else:  # value = H(μ_i): Σ_j g_j (s_ij - 1 + (1 - P_ij))
                update = ahead_of + 0.5 * tied - total + to_g * value
        update /= n
        new_sig = math.sqrt(1.0 / (sig[i] ** -2.0 + 0.25 * q * q))
        out_sig[i] = new_sig
        out_mu[i] = mu[i] + update * q * new_sig * new_sig


SHARED_SCALES_MAX = 1 << 22  # most entries of BAR's table of 1/c_ij rows (32 MB), else computed per pair


@kernel
def _bar_sum(x, inverse_scale, mu, lo, hi, result):
    """Σ_j (s - F((x - μ_j)/c_j))/c_j over the participants j in [lo, hi) with the result s against each,
    from ``inverse_scale[j]`` = 1/c_j; F by its exponential form (tanh costs twice as much)."""
    total = 0.0
    for j in range(lo, hi):
        r = inverse_scale[j]
        total += (result - 1.0 / (1.0 + math.exp(TANH_MULTIPLIER * (mu[j] - x) * r))) * r
    return total


@parallel_kernel
def bar_field_update(mu, sig, first_place, last_place, sig_perf_sq, kappa, out_mu, out_sig):
    """BAR's field update, O(n²): c_ij = sqrt(σ_i² + σ_j² + 2σ_p²) depends on both players, so no sum is
    shared, but players with the same σ_i (the same history length, with default settings) share the row
    1/c_ij, computed once per distinct σ_i when that table is small. Participants are in rank order, so the
    results s_ij are 1 behind i's tie group, ½ inside it and 0 ahead of it: three branch-free loops."""
    n = mu.shape[0]
    spread = np.empty(n)
    for j in range(n):
        spread[j] = sig[j] * sig[j] + 2.0 * sig_perf_sq
    distinct = np.unique(sig)
    shared = distinct.shape[0] * n <= SHARED_SCALES_MAX
    rows = np.empty((distinct.shape[0] if shared else 0, n))
    if shared:
        for d in numba.prange(distinct.shape[0]):
            old_sq = distinct[d] * distinct[d]
            for j in range(n):
                rows[d, j] = 1.0 / math.sqrt(old_sq + spread[j])
    for i in numba.prange(n):
        old_sq = sig[i] * sig[i]
        if shared:
            inverse_scale = rows[np.searchsorted(distinct, sig[i])]
        else:
            inverse_scale = np.empty(n)
            for j in range(n):
                inverse_scale[j] = 1.0 / math.sqrt(old_sq + spread[j])
        first = first_place[i]
        stop = last_place[i] + 1
        update = _bar_sum(mu[i], inverse_scale, mu, 0, first, 0.0)
        update += _bar_sum(mu[i], inverse_scale, mu, first, stop, 0.5)
        update += _bar_sum(mu[i], inverse_scale, mu, stop, n, 1.0)
        update /= n
        information = 0.25 / (old_sq + 2.0 * sig_perf_sq) * old_sq
        out_sig[i] = sig[i] * math.sqrt(max(kappa, 1.0 - information))
        out_mu[i] = mu[i] + update * old_sq


@kernel
def field_match_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (rating, sd per slot) in place; outputs by input row.
    ``settings``: (rules, β, τ, κ) with ``rules`` :data:`GLICKO_RULES` or :data:`BAR_RULES` (κ: BAR only).
    The systems have no performance of their own: that column is NaN."""
    order, contest_start, contest_weight, state, rank = contests
    rating, sd = players
    rules, beta, drift, kappa = settings
    largest = largest_contest(contest_start)
    mu = np.empty(largest)
    sig = np.empty(largest)
    first_place = np.empty(largest, dtype=np.int64)
    last_place = np.empty(largest, dtype=np.int64)
    no_performance = np.full(largest, np.nan)
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
        if rules == BAR_RULES:
            bar_field_update(
                mu[:n],
                sig[:n],
                first_place[:n],
                last_place[:n],
                beta * beta / contest_weight[c],
                kappa,
                new_mu[:n],
                new_sig[:n],
            )
        else:
            glicko_field_update(
                mu[:n],
                sig[:n],
                first_place[:n],
                last_place[:n],
                beta / math.sqrt(contest_weight[c]),
                new_mu[:n],
                new_sig[:n],
            )
        record_contest(order, first, n, state, (mu, sig), (new_mu, new_sig), no_performance, players, outputs)
