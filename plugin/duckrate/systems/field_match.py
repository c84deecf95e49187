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

from .._numba import kernel, parallel_kernel
from ..parameters import Parameter, nonnegative, positive
from .numerics import ELO_LOGISTIC_SD, TANH_MULTIPLIER
from .standings import largest_contest, record_contest, tie_ranges

# The parameters both systems take after INITIAL and INITIAL_SD (BAR adds kappa).
BETA = Parameter("beta", ELO_LOGISTIC_SD, "a finite performance scale β > 0", positive)
DRIFT = Parameter("drift", 35.0, "a finite sd drift τ >= 0 per contest", nonnegative)
GLICKO_RULES = 1
BAR_RULES = 2


@kernel
def logistic(z):
    """The logistic cdf with sd 1 (the reference's standard_logistic_cdf): ½ + ½ tanh(z π/(2√3))."""
    return 0.5 + 0.5 * math.tanh(0.5 * TANH_MULTIPLIER * z)


@parallel_kernel
def glicko_field_update(mu, sig, first_place, sig_perf, out_mu, out_sig):
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


@parallel_kernel
def bar_field_update(mu, sig, first_place, sig_perf_sq, kappa, out_mu, out_sig):
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
    first_place = np.empty(largest)
    last_place = np.empty(largest)
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
                mu[:n], sig[:n], first_place[:n], beta * beta / contest_weight[c], kappa, new_mu[:n], new_sig[:n]
            )
        else:
            glicko_field_update(
                mu[:n], sig[:n], first_place[:n], beta / math.sqrt(contest_weight[c]), new_mu[:n], new_sig[:n]
            )
        record_contest(order, first, n, state, (mu, sig), (new_mu, new_sig), no_performance, players, outputs)
