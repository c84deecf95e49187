"""The Codeforces rating system for ranked contests (Mike Mirzayanov, "Open Codeforces Rating System",
Codeforces blog entry 20762, 2015), in two variants.

``variant := 'reference'`` (default): the form the Elo-MMR reference implementation runs (Ebtekar & Liu 2021
compare it in their Tables 2 and 3), a smooth version of the published algorithm. With σ = β/√ω (ω the
contest weight), F the logistic cdf with scale σ√3/π, and every participant's rating R_j::

    ExRank_i = ½ + Σ_j P(j beats i),  P(j beats i) = 1 - F(R_i - R_j)   (j over everyone, i included)
    AcRank_i = (first + last place of i's tie group) / 2 + ½             (places 0-based)
    GeoRank = sqrt(ExRank · AcRank)
    Perf_i = the x with ½ + Σ_j (1 - F(x - R_j)) = GeoRank - ½  ... (the rating whose expected rank is
             GeoRank, found by a safeguarded Newton iteration)
    R_i' = (R_i + ω·w·Perf_i)/(1 + ω·w)                                  (w = ``weight``, 1: the average)

The sums over the contest's participants are one shared function (:mod:`.logistic_sums`), fitted once per
contest, so a contest costs O(n·m) instead of O(n²). The sd columns carry each player's starting sd
unchanged (the system has no uncertainty).

``variant := 'mirzayanov'``: the published integer algorithm: P(j beats i) = 1/(1 + 10^((R_i - R_j)/400)),
seed_i = 1 + Σ_{j≠i} P(j beats i), m_i = sqrt(seed_i · rank_i) (rank_i: the last place of i's tie group,
1-based), the need rating by binary search over the integers 1..8000 for the largest r with
1 + Σ_j P(j beats r) >= m_i, Δ_i = trunc((need_i - R_i)/2); then Δ_i += trunc(-ΣΔ/n) - 1 (the sum not
above zero), and the ``4·round(√n)`` highest-rated get an extra min(max(trunc(-Σ_top Δ/count), -10), 0)
for all (the top players' sum towards zero). Ratings stay integers (``initial`` and priors are rounded);
contest weights do not apply.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import polars as pl

from duckrate.core.contests import PreparedContests
from duckrate.core.errors import DuckrateInputError
from duckrate.core.jit import kernel, parallel_kernel
from duckrate.core.parameters import Parameter, positive
from duckrate.systems.contest import INITIAL, ContestSystem, run_fixed_kernel
from duckrate.systems.event_state import EventStart
from duckrate.systems.logistic_sums import SERIES_TOLERANCE, contest_sums_fit, exact_sums, logistic_sum_at
from duckrate.systems.numerics import ELO_LOGISTIC_SD, TANH_MULTIPLIER, safeguarded_step
from duckrate.systems.standings import largest_contest, record_contest, tie_ranges

BETA = ELO_LOGISTIC_SD  # the reference's β: the Elo logistic on the 400-point scale
LEVEL_SCALE = 0.1  # the fit's interval reaches G, H <= 0.1/δ̄: below any target (each is >= 0.2/δ̄)
PLAYER_FIELDS = ("rating", "sd")
MIRZAYANOV_MAX_RATING = 8000


@kernel
def _shared_sums(fit, exact, x, mu, dbar, total):
    """(G(x), H(x), G'(x)) from the fit, or exactly when ``exact`` (H = total - G on the fit's lower side)."""
    if exact:
        g, h = exact_sums(x, mu, dbar)
        slope = 0.0
        for j in range(mu.shape[0]):
            z = (x - mu[j]) / dbar[j]
            e = math.exp(-abs(z))
            slope += e / ((1.0 + e) * (1.0 + e) * dbar[j] * dbar[j])
        return g, h, slope
    lower, value, slope = logistic_sum_at(fit, x)
    if lower:
        return value, total - value, slope
    return total - value, value, -slope


@kernel
def _solve_performance(fit, exact, mu, dbar, total, target_g, target_h, low, high, guess):
    """The x in [low, high] with G(x) = target_g (on the side where G is the smaller sum, else H(x) = target_h)."""
    x = min(max(guess, low), high)
    for _ in range(200):
        g, h, slope = _shared_sums(fit, exact, x, mu, dbar, total)
        value = g - target_g if g <= h else target_h - h  # increasing in x either way
        if value == 0.0:
            return x
        x, low, high, converged = safeguarded_step(x, value, slope, low, high, False)
        if converged:
            return x
    return x


@parallel_kernel
def _reference_contest(mu, first_place, last_place, sigma, weight, out_perf, out_rating):
    """One contest of the reference variant: each participant's performance and new rating."""
    n = mu.shape[0]
    dbar_value = sigma / TANH_MULTIPLIER
    dbar = np.full(n, dbar_value)
    w = 1.0 / dbar_value  # TANH_MULTIPLIER / σ
    total = n * w  # G + H
    exact, fit = contest_sums_fit(mu, dbar, LEVEL_SCALE, SERIES_TOLERANCE)
    low = fit[0]
    high = fit[2]
    if exact:
        spread = dbar_value * (math.log(total / (LEVEL_SCALE * w)) + 1.0)
        low = mu.min() - spread
        high = mu.max() + spread
    inv = 1.0 / sigma
    for k in numba.prange(n):
        _, h, _ = _shared_sums(fit, exact, mu[k], mu, dbar, total)
        expected = inv * (0.5 + h / w)  # ExRank/σ: ½ + Σ_j P(j beats k), each term over σ
        actual = 0.5 * inv * (first_place[k] + last_place[k] + 2.0)
        geo = math.sqrt(expected * actual)
        # the zero of TM·geo_offset + w·Σ tanh((x - μ_j)w/2), geo_offset = 2·geo - inv - n·inv
        target_g = TANH_MULTIPLIER * (n * inv + 0.5 * inv - geo)
        target_h = TANH_MULTIPLIER * (geo - 0.5 * inv)
        perf = _solve_performance(fit, exact, mu, dbar, total, target_g, target_h, low, high, mu[k])
        out_perf[k] = perf
        out_rating[k] = (mu[k] + weight * perf) / (1.0 + weight)


@kernel
def _win_probability(difference):
    """P(j beats i) with R_i - R_j = ``difference`` (Mirzayanov: 1/(1 + 10^((R_i - R_j)/400)))."""
    return 1.0 / (1.0 + math.pow(10.0, difference / 400.0))


@kernel
def _seed_at(rating, values, counts, memo):
    """1 + Σ_j P(j beats a player rated ``rating``) over the contest's ratings (``values`` with their
    ``counts``), memoised per integer rating."""
    kept = 0 <= rating < memo.shape[0]
    if kept and not math.isnan(memo[rating]):
        return memo[rating]
    seed = 1.0
    for v in range(values.shape[0]):
        seed += counts[v] * _win_probability(rating - values[v])
    if kept:
        memo[rating] = seed
    return seed


@kernel
def _trunc_div(a, b):
    """Integer division truncated towards zero (Java's ``/`` on ints)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@kernel
def _mirzayanov_contest(ratings, last_place, by_rating, out_need, out_rating, memo):
    """One contest of the published algorithm (module docstring); ``ratings`` integers as float64,
    ``by_rating`` the participants by rating descending (ties in standings order)."""
    n = ratings.shape[0]
    memo[:] = np.nan
    values = np.unique(ratings.astype(np.int64))
    counts = np.zeros(values.shape[0])
    for k in range(n):
        counts[np.searchsorted(values, np.int64(ratings[k]))] += 1.0
    delta = np.empty(n, dtype=np.int64)
    for k in range(n):
        rating = np.int64(ratings[k])
        seed = _seed_at(rating, values, counts, memo) - 0.5  # j = k counted in _seed_at: P = ½
        mid_rank = math.sqrt(last_place[k] * seed)
        left = 1
        right = MIRZAYANOV_MAX_RATING
        while right - left > 1:
            mid = (left + right) // 2
            if _seed_at(mid, values, counts, memo) < mid_rank:
                right = mid
            else:
                left = mid
        out_need[k] = left
        delta[k] = _trunc_div(left - rating, 2)
    total = 0
    for k in range(n):
        total += delta[k]
    increment = _trunc_div(-total, n) - 1
    for k in range(n):
        delta[k] += increment
    top = min(4 * int(math.floor(math.sqrt(n) + 0.5)), n)
    top_sum = 0
    for t in range(top):
        top_sum += delta[by_rating[t]]
    increment = min(max(_trunc_div(-top_sum, top), -10), 0)
    for k in range(n):
        out_rating[k] = ratings[k] + delta[k] + increment


@kernel
def codeforces_kernel(contests, players, settings, outputs):
    """Rate every contest in order, updating ``players`` (rating, sd per slot) in place; outputs are
    indexed by input row. ``contests``: the rows in replay order, each contest's first row and weight, each
    row's slot and rank; ``settings``: (mirzayanov, β, weight)."""
    order, contest_start, contest_weight, state, rank = contests
    rating, sd = players
    mirzayanov, beta, weight = settings
    largest = largest_contest(contest_start)
    mu = np.empty(largest)
    first_place = np.empty(largest)
    last_place = np.empty(largest)
    perf = np.empty(largest)
    new_rating = np.empty(largest)
    memo = np.empty(MIRZAYANOV_MAX_RATING + 1)
    carried = np.empty(largest)
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        n = contest_start[c + 1] - first
        tie_ranges(order, first, n, rank, first_place, last_place)
        for k in range(n):
            mu[k] = rating[state[order[first + k]]]
        if mirzayanov:
            by_rating = np.argsort(-mu[:n], kind="mergesort")
            ones_based_last = last_place[:n] + 1.0
            _mirzayanov_contest(mu[:n], ones_based_last, by_rating, perf[:n], new_rating[:n], memo)
        else:
            w = contest_weight[c]
            _reference_contest(
                mu[:n], first_place[:n], last_place[:n], beta / math.sqrt(w), w * weight, perf[:n], new_rating[:n]
            )
        for k in range(n):
            carried[k] = sd[state[order[first + k]]]  # no uncertainty of its own: the sd is carried
        record_contest(order, first, n, state, (mu, carried), (new_rating, carried), perf, players, outputs)


def run_codeforces(prepared: PreparedContests, priors, params: dict, start: EventStart):
    """The computed columns by input row and the players' saved rows (``PLAYER_FIELDS``) after the contests."""
    mirzayanov = params["variant"] == "mirzayanov"
    if mirzayanov and (prepared.contest_weight != 1.0).any():
        raise DuckrateInputError(
            "codeforces: variant 'mirzayanov' has no contest weights, but the results have a weight other than 1; "
            "expected no weight column (or weight 1 or NULL), or variant 'reference'"
        )
    settings = (mirzayanov, params["beta"], params["weight"])
    adjust = (lambda players: np.round(players[0], out=players[0])) if mirzayanov else None  # integer ratings
    return run_fixed_kernel(
        "codeforces", PLAYER_FIELDS, prepared, priors, params, start, codeforces_kernel, settings, adjust
    )


CODEFORCES = ContestSystem(
    name="codeforces",
    summary=(
        "The Codeforces rating system (Mirzayanov 2015): expected rank from the ratings, the geometric mean "
        "with the actual rank, the rating that expects that rank as the performance; the reference "
        "implementation's smooth form by default, the published integer algorithm with its corrections as "
        "variant 'mirzayanov'."
    ),
    parameters=(
        Parameter(
            "variant",
            "reference",
            "'reference' (the Elo-MMR reference's form) or 'mirzayanov' (the published integer algorithm)",
            choices=("reference", "mirzayanov"),
        ),
        INITIAL,
        Parameter("initial_sd", 350.0, "a finite newcomer sd > 0 (carried unchanged)", positive),
        Parameter("beta", BETA, "a finite performance scale β > 0 (variant 'reference')", positive),
        Parameter("weight", 1.0, "a finite weight of a contest's performance > 0 (variant 'reference')", positive),
    ),
    run=run_codeforces,
    # its ratings scale with beta around the initial rating: their order (all the metrics see) does not change,
    # so its grid is over the update's weight
    grid={"weight": [0.5, 0.75, 1.0, 1.5, 2.0]},
)


def codeforces(
    results: pl.DataFrame,
    variant: str = "reference",
    initial: float = 1500.0,
    initial_sd: float = 350.0,
    beta: float = BETA,
    weight: float = 1.0,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Codeforces replay over a ``contest_results`` table (see the module docstring for both variants).

    Parameters
    ----------
    results : DataFrame with ``contest_id``, ``played_at``, ``player``, ``rank`` (1 = best; equal ranks tie)
        and optionally ``league`` and ``weight`` (contest weight ω, NULL means 1; variant 'reference' only).
    variant : 'reference' (the Elo-MMR reference implementation's smooth form) or 'mirzayanov' (the
        published integer algorithm with its two corrections).
    initial : a newcomer's rating (1500; rounded for 'mirzayanov').
    initial_sd : a newcomer's sd, carried unchanged in the sd columns (the system has none of its own).
    beta : the performance scale β of 'reference' (400·(π/√3)/ln 10 ≈ 315.1: Elo's 400-point logistic).
    weight : how much a contest's performance counts against the current rating in 'reference' (1: the
        average of the two).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd``, ``league``).
    state : a saved state (:func:`duckrate.replay_state` with ``"codeforces"``) to continue from.
    chunk_size : the most results rated at once (default ``duckrate.DEFAULT_CHUNK_ROWS``).

    Returns
    -------
    DataFrame, one row per (contest, player), the contest replay columns (``performance``: the rating whose
    expected rank is the geometric mean of the expected and the actual rank).
    """
    return CODEFORCES.with_state(
        results,
        state,
        priors,
        chunk_size,
        want_state=False,
        variant=variant,
        initial=initial,
        initial_sd=initial_sd,
        beta=beta,
        weight=weight,
    )[0]
