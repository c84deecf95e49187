"""Elo-MMR for ranked contests with many players (Ebtekar & Liu, Sections 3-5, Algorithms 1-3).

Contest by contest (ordered by ``played_at`` then ``contest_id``):

1. Newcomers start from the prior N(``initial``, ``initial_sd``²) (or their ``priors`` row); every
   participant's belief is pseudodiffused by γ² = ``drift``² (+ ``drift_per_day``² × days since their
   previous contest) with transfer rate ρ (Algorithm 2; the Gaussian variant and ρ = ∞ collapse the
   belief to a Gaussian, Section 4).
2. Phase 1: each performance p is the zero of Q (Theorem 3.2) against every participant's prior
   rating μ_j and δ_j² = σ_j² + β², ties counting as a win plus a loss. ``algorithm='fast'`` uses the
   Chebyshev series of :mod:`.fast` (logistic model) or :mod:`.gaussian_series` (Gaussian model, from
   ``GAUSSIAN_SERIES_FROM`` participants), ``'exact'`` the O(|P|²) solve;
   ``max_opponents`` restricts each Q to the nearest ratings (Section 5.3).
3. Phase 2: logistic (Elo-MMR(ρ)): a logistic factor for p is added and the rating is the zero of L'
   (eq. 6); Gaussian (Elo-MMχ): the Gaussian belief is multiplied by N(p, β²). Uncertainty:
   1/σ² ← 1/σ² + 1/β² (eq. 8). ``max_history`` caps the logistic factors kept; older ones and any
   whose weight fell below ``history_tolerance`` of the total are folded into the Gaussian factor
   (history compression, Section 5.3).

Contest weights ω follow the reference implementation: with σ∞ the limiting uncertainty of a player
who plays every contest (σ∞⁴ = γ²(β² - σ∞²)), a contest of weight ω has β_ω² = σ∞² + (β² - σ∞²)/ω and
γ_ω² = ω σ∞⁴/(β² - σ∞²): about ω contests' worth of evidence and of drift, σ∞ unchanged.

A replay can continue from a saved state (``state=``; :mod:`duckrate.systems.event_state` for the table and its
refusals, :mod:`._mmr_beliefs` for a player's saved belief) with the result of one replay over the
whole history, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.core.errors import DuckrateInputError
from duckrate.core.jit import kernel
from duckrate.core.parameters import Parameter
from duckrate.core.priors import check_positive_priors, initial_states
from duckrate.core.protocol import Preset
from duckrate.systems.contest import COMPUTED_COLUMNS, INITIAL, INITIAL_SD, ContestSystem
from duckrate.systems.elo_mmr.beliefs import belief_values, fresh_beliefs, restore_beliefs
from duckrate.systems.elo_mmr.fast import performances_fast
from duckrate.systems.elo_mmr.gaussian_series import GAUSSIAN_SERIES_FROM, fit_block_series
from duckrate.systems.elo_mmr.history import (
    diffuse,
    ensure_room,
    fold_negligible,
    fold_oldest,
    logistic_scales,
    robust_average,
)
from duckrate.systems.elo_mmr.phase1 import performances_exact, performances_subsampled, solve_tie_groups
from duckrate.systems.event_state import EventStart
from duckrate.systems.logistic_sums import SERIES_TOLERANCE

# The reference implementation's defaults: β = 200 and a limiting uncertainty σ∞ = 80 for a player
# who plays every contest, i.e. γ = σ∞²/√(β² - σ∞²) ≈ 34.915 per contest.
BETA = 200.0
SIG_LIMIT = 80.0
DRIFT = SIG_LIMIT**2 / math.sqrt(BETA**2 - SIG_LIMIT**2)
HISTORY_TOLERANCE = 1e-12

_UNITS_PER_DAY = {
    "days": 1.0,
    "seconds": 86_400.0,
    "milliseconds": 86_400_000.0,
    "microseconds": 86_400_000_000.0,
    "nanoseconds": 86_400_000_000_000.0,
    "integer": 1.0,
}


def _nonnegative(value: float) -> bool:
    return value >= 0 and not math.isnan(value)


def _check(params: dict) -> None:
    if params["max_opponents"] is not None and params["max_opponents"] < 2:
        raise DuckrateInputError(
            f"elo_mmr: parameter max_opponents = {params['max_opponents']}; expected an integer >= 2 or NULL"
        )


def contest_scales(beta: float, drift: float, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(β_ω, γ_ω²) per contest weight ω, the reference implementation's rule (module docstring)."""
    weight = np.asarray(weight, dtype=np.float64)
    beta_sq, drift_sq = beta * beta, drift * drift
    limit_sq = 0.5 * (math.sqrt(drift_sq * drift_sq + 4.0 * drift_sq * beta_sq) - drift_sq)
    excess = beta_sq - limit_sq
    beta_w = np.sqrt(limit_sq + excess / weight)
    drift_sq_w = weight * limit_sq * limit_sq / excess
    unit = weight == 1.0
    beta_w[unit] = beta
    drift_sq_w[unit] = drift_sq
    return beta_w, drift_sq_w


@kernel
def elo_mmr_kernel(contests, beliefs, settings, outputs):
    """Replay every contest in order from the players' beliefs (see :class:`.beliefs.Beliefs`:
    ``mu``, ``sig``, the Gaussian factor, ``seen``, ``last_day`` and the logistic factors in the pool),
    all updated in place. Outputs are indexed by input row. Returns how many contests fell back from
    the fast phase 1 to the exact one, and the pool (reallocated when it grew) with its used size.

    Arguments, grouped: ``contests`` (the rows in replay order and each contest's start, day, β and γ²,
    each row's player slot and rank), ``beliefs`` (:meth:`.beliefs.Beliefs.kernel_arrays`), ``settings``
    (the resolved parameters the kernel reads) and ``outputs`` (the computed columns but ``seq``)."""
    order, contest_start, contest_days, contest_beta, contest_drift_sq, state, rank = contests
    (
        mu,
        sig,
        normal_mu,
        normal_sig,
        seen,
        last_day,
        slab,
        head,
        length,
        capacity,
        centres,
        arg_scales,
        out_scales,
        pool_used,
    ) = beliefs
    gaussian, rho, drift_per_day_sq, max_history, max_opponents, exact, history_tolerance, series_tolerance = settings
    n_players, performance, rating_before, sd_before, rating_after, sd_after = outputs

    largest = 0
    for c in range(contest_start.shape[0] - 1):
        largest = max(largest, contest_start[c + 1] - contest_start[c])
    prior_mu = np.empty(largest)
    scale = np.empty(largest)
    ranks = np.empty(largest, dtype=np.int64)
    group_start = np.empty(largest + 1, dtype=np.int64)
    group_perf = np.empty(largest)
    player_perf = np.empty(largest)
    fallbacks = 0

    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        n = contest_start[c + 1] - first
        beta = contest_beta[c]
        day = contest_days[c]
        for k in range(n):
            row = order[first + k]
            s = state[row]
            if not seen[s]:
                seen[s] = True
                last_day[s] = day
            variance = contest_drift_sq[c] + drift_per_day_sq * (day - last_day[s])
            last_day[s] = day
            diffuse(
                s,
                variance,
                math.inf if gaussian else rho,
                mu,
                sig,
                normal_mu,
                normal_sig,
                slab,
                head,
                length,
                out_scales,
                arg_scales,
            )
            fold_negligible(
                s, history_tolerance, slab, head, length, normal_mu, normal_sig, centres, arg_scales, out_scales
            )
            rating_before[row] = mu[s]
            sd_before[row] = sig[s]
            prior_mu[k] = mu[s]
            delta = math.sqrt(sig[s] * sig[s] + beta * beta)
            scale[k] = delta if gaussian else delta * math.sqrt(3.0) / math.pi
            ranks[k] = rank[row]
        n_groups = 0
        for k in range(n):
            if k == 0 or ranks[k] != ranks[k - 1]:
                group_start[n_groups] = k
                n_groups += 1
        group_start[n_groups] = n
        groups = group_start[: n_groups + 1]

        if max_opponents > 0 and max_opponents < n:
            performances_subsampled(prior_mu[:n], scale[:n], ranks[:n], max_opponents, gaussian, player_perf)
        else:
            done = False
            if not exact and not gaussian:
                done = performances_fast(prior_mu[:n], scale[:n], groups, series_tolerance, group_perf)
                if not done:
                    fallbacks += 1
            elif not exact and n >= GAUSSIAN_SERIES_FROM:
                done, fit = fit_block_series(prior_mu[:n], scale[:n])
                if done:
                    solve_tie_groups(prior_mu[:n], scale[:n], ranks[:n], groups, True, fit, group_perf)
                else:
                    fallbacks += 1
            if not done:
                performances_exact(prior_mu[:n], scale[:n], ranks[:n], groups, gaussian, group_perf)
            for g in range(n_groups):
                for k in range(group_start[g], group_start[g + 1]):
                    player_perf[k] = group_perf[g]

        for k in range(n):
            row = order[first + k]
            s = state[row]
            p = player_perf[k]
            if gaussian:
                wn = 1.0 / (normal_sig[s] * normal_sig[s])
                wp = 1.0 / (beta * beta)
                normal_mu[s] = (wn * normal_mu[s] + wp * p) / (wn + wp)
                normal_sig[s] = 1.0 / math.sqrt(wn + wp)
                mu[s] = normal_mu[s]
                sig[s] = normal_sig[s]
            else:
                if max_history > 0 and length[s] >= max_history:
                    fold_oldest(s, slab, head, length, normal_mu, normal_sig, centres, arg_scales, out_scales)
                centres, arg_scales, out_scales, pool_used = ensure_room(
                    s, slab, head, length, capacity, pool_used, centres, arg_scales, out_scales
                )
                slot = slab[s] + head[s] + length[s]
                a, o = logistic_scales(beta)
                centres[slot] = p
                arg_scales[slot] = a
                out_scales[slot] = o
                length[s] += 1
                start = slab[s] + head[s]
                mu[s] = robust_average(
                    normal_mu[s],
                    1.0 / (normal_sig[s] * normal_sig[s]),
                    centres,
                    arg_scales,
                    out_scales,
                    start,
                    start + length[s],
                    mu[s],
                )
                sig[s] = 1.0 / math.sqrt(1.0 / (sig[s] * sig[s]) + 1.0 / (beta * beta))
            n_players[row] = n
            performance[row] = p
            rating_after[row] = mu[s]
            sd_after[row] = sig[s]
    return fallbacks, centres, arg_scales, out_scales, pool_used


def run_elo_mmr(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns (``COMPUTED_COLUMNS`` but ``seq``, indexed by input row) and a function giving
    the players' saved rows (:func:`.beliefs.belief_values`) after the contests, starting from ``start``
    (the saved beliefs of the players in them)."""
    if priors is not None:
        check_positive_priors(priors, ("sd",), "elo_mmr")
    starting = initial_states(prepared, priors, {"rating": params["initial"], "sd": params["initial_sd"]})
    beliefs = restore_beliefs(fresh_beliefs(starting["rating"], starting["sd"]), start.slots, start.values)
    beta_w, drift_sq_w = contest_scales(params["beta"], params["drift"], prepared.contest_weight)
    days = prepared.contest_time / _UNITS_PER_DAY[prepared.time_unit]
    n = prepared.n_rows
    out = {
        name: np.empty(n, np.int64 if name == "n_players" else np.float64) for name in COMPUTED_COLUMNS if name != "seq"
    }
    contests = (
        prepared.order,
        prepared.contest_start,
        np.ascontiguousarray(days),
        beta_w,
        drift_sq_w,
        prepared.state,
        prepared.rank,
    )
    settings = (
        params["variant"] == "gaussian",
        params["rho"],
        params["drift_per_day"] ** 2,
        params["max_history"] or 0,
        params["max_opponents"] or 0,
        params["algorithm"] == "exact",
        params["history_tolerance"],
        SERIES_TOLERANCE,
    )
    _, beliefs.centres, beliefs.arg_scales, beliefs.out_scales, beliefs.pool_used = elo_mmr_kernel(
        contests, beliefs.kernel_arrays(), settings, tuple(out.values())
    )
    return out, lambda: belief_values(beliefs, np.arange(prepared.n_states, dtype=np.int64))


def elo_mmr(
    results: pl.DataFrame,
    variant: str = "logistic",
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA,
    drift: float = DRIFT,
    drift_per_day: float = 0.0,
    rho: float = 1.0,
    max_history: int | None = None,
    max_opponents: int | None = None,
    history_tolerance: float = HISTORY_TOLERANCE,
    algorithm: str = "fast",
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Elo-MMR replay over a ``contest_results`` table.

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at`` (TIMESTAMP, DATE or integer order), ``player``,
        ``rank`` (1 = best; equal ranks tie) and optionally ``league`` (independent replays) and
        ``weight`` (contest weight, NULL means 1; one value per contest).
    variant : 'logistic' (Elo-MMR(ρ), robust) or 'gaussian' (Elo-MMχ, memoryless).
    initial, initial_sd : newcomer prior N(initial, initial_sd²).
    beta : performance sd β (reference default 200).
    drift : skill drift sd γ added before each contest a player enters (reference default σ∞²/√(β²-σ∞²)
        ≈ 34.915 with σ∞ = 80).
    drift_per_day : drift sd per day since the player's previous contest (per unit of an integer
        ``played_at``); variances add: γ² + drift_per_day² · days.
    rho : transfer rate ρ of the pseudodiffusion (Algorithm 2); ``math.inf`` gives Elo-MMR(∞).
    max_history : at most this many logistic factors per player (older ones folded into the Gaussian).
    max_opponents : opponent subsampling: each performance uses the this-many nearest prior ratings.
    history_tolerance : factors weighing less than this share of a player's total weight are folded
        into the Gaussian (0 keeps every factor, as the reference implementation does).
    algorithm : phase 1 through Chebyshev series fitted once per contest ('fast': the shared function of
        :mod:`.fast` for the logistic variant, the block sums of :mod:`.gaussian_series` for the Gaussian one
        from 512 participants) or the exact O(|P|²) solve ('exact').
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``).
    state : a saved state (:func:`duckrate.replay_state` with ``"elo_mmr"``) to continue from: ``results``
        are then only the contests after it, and the result is that of one replay over the whole history
        (``seq`` included). Raises :class:`duckrate.RebuildRequired` for a contest not after the saved
        ones, a contest id already replayed, or other parameters.
    chunk_size : the most results replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks of whole contests in time order, each continuing from the state the one
        before left, with the same result.

    Returns
    -------
    DataFrame, one row per (contest, player): ``league, contest_id, played_at, player, rank, n_players,
    performance, rating_before, sd_before, rating_after, sd_after, seq`` (``seq``: the contest's 1-based
    position in its league). ``rating_before``/``sd_before`` are the prior going into the contest (sd
    after the drift), ``*_after`` the state carried into the player's next contest.
    """
    return ELO_MMR.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        variant=variant,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        drift=drift,
        drift_per_day=drift_per_day,
        rho=rho,
        max_history=max_history,
        max_opponents=max_opponents,
        history_tolerance=history_tolerance,
        algorithm=algorithm,
    )[0]


# The registered contest system (systems/contest_system.py): its parameters and the functions above.
ELO_MMR = ContestSystem(
    name="elo_mmr",
    summary=(
        "Elo-MMR (Ebtekar & Liu 2021): Elo-MMR(ρ) with logistic performances, or Elo-MMχ with Gaussian ones; "
        "performance from the contest's ranking, then a robust update of each participant's belief."
    ),
    parameters=(
        Parameter(
            "variant", "logistic", "'logistic' (Elo-MMR(ρ)) or 'gaussian' (Elo-MMχ)", choices=("logistic", "gaussian")
        ),
        INITIAL,
        INITIAL_SD,
        Parameter("beta", BETA, "a finite performance sd β > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("drift", DRIFT, "a finite drift sd γ >= 0 per contest", lambda v: math.isfinite(v) and v >= 0),
        Parameter(
            "drift_per_day",
            0.0,
            "a finite drift sd >= 0 per day (per unit of an integer played_at)",
            lambda v: math.isfinite(v) and v >= 0,
        ),
        Parameter("rho", 1.0, "a transfer rate ρ >= 0 (may be infinite)", _nonnegative),
        Parameter(
            "max_history",
            None,
            "an integer >= 1, or NULL for no cap",
            lambda v: math.isfinite(v) and v >= 1,
            nullable=True,
            integer=True,
        ),
        Parameter(
            "max_opponents",
            None,
            "an integer >= 2, or NULL for every opponent",
            lambda v: math.isfinite(v) and v >= 2,
            nullable=True,
            integer=True,
        ),
        Parameter(
            "history_tolerance",
            HISTORY_TOLERANCE,
            "a finite tolerance in [0, 1)",
            lambda v: math.isfinite(v) and 0 <= v < 1,
        ),
        Parameter("algorithm", "fast", "'fast' or 'exact' (phase 1)", choices=("fast", "exact")),
    ),
    check=_check,
    run=run_elo_mmr,
    grid={"beta": [150.0, 200.0, 250.0], "drift": [20.0, 34.914862437758785, 50.0]},
    presets=(Preset(), Preset({"variant": "gaussian"})),
)
