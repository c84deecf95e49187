"""The TopCoder algorithm rating system for ranked contests.

TopCoder's published rules ("Algorithm Competition Rating System"), in the form the Elo-MMR reference
implementation runs them (Ebtekar & Liu 2021 compare it in their Tables 2 and 3). Each player has a rating
R and a volatility V; in a contest of n participants with contest weight ω (1 by default)::

    AveRating = Σ R_j / n,   CF = sqrt(Σ V_j² / n + Σ (R_j - AveRating)² / (n - 1))       (n > 1)
    WP(j, i) = Φ(√ω (R_j - R_i) / sqrt(V_j² + V_i²))                  (j's chance to beat i)
    ERank_i = Σ_j WP(j, i)  (j over everyone, i included: WP(i, i) = ½)
    ARank_i = (first + last place of i's tie group) / 2              (places 1-based)
    EPerf = -Φ⁻¹(ERank/n),  APerf = -Φ⁻¹(ARank/n),  PerfAs = R + CF (APerf - EPerf)
    Weight = w_limit + (w_noob - w_limit)/N,  Cap = (150 + 1500/(N + 1)) · √ω · Weight/(0.18 + 0.42/N)
    Weight ← ω · Weight/(1 - Weight), × 0.9 when R >= 2000, × 0.8 when R >= 2500
    R' = clamp((R + Weight · PerfAs)/(1 + Weight), R - Cap, R + Cap)
    V' = sqrt((R'' - R)²/Weight + V²/(1 + Weight)),  R'' the unclamped new rating

with N the player's number of rated contests, this one included. The performance column holds PerfAs,
the sd columns the volatility.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.core.jit import parallel_kernel
from duckrate.core.parameters import Parameter
from duckrate.systems.contest import INITIAL, ContestSystem, run_fixed_kernel
from duckrate.systems.event_state import EventStart
from duckrate.systems.numerics import normal_cdf_fast, normal_cdf_table, normal_quantile
from duckrate.systems.standings import largest_contest, record_contest, tie_ranges

PLAYER_FIELDS = ("rating", "volatility", "contests")  # a saved player row, in this order


@parallel_kernel
def topcoder_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (rating, volatility, contests rated, per slot) in
    place; outputs are indexed by input row. ``contests``: the rows in replay order, each contest's first
    row and weight, each row's slot and rank; ``settings``: (w_noob, w_limit, and Φ's table: the O(n²) sums of
    WP use :func:`.numerics.normal_cdf_fast`).

    Within a contest every player's update reads only the ratings before the contest, so the players are
    rated in parallel; each sum runs over the participants in rank order, whatever the thread count."""
    order, contest_start, contest_weight, state, rank = contests
    rating, volatility, played = players
    weight_noob, weight_limit, cdf_values, cdf_slopes = settings
    largest = largest_contest(contest_start)
    mu = np.empty(largest)
    var = np.empty(largest)
    first_place = np.empty(largest)
    last_place = np.empty(largest)
    sd = np.empty(largest)
    perf_values = np.empty(largest)
    new_rating = np.empty(largest)
    new_volatility = np.empty(largest)
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        n = contest_start[c + 1] - first
        sqrt_weight = math.sqrt(contest_weight[c])
        total = 0.0
        for k in range(n):
            s = state[order[first + k]]
            mu[k] = rating[s]
            var[k] = volatility[s] * volatility[s]
            total += mu[k]
        average = total / n
        mean_var = 0.0
        for k in range(n):
            mean_var += var[k]
        mean_var /= n
        if n > 1:
            spread = 0.0
            for k in range(n):
                spread += (mu[k] - average) * (mu[k] - average)
            mean_var += spread / (n - 1)
        c_factor = math.sqrt(mean_var)
        tie_ranges(order, first, n, rank, first_place, last_place)
        for k in numba.prange(n):
            row = order[first + k]
            s = state[row]
            expected = 0.0
            for j in range(n):
                z = sqrt_weight * (mu[j] - mu[k]) / math.sqrt(var[j] + var[k])
                expected += normal_cdf_fast(z, cdf_values, cdf_slopes)
            expected_perf = -normal_quantile(expected / n)
            actual_perf = -normal_quantile(0.5 * (1 + first_place[k] + last_place[k]) / n)  # ARank/n
            perf = mu[k] + c_factor * (actual_perf - expected_perf)
            times = played[s] + 1.0
            weight = weight_limit + (weight_noob - weight_limit) / times
            cap = (150.0 + 1500.0 / (times + 1.0)) * sqrt_weight * weight / (0.18 + 0.42 / times)
            weight *= contest_weight[c] / (1.0 - weight)
            if mu[k] >= 2500.0:
                weight *= 0.8
            elif mu[k] >= 2000.0:
                weight *= 0.9
            tried = (mu[k] + weight * perf) / (1.0 + weight)
            new_rating[k] = min(max(tried, mu[k] - cap), mu[k] + cap)
            new_volatility[k] = math.sqrt((tried - mu[k]) * (tried - mu[k]) / weight + var[k] / (1.0 + weight))
            played[s] = times
            perf_values[k] = perf
            sd[k] = math.sqrt(var[k])
        after = (new_rating, new_volatility)
        record_contest(order, first, n, state, (mu, sd), after, perf_values, (rating, volatility), outputs)


def run_topcoder(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    settings = (params["weight_noob"], params["weight_limit"], *normal_cdf_table())
    return run_fixed_kernel("topcoder", PLAYER_FIELDS, prepared, priors, params, start, topcoder_kernel, settings)


def _weight(value: float) -> bool:
    return math.isfinite(value) and 0 < value < 1


TOPCODER = ContestSystem(
    name="topcoder",
    summary=(
        "The TopCoder algorithm rating system (as run by the Elo-MMR reference implementation): expected rank "
        "from ratings and volatilities, performance from the normal quantile, a weight by contests played, "
        "a capped change and a volatility update."
    ),
    parameters=(
        INITIAL,
        Parameter("initial_sd", 350.0, "a finite newcomer volatility > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("weight_noob", 0.6, "a newcomer's weight in (0, 1)", _weight),
        Parameter("weight_limit", 0.18, "a veteran's weight in (0, 1)", _weight),
    ),
    run=run_topcoder,
    grid={"weight_limit": [0.12, 0.18, 0.24], "weight_noob": [0.4, 0.6, 0.8]},
)


def topcoder(
    results: pl.DataFrame,
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    weight_noob: float = 0.6,
    weight_limit: float = 0.18,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """TopCoder replay over a ``contest_results`` table (see the module docstring for the rules).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω, NULL means 1).
    initial, initial_sd : a newcomer's rating and volatility (the reference implementation's 1500 and 350).
    weight_noob, weight_limit : the weight of a player's first contest and its limit (0.6 and 0.18).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd`` = volatility, ``league``).
    state : a saved state (:func:`duckrate.replay_state` with ``"topcoder"``) to continue from.
    chunk_size : the most results rated at once (default ``duckrate.DEFAULT_CHUNK_ROWS``).

    Returns
    -------
    DataFrame, one row per (contest, player), the contest replay columns (``performance`` = PerfAs,
    ``sd_*`` = volatility).
    """
    return TOPCODER.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        initial=initial,
        initial_sd=initial_sd,
        weight_noob=weight_noob,
        weight_limit=weight_limit,
    )[0]
