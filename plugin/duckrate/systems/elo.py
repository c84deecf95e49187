"""Elo: online gradient descent on the log loss of the logistic (Bradley-Terry) model.

Tang, Wang & Jin, "Elo misspecification", eq. (2) and Appendix D: with ``p = σ(θ_a - θ_b)`` the update is
``θ_a += η (s - p)``, ``θ_b -= η (s - p)``. On the display scale (``R = 1500 + scale/ln10 · θ``) that is the
familiar ``p = 1 / (1 + 10^((R_b - R_a - advantage) / scale))`` and ``R_a += K·w·(s - p)``, with K fixed or
from the decaying schedule ``η_t = sqrt(a·N / (t + b))`` (Appendix D; K = scale/ln10 · η_t, N the number of
players in the league, t the 1-based position of the match in the league's replay).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import initial_states
from duckrate.core.protocol import Preset
from duckrate.core.scales import LN10, natural_per_point
from duckrate.systems.saved_state import EndState, StartState, StateField, league_players
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame


@kernel
def logistic_expected(rating_a, rating_b, advantage, per_point):
    """P(A wins) + ½ P(draw) = 1/(1 + exp((R_b - R_a - advantage)·per_point)), ``per_point`` = ln10/scale: Elo's
    forecast (and Bradley-Terry's on its display scale, scale 400)."""
    return 1.0 / (1.0 + math.exp((rating_b - rating_a - advantage) * per_point))


@kernel
def logistic_forecasts(rating_a, rating_b, advantage, per_point):
    """:func:`logistic_expected` for each pair of the arrays (``advantage`` one value per pair)."""
    out = np.empty(rating_a.shape[0], dtype=np.float64)
    for i in range(rating_a.shape[0]):
        out[i] = logistic_expected(rating_a[i], rating_b[i], advantage[i], per_point)
    return out


@kernel
def elo_replay_kernel(
    order,
    state_a,
    state_b,
    league,
    score,
    weight,
    rating,
    league_players,
    played_in_league,
    k,
    scale,
    advantage,
    schedule_a,
    schedule_b,
    use_schedule,
    outputs,
):
    """Replay matches in ``order``, updating ``rating`` (one slot per league and player) in place.

    Output arrays are indexed by input row, so the caller needs no scatter. ``played_in_league`` counts
    each league's matches so far (updated in place: a continued replay starts from its saved count).
    ``schedule_*`` are used only when ``use_schedule``; then K for the t-th match of league l is
    scale/ln10 · sqrt(a·N_l / (t + b)). ``order`` may hold only some of the rows.

    ``outputs``: the output columns (``kernel_outputs``), indexed by input row.
    """
    seq, expected_a, rating_a_before, rating_b_before, rating_a_after, rating_b_after = outputs
    weighted = weight.shape[0] == score.shape[0]
    log10_over_scale = LN10 / scale
    k_per_eta = scale / LN10
    for position in range(order.shape[0]):
        row = order[position]
        slot_a = state_a[row]
        slot_b = state_b[row]
        this_league = league[row]
        t = played_in_league[this_league] + 1
        played_in_league[this_league] = t
        before_a = rating[slot_a]
        before_b = rating[slot_b]
        p = logistic_expected(before_a, before_b, advantage, log10_over_scale)
        if use_schedule:
            step = k_per_eta * math.sqrt(schedule_a * league_players[this_league] / (t + schedule_b))
        else:
            step = k
        delta = step * (weight[row] if weighted else 1.0) * (score[row] - p)
        rating[slot_a] = before_a + delta
        rating[slot_b] = before_b - delta
        seq[row] = t
        expected_a[row] = p
        rating_a_before[row] = before_a
        rating_b_before[row] = before_b
        rating_a_after[row] = before_a + delta
        rating_b_after[row] = before_b - delta


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    rating = start.overlay(initial_states(prepared, priors, {"rating": params["initial"]}))["rating"]
    use_schedule = params["a"] is not None
    out = new_outputs(prepared.n_rows, has_sd=False)
    played = start.seq.copy()
    elo_replay_kernel(
        prepared.order,
        prepared.state_a,
        prepared.state_b,
        prepared.league,
        prepared.score,
        prepared.weight,
        rating,
        league_players(prepared, start) if use_schedule else np.zeros(prepared.n_leagues, np.int64),
        played,
        params["k"],
        params["scale"],
        params["advantage"],
        params["a"] if use_schedule else 0.0,
        params["b"] if use_schedule else 0.0,
        use_schedule,
        kernel_outputs(out),
    )
    return out, EndState(player={"rating": rating})


def check_schedule_resume(prepared: PreparedMatches, params: dict, start: StartState) -> str | None:
    """The decaying schedule's N is the league's player count over the whole history: new players change
    every step already taken."""
    if params["a"] is None or start.n_players is None:  # None: a fresh start, no saved count
        return None
    changed = np.flatnonzero(start.league_known & (start.n_players != start.saved_players))
    if changed.size:
        league = changed[0]
        return (
            f"league {prepared.league_names[league]!r} now has {int(start.n_players[league])} players, not "
            f"{int(start.saved_players[league])}, and the decaying schedule's step depends on that count"
        )
    return None


def _check_schedule(params: dict) -> None:
    if (params["a"] is None) != (params["b"] is None):
        raise DuckrateInputError(
            f"elo: parameters a and b go together (decaying schedule η_t = sqrt(a·N/(t+b))); got a={params['a']}, b={params['b']}"
        )


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """The replay's ``expected_a`` between two rated players (no draw model)."""
    advantage = np.full(a.shape[0], params["advantage"])
    per_point = natural_per_point(params["scale"])
    return logistic_forecasts(column(players, "rating", a), column(players, "rating", b), advantage, per_point), None


ELO = ReplaySystem(
    name="elo",
    summary="Elo (Elo 1978), with a fixed K or the decaying schedule of Tang, Wang & Jin (Appendix D).",
    parameters=(
        Parameter("k", 32.0, "a finite K factor >= 0", lambda v: math.isfinite(v) and v >= 0),
        Parameter("initial", 1500.0, "a finite starting rating"),
        Parameter("scale", 400.0, "a finite scale > 0 (400 for chess Elo)", lambda v: math.isfinite(v) and v > 0),
        Parameter("advantage", 0.0, "a finite first-move advantage in rating points"),
        Parameter(
            "a",
            None,
            "a > 0 for the decaying schedule, or NULL for a fixed K",
            lambda v: math.isfinite(v) and v > 0,
            nullable=True,
        ),
        Parameter(
            "b",
            None,
            "b >= 0 for the decaying schedule, or NULL for a fixed K",
            lambda v: math.isfinite(v) and v >= 0,
            nullable=True,
        ),
    ),
    run=_run,
    check=_check_schedule,
    has_sd=False,
    player_state=(StateField("rating"),),
    check_resume=check_schedule_resume,
    forecast=Forecast(_forecast, uses=("scale", "advantage")),
    grid={"k": [8.0, 12.0, 16.0, 20.0, 24.0, 32.0, 40.0, 48.0, 64.0]},
    presets=(Preset(), Preset({"k": 20, "advantage": 30}), Preset({"a": 1.0, "b": 5.0}, resumable=False)),
)


def elo(
    matches: pl.DataFrame,
    k: float = 32.0,
    initial: float = 1500.0,
    scale: float = 400.0,
    advantage: float = 0.0,
    a: float | None = None,
    b: float | None = None,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Elo replay over a matches table.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` and
        optionally ``league`` (independent replays) and ``weight`` (multiplies K; NULL means 1).
    k : K factor (rating points per unit of surprise) when no schedule is given.
    initial : newcomer rating.
    scale : logistic scale; 400 gives chess Elo (10 × stronger odds per 400 points).
    advantage : rating points added to side A's forecast (first move, home side).
    a, b : decaying schedule ``η_t = sqrt(a·N/(t+b))`` of Tang, Wang & Jin (Appendix D), in natural
        units; K = scale/ln10 · η_t. Give both or neither.
    priors : ``player_priors`` frame (``player``, ``rating``, optional ``league``) of starting ratings.
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, and the result is that of one replay over the whole history.
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_*`` (sd NULL: Elo carries no uncertainty).
    """
    return replay_frame(
        ELO,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        k=k,
        initial=initial,
        scale=scale,
        advantage=advantage,
        a=a,
        b=b,
    )
