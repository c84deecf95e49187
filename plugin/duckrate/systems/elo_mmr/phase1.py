"""Elo-MMR phase 1, the exact reference: each performance is the zero of ``Q_i`` (Theorem 3.2).

``Q_i(p) = Σ_{j>i} l_j(p) + Σ_{j~i} d_j(p) + Σ_{j<i} v_j(p)`` over the opponents j who beat (``j>i``:
a better rank), tied (``j~i``, i itself included) or lost to i, with

* logistic (Elo-MMR): ``l_j = -F_j/δ̄_j``, ``v_j = (1-F_j)/δ̄_j``, ``d_j = l_j + v_j`` and
  ``F_j(p) = 1/(1 + exp(-(p - μ_j)/δ̄_j))``, ``δ̄_j = √3/π · δ_j`` (Section 3.1);
* Gaussian (Elo-MMχ): ``v_j = f_j/F_j``, ``l_j = -f_j/(1-F_j)``, ``d_j = f_j'/f_j = -(p-μ_j)/δ_j²``.

``δ_j² = σ_j² + β²``. Every function here takes the contest's players in rank order (``mu``, ``scale`` =
δ̄ or δ, ``rank``). The exact solve sums Q over every term (equal terms merged): O(|P|) per evaluation, so
O(|P|²) per contest, and the fast paths (:mod:`.fast`, :mod:`.gaussian_series`) must agree with it.
Opponent subsampling (Section 5.3) sums over a window ``perm[lo:hi]`` of the nearest ratings.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from duckrate.core.jit import kernel, parallel_kernel
from duckrate.systems.elo_mmr.gaussian_series import empty_series, q_from_series
from duckrate.systems.logistic_sums import logistic_cdf_pair
from duckrate.systems.numerics import normal_hazard, safeguarded_step

BRACKET_STEPS = 60.0  # every root lies within this many widest scales past the extreme ratings (Newton's bracket)


@kernel
def term(p, mu, scale, relation, gaussian):
    """One opponent's term of Q and its derivative: relation -1 = the opponent beat us (l), 0 = tie (d),
    +1 = we beat them (v)."""
    z = (p - mu) / scale
    if gaussian:
        if relation == 0:
            return -z / scale, -1.0 / (scale * scale)
        if relation > 0:
            v = normal_hazard(z) / scale
            return v, -v * (z / scale + v)
        l = -normal_hazard(-z) / scale
        return l, -l * (z / scale) - l * l
    f, g = logistic_cdf_pair(z)
    slope = -f * g / (scale * scale)
    if relation < 0:
        return -f / scale, slope
    if relation > 0:
        return g / scale, slope
    return (g - f) / scale, 2.0 * slope


@kernel
def merged_terms(mu, scale, rank):
    """The contest's terms with equal (μ_j, scale_j) merged (newcomers share their prior), in increasing
    order of μ: ``(term_mu, term_scale, rank_start, ranks, term_of)``, where term t's participants have the
    ranks ``ranks[rank_start[t]:rank_start[t + 1]]`` in increasing order (the participants come in rank
    order) and participant j's term is ``term_of[j]``. Exact: merged terms are equal terms."""
    n = mu.shape[0]
    by_scale = np.argsort(scale, kind="mergesort")  # stable sorts: equal terms keep the rank order
    by_term = by_scale[np.argsort(mu[by_scale], kind="mergesort")]
    term_mu = np.empty(n)
    term_scale = np.empty(n)
    rank_start = np.empty(n + 1, dtype=np.int64)
    ranks = np.empty(n, dtype=rank.dtype)
    term_of = np.empty(n, dtype=np.int64)
    terms = 0
    for position in range(n):
        j = by_term[position]
        if terms == 0 or mu[j] != term_mu[terms - 1] or scale[j] != term_scale[terms - 1]:
            term_mu[terms] = mu[j]
            term_scale[terms] = scale[j]
            rank_start[terms] = position
            terms += 1
        ranks[position] = rank[j]
        term_of[j] = terms - 1
    rank_start[terms] = n
    return term_mu[:terms], term_scale[:terms], rank_start[: terms + 1], ranks, term_of


@kernel
def term_counts(terms, t, my_rank):
    """How many participants of merged term t finished ahead of, tied with and behind rank ``my_rank``."""
    rank_start, ranks = terms[2], terms[3]
    lo = rank_start[t]
    hi = rank_start[t + 1]
    if hi - lo == 1:
        return (1, 0, 0) if ranks[lo] < my_rank else ((0, 1, 0) if ranks[lo] == my_rank else (0, 0, 1))
    ahead = np.searchsorted(ranks[lo:hi], my_rank, side="left")
    behind = hi - lo - np.searchsorted(ranks[lo:hi], my_rank, side="right")
    return ahead, hi - lo - ahead - behind, behind


@kernel
def q_value_merged(p, terms, first_term, stop_term, my_rank, gaussian):
    """Q(p) and Q'(p) for a player of rank ``my_rank`` over the merged terms ``first_term:stop_term`` of
    :func:`merged_terms`: each merged term counted once per participant ahead, tied and behind."""
    term_mu, term_scale = terms[0], terms[1]
    q = 0.0
    dq = 0.0
    for t in range(first_term, stop_term):
        ahead, tied, behind = term_counts(terms, t, my_rank)
        for relation, count in ((-1, ahead), (0, tied), (1, behind)):
            if count > 0:
                value, slope = term(p, term_mu[t], term_scale[t], relation, gaussian)
                q += count * value
                dq += count * slope
    return q, dq


@kernel
def solve_group(terms, fit, mu, scale, first, stop, my_rank, gaussian, guess, low, high):
    """The zero of the strictly decreasing Q of the tie group ``first:stop`` in ``[low, high]`` (a bracket
    that holds every root): Newton from ``guess``, safeguarded by bisection, to full double precision.
    Q from the Gaussian model's series ``fit`` (:mod:`.gaussian_series`) where they reach, else summed
    over the merged ``terms``."""
    x = min(max(guess, low), high)
    for _ in range(200):
        inside, q, dq = q_from_series(x, fit, mu, scale, first, stop)
        if not inside:
            q, dq = q_value_merged(x, terms, 0, terms[0].shape[0], my_rank, gaussian)
        if q == 0.0:
            return x
        x, low, high, converged = safeguarded_step(x, q, dq, low, high, True)
        if converged:
            return x
    return x


GROUPS_PER_CHAIN = 16  # tie groups solved in a row, each started from the previous root (fixed: thread-free)


@parallel_kernel
def solve_tie_groups(mu, scale, rank, group_start, gaussian, fit, out):
    """Phase 1 of one contest, one root per tie group (all members of a tie group share Q); ``out[g]``
    receives the group's performance. ``fit``: the Gaussian model's series, or :func:`.gaussian_series.
    empty_series` for the exact O(|P|²) solve over the terms, those with equal (μ, scale) merged
    (:func:`merged_terms`).

    Tie groups are solved in chains of ``GROUPS_PER_CHAIN`` consecutive groups, in parallel: a chain's
    first solve starts from the prior rating of the same place in the order by rating (performances fall
    with the place as ratings do), each later one from the previous root. The chains are fixed by the data
    alone, so roots never depend on the thread count."""
    n = mu.shape[0]
    terms = merged_terms(mu, scale, rank)
    step = 0.0
    for j in range(n):
        step = max(step, scale[j])
    by_rating = np.sort(mu)
    lowest = by_rating[0] - BRACKET_STEPS * step
    highest = by_rating[n - 1] + BRACKET_STEPS * step
    n_groups = group_start.shape[0] - 1
    n_chains = (n_groups + GROUPS_PER_CHAIN - 1) // GROUPS_PER_CHAIN
    for chain in prange(n_chains):
        first_group = chain * GROUPS_PER_CHAIN
        guess = by_rating[n - 1 - group_start[first_group]]
        for g in range(first_group, min(first_group + GROUPS_PER_CHAIN, n_groups)):
            first = group_start[g]
            stop = group_start[g + 1]
            guess = solve_group(terms, fit, mu, scale, first, stop, rank[first], gaussian, guess, lowest, highest)
            out[g] = guess


@kernel
def performances_exact(mu, scale, rank, group_start, gaussian, out):
    """Phase 1 of one contest by the exact O(|P|²) solve (:func:`solve_tie_groups` without series)."""
    solve_tie_groups(mu, scale, rank, group_start, gaussian, empty_series(), out)


@kernel
def log_balance(p, terms, first_term, stop_term, my_rank):
    """For the logistic model, log P(p) - log N(p) and its derivative over the merged terms
    ``first_term:stop_term``, where Q = P - N splits into the positive parts of its terms (P = Σ (1 - F_j)/s_j
    over the opponents beaten or tied) and the negative ones (N = Σ F_j/s_j over those who beat or tied us):
    the same zero as Q, but nearly linear far from it (P and N are sums of exponentials there), so Newton's
    method needs a few steps from anywhere."""
    term_mu, term_scale = terms[0], terms[1]
    positive = 0.0
    negative = 0.0
    positive_slope = 0.0
    negative_slope = 0.0
    for t in range(first_term, stop_term):
        ahead, tied, behind = term_counts(terms, t, my_rank)
        f, g = logistic_cdf_pair((p - term_mu[t]) / term_scale[t])
        slope = f * g / (term_scale[t] * term_scale[t])
        if tied + behind > 0:  # beaten or tied
            positive += (tied + behind) * g / term_scale[t]
            positive_slope -= (tied + behind) * slope
        if ahead + tied > 0:  # beat us or tied
            negative += (ahead + tied) * f / term_scale[t]
            negative_slope += (ahead + tied) * slope
    return math.log(positive) - math.log(negative), positive_slope / positive - negative_slope / negative


@parallel_kernel
def performances_subsampled(mu, scale, rank, max_opponents, gaussian, out):
    """Phase 1 with opponent subsampling (Section 5.3): each player's Q runs over the ``max_opponents``
    distinct terms (equal (μ, scale) merged, as the reference implementation buckets them: a crowd of
    newcomers sharing their prior is one term with its multiplicity) nearest the player's own in the
    order by rating, the player's own term included. ``out[k]`` receives player k's performance (players
    of one tie group may now differ).

    Each solve is a safeguarded Newton iteration (on :func:`log_balance` for the logistic model) started at
    the player's own rating inside a bracket that holds every root (``BRACKET_STEPS`` of the widest scale
    beyond the extreme ratings: there Q has the sign of the player's own tie term), so it needs no bracketing
    evaluations; players are solved in parallel, each from its own inputs only."""
    n = mu.shape[0]
    terms = merged_terms(mu, scale, rank)
    term_of = terms[4]
    n_terms = terms[0].shape[0]
    step = 0.0
    for j in range(n):
        step = max(step, scale[j])
    lowest = terms[0][0] - BRACKET_STEPS * step
    highest = terms[0][n_terms - 1] + BRACKET_STEPS * step
    window = min(max_opponents, n_terms)
    for k in prange(n):
        lo = term_of[k] - window // 2
        if lo < 0:
            lo = 0
        hi = lo + window
        if hi > n_terms:
            hi = n_terms
            lo = n_terms - window
        low = lowest
        high = highest
        x = mu[k]
        for _ in range(200):
            if gaussian:
                q, dq = q_value_merged(x, terms, lo, hi, rank[k], True)
            else:
                q, dq = log_balance(x, terms, lo, hi, rank[k])
            if q == 0.0:
                break
            x, low, high, converged = safeguarded_step(x, q, dq, low, high, True)
            if converged:
                break
        out[k] = x
