"""The luck-aware grid rating system for games of chance (Cowan, "Paired comparisons for games of chance").

Each player is a probability vector ρ on the grid ``x_k = -M + 2M·k/n`` (k = 0..n; natural units, display
rating ``1500 + 400/ln10 · x``). A newcomer starts from ``ρ ∝ N(0, σ0²)`` on the grid (eq. 5). A match
with result θ = score_a (1 win, ½ draw, 0 loss) updates both players from their *pre-match* vectors
(eq. 1 and eq. 7, Example 4.1)::

    ρA'(x) ∝ ρA(x) Σ_k ρB(x_k) Λ(x, x_k)^θ Λ(x_k, x)^(1-θ)
    ρB'(x) ∝ ρB(x) Σ_k ρA(x_k) Λ(x_k, x)^θ Λ(x, x_k)^(1-θ)

with the luck function ``Λ(x, y) = (1-β)/2 + β·F(x - y)`` (eq. 2), then drifts both (eq. 6 and 8)::

    ρ~(x) ∝ Σ_k ρ(x_k) K(x, x_k),    K Gaussian (σκ) or Laplace,

renormalised on the grid: mass the kernel carries past ±M is dropped, as in eq. (8) and Example 4.2.
The forecast is Model 2.1's ``L = Σ_j Σ_k ρA(x_j) ρB(x_k) Λ(x_j, x_k)`` from the pre-match vectors, the
normaliser of A's update after a win. Reported rating and sd are the posterior mean and sd on the display
scale; ``*_after`` is the state after the update and the drift, the one carried into the next match.

Three algorithms compute the same thing (``algorithm``):

- ``naive``: the sums of Section 4.1 over the whole grid, O(n²) per match: the reference.
- ``laplace``: Algorithms 4.6 (Laplace sigmoid) and 4.5 (Laplace kernel), O(n) per match; needs both.
- ``fast`` (default): the best exact method for the parameters: Laplace sweeps wherever F or K is Laplace,
  a low-rank factorisation of the luck matrix (every entry within 1e-13 of the largest, :mod:`.lowrank`)
  for the logistic and normal sigmoids, and the Gaussian kernel without its taps below 1e-22.

All paths agree with ``naive`` to about 1e-14 in every ρ (the tests require 1e-12). Results other than
a win, a draw or a loss each need their own luck matrix: ``fast`` factorises a result's matrix once it
occurs in at least ``FACTORISE_MIN_ROWS`` matches of the input, and uses the naive sums for rarer ones
(so for such results alone the last bits can depend on the rest of the input); the ``laplace``
algorithm uses the naive sums for every result that is neither 0 nor 1 (D_θ is then no Laplace CDF
mixture, and draws cost O(n²) there). :func:`posteriors` returns the final vectors themselves.

Memory: one float64 vector of ``grid_points`` per (league, player), 8,008 bytes at the default 1001
points, plus ~1 MB of factors. Single-threaded and BLAS-free, hence bit-for-bit reproducible whatever
the thread settings.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import polars as pl
import pyarrow as pa
from numba import prange

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities
from duckrate.core.jit import kernel, parallel_kernel
from duckrate.core.matches import PreparedMatches, columns_from_polars, prepare_matches, reject_weights
from duckrate.core.parameters import Parameter
from duckrate.core.priors import check_positive_priors, initial_states, prior_columns
from duckrate.core.protocol import Preset
from duckrate.core.scales import DISPLAY_CENTER
from duckrate.systems.chance.drift import DRIFT_LAPLACE, DRIFT_NAIVE, DRIFT_NONE, DRIFT_TAPS, drift, gaussian_taps
from duckrate.systems.chance.forecast import chance_forecasts
from duckrate.systems.chance.grid import (
    DISPLAY_SCALE,
    KERNELS,
    LAPLACE_SCALE,
    SIGMOIDS,
    grid,
    grid_step,
    kernel_code,
    kernel_table,
    laplace_kernel_scale,
    luck_table,
    moments,
    normal_on_grid,
    normalise_with_moments,
    sigmoid_code,
    vector_dot,
    vector_sum,
)
from duckrate.systems.chance.laplace import grid_cdf_sums
from duckrate.systems.chance.lowrank import factors, lowrank_pair, lowrank_single, transposed
from duckrate.systems.chance.naive import toeplitz_apply
from duckrate.systems.saved_state import EndState, StartState, StateField, field_values, fresh_start, used_slots
from duckrate.systems.state_players import players_frame, state_rows
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame

ALGORITHMS = ("naive", "fast", "laplace")
LUCK_NAIVE, LUCK_LOWRANK, LUCK_LAPLACE = 0, 1, 2
# Draws always get their factorised luck matrix D_½; any other fractional result once it occurs this often
# (a factorisation costs about as much as 500 naive matches at the default grid).
FACTORISE_MIN_ROWS = 512
# The low-rank products carry absolute errors up to ~1e-13 (observed ~3e-14); a posterior divides them by its
# normaliser Z, so a match whose Z (for either side) is below this is recomputed with the naive sums. Never
# happens at β <= 15/16 (Z >= (1-β)/2 >= 1/32 there); at β = 1 it is the lopsided matches.
LOWRANK_MIN_NORMALISER = 1.0 / 32.0


# --------------------------------------------------------------------------------------------------
# One match: the likelihood vectors of both sides (and the forecast) by each algorithm.


@kernel
def _naive_luck(tables, t, theta, rho_a, rho_b, like_a, like_b, work):
    """Section 4.1: like_a = Σ_k ρB_k D_θ((i-k)h), like_b = Σ_k ρA_k D_θ((k-i)h); returns the forecast."""
    toeplitz_apply(tables[t], rho_b, like_a, False)
    toeplitz_apply(tables[t], rho_a, like_b, True)
    if theta == 1.0:
        return vector_dot(rho_a, like_a)
    toeplitz_apply(tables[0], rho_b, work, False)  # tables[0] is Λ itself
    return vector_dot(rho_a, work)


@kernel
def _laplace_luck(tables, t, theta, beta, q, rho_a, rho_b, like_a, like_b, work):
    """Algorithm 4.6 for a win or a loss (the naive sums for other results); returns the forecast."""
    size = rho_a.shape[0]
    constant = 0.5 * (1.0 - beta)
    mass_a = vector_sum(rho_a)
    mass_b = vector_sum(rho_b)
    grid_cdf_sums(rho_b, q, work, False)  # Σ_k ρB_k F((i-k)h)
    for i in range(size):
        work[i] = constant * mass_b + beta * work[i]  # (Λ ρB)_i
    forecast = vector_dot(rho_a, work)
    if theta == 1.0:
        for i in range(size):
            like_a[i] = work[i]
        grid_cdf_sums(rho_a, q, like_b, True)  # Σ_k ρA_k F((k-i)h)
        for i in range(size):
            like_b[i] = constant * mass_a + beta * like_b[i]
    elif theta == 0.0:
        grid_cdf_sums(rho_b, q, like_a, True)
        for i in range(size):
            like_a[i] = constant * mass_b + beta * like_a[i]
        grid_cdf_sums(rho_a, q, like_b, False)
        for i in range(size):
            like_b[i] = constant * mass_a + beta * like_b[i]
    else:
        toeplitz_apply(tables[t], rho_b, like_a, False)
        toeplitz_apply(tables[t], rho_a, like_b, True)
    return forecast


@kernel
def _lowrank_luck(
    tables, t, theta, op_a, op_b, fac_v, fac_ut, off_v, off_u, rank, rho_a, rho_b, like_a, like_b, work, t_a, t_b
):
    """The match step through the factorised luck matrices (the naive sums for a result without its
    own factors); returns the forecast."""
    size = rho_a.shape[0]
    if theta == 1.0 or theta == 0.0:
        # one pass over Λ's factors serves both sides: Λ·ρB and Λ·ρA; the other side is the complement
        lowrank_pair(fac_v, fac_ut, off_v[0], off_u[0], rank[0], size, rho_b, rho_a, work, like_b, t_a, t_b)
        forecast = vector_dot(rho_a, work)
        if theta == 1.0:
            mass_a = vector_sum(rho_a)
            for i in range(size):
                like_a[i] = max(work[i], 0.0)
                like_b[i] = max(mass_a - like_b[i], 0.0)
        else:
            mass_b = vector_sum(rho_b)
            for i in range(size):
                like_a[i] = max(mass_b - work[i], 0.0)
                like_b[i] = max(like_b[i], 0.0)
        return forecast
    lowrank_single(fac_v, fac_ut, off_v[0], off_u[0], rank[0], size, rho_b, work, t_a)
    forecast = vector_dot(rho_a, work)
    a, b = op_a[t], op_b[t]
    if a < 0:
        toeplitz_apply(tables[t], rho_b, like_a, False)
        toeplitz_apply(tables[t], rho_a, like_b, True)
        return forecast
    if a == b:  # a symmetric D (the draw): both sides in one pass
        lowrank_pair(fac_v, fac_ut, off_v[a], off_u[a], rank[a], size, rho_b, rho_a, like_a, like_b, t_a, t_b)
    else:
        lowrank_single(fac_v, fac_ut, off_v[a], off_u[a], rank[a], size, rho_b, like_a, t_a)
        lowrank_single(fac_v, fac_ut, off_v[b], off_u[b], rank[b], size, rho_a, like_b, t_a)
    for i in range(size):
        like_a[i] = max(like_a[i], 0.0)
        like_b[i] = max(like_b[i], 0.0)
    return forecast


@kernel
def _weigh(rho, like, weighted):
    """weighted = ρ ⊙ like (the unnormalised posterior); returns its normaliser Z."""
    for i in range(rho.shape[0]):
        weighted[i] = rho[i] * like[i]
    return vector_sum(weighted)


@kernel
def _drift_and_normalise(rho, weighted, normaliser, previous_mean, x, drift_method, drift_table, taps, q_drift, out):
    """ρ ← drift(weighted) renormalised on the grid; returns the new (mean, sd) in natural units."""
    if not normaliser > 0.0:  # a result the model deems impossible (underflow at β = 1): no update
        for i in range(rho.shape[0]):
            weighted[i] = rho[i]
    drift(drift_method, drift_table, taps, q_drift, weighted, out)
    return normalise_with_moments(out, x, previous_mean, rho)


@kernel
def _play_match(row, state, plan, like_a, like_b, work, weighted_a, weighted_b, t_a, t_b, outputs):
    """One match: reads and writes only its two players' state and its own output row (the scratch
    vectors ``like_a`` .. ``t_b`` are the caller's), so matches without a common player commute. ``state``,
    ``plan`` and ``outputs`` are the tuples :func:`chance_replay_kernel` packs."""
    state_a, state_b, score, theta_index, ready, rho, mean, sd, prior_mean, prior_sd, newcomer, x = state
    (
        luck_method,
        beta,
        tables,
        q_luck,
        op_a,
        op_b,
        fac_v,
        fac_ut,
        off_v,
        off_u,
        rank,
        drift_method,
        drift_table,
        taps,
        q_drift,
    ) = plan
    (
        expected_a,
        rating_a_before,
        rating_b_before,
        sd_a_before,
        sd_b_before,
        rating_a_after,
        rating_b_after,
        sd_a_after,
        sd_b_after,
    ) = outputs
    ca = state_a[row]
    cb = state_b[row]
    for c in (ca, cb):
        if not ready[c]:
            if math.isnan(prior_mean[c]):
                rho[c, :] = newcomer
            else:
                normal_on_grid(x, prior_mean[c], prior_sd[c], rho[c])
            mean[c], sd[c] = moments(rho[c], x)
            ready[c] = True
    rho_a = rho[ca]
    rho_b = rho[cb]
    theta = score[row]
    t = theta_index[row]
    if luck_method == LUCK_LOWRANK:
        forecast = _lowrank_luck(
            tables,
            t,
            theta,
            op_a,
            op_b,
            fac_v,
            fac_ut,
            off_v,
            off_u,
            rank,
            rho_a,
            rho_b,
            like_a,
            like_b,
            work,
            t_a,
            t_b,
        )
    elif luck_method == LUCK_LAPLACE:
        forecast = _laplace_luck(tables, t, theta, beta, q_luck, rho_a, rho_b, like_a, like_b, work)
    else:
        forecast = _naive_luck(tables, t, theta, rho_a, rho_b, like_a, like_b, work)
    z_a = _weigh(rho_a, like_a, weighted_a)
    z_b = _weigh(rho_b, like_b, weighted_b)
    if luck_method == LUCK_LOWRANK and (z_a < LOWRANK_MIN_NORMALISER or z_b < LOWRANK_MIN_NORMALISER):
        forecast = _naive_luck(tables, t, theta, rho_a, rho_b, like_a, like_b, work)
        z_a = _weigh(rho_a, like_a, weighted_a)
        z_b = _weigh(rho_b, like_b, weighted_b)
    expected_a[row] = forecast
    rating_a_before[row] = DISPLAY_CENTER + DISPLAY_SCALE * mean[ca]
    rating_b_before[row] = DISPLAY_CENTER + DISPLAY_SCALE * mean[cb]
    sd_a_before[row] = DISPLAY_SCALE * sd[ca]
    sd_b_before[row] = DISPLAY_SCALE * sd[cb]
    mean[ca], sd[ca] = _drift_and_normalise(
        rho_a, weighted_a, z_a, mean[ca], x, drift_method, drift_table, taps, q_drift, work
    )
    mean[cb], sd[cb] = _drift_and_normalise(
        rho_b, weighted_b, z_b, mean[cb], x, drift_method, drift_table, taps, q_drift, work
    )
    rating_a_after[row] = DISPLAY_CENTER + DISPLAY_SCALE * mean[ca]
    rating_b_after[row] = DISPLAY_CENTER + DISPLAY_SCALE * mean[cb]
    sd_a_after[row] = DISPLAY_SCALE * sd[ca]
    sd_b_after[row] = DISPLAY_SCALE * sd[cb]


@kernel
def _sequence_numbers(order, league, played_in_league, seq):
    """``seq``: each match's number within its league, in replay order (``played_in_league`` counts on)."""
    for position in range(order.shape[0]):
        row = order[position]
        played_in_league[league[row]] += 1
        seq[row] = played_in_league[league[row]]


@kernel
def waves(order, state_a, state_b, n_states):
    """Group the matches of ``order`` into waves: a match's wave is one past the latest wave of its two
    players' earlier matches, so no two matches of a wave share a player and every match comes after all
    earlier matches of its players. Returns (rows grouped by wave, in replay order within a wave; the
    offset of each wave, one more entry than waves)."""
    n = order.shape[0]
    latest = np.zeros(n_states, dtype=np.int64)
    wave = np.empty(n, dtype=np.int64)
    n_waves = 0
    for position in range(n):
        row = order[position]
        w = max(latest[state_a[row]], latest[state_b[row]]) + 1
        latest[state_a[row]] = w
        latest[state_b[row]] = w
        wave[position] = w
        n_waves = max(n_waves, w)
    start = np.zeros(n_waves + 1, dtype=np.int64)
    for position in range(n):
        start[wave[position]] += 1
    for w in range(n_waves):
        start[w + 1] += start[w]
    fill = start[:-1].copy()
    grouped = np.empty(n, dtype=np.int64)
    for position in range(n):
        grouped[fill[wave[position] - 1]] = order[position]
        fill[wave[position] - 1] += 1
    return grouped, start


#: A wave with fewer matches than this runs on the calling thread (starting the workers costs more).
PARALLEL_MIN_WAVE = 16


@parallel_kernel
def chance_replay_kernel(
    grouped,
    wave_start,
    workers,
    state_a,
    state_b,
    score,
    theta_index,
    ready,
    rho,
    mean,
    sd,
    prior_mean,
    prior_sd,
    newcomer,
    x,
    luck_method,
    beta,
    tables,
    q_luck,
    op_a,
    op_b,
    fac_v,
    fac_ut,
    off_v,
    off_u,
    rank,
    max_rank,
    drift_method,
    drift_table,
    taps,
    q_drift,
    expected_a,
    rating_a_before,
    rating_b_before,
    sd_a_before,
    sd_b_before,
    rating_a_after,
    rating_b_after,
    sd_a_after,
    sd_b_after,
):
    """Replay the matches wave by wave (:func:`waves`), the matches of a wave on ``workers`` threads, each
    worker a contiguous share of the wave with its own scratch vectors; updating the state in place:
    ``rho[slot]`` is a state slot's vector and ``mean[slot]``, ``sd[slot]`` its moments (natural units),
    valid where ``ready``; a slot not ready is filled on first use from ``newcomer`` or, where
    ``prior_mean`` is not NaN, from N(prior_mean, prior_sd²) on the grid. Each match reads and writes only
    its players' state, which no other match of its wave touches, in the same order as a serial replay: the
    result is the serial replay's, bit for bit, whatever the number of threads."""
    size = x.shape[0]
    scratch = np.empty((workers, 5, size), dtype=np.float64)
    luck_scratch = np.empty((workers, 2, max(max_rank, 1)), dtype=np.float64)
    state = (state_a, state_b, score, theta_index, ready, rho, mean, sd, prior_mean, prior_sd, newcomer, x)
    plan = (
        luck_method,
        beta,
        tables,
        q_luck,
        op_a,
        op_b,
        fac_v,
        fac_ut,
        off_v,
        off_u,
        rank,
        drift_method,
        drift_table,
        taps,
        q_drift,
    )
    outputs = (
        expected_a,
        rating_a_before,
        rating_b_before,
        sd_a_before,
        sd_b_before,
        rating_a_after,
        rating_b_after,
        sd_a_after,
        sd_b_after,
    )
    for w in range(wave_start.shape[0] - 1):
        first = wave_start[w]
        count = wave_start[w + 1] - first
        if count < PARALLEL_MIN_WAVE or workers == 1:  # on this thread: starting the workers costs more
            s, u = scratch[0], luck_scratch[0]
            for k in range(first, first + count):
                _play_match(grouped[k], state, plan, s[0], s[1], s[2], s[3], s[4], u[0], u[1], outputs)
            continue
        share = (count + workers - 1) // workers
        for worker in prange(workers):
            s, u = scratch[worker], luck_scratch[worker]
            for k in range(first + worker * share, min(first + (worker + 1) * share, first + count)):
                _play_match(grouped[k], state, plan, s[0], s[1], s[2], s[3], s[4], u[0], u[1], outputs)


# --------------------------------------------------------------------------------------------------
# Python side: the numerical plan for a parameter set, priors, input checks.


def _luck_plan(params: dict, thetas: np.ndarray, counts: np.ndarray) -> dict:
    """Which luck algorithm runs, and the factorised operators of the fast path.

    Operator 0 is Λ (wins and losses); a fractional result θ at index t gets ``op_a[t]`` (D_θ, A's side)
    and ``op_b[t]`` (D_θᵀ = D_{1-θ}, B's side; the same operator when θ = ½), or -1 for the naive sums.
    """
    size, code, beta = params["grid_points"], sigmoid_code(params["sigmoid"]), params["beta"]
    n_thetas = len(thetas)
    plan: dict[str, Any] = {  # the kernel's arguments: ints, floats and arrays
        "method": LUCK_NAIVE,
        "op_a": np.full(n_thetas, -1, np.int64),
        "op_b": np.full(n_thetas, -1, np.int64),
        "fac_v": np.zeros(1),
        "fac_ut": np.zeros(1),
        "off_v": np.zeros(1, np.int64),
        "off_u": np.zeros(1, np.int64),
        "rank": np.zeros(1, np.int64),
        "max_rank": 0,
        "q_luck": math.exp(-grid_step(size, params["grid_max"]) / LAPLACE_SCALE),
    }
    algorithm = params["algorithm"]
    if algorithm == "laplace" or (algorithm == "fast" and params["sigmoid"] == "laplace"):
        plan["method"] = LUCK_LAPLACE
        return plan
    if algorithm == "naive":
        return plan
    luck_factors = factors(code, beta, 1.0, size, params["grid_max"])
    if luck_factors is None:
        return plan
    operators = [luck_factors]
    for t, (theta, count) in enumerate(zip(thetas, counts)):
        if theta in (0.0, 1.0) or (theta != 0.5 and count < FACTORISE_MIN_ROWS):
            continue
        pair = factors(code, beta, float(theta), size, params["grid_max"])
        if pair is None:
            continue
        plan["op_a"][t] = len(operators)
        operators.append(pair)
        if theta == 0.5:
            plan["op_b"][t] = plan["op_a"][t]
        else:
            plan["op_b"][t] = len(operators)
            operators.append(transposed(pair))
    ranks = np.array([op[2] for op in operators], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(ranks * size)[:-1]]).astype(np.int64)  # V and Ut have equal sizes
    plan.update(
        method=LUCK_LOWRANK,
        fac_v=np.concatenate([op[0].ravel() for op in operators]),
        fac_ut=np.concatenate([op[1].ravel() for op in operators]),
        off_v=offsets,
        off_u=offsets,
        rank=ranks,
        max_rank=int(ranks.max()),
    )
    return plan


def _drift_plan(params: dict) -> dict:
    size, drift_sd = params["grid_points"], params["drift_sd"]
    h = grid_step(size, params["grid_max"])
    code = kernel_code(params["kernel"])
    table = kernel_table(drift_sd, code, size, h)
    plan = {"table": table, "taps": np.ones(1), "q": 0.0}
    if drift_sd == 0.0:
        plan["method"] = DRIFT_NONE
    elif params["algorithm"] == "naive":
        plan["method"] = DRIFT_NAIVE
    elif params["kernel"] == "laplace":
        plan["method"] = DRIFT_LAPLACE
        plan["q"] = math.exp(-h / laplace_kernel_scale(drift_sd))
    else:
        plan["method"] = DRIFT_TAPS
        plan["taps"] = gaussian_taps(table, size)
    return plan


def _check_outcomes(columns: dict, prepared: PreparedMatches, table: str) -> None:
    """Weights must be absent, NULL or 1: the model has no partial-play weights."""
    reject_weights(columns, prepared, table, "the luck-aware grid system (chance)")


def _check(params: dict) -> None:
    if params["algorithm"] == "laplace" and (params["sigmoid"] != "laplace" or params["kernel"] != "laplace"):
        raise DuckrateInputError(
            f"chance: parameter algorithm = 'laplace' with sigmoid = {params['sigmoid']!r} and kernel = "
            f"{params['kernel']!r}; expected sigmoid = 'laplace' and kernel = 'laplace' (Algorithms 4.5/4.6), "
            "or algorithm 'fast' / 'naive'"
        )


def _simulate(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    """The output columns and the state after the rows of ``prepared.order``, from ``start``.

    The state is per slot: ``rho`` (slot x grid points; ``start``'s zero-allocated array, written in place,
    so only the pages of the slots that play or are known are touched), ``mean`` and ``sd`` (natural
    units; the mean also shifts the next moment sums, so it is carried, not recomputed)."""
    size = params["grid_points"]
    x = grid(size, params["grid_max"])
    states = initial_states(prepared, priors, {"rating": math.nan, "sd": math.nan})
    check_positive_priors(priors, ("sd",), "a prior sd on the display scale for the chance system")
    prior_mean = (states["rating"] - DISPLAY_CENTER) / DISPLAY_SCALE
    prior_sd = np.where(np.isnan(states["sd"]), params["prior_sd"], states["sd"] / DISPLAY_SCALE)
    newcomer = np.empty(size, dtype=np.float64)
    normal_on_grid(x, 0.0, params["prior_sd"], newcomer)

    # distinct results: Λ (θ = 1) always first, then every other score present
    scores = prepared.score[prepared.order]
    present, counts = np.unique(scores, return_counts=True)
    others = present[present != 1.0]
    thetas = np.concatenate([[1.0], others])
    counts = np.concatenate([[0], counts[present != 1.0]])
    theta_index = np.where(prepared.score == 1.0, 0, np.searchsorted(others, prepared.score) + 1).astype(np.int64)
    theta_index = np.minimum(theta_index, len(thetas) - 1)  # rows outside ``order`` may hold other scores
    code, beta, h = sigmoid_code(params["sigmoid"]), params["beta"], grid_step(size, params["grid_max"])
    tables = np.stack([luck_table(float(theta), beta, code, size, h) for theta in thetas])
    luck = _luck_plan(params, thetas, counts)
    drift = _drift_plan(params)

    rho = start.player["rho"]
    mean = start.overlay({"mean": np.zeros(prepared.n_states, dtype=np.float64)})["mean"]
    sd = start.overlay({"sd": np.zeros(prepared.n_states, dtype=np.float64)})["sd"]
    played = start.seq.copy()
    out = new_outputs(prepared.n_rows)
    seq, expected, *ratings = kernel_outputs(out)
    _sequence_numbers(prepared.order, prepared.league, played, seq)
    grouped, wave_start = waves(prepared.order, prepared.state_a, prepared.state_b, prepared.n_states)
    chance_replay_kernel(
        grouped,
        wave_start,
        numba.get_num_threads(),
        prepared.state_a,
        prepared.state_b,
        prepared.score,
        theta_index,
        start.known.copy(),
        rho,
        mean,
        sd,
        prior_mean,
        prior_sd,
        newcomer,
        x,
        luck["method"],
        beta,
        tables,
        luck["q_luck"],
        luck["op_a"],
        luck["op_b"],
        luck["fac_v"],
        luck["fac_ut"],
        luck["off_v"],
        luck["off_u"],
        luck["rank"],
        luck["max_rank"],
        drift["method"],
        drift["table"],
        drift["taps"],
        drift["q"],
        expected,
        *ratings,
    )
    return out, EndState(player={"mean": mean, "sd": sd, "rho": rho})


def _replay(prepared: PreparedMatches, priors, params: dict) -> tuple[dict, np.ndarray, np.ndarray]:
    """The output columns, the final vectors (one row per state slot that played) and those slots."""
    out, end = _simulate(prepared, priors, params, fresh_start(prepared, CHANCE.player_state, (), params))
    slots = np.flatnonzero(used_slots(prepared))
    return out, end.player["rho"][slots], slots


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    return _simulate(prepared, priors, params, start)


def _check_resume(prepared: PreparedMatches, params: dict, start: StartState) -> str | None:
    """The fast path factorises a result other than 0, ½ and 1 only when the input holds it often enough
    (``FACTORISE_MIN_ROWS``): with such results the last bits depend on the whole input."""
    if params["algorithm"] != "fast" or params["sigmoid"] == "laplace":
        return None
    scores = prepared.score[prepared.order]
    other = scores[(scores != 0.0) & (scores != 0.5) & (scores != 1.0)]
    if other.size:
        return (
            f"a score_a of {float(other[0])!r} (neither 0, 0.5 nor 1) with algorithm 'fast': whether its luck "
            "matrix is factorised depends on how often it occurs in the whole history (use algorithm 'naive' "
            "to continue such histories)"
        )
    return None


def _read_state(state: pl.DataFrame, saved: dict) -> Players:
    """Each player's posterior on the grid from a saved state; ratings on the replay's display scale."""
    players = state_rows(state, "player")
    values = field_values(players["value"], CHANCE.player_state, saved, "player")
    rating = DISPLAY_CENTER + DISPLAY_SCALE * values["mean"]
    frame = players_frame(players, rating, DISPLAY_SCALE * values["sd"])
    return Players(frame, {"rho": values["rho"]}, saved=saved)


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return chance_forecasts(players.vectors["rho"], a, b, players.saved), None


CHANCE = ReplaySystem(
    name="chance",
    summary=(
        "The luck-aware grid system (Cowan, paired comparisons for games of chance): each player's whole "
        "posterior on a grid; ratings are posterior means on the display scale."
    ),
    parameters=(
        Parameter(
            "beta",
            0.8,
            "a luck weight β in (0, 1] (1 - β: the share of matches decided by a coin flip)",
            lambda v: 0.0 < v <= 1.0,
        ),
        Parameter(
            "prior_sd", 0.7, "a finite newcomer prior sd > 0 (natural units)", lambda v: math.isfinite(v) and v > 0
        ),
        Parameter(
            "drift_sd",
            0.03,
            "a finite drift sd >= 0 per match (natural units; 0 = no drift)",
            lambda v: math.isfinite(v) and v >= 0,
        ),
        Parameter(
            "grid_points",
            1001,
            "an integer number of grid points >= 3",
            lambda v: math.isfinite(v) and v >= 3,
            integer=True,
        ),
        Parameter(
            "grid_max", 7.0, "a finite grid half-width M > 0 (natural units)", lambda v: math.isfinite(v) and v > 0
        ),
        Parameter("sigmoid", "logistic", "one of 'logistic', 'normal', 'laplace'", choices=SIGMOIDS),
        Parameter("kernel", "gaussian", "one of 'gaussian', 'laplace'", choices=KERNELS),
        Parameter("algorithm", "fast", "one of 'naive', 'fast', 'laplace'", choices=ALGORITHMS),
    ),
    run=_run,
    check=_check,
    check_matches=_check_outcomes,
    weighted=False,
    has_sd=True,
    player_state=(StateField("mean"), StateField("sd"), StateField("rho", lambda params: params["grid_points"])),
    check_resume=_check_resume,
    forecast=Forecast(_forecast, read_state=_read_state, state_holds="each player's posterior on the grid"),
    grid={"beta": [0.6, 0.8, 1.0], "drift_sd": [0.01, 0.03, 0.06]},
    presets=(  # small grids: the default 1001 points are slow for the shared tests' many short replays
        Preset({"grid_points": 201}),
        Preset({"grid_points": 51, "algorithm": "naive", "kernel": "laplace", "drift_sd": 0.1}),
        Preset({"grid_points": 61, "sigmoid": "laplace", "kernel": "laplace", "beta": 1.0}),
    ),
)


def chance(
    matches: pl.DataFrame,
    beta: float = 0.8,
    prior_sd: float = 0.7,
    drift_sd: float = 0.03,
    grid_points: int = 1001,
    grid_max: float = 7.0,
    sigmoid: str = "logistic",
    kernel: str = "gaussian",
    algorithm: str = "fast",
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Replay of the luck-aware grid rating system for games of chance (Cowan, Sections 2-4).

    Each player is a probability vector ρ on the grid ``x_k = -M + 2M·k/n`` (``grid_points`` = n + 1 points,
    ``grid_max`` = M, natural units); a newcomer starts from ρ ∝ N(0, ``prior_sd``²). A match with result
    θ = ``score_a`` updates both sides from their pre-match vectors by eq. (1),
    ``ρA'(x) ∝ ρA(x) Σ_k ρB(x_k) Λ(x, x_k)^θ Λ(x_k, x)^(1-θ)`` (B's likewise with the roles exchanged), with
    the luck function ``Λ(x, y) = (1-β)/2 + β·F(x - y)``; then both drift,
    ``ρ~(x) ∝ Σ_k ρ(x_k) K(x, x_k)``, renormalised on the grid (mass carried past ±M is dropped, eq. 8).

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` (in [0, 1]:
        1 win, 0.5 draw, 0 loss, fractions allowed) and optionally ``league`` (independent replays). A
        ``weight`` column must be NULL or 1 (the model has no match weights).
    beta : β in (0, 1]: with probability 1 - β a match is decided by a coin flip (Example 2.9); β = 1 is the
        pure sigmoid model, whose updates after big upsets the paper warns against (Section 3.1).
    prior_sd : newcomer sd σ0 (> 0, natural units; 0.7 ≈ 122 display points).
    drift_sd : sd σκ (>= 0, natural units) of the drift kernel applied to both players after every match
        (0.03 ≈ 5.2 display points; 0: no drift).
    grid_points : number of grid points n + 1 (integer >= 3).
    grid_max : half-width M of the grid (> 0, natural units; 7 ≈ ±1216 display points).
    sigmoid : F in Λ: ``'logistic'`` 1/(1+e^-d) (the paper's), ``'normal'`` Φ(d/s) with s = 4/sqrt(2π) or
        ``'laplace'`` the Laplace CDF with scale 2; the scales give every F the logistic's slope 1/4 at 0.
    kernel : drift kernel, ``'gaussian'`` N(0, σκ²) or ``'laplace'`` with scale σκ/sqrt(2) (variance σκ²).
    algorithm : ``'fast'`` (default: the fastest exact method for the parameters), ``'naive'`` (the O(n²)
        sums of Section 4.1, the reference) or ``'laplace'`` (Algorithms 4.5/4.6; needs
        ``sigmoid = kernel = 'laplace'``). All agree to ~1e-14 in every ρ.
    priors : ``player_priors`` frame (``player``, ``rating`` and optional ``sd`` on the display scale,
        optional ``league``): the player starts from ρ ∝ N((rating - 1500)·ln10/400, (sd·ln10/400)²) on the
        grid (a NULL sd means ``prior_sd``; sd must be > 0).
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, and the result is that of one replay over the whole history (refused, with the
        ``'fast'`` algorithm and a logistic or normal sigmoid, when ``matches`` hold results other than 0,
        ½ and 1: whether those get a factorised luck matrix depends on the whole history).
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}``. Ratings and sds are the posterior mean
    and sd on the display scale (``1500 + 400/ln10 · x``); ``*_after`` is the state after the update and the
    drift, carried into each player's next match; ``expected_a = Σ_j Σ_k ρA(x_j) ρB(x_k) Λ(x_j, x_k)``
    from the pre-match vectors (P(A wins) + ½ P(draw) in this model).

    References
    ----------
    A. Cowan, "Paired comparisons for games of chance" (2023), Sections 2-4; eq. (2), (5), (6) and Section 3.4
    give the defaults.
    """
    return replay_frame(
        CHANCE,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        beta=beta,
        prior_sd=prior_sd,
        drift_sd=drift_sd,
        grid_points=grid_points,
        grid_max=grid_max,
        sigmoid=sigmoid,
        kernel=kernel,
        algorithm=algorithm,
    )


def posteriors(matches: pl.DataFrame, priors: pl.DataFrame | None = None, **params) -> tuple[pl.DataFrame, np.ndarray]:
    """Every player's final grid distribution after replaying ``matches`` (same parameters as :func:`chance`).

    Returns ``(players, rho)``: a frame with ``league``, ``player``, ``rating`` and ``sd`` (display scale), one
    row per (league, player) that played, and the float64 matrix whose row i is that player's ρ on the grid
    ``x_k = -M + 2M·k/n`` (after the drift of their last match; each row sums to 1).
    """
    columns = columns_from_polars(matches)
    params = CHANCE.resolve(params)
    prepared = prepare_matches(columns)
    CHANCE.check_matches(columns, prepared, "matches")
    _, rho, slots = _replay(prepared, prior_columns(priors), params)
    x = grid(params["grid_points"], params["grid_max"])
    mean = rho @ x
    sd = np.sqrt(np.maximum(((x[None, :] - mean[:, None]) ** 2 * rho).sum(axis=1), 0.0))
    players = pl.DataFrame(
        {
            "league": pl.Series([prepared.league_names[i] for i in prepared.state_league[slots]], dtype=pl.Utf8),
            "player": pl.Series(
                prepared.players.take(pa.array(prepared.state_player[slots])).to_pylist(), dtype=pl.Utf8
            ),
            "rating": DISPLAY_CENTER + DISPLAY_SCALE * mean,
            "sd": DISPLAY_SCALE * sd,
        }
    )
    return players, rho
