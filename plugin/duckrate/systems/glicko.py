"""Glicko: Glickman's rating system with a rating deviation (RD) per player.

Glickman, "The Glicko system" (summarised in ``papers/glicko-and-glicko2``). Step 1 grows an idle player's
deviation, ``RD = min(sqrt(RD0² + c²·t), rd_max)`` with t the rating periods since the player was last
rated; step 2 rates every player once per period from all of that period's games, each game against an
opponent's period-start rating and RD::

    q = ln10/400,  g(RD) = 1/sqrt(1 + 3q²RD²/π²),  E_j = 1/(1 + 10^(-g(RD_j)(r - r_j)/400))
    1/d² = q² Σ_j g(RD_j)² E_j (1 - E_j)
    r' = r + q/(1/RD² + 1/d²) · Σ_j g(RD_j)(s_j - E_j)
    RD' = sqrt(1/(1/RD² + 1/d²))                                                  (step 3)

A game of weight w counts as w games (its terms in 1/d² and in the sum are multiplied by w).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.matches import PreparedMatches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import check_positive_priors, initial_states
from duckrate.core.protocol import Preset
from duckrate.systems.glicko_common import (
    CARRIED_FIELDS,
    INITIAL,
    PERIOD_LENGTH,
    RD,
    RD_MIN,
    carried_end,
    carried_newcomers,
    carried_start,
    check_rd_min_below_rd,
)
from duckrate.systems.glicko_rules import GLICKO_RULES, glicko_forecasts, run_periodic
from duckrate.systems.periods import row_periods
from duckrate.systems.saved_state import EndState, StartState, StateField
from duckrate.systems.two_player import ReplaySystem, replay_frame


def _periods(prepared: PreparedMatches, params: dict) -> np.ndarray | None:
    return row_periods(prepared, params["period_length"], "glicko")


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    period = _periods(prepared, params)
    states = initial_states(prepared, priors, {"rating": params["initial"], "sd": params["rd"]})
    check_positive_priors(priors, ("sd",), "glicko")
    player = start.overlay(
        {
            "rating": states["rating"],
            "rd": np.clip(states["sd"], params["rd_min"], params["rd_max"]),
            **carried_newcomers(prepared.n_states),
        }
    )
    seen, last_period = carried_start(player)
    out = run_periodic(
        GLICKO_RULES,
        prepared,
        period,
        (player["rating"], player["rd"], np.zeros(0)),  # Glicko has no volatility
        seen,
        last_period,
        start.seq.copy(),
        (params["c"], params["rd_max"], params["rd_min"]),
    )
    return out, EndState(player={"rating": player["rating"], "rd": player["rd"], **carried_end(seen, last_period)})


def _check(params: dict) -> None:
    if params["rd"] > params["rd_max"]:
        raise DuckrateInputError(
            f"glicko: parameter rd = {params['rd']!r} exceeds rd_max = {params['rd_max']!r}; expected rd <= rd_max"
        )
    check_rd_min_below_rd(params, "glicko")


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Glicko's expected score (eq. 10): both RDs first grow by one rating period, as before their next game."""
    rating_a, rd_a = column(players, "rating", a), column(players, "sd", a)
    rating_b, rd_b = column(players, "rating", b), column(players, "sd", b)
    return glicko_forecasts(rating_a, rd_a, rating_b, rd_b, params["c"], params["rd_max"]), None


GLICKO = ReplaySystem(
    name="glicko",
    summary="Glicko (Glickman 1999), with rating periods from a period column or period_length.",
    parameters=(
        INITIAL,
        RD,
        Parameter("c", 34.6, "a finite RD growth per rating period c >= 0", lambda v: math.isfinite(v) and v >= 0),
        Parameter("rd_max", 350.0, "a finite maximum rating deviation > 0", lambda v: math.isfinite(v) and v > 0),
        RD_MIN,
        PERIOD_LENGTH,
    ),
    run=_run,
    check=_check,
    has_sd=True,
    player_state=(StateField("rating"), StateField("rd"), *(StateField(name) for name in CARRIED_FIELDS)),
    periods=_periods,
    forecast=Forecast(_forecast, uses=("c", "rd_max")),
    grid={"c": [0.0, 10.0, 20.0, 34.6, 50.0, 70.0]},
    presets=(
        Preset(),
        Preset({"period_length": 1.0}),
        Preset({"period_length": 0.01}),
        Preset(period_column=True),
        # options that change the saved state: RD floor and cap, growth, period length, priors of newcomers
        Preset({"c": 60.0, "rd_max": 300.0, "rd": 250.0, "rd_min": 40.0, "period_length": 0.5}),
        Preset(
            {"rd_min": 30.0},
            priors={
                "player": ["p1", "p2", "p3", "p4"],
                "league": ["east", None, "west", None],
                "rating": [1700.0, 1300.0, 1550.0, 1800.0],
                "sd": [80.0, 500.0, 10.0, None],
            },
            period_column=True,
        ),
    ),
)


def glicko(
    matches: pl.DataFrame,
    initial: float = 1500.0,
    rd: float = 350.0,
    c: float = 34.6,
    rd_max: float = 350.0,
    rd_min: float = 0.0,
    period_length: float | None = None,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Glicko replay over a matches table (Glickman, "The Glicko system", steps 1-3).

    Rating periods: with a ``period`` column (integer) or ``period_length``, all games of one period are
    rated together from the period's starting ratings and RDs, and every player who played is updated
    once at the end of it (step 2, step 3). At the start of period q a player last rated in period p has
    ``RD = min(sqrt(RD² + c²(q - p)), rd_max)`` (step 1); a newcomer starts at its prior RD without growth.
    With neither, each match is its own period for its two players, and a returning player's RD grows
    by c² (t = 1) before each of their games. Replay order: period, then ``played_at``, then ``match_id``.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` (in [0, 1],
        fractions allowed) and optionally ``league`` (independent replays), ``weight`` (a game of weight w
        counts as w games; NULL means 1) and ``period`` (integer rating period).
    initial : newcomer rating.
    rd : newcomer rating deviation (350 in the paper: the RD of an unrated player).
    c : RD growth per idle rating period (step 1; 34.6 takes RD 50 back to 350 in 100 periods).
    rd_max : cap on RD growth (the paper's 350); ``rd <= rd_max`` is required.
    rd_min : floor on the stored and reported RD, applied after every growth and update (0: the paper,
        no floor); the rating step uses the paper's RD'. Must be below ``rd``. Prior RDs outside
        [rd_min, rd_max] are clamped into it.
    period_length : length of a rating period: days when ``played_at`` is a DATE or TIMESTAMP, its own
        units when it is an integer; period = floor(played_at / period_length). Not allowed together
        with a ``period`` column. None: no periods (unless the column is there).
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``sd`` > 0, ``league``).
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
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}``. ``*_before`` is the player's
    period-start state (after growth), ``*_after`` the state after that period's update (the same on
    every row of the player in the period). ``expected_a`` = 1/(1 + 10^(-g(sqrt(RD_a² + RD_b²))(r_a - r_b)/400)).
    """
    return replay_frame(
        GLICKO,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        initial=initial,
        rd=rd,
        c=c,
        rd_max=rd_max,
        rd_min=rd_min,
        period_length=period_length,
    )
