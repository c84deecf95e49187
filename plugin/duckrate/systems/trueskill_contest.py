"""TrueSkill for a ranking with ties: the factor graph over a contest's ranked list (Herbrich, Minka & Graepel
2007), with the St Petersburg improvements (Nikolenko & Sirotkin 2010) as the Elo-MMR reference implementation
runs them (``TrueSkillSPb``; Ebtekar & Liu 2021 compare it in their Tables 2 and 3).

Per participant: skill s ~ N(μ, σ² + τ²) (τ = ``drift``), performance p = s + N(0, β²/ω) (ω the contest
weight); per place (tie group) i: a place performance l_i with |p - l_i| <= ε for each of its players, and
l_{i-1} - l_i > 2ε between consecutive places. Messages are Gaussians, passed in the reference's schedule:
up from the skills to the places, then rounds over the chain of places (forwards and backwards through the
differences, then the ties) until no place-to-player message moves by ``convergence`` or more (at most 42
rounds), then down again; each skill's posterior is its prior times the message from the graph.

Two properties of the reference's code are kept, so that duckrate's ratings are the reference's: its
truncations match the moments of ``exp(-((x - m)/s)²)`` for a message N(m, s²) (a Gaussian of sd s/√2), and
all tie factors of a contest share one message slot, as do all gap factors (the reference builds them by
cloning one node whose edge is reference-counted, so the clones share it): each tie or gap update reads what
the last one wrote. The performance column holds the mean of
the participant's performance p after the contest.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.core.jit import kernel
from duckrate.core.parameters import Parameter, nonnegative, positive
from duckrate.systems.contest import INITIAL, INITIAL_SD, ContestSystem, run_fixed_kernel
from duckrate.systems.event_state import EventStart
from duckrate.systems.standings import largest_contest, record_contest

PLAYER_FIELDS = ("mu", "sigma")
MAX_ROUNDS = 42
_SQRT_PI = math.sqrt(math.pi)
_TRUNCATION_FLOOR = 1e-8  # below this mass the reference replaces a truncation by N(ε, ε²)

# An edge between a variable and a factor holds two messages: (mu, sigma) from the factor to the variable
# (columns 0, 1) and from the variable to the factor (columns 2, 3).
F_MU, F_SIGMA, V_MU, V_SIGMA = 0, 1, 2, 3


@kernel
def _product(a_mu, a_sigma, b_mu, b_sigma):
    """The product of two Gaussian messages (an infinite sigma is the uniform message)."""
    if math.isinf(a_sigma):
        return b_mu, b_sigma
    if math.isinf(b_sigma):
        return a_mu, a_sigma
    sa = a_sigma * a_sigma
    sb = b_sigma * b_sigma
    return (a_mu * sb + b_mu * sa) / (sa + sb), a_sigma * b_sigma / math.sqrt(sa + sb)


@kernel
def _quotient(a_mu, a_sigma, b_mu, b_sigma):
    """The message a divided by the message b."""
    if math.isinf(b_sigma):
        return a_mu, a_sigma
    if math.isinf(a_sigma):
        return -b_mu, b_sigma
    sa = a_sigma * a_sigma
    sb = b_sigma * b_sigma
    return (a_mu * sb - b_mu * sa) / (sb - sa), a_sigma * b_sigma / math.sqrt(abs(sb - sa))


@kernel
def _moment0(mu, sigma, t):
    return sigma * _SQRT_PI / 2.0 * math.erfc((t - mu) / sigma)


@kernel
def _moment1(mu, sigma, t):
    return mu * _moment0(0.0, sigma, t - mu) + sigma * sigma / 2.0 * math.exp(-(((t - mu) / sigma) ** 2))


@kernel
def _moment2(mu, sigma, t):
    tail = 2.0 * math.exp(-(((t - mu) / sigma) ** 2)) * (t - mu) + sigma * _SQRT_PI * math.erfc((t - mu) / sigma)
    return mu * mu * _moment0(0.0, sigma, t - mu) + 2.0 * mu * _moment1(0.0, sigma, t - mu) + (sigma / 2.0) ** 2 * tail


@kernel
def _truncated(mu, sigma, eps, within):
    """The message out of a tie (``within``: |x| <= eps) or a gap (x > eps) factor given the message in:
    the moment-matched truncation divided by the message in."""
    if within:
        alpha = _moment0(mu, sigma, -eps) - _moment0(mu, sigma, eps)
    else:
        alpha = _moment0(mu, sigma, eps)
    if alpha < _TRUNCATION_FLOOR:
        new_mu = eps
        new_sigma = eps
    else:
        if within:
            new_mu = (_moment1(mu, sigma, -eps) - _moment1(mu, sigma, eps)) / alpha
            second = (_moment2(mu, sigma, -eps) - _moment2(mu, sigma, eps)) / alpha
        else:
            new_mu = _moment1(mu, sigma, eps) / alpha
            second = _moment2(mu, sigma, eps) / alpha
        new_sigma = math.sqrt(max(second - new_mu * new_mu, 0.0))
    return _quotient(new_mu, new_sigma, mu, sigma)


@kernel
def _variable(edges, ids, scratch):
    """A variable node: each edge's message to its factor is the product of the other edges' messages in."""
    k = ids.shape[0]
    prefix_mu, prefix_sigma, suffix_mu, suffix_sigma = scratch
    prefix_mu[0] = 0.0
    prefix_sigma[0] = np.inf
    for i in range(k):
        prefix_mu[i + 1], prefix_sigma[i + 1] = _product(
            prefix_mu[i], prefix_sigma[i], edges[ids[i], F_MU], edges[ids[i], F_SIGMA]
        )
    suffix_mu[k] = 0.0
    suffix_sigma[k] = np.inf
    for i in range(k - 1, -1, -1):
        suffix_mu[i], suffix_sigma[i] = _product(
            suffix_mu[i + 1], suffix_sigma[i + 1], edges[ids[i], F_MU], edges[ids[i], F_SIGMA]
        )
    for i in range(k):
        edges[ids[i], V_MU], edges[ids[i], V_SIGMA] = _product(
            prefix_mu[i], prefix_sigma[i], suffix_mu[i + 1], suffix_sigma[i + 1]
        )


@kernel
def _sum(edges, out, a, b):
    """The factor out = a + b (two summands): each edge's message to its variable from the others'."""
    edges[out, F_MU] = (0.0 + edges[a, V_MU]) + edges[b, V_MU]
    edges[out, F_SIGMA] = math.hypot(math.hypot(0.0, edges[a, V_SIGMA]), edges[b, V_SIGMA])
    edges[a, F_MU] = (edges[out, V_MU] - 0.0) - (edges[b, V_MU] + 0.0)
    edges[a, F_SIGMA] = math.hypot(math.hypot(edges[out, V_SIGMA], 0.0), math.hypot(edges[b, V_SIGMA], 0.0))
    edges[b, F_MU] = (edges[out, V_MU] - (0.0 + edges[a, V_MU])) - 0.0
    edges[b, F_SIGMA] = math.hypot(math.hypot(edges[out, V_SIGMA], math.hypot(0.0, edges[a, V_SIGMA])), 0.0)


@kernel
def _sum1(edges, out, a):
    """The factor out = a (one summand: a team of one)."""
    edges[out, F_MU] = 0.0 + edges[a, V_MU]
    edges[out, F_SIGMA] = math.hypot(0.0, edges[a, V_SIGMA])
    edges[a, F_MU] = (edges[out, V_MU] - 0.0) - 0.0
    edges[a, F_SIGMA] = math.hypot(math.hypot(edges[out, V_SIGMA], 0.0), 0.0)


@kernel
def _tie_update(edges, tie, eps):
    """Every tie factor's update, on the one edge they share: the same value each time, so once."""
    edges[tie, V_MU], edges[tie, V_SIGMA] = _truncated(edges[tie, F_MU], edges[tie, F_SIGMA], eps, True)


@kernel
def _one_contest(prior_mu, prior_sigma, place, n_places, sig_perf, eps, convergence, out_mu, out_sigma, out_perf):
    """Message passing over one contest (players in standings order, ``place`` their 0-based place index)."""
    n = prior_mu.shape[0]
    # Edges per player q (base 9q): 0 prior-s, 1 s-sp, 2 perf-sp, 3 p-sp, 4 p-pt, 5 t-pt, 6 t-tul, (7 unused),
    # 8 l-tul; per gap b between places b and b+1 (base 9n + 3b): 0 l_b-ld (out), 1 l_{b+1}-ld, (2 unused);
    # then the one u edge every tie factor shares (tie) and the one d edge every gap factor shares (gap).
    tie = 9 * n + 3 * max(n_places - 1, 0)
    gap = tie + 1
    n_edges = gap + 1
    edges = np.empty((n_edges, 4))
    for e in range(n_edges):
        edges[e, F_MU] = 0.0
        edges[e, F_SIGMA] = np.inf  # a variable node's new edge: (ONE, ZERO)
        edges[e, V_MU] = 0.0
        edges[e, V_SIGMA] = 0.0
    edges[tie, F_SIGMA] = 0.0  # the tie and gap variables start at (ZERO, ZERO)
    edges[gap, F_SIGMA] = 0.0
    for q in range(n):
        base = 9 * q
        edges[base, F_MU] = prior_mu[q]
        edges[base, F_SIGMA] = prior_sigma[q]
        edges[base + 2, V_MU] = 0.0
        edges[base + 2, V_SIGMA] = sig_perf
    # each place's node l: its players' l-tul edges, then the gap edges (l_{i} as the lower of gap i-1,
    # then as the upper of gap i)
    place_start = np.zeros(n_places + 1, dtype=np.int64)
    for q in range(n):
        place_start[place[q] + 1] += 1
    for i in range(n_places):
        place_start[i + 1] += place_start[i]
    largest = 2
    for i in range(n_places):
        largest = max(largest, place_start[i + 1] - place_start[i] + 2)
    scratch = (np.empty(largest + 1), np.empty(largest + 1), np.empty(largest + 1), np.empty(largest + 1))
    l_ids = np.empty(n + 2 * n_places, dtype=np.int64)
    l_start = np.empty(n_places + 1, dtype=np.int64)
    position = 0
    for i in range(n_places):
        l_start[i] = position
        for q in range(place_start[i], place_start[i + 1]):
            l_ids[position] = 9 * q + 8
            position += 1
        if i > 0:
            l_ids[position] = 9 * n + 3 * (i - 1) + 1
            position += 1
        if i < n_places - 1:
            l_ids[position] = 9 * n + 3 * i
            position += 1
    l_start[n_places] = position
    pair = np.empty(2, dtype=np.int64)

    # up: skills, performances, teams, ties
    for q in range(n):
        pair[0] = 9 * q
        pair[1] = 9 * q + 1
        _variable(edges, pair, scratch)
    for q in range(n):
        _sum(edges, 9 * q + 3, 9 * q + 1, 9 * q + 2)
    for q in range(n):
        pair[0] = 9 * q + 3
        pair[1] = 9 * q + 4
        _variable(edges, pair, scratch)
    for q in range(n):
        _sum1(edges, 9 * q + 5, 9 * q + 4)
    for q in range(n):
        pair[0] = 9 * q + 5
        pair[1] = 9 * q + 6
        _variable(edges, pair, scratch)
    for q in range(n):
        _sum(edges, 9 * q + 8, 9 * q + 6, tie)
    _tie_update(edges, tie, eps)
    for q in range(n):
        _sum(edges, 9 * q + 8, 9 * q + 6, tie)

    previous = np.empty((n, 4))
    rounds = 0
    while rounds < MAX_ROUNDS:
        if rounds > 0:
            change = 0.0
            for q in range(n):
                for column in range(4):
                    change = max(change, abs(edges[9 * q + 6, column] - previous[q, column]))
            if not change >= convergence:
                break
        for q in range(n):
            for column in range(4):
                previous[q, column] = edges[9 * q + 6, column]
        rounds += 1
        for sweep in range(2):
            for b in range(n_places - 1):
                _variable(edges, l_ids[l_start[b] : l_start[b + 1]], scratch)
                _sum(edges, 9 * n + 3 * b, 9 * n + 3 * b + 1, gap)
            _variable(edges, l_ids[l_start[n_places - 1] : l_start[n_places]], scratch)
            for b in range(n_places - 2, -1, -1):
                _sum(edges, 9 * n + 3 * b, 9 * n + 3 * b + 1, gap)
                _variable(edges, l_ids[l_start[b] : l_start[b + 1]], scratch)
            if sweep == 0 and n_places > 1:
                # every gap factor's update, on the one edge they share: the same value each time, so once
                edges[gap, V_MU], edges[gap, V_SIGMA] = _truncated(
                    edges[gap, F_MU], edges[gap, F_SIGMA], 2.0 * eps, False
                )
        for q in range(n):
            _sum(edges, 9 * q + 8, 9 * q + 6, tie)
        _tie_update(edges, tie, eps)
        for q in range(n):
            _sum(edges, 9 * q + 8, 9 * q + 6, tie)

    # down: teams, performances, skills
    for q in range(n):
        pair[0] = 9 * q + 5
        pair[1] = 9 * q + 6
        _variable(edges, pair, scratch)
    for q in range(n):
        _sum1(edges, 9 * q + 5, 9 * q + 4)
    for q in range(n):
        pair[0] = 9 * q + 3
        pair[1] = 9 * q + 4
        _variable(edges, pair, scratch)
    for q in range(n):
        _sum(edges, 9 * q + 3, 9 * q + 1, 9 * q + 2)
    for q in range(n):
        pair[0] = 9 * q
        pair[1] = 9 * q + 1
        _variable(edges, pair, scratch)
    for q in range(n):
        base = 9 * q
        out_mu[q], out_sigma[q] = _product(
            edges[base, F_MU], edges[base, F_SIGMA], edges[base, V_MU], edges[base, V_SIGMA]
        )
        out_perf[q] = _product(
            edges[base + 3, F_MU], edges[base + 3, F_SIGMA], edges[base + 4, F_MU], edges[base + 4, F_SIGMA]
        )[0]


@kernel
def trueskill_contest_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (mu, sigma per slot) in place; outputs are indexed by
    input row. ``contests``: the rows in replay order, each contest's first row and weight, each row's slot
    and rank; ``settings``: (β, ε, τ, convergence)."""
    order, contest_start, contest_weight, state, rank = contests
    mu, sigma = players
    beta, eps, drift, convergence = settings
    largest = largest_contest(contest_start)
    prior_mu = np.empty(largest)
    prior_sigma = np.empty(largest)
    place = np.empty(largest, dtype=np.int64)
    new_mu = np.empty(largest)
    new_sigma = np.empty(largest)
    perf = np.empty(largest)
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        n = contest_start[c + 1] - first
        n_places = 0
        for k in range(n):
            row = order[first + k]
            if k == 0 or rank[row] != rank[order[first + k - 1]]:
                n_places += 1
            place[k] = n_places - 1
            s = state[row]
            prior_mu[k] = mu[s]
            prior_sigma[k] = math.hypot(sigma[s], drift)
        _one_contest(
            prior_mu[:n],
            prior_sigma[:n],
            place[:n],
            n_places,
            beta / math.sqrt(contest_weight[c]),
            eps,
            convergence,
            new_mu[:n],
            new_sigma[:n],
            perf[:n],
        )
        after = (new_mu[:n], new_sigma[:n])
        record_contest(order, first, n, state, (prior_mu, prior_sigma), after, perf, players, outputs)


def run_trueskill_contest(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (params["beta"], params["eps"], params["drift"], params["convergence"])
    return run_fixed_kernel(
        "trueskill_contest", PLAYER_FIELDS, prepared, priors, params, start, trueskill_contest_kernel, settings
    )


TRUESKILL_CONTEST = ContestSystem(
    name="trueskill_contest",
    summary=(
        "TrueSkill for a ranking with ties (Herbrich, Minka & Graepel 2007, with Nikolenko & Sirotkin's "
        "improvements, as the Elo-MMR reference implementation's TrueSkillSPb): message passing over the "
        "contest's chain of places."
    ),
    parameters=(
        INITIAL,
        INITIAL_SD,
        Parameter("beta", 175.0, "a finite performance sd β > 0", positive),
        Parameter("eps", 1.0, "a finite tie margin ε > 0", positive),
        Parameter("drift", 35.0, "a finite skill drift sd τ >= 0 per contest", nonnegative),
        Parameter("convergence", 1e-4, "a finite message change > 0 that ends the rounds", positive),
    ),
    run=run_trueskill_contest,
    grid={"beta": [125.0, 175.0, 225.0], "drift": [20.0, 35.0, 50.0]},
)


def trueskill_contest(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = 175.0,
    eps: float = 1.0,
    drift: float = 35.0,
    convergence: float = 1e-4,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """TrueSkill over a ``contest_results`` table, one ranking per contest (see the module docstring).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω: the performance sd is β/√ω).
    initial, initial_sd : a newcomer's skill N(initial, initial_sd²).
    beta : the performance sd β (the reference's 175).
    eps : the tie margin ε: tied players' performances are within ε of their place's, consecutive places
        more than 2ε apart (the reference's 1).
    drift : the skill drift sd τ added before each contest a player enters (the reference's 35).
    convergence : the rounds over the chain of places stop once no message moves by this much (1e-4).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``).
    state : a saved state (:func:`duckrate.replay_state` with ``"trueskill_contest"``) to continue from.
    chunk_size : the most results rated at once (default ``duckrate.DEFAULT_CHUNK_ROWS``).

    Returns
    -------
    DataFrame, one row per (contest, player), the contest replay columns (``rating_*`` = μ, ``sd_*`` = σ;
    ``sd_before`` after the drift; ``performance``: the mean of the performance p after the contest).
    """
    return TRUESKILL_CONTEST.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        eps=eps,
        drift=drift,
        convergence=convergence,
    )[0]
