"""Glicko-2: Glicko with a per-player rating volatility σ.

Glickman, "Example of the Glicko-2 system" (summarised in ``papers/glicko-and-glicko2``). Ratings and RDs
are converted to the Glicko-2 scale (step 2: ``μ = (r - 1500)/173.7178``, ``φ = RD/173.7178``); each
player who played in a rating period is updated once from all that period's games::

    g(φ) = 1/sqrt(1 + 3φ²/π²),  E_j = 1/(1 + exp(-g(φ_j)(μ - μ_j)))
    v = [Σ_j g(φ_j)² E_j (1 - E_j)]^-1                                            (step 3)
    Δ = v Σ_j g(φ_j)(s_j - E_j)                                                   (step 4)
    σ' = exp(A/2), f(A) = 0 by the Illinois algorithm, ε = 1e-6                   (step 5)
    φ* = sqrt(φ² + σ'²),  φ' = 1/sqrt(1/φ*² + 1/v)                                 (step 6, 7)
    μ' = μ + φ'² Σ_j g(φ_j)(s_j - E_j)                                            (step 7)

and converted back (step 8). A player idle for a period has ``φ' = sqrt(φ² + σ²)``. A game of weight w
counts as w games (its terms in 1/v and in the sums are multiplied by w).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from .._numba import kernel
from ..matches import PreparedMatches
from ..parameters import Parameter
from ..priors import check_positive_priors, initial_states
from ._glicko_common import (
    CARRIED_FIELDS,
    INITIAL,
    PERIOD_LENGTH,
    RD,
    RD_MIN,
    add_game_terms,
    carried_end,
    carried_newcomers,
    carried_start,
    check_rd_min_below_rd,
    period_stop,
    run_periodic,
)
from ._periods import row_periods
from ._replay import ReplaySystem, replay_frame
from ._state import EndState, StartState, StateField

SCALE = 173.7178  # Glicko-2 step 2: display points per Glicko-2 unit
EPSILON = 1e-6  # step 5 convergence tolerance
_MAX_ITERATIONS = 10_000  # a safety net only: the Illinois iteration converges in a handful of steps
_PI_SQUARED = math.pi * math.pi


@kernel
def glicko2_g(phi):
    """g(φ) = 1/sqrt(1 + 3φ²/π²) (step 3)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / _PI_SQUARED)


@kernel
def glicko2_e(mu, mu_opponent, g_opponent):
    """E(μ, μ_j, φ_j) = 1/(1 + exp(-g(φ_j)(μ - μ_j))), with ``g_opponent`` = g(φ_j) (step 3)."""
    return 1.0 / (1.0 + math.exp(-g_opponent * (mu - mu_opponent)))


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


@kernel
def glicko2_replay_kernel(
    order,
    period,
    periodic,
    state_a,
    state_b,
    league,
    score,
    weight,
    mu,
    phi,
    sigma,
    seen,
    last_period,
    played_in_league,
    tau,
    phi_min,
    rd_min,
    outputs,
):
    """Replay matches in ``order`` period by period, updating ``mu``, ``phi``, ``sigma`` (Glicko-2 scale, one
    slot per league and player) in place. Output arrays are indexed by input row, on the display scale.

    With ``periodic``, consecutive rows of ``order`` sharing ``period[row]`` form one rating period, and a
    player last rated in period p starts period q at φ = sqrt(φ² + (q - p - 1)σ²) (the idle periods in
    between; step 6 adds σ'² for period q itself). Otherwise each row is its own period for its two players.

    ``seen`` (rated in some period yet), ``last_period`` (the period it was last rated in) and
    ``played_in_league`` (matches replayed per league, which numbers ``seq``) are carried in place, so a
    replay continued from a saved state passes them in. ``order`` may hold only some of the rows.

    ``outputs``: the output columns (``kernel_outputs``), indexed by input row.
    """
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
    n = order.shape[0]
    n_states = mu.shape[0]
    weighted = weight.shape[0] == score.shape[0]
    batch_of = np.full(n_states, -1, dtype=np.int64)
    information = np.zeros(n_states, dtype=np.float64)
    surprise = np.zeros(n_states, dtype=np.float64)
    touched = np.empty(min(n_states, 2 * n), dtype=np.int64)
    start = 0
    while start < n:
        stop, current = period_stop(order, period, periodic, start)
        n_touched = 0
        for position in range(start, stop):
            row = order[position]
            for side in range(2):
                slot = state_a[row] if side == 0 else state_b[row]
                if batch_of[slot] == start:
                    continue
                batch_of[slot] = start
                if periodic and seen[slot]:
                    idle = float(current - last_period[slot] - 1)
                    if idle > 0.0:
                        phi[slot] = max(math.sqrt(phi[slot] * phi[slot] + idle * sigma[slot] * sigma[slot]), phi_min)
                information[slot] = 0.0
                surprise[slot] = 0.0
                touched[n_touched] = slot
                n_touched += 1
            slot_a = state_a[row]
            slot_b = state_b[row]
            mu_a = mu[slot_a]
            mu_b = mu[slot_b]
            phi_a = phi[slot_a]
            phi_b = phi[slot_b]
            g_a = glicko2_g(phi_a)
            g_b = glicko2_g(phi_b)
            e_a = glicko2_e(mu_a, mu_b, g_b)
            e_b = glicko2_e(mu_b, mu_a, g_a)
            add_game_terms(
                information, surprise, slot_a, slot_b, g_a, g_b, e_a, e_b, weight[row] if weighted else 1.0, score[row]
            )
            this_league = league[row]
            played_in_league[this_league] += 1
            seq[row] = played_in_league[this_league]
            expected_a[row] = glicko2_e(mu_a, mu_b, glicko2_g(math.sqrt(phi_a * phi_a + phi_b * phi_b)))
            rating_a_before[row] = 1500.0 + SCALE * mu_a
            rating_b_before[row] = 1500.0 + SCALE * mu_b
            sd_a_before[row] = max(SCALE * phi_a, rd_min)
            sd_b_before[row] = max(SCALE * phi_b, rd_min)
        for i in range(n_touched):
            slot = touched[i]
            new_mu, new_phi, new_sigma = glicko2_update(
                mu[slot], phi[slot], sigma[slot], information[slot], surprise[slot], tau
            )
            mu[slot] = new_mu
            phi[slot] = max(new_phi, phi_min)
            sigma[slot] = new_sigma
            seen[slot] = True
            last_period[slot] = current
        for position in range(start, stop):
            row = order[position]
            rating_a_after[row] = 1500.0 + SCALE * mu[state_a[row]]
            rating_b_after[row] = 1500.0 + SCALE * mu[state_b[row]]
            sd_a_after[row] = max(SCALE * phi[state_a[row]], rd_min)
            sd_b_after[row] = max(SCALE * phi[state_b[row]], rd_min)
        start = stop


def _periods(prepared: PreparedMatches, params: dict) -> np.ndarray | None:
    return row_periods(prepared, params["period_length"], "glicko2")


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    period = _periods(prepared, params)
    states = initial_states(
        prepared, priors, {"rating": params["initial"], "sd": params["rd"], "volatility": params["volatility"]}
    )
    check_positive_priors(priors, ("sd", "volatility"), "glicko2")
    phi_min = params["rd_min"] / SCALE
    # The state is saved on the Glicko-2 scale the kernel works on: the display values do not convert back
    # bit for bit.
    player = start.overlay(
        {
            "mu": (states["rating"] - 1500.0) / SCALE,
            "phi": np.maximum(states["sd"] / SCALE, phi_min),
            "volatility": states["volatility"],
            **carried_newcomers(prepared.n_states),
        }
    )
    seen, last_period = carried_start(player)
    states = (player["mu"], player["phi"], player["volatility"])
    out = run_periodic(
        glicko2_replay_kernel,
        prepared,
        period,
        states,
        seen,
        last_period,
        start.seq.copy(),
        (params["tau"], phi_min, params["rd_min"]),
    )
    return out, EndState(
        player={
            "mu": player["mu"],
            "phi": player["phi"],
            "volatility": player["volatility"],
            **carried_end(seen, last_period),
        }
    )


def _check(params: dict) -> None:
    check_rd_min_below_rd(params, "glicko2")


GLICKO2 = ReplaySystem(
    name="glicko2",
    parameters=(
        INITIAL,
        RD,
        Parameter("volatility", 0.06, "a finite starting volatility > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter(
            "tau",
            0.5,
            "a finite volatility constraint tau > 0 (0.3 to 1.2 in the paper)",
            lambda v: math.isfinite(v) and v > 0,
        ),
        RD_MIN,
        PERIOD_LENGTH,
    ),
    run=_run,
    check=_check,
    has_sd=True,
    player_state=(
        StateField("mu"),
        StateField("phi"),
        StateField("volatility"),
        *(StateField(name) for name in CARRIED_FIELDS),
    ),
    periods=_periods,
)


def glicko2(
    matches: pl.DataFrame,
    initial: float = 1500.0,
    rd: float = 350.0,
    volatility: float = 0.06,
    tau: float = 0.5,
    rd_min: float = 0.0,
    period_length: float | None = None,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Glicko-2 replay over a matches table (Glickman, "Example of the Glicko-2 system", steps 1-8).

    Rating periods: with a ``period`` column (integer) or ``period_length``, all games of one period are
    rated together from the period's starting states, and every player who played is updated once at
    the end of it (steps 3-7; the volatility by the Illinois algorithm of step 5 with ε = 1e-6). A player
    last rated in period p starts period q at ``φ = sqrt(φ² + (q - p - 1)σ²)`` (``φ' = sqrt(φ² + σ²)`` per
    idle period); step 6 then adds σ'² for period q. With neither, each match is its own period for its two
    players and there is no idle growth (only step 6). Replay order: period, then ``played_at``, ``match_id``.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` (in [0, 1],
        fractions allowed) and optionally ``league`` (independent replays), ``weight`` (a game of weight w
        counts as w games; NULL means 1) and ``period`` (integer rating period).
    initial : newcomer rating (display scale; μ = (initial - 1500)/173.7178).
    rd : newcomer rating deviation (display scale; φ = rd/173.7178).
    volatility : newcomer volatility σ (0.06 in Glickman's example).
    tau : τ, the constraint on volatility change (step 1; reasonable values 0.3 to 1.2).
    rd_min : floor on the stored and reported RD (display scale), applied after every growth and update
        (0: the paper, no floor); the rating step uses the paper's φ'. Must be below ``rd``. Prior RDs
        below it are raised to it.
    period_length : length of a rating period: days when ``played_at`` is a DATE or TIMESTAMP, its own
        units when it is an integer; period = floor(played_at / period_length). Not allowed together
        with a ``period`` column. None: no periods (unless the column is there).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd`` > 0, ``volatility`` > 0, ``league``).
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, plus, with rating periods, the matches of each league's last (open) period the
        state lists in ``pending_ids`` (they are rated again with the new ones); the result is that of one
        replay over the whole history.
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}`` on the display scale
    (1500 + 173.7178·μ, 173.7178·φ). ``*_before`` is the player's period-start state (after idle growth),
    ``*_after`` the state after that period's update. ``expected_a`` = 1/(1 + exp(-g(sqrt(φ_a² + φ_b²))(μ_a - μ_b))).
    """
    return replay_frame(
        GLICKO2,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        initial=initial,
        rd=rd,
        volatility=volatility,
        tau=tau,
        rd_min=rd_min,
        period_length=period_length,
    )
