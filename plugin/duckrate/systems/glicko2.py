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
from duckrate.systems.glicko_rules import GLICKO2_RULES, SCALE, glicko2_forecasts, run_periodic
from duckrate.systems.periods import row_periods
from duckrate.systems.saved_state import EndState, StartState, StateField
from duckrate.systems.two_player import ReplaySystem, replay_frame


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
    kernel_states = (player["mu"], player["phi"], player["volatility"])
    out = run_periodic(
        GLICKO2_RULES,
        prepared,
        period,
        kernel_states,
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


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Glicko-2's expected score E(μ, μ_j, φ_j) on the display scale."""
    rating_a, rd_a = column(players, "rating", a), column(players, "sd", a)
    return glicko2_forecasts(rating_a, rd_a, column(players, "rating", b), column(players, "sd", b)), None


GLICKO2 = ReplaySystem(
    name="glicko2",
    summary="Glicko-2 (Glickman 2012), with rating periods as Glicko.",
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
    forecast=Forecast(_forecast),
    grid={"tau": [0.3, 0.5, 0.8, 1.2], "volatility": [0.03, 0.06, 0.09]},
    presets=(
        Preset(),
        Preset({"period_length": 1.0}),
        Preset({"period_length": 0.01}),
        Preset(period_column=True),
        Preset(
            {"tau": 1.1, "rd_min": 45.0, "volatility": 0.09},
            priors={
                "player": ["p1", "p2", "p3"],
                "league": ["east", None, "west"],
                "rating": [1700.0, 1300.0, 1550.0],
                "sd": [80.0, 500.0, 10.0],
                "volatility": [0.2, None, 0.01],
            },
            period_column=True,
        ),
    ),
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
