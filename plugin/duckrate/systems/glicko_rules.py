"""Glicko's and Glicko-2's rules for one rating period, and the one period loop both systems run.

The formulas are in :mod:`.glicko` (Glickman, "The Glicko system") and :mod:`.glicko2` (Glickman, "Example
of the Glicko-2 system"). Both rate every player who played in a period once, from all that period's games
against the opponents' period-start states; they differ in the idle growth of the deviation (step 1), in
g and E (Glicko's 400-point scale against Glicko-2's μ, φ scale), in the update (Glicko-2 adds the
volatility σ, step 5) and in how states are shown (Glicko-2 converts back, step 8).
:func:`periodic_replay_kernel` takes the system as ``rules`` (:data:`GLICKO_RULES` or
:data:`GLICKO2_RULES`) and branches on it at those four places only.

"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches
from duckrate.core.scales import NATURAL_PER_POINT
from duckrate.systems.periods import periodic_order
from duckrate.systems.two_player import kernel_outputs, new_outputs

_PI_SQUARED = math.pi * math.pi

# ---- Glicko (400-point scale) ----------------------------------------------------------------------------

Q = NATURAL_PER_POINT  # ln10/400 = 0.00575646273...


@kernel
def glicko_g(rd):
    """g(RD) = 1/sqrt(1 + 3q²RD²/π²): the discount for an opponent's uncertainty (step 2)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * Q * Q * rd * rd / _PI_SQUARED)


@kernel
def glicko_e(rating, rating_opponent, g_opponent):
    """E(s | r, r_j, RD_j) = 1/(1 + 10^(-g(RD_j)(r - r_j)/400)), with ``g_opponent`` = g(RD_j) (step 2)."""
    return 1.0 / (1.0 + math.exp(-g_opponent * (rating - rating_opponent) * Q))


@kernel
def glicko_grown_rd(rd, c2, t, rd_max):
    """Step 1: the RD after t rating periods without a game, min(sqrt(RD² + c²t), rd_max) (``c2`` = c²)."""
    return min(math.sqrt(rd * rd + c2 * t), rd_max)


@kernel
def glicko_expected(rating_a, rd_a, rating_b, rd_b):
    """The forecast for a game: E = 1/(1 + 10^(-g(sqrt(RD_a² + RD_b²))(r_a - r_b)/400)), both deviations
    combined (the replays' ``expected_a``)."""
    return glicko_e(rating_a, rating_b, glicko_g(math.sqrt(rd_a * rd_a + rd_b * rd_b)))


@kernel
def glicko_forecasts(rating_a, rd_a, rating_b, rd_b, c, rd_max):
    """:func:`glicko_expected` for each pair of the arrays, both RDs first grown by one rating period (step
    1 with t = 1, as before the players' next game)."""
    c2 = c * c
    out = np.empty(rating_a.shape[0], dtype=np.float64)
    for i in range(rating_a.shape[0]):
        out[i] = glicko_expected(
            rating_a[i],
            glicko_grown_rd(rd_a[i], c2, 1.0, rd_max),
            rating_b[i],
            glicko_grown_rd(rd_b[i], c2, 1.0, rd_max),
        )
    return out


@kernel
def glicko_update(rating, rd, information, surprise):
    """Steps 2-3 for one player and period: (r', RD').

    ``information`` = Σ w·g(RD_j)²·E_j(1 - E_j) (so 1/d² = q²·information) and ``surprise`` =
    Σ w·g(RD_j)(s_j - E_j) over the player's games in the period.
    """
    variance = 1.0 / (1.0 / (rd * rd) + Q * Q * information)
    return rating + Q * variance * surprise, math.sqrt(variance)


# ---- Glicko-2 (μ, φ scale; display r = 1500 + SCALE·μ, RD = SCALE·φ) --------------------------------------

SCALE = 173.7178  # Glicko-2 step 2: display points per Glicko-2 unit
EPSILON = 1e-6  # step 5 convergence tolerance
_MAX_ITERATIONS = 10_000  # a safety net only: the Illinois iteration converges in a handful of steps


@kernel
def glicko2_g(phi):
    """g(φ) = 1/sqrt(1 + 3φ²/π²) (step 3)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / _PI_SQUARED)


@kernel
def glicko2_e(mu, mu_opponent, g_opponent):
    """E(μ, μ_j, φ_j) = 1/(1 + exp(-g(φ_j)(μ - μ_j))), with ``g_opponent`` = g(φ_j) (step 3)."""
    return 1.0 / (1.0 + math.exp(-g_opponent * (mu - mu_opponent)))


@kernel
def glicko2_expected(mu_a, phi_a, mu_b, phi_b):
    """The forecast for a game: E = 1/(1 + exp(-g(sqrt(φ_a² + φ_b²))(μ_a - μ_b))) (the replays' ``expected_a``)."""
    return glicko2_e(mu_a, mu_b, glicko2_g(math.sqrt(phi_a * phi_a + phi_b * phi_b)))


@kernel
def glicko2_forecasts(rating_a, rd_a, rating_b, rd_b):
    """:func:`glicko2_expected` for each pair of display-scale ratings and RDs, converted as step 2 does
    (μ = (r - 1500)/SCALE, φ = RD/SCALE). No growth: without rating periods Glicko-2 grows φ only in the
    update (step 6), and with them a game in the next period starts from the state as it is."""
    out = np.empty(rating_a.shape[0], dtype=np.float64)
    for i in range(rating_a.shape[0]):
        out[i] = glicko2_expected(
            (rating_a[i] - 1500.0) / SCALE, rd_a[i] / SCALE, (rating_b[i] - 1500.0) / SCALE, rd_b[i] / SCALE
        )
    return out


@kernel
def _volatility_f(x, delta2, phi2, v, a, tau2):
    """Step 5's f(x) = e^x(Δ² - φ² - v - e^x) / (2(φ² + v + e^x)²) - (x - a)/τ², a = ln σ²."""
    ex = math.exp(x)
    denominator = phi2 + v + ex
    return ex * (delta2 - phi2 - v - ex) / (2.0 * denominator * denominator) - (x - a) / tau2


@kernel
def glicko2_volatility(sigma, phi, v, delta, tau):
    """Step 5: the new volatility σ' by the Illinois algorithm, exactly as in Glickman's example (ε = 1e-6,
    and ``f_C·f_B <= 0`` to move A)."""
    a = math.log(sigma * sigma)
    delta2 = delta * delta
    phi2 = phi * phi
    tau2 = tau * tau
    big_a = a
    if delta2 > phi2 + v:
        big_b = math.log(delta2 - phi2 - v)
    else:
        k = 1.0
        while _volatility_f(a - k * tau, delta2, phi2, v, a, tau2) < 0.0 and k < _MAX_ITERATIONS:
            k += 1.0
        big_b = a - k * tau
    f_a = _volatility_f(big_a, delta2, phi2, v, a, tau2)
    f_b = _volatility_f(big_b, delta2, phi2, v, a, tau2)
    iterations = 0
    while abs(big_b - big_a) > EPSILON and iterations < _MAX_ITERATIONS:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = _volatility_f(big_c, delta2, phi2, v, a, tau2)
        if f_c * f_b <= 0.0:
            big_a = big_b
            f_a = f_b
        else:
            f_a = f_a / 2.0
        big_b = big_c
        f_b = f_c
        iterations += 1
    return math.exp(big_a / 2.0)


@kernel
def glicko2_update(mu, phi, sigma, information, surprise, tau):
    """Steps 3-7 for one player and period on the Glicko-2 scale: (μ', φ', σ').

    ``information`` = Σ w·g(φ_j)²·E_j(1 - E_j) = 1/v and ``surprise`` = Σ w·g(φ_j)(s_j - E_j). Without
    information (every E_j rounded to 0 or 1) v is infinite: σ' = σ and φ' = sqrt(φ² + σ²), the limits.
    """
    if information > 0.0:
        v = 1.0 / information
        new_sigma = glicko2_volatility(sigma, phi, v, v * surprise, tau)
    else:
        new_sigma = sigma
    phi_star2 = phi * phi + new_sigma * new_sigma
    new_phi = 1.0 / math.sqrt(1.0 / phi_star2 + information)
    return mu + new_phi * new_phi * surprise, new_phi, new_sigma


# ---- The period loop -------------------------------------------------------------------------------------


def run_periodic(
    rules: int,
    prepared: PreparedMatches,
    period: np.ndarray | None,
    ratings: tuple,
    seen: np.ndarray,
    last_period: np.ndarray,
    played_in_league: np.ndarray,
    settings: tuple,
) -> dict:
    """Run :func:`periodic_replay_kernel` under ``rules`` over the matches in periodic order (``period`` from
    ``row_periods``; None: every match its own period) with the system's ``ratings``, ``seen``,
    ``last_period`` (per slot) and ``played_in_league`` (matches already replayed per league), all updated
    in place, and ``settings``; the output columns by name. ``prepared.order`` may hold only some of the rows."""
    order = periodic_order(prepared, period)
    out = new_outputs(prepared.n_rows)
    periodic_replay_kernel(
        order,
        period if period is not None else np.zeros(0, np.int64),
        period is not None,
        (prepared.state_a, prepared.state_b, prepared.league, prepared.score, prepared.weight),
        rules,
        ratings,
        (seen, last_period, played_in_league),
        settings,
        kernel_outputs(out),
    )
    return out


@kernel
def period_stop(order, period, periodic, start):
    """(stop, period) of the rating period that begins at position ``start`` of ``order``: with ``periodic``
    the run of rows sharing ``period[row]``, otherwise the one row (period 0)."""
    n = order.shape[0]
    stop = start + 1
    current = period[order[start]] if periodic else 0
    if periodic:
        while stop < n and period[order[stop]] == current:
            stop += 1
    return stop, current


@kernel
def add_game_terms(information, surprise, slot_a, slot_b, g_a, g_b, e_a, e_b, w, s):
    """Add one game (weight ``w``, score ``s`` of side a) to both players' period sums, each against the
    other's g and with its own E: ``information += w·g²·E(1 - E)`` (Glicko's 1/d² over q², Glicko-2's 1/v)
    and ``surprise += w·g·(score - E)``."""
    information[slot_a] += w * g_b * g_b * e_a * (1.0 - e_a)
    surprise[slot_a] += w * g_b * (s - e_a)
    information[slot_b] += w * g_a * g_a * e_b * (1.0 - e_b)
    surprise[slot_b] += w * g_a * ((1.0 - s) - e_b)


GLICKO_RULES = 1  # ratings (r, RD, unused σ); settings (c, rd_max, rd_min)
GLICKO2_RULES = 2  # ratings (μ, φ, σ) on the Glicko-2 scale; settings (τ, φ_min, rd_min)


@kernel
def periodic_replay_kernel(order, period, periodic, games, rules, ratings, carried, settings, outputs):
    """Replay matches in ``order`` period by period under ``rules`` (:data:`GLICKO_RULES` or
    :data:`GLICKO2_RULES`), updating ``ratings`` in place. Output arrays are indexed by input row, on the
    display scale.

    ``games``: (state_a, state_b, league, score, weight) of :class:`~duckrate.core.matches.PreparedMatches`;
    ``ratings``: Glicko's (rating, rd, an unused array) or Glicko-2's (μ, φ, σ), one slot per league and
    player; ``carried``: (seen, last_period, played_in_league): whether a slot was rated in some period yet,
    the period it was last rated in, and the matches replayed per league (which number ``seq``), carried in
    place so a replay continued from a saved state passes them in; ``settings``: see the rules' constants.
    ``order`` may hold only some of the rows.

    With ``periodic``, consecutive rows of ``order`` sharing ``period[row]`` form one rating period (of all
    leagues at once: leagues never share slots). Otherwise every row is its own period for its two players.
    Step 1 at a player's first game of a period: Glicko grows RD by c² per period since the player was last
    rated (t = 1 without periods), capped at rd_max; Glicko-2 grows φ by σ² per idle period in between
    (step 6 adds σ'² for the period itself), nothing without periods.
    """
    state_a, state_b, league, score, weight = games
    rating, deviation, volatility = ratings
    seen, last_period, played_in_league = carried
    setting_1, setting_2, rd_min = settings
    (
        seq,
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
    glicko2 = rules == GLICKO2_RULES
    c2 = setting_1 * setting_1  # Glicko's c²
    deviation_min = setting_2 if glicko2 else rd_min  # the floor on the stored deviation (φ_min or rd_min)
    n = order.shape[0]
    n_states = rating.shape[0]
    weighted = weight.shape[0] == score.shape[0]
    batch_of = np.full(n_states, -1, dtype=np.int64)
    information = np.zeros(n_states, dtype=np.float64)
    surprise = np.zeros(n_states, dtype=np.float64)
    touched = np.empty(min(n_states, 2 * n), dtype=np.int64)
    start = 0
    while start < n:
        stop, current = period_stop(order, period, periodic, start)
        # Step 1 at each player's first game of the period; accumulators reset for touched slots.
        n_touched = 0
        for position in range(start, stop):
            row = order[position]
            for side in range(2):
                slot = state_a[row] if side == 0 else state_b[row]
                if batch_of[slot] == start:
                    continue
                batch_of[slot] = start
                if glicko2:
                    if periodic and seen[slot]:
                        idle = float(current - last_period[slot] - 1)
                        if idle > 0.0:
                            grown = math.sqrt(
                                deviation[slot] * deviation[slot] + idle * volatility[slot] * volatility[slot]
                            )
                            deviation[slot] = max(grown, deviation_min)
                elif seen[slot]:
                    t = float(current - last_period[slot]) if periodic else 1.0
                    grown = glicko_grown_rd(deviation[slot], c2, t, setting_2)
                    deviation[slot] = max(grown, deviation_min)
                information[slot] = 0.0
                surprise[slot] = 0.0
                touched[n_touched] = slot
                n_touched += 1
            # This game's terms, from both players' period-start states.
            slot_a = state_a[row]
            slot_b = state_b[row]
            r_a = rating[slot_a]
            r_b = rating[slot_b]
            d_a = deviation[slot_a]
            d_b = deviation[slot_b]
            if glicko2:
                g_a = glicko2_g(d_a)
                g_b = glicko2_g(d_b)
                e_a = glicko2_e(r_a, r_b, g_b)
                e_b = glicko2_e(r_b, r_a, g_a)
                expected_a[row] = glicko2_expected(r_a, d_a, r_b, d_b)
            else:
                g_a = glicko_g(d_a)
                g_b = glicko_g(d_b)
                e_a = glicko_e(r_a, r_b, g_b)
                e_b = glicko_e(r_b, r_a, g_a)
                expected_a[row] = glicko_expected(r_a, d_a, r_b, d_b)
            add_game_terms(
                information, surprise, slot_a, slot_b, g_a, g_b, e_a, e_b, weight[row] if weighted else 1.0, score[row]
            )
            this_league = league[row]
            played_in_league[this_league] += 1
            seq[row] = played_in_league[this_league]
            rating_a_before[row] = _shown_rating(glicko2, r_a)
            rating_b_before[row] = _shown_rating(glicko2, r_b)
            sd_a_before[row] = _shown_deviation(glicko2, d_a, rd_min)
            sd_b_before[row] = _shown_deviation(glicko2, d_b, rd_min)
        # One update per player from all their games of the period.
        for i in range(n_touched):
            slot = touched[i]
            if glicko2:
                new_rating, new_deviation, new_volatility = glicko2_update(
                    rating[slot], deviation[slot], volatility[slot], information[slot], surprise[slot], setting_1
                )
                volatility[slot] = new_volatility
            else:
                new_rating, new_deviation = glicko_update(
                    rating[slot], deviation[slot], information[slot], surprise[slot]
                )
            rating[slot] = new_rating
            deviation[slot] = max(new_deviation, deviation_min)
            seen[slot] = True
            last_period[slot] = current
        for position in range(start, stop):
            row = order[position]
            rating_a_after[row] = _shown_rating(glicko2, rating[state_a[row]])
            rating_b_after[row] = _shown_rating(glicko2, rating[state_b[row]])
            sd_a_after[row] = _shown_deviation(glicko2, deviation[state_a[row]], rd_min)
            sd_b_after[row] = _shown_deviation(glicko2, deviation[state_b[row]], rd_min)
        start = stop


@kernel
def _shown_rating(glicko2, rating):
    """A stored rating on the display scale (Glicko-2 step 8: r = 1500 + SCALE·μ)."""
    return 1500.0 + SCALE * rating if glicko2 else rating


@kernel
def _shown_deviation(glicko2, deviation, rd_min):
    """A stored deviation on the display scale (Glicko-2: RD = SCALE·φ, floored at rd_min)."""
    return max(SCALE * deviation, rd_min) if glicko2 else deviation
