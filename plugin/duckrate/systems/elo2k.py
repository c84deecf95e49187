"""Elo2k (mElo): Elo with a vector pair per player, able to represent non-transitive games.

Tang, Wang & Jin, "Elo misspecification", Appendix D, eq. (7): each player i holds ``U_i, V_i ∈ R^k``;
the forecast is ``p = σ(U_a·V_b - U_b·V_a)`` and a game is one step of online gradient ascent on the
log-likelihood, all four vectors updated from their old values::

    U_a += η (s - p) V_b      U_b -= η (s - p) V_a
    V_a -= η (s - p) U_b      V_b += η (s - p) U_a

with η fixed (``eta``) or the decaying schedule ``η_t = sqrt(a·N/(t + b))``. Every entry starts from
Uniform[0, ``init_max``] (0.1 in the paper), seeded per player name (see ``_player_seeds``).

Elo2k has no scalar rating, so the ``rating_*`` columns report the player's mean forecast log-odds
against the rest of the league's field, on the display scale:
``rating_i = initial + scale/ln10 · Σ_{j≠i} (U_i·V_j - U_j·V_i) / (N - 1)``, which for Elo itself is
``θ_i - mean θ``. The field is causal: the league's players seen so far, this match's two included (a
player joins it at their first match), N their count. The sum is bilinear, ``U_i·ΣV - V_i·ΣU``, so it
costs O(k) per match with running sums of U and V per league (a player's starting vectors added at their
first match, in replay order); the sums and N are saved with the state, so a continued replay equals a
full one. The decaying schedule's N is the league's player count over the whole input (Appendix D).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities
from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import reject_priors
from duckrate.core.protocol import Preset
from duckrate.core.scales import LN10, points_per_natural
from duckrate.systems.elo import (  # the same refusal: a decaying schedule whose N (league players) changed
    ELO,
    check_schedule_resume,
)
from duckrate.systems.player_seeds import player_digests, uniform_rows
from duckrate.systems.saved_state import EndState, StartState, StateField, field_values, league_players
from duckrate.systems.state_players import league_fields, players_frame, state_rows
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame


@kernel
def _mean_logit(u, v, slot, sum_u, sum_v, league, others):
    """Σ_j (U_slot·V_j - U_j·V_slot) / others, from the league's running sums."""
    total = 0.0
    for d in range(u.shape[1]):
        total += u[slot, d] * sum_v[league, d] - v[slot, d] * sum_u[league, d]
    return total / others


@kernel
def _join_field(u, v, slot, sum_u, sum_v, league, seen, field_players):
    """Add a player to the league's field at their first match."""
    if not seen[slot]:
        seen[slot] = True
        field_players[league] += 1
        for d in range(u.shape[1]):
            sum_u[league, d] += u[slot, d]
            sum_v[league, d] += v[slot, d]


@kernel
def elo2k_expected(u, v, a, b):
    """The forecast σ(U_a·V_b - U_b·V_a) for rows ``a`` and ``b`` of the vector matrices."""
    logit = 0.0
    for d in range(u.shape[1]):
        logit += u[a, d] * v[b, d] - u[b, d] * v[a, d]
    return 1.0 / (1.0 + math.exp(-logit))


@kernel
def elo2k_forecasts(u, v, a_rows, b_rows):
    """:func:`elo2k_expected` for each pair of rows."""
    out = np.empty(a_rows.shape[0], dtype=np.float64)
    for i in range(a_rows.shape[0]):
        out[i] = elo2k_expected(u, v, a_rows[i], b_rows[i])
    return out


@kernel
def field_ratings(u, v, league, sum_u, sum_v, field_players, initial, points_per_logit):
    """Each row's rating as the replay reports it, against its league's whole field as saved (``league``:
    each row's league index into the sums and ``field_players``)."""
    out = np.empty(u.shape[0], dtype=np.float64)
    for row in range(u.shape[0]):
        others = max(field_players[league[row]] - 1, 1)
        out[row] = initial + points_per_logit * _mean_logit(u, v, row, sum_u, sum_v, league[row], others)
    return out


@kernel
def elo2k_replay_kernel(
    order,
    state_a,
    state_b,
    league,
    score,
    weight,
    u,
    v,
    sum_u,
    sum_v,
    seen,
    field_players,
    played_in_league,
    league_players,
    eta,
    schedule_a,
    schedule_b,
    use_schedule,
    initial,
    points_per_logit,
    outputs,
):
    """Replay matches in ``order`` (some or all rows), updating ``u``, ``v`` (slot x k), the field
    (``seen`` per slot, ``field_players`` and the sums per league) and ``played_in_league`` in place.
    ``league_players`` (the whole input's count per league) is the decaying schedule's N.

    ``outputs``: the output columns (``kernel_outputs``), indexed by input row.
    """
    seq, expected_a, rating_a_before, rating_b_before, rating_a_after, rating_b_after = outputs
    weighted = weight.shape[0] == score.shape[0]
    k = u.shape[1]
    for position in range(order.shape[0]):
        row = order[position]
        a = state_a[row]
        b = state_b[row]
        this_league = league[row]
        t = played_in_league[this_league] + 1
        played_in_league[this_league] = t
        _join_field(u, v, a, sum_u, sum_v, this_league, seen, field_players)
        _join_field(u, v, b, sum_u, sum_v, this_league, seen, field_players)
        others = max(field_players[this_league] - 1, 1)
        p = elo2k_expected(u, v, a, b)
        rating_a_before[row] = initial + points_per_logit * _mean_logit(u, v, a, sum_u, sum_v, this_league, others)
        rating_b_before[row] = initial + points_per_logit * _mean_logit(u, v, b, sum_u, sum_v, this_league, others)
        if use_schedule:
            step = math.sqrt(schedule_a * league_players[this_league] / (t + schedule_b))
        else:
            step = eta
        g = step * (weight[row] if weighted else 1.0) * (score[row] - p)
        for d in range(k):
            ua = u[a, d]
            ub = u[b, d]
            va = v[a, d]
            vb = v[b, d]
            du_a = g * vb
            du_b = -g * va
            dv_a = -g * ub
            dv_b = g * ua
            u[a, d] = ua + du_a
            u[b, d] = ub + du_b
            v[a, d] = va + dv_a
            v[b, d] = vb + dv_b
            sum_u[this_league, d] += du_a + du_b
            sum_v[this_league, d] += dv_a + dv_b
        seq[row] = t
        expected_a[row] = p
        rating_a_after[row] = initial + points_per_logit * _mean_logit(u, v, a, sum_u, sum_v, this_league, others)
        rating_b_after[row] = initial + points_per_logit * _mean_logit(u, v, b, sum_u, sum_v, this_league, others)


def starting_vectors(prepared: PreparedMatches, dim: int, seed: int, init_max: float) -> tuple[np.ndarray, np.ndarray]:
    """U and V (slot x dim) drawn per player name and seed (never from row order or encoding)."""
    digests = player_digests(prepared.players, seed)
    digest_of_slot = np.ascontiguousarray(digests[prepared.state_player])
    both = uniform_rows(digest_of_slot, 2 * dim, init_max)
    return np.ascontiguousarray(both[:, :dim]), np.ascontiguousarray(both[:, dim:])


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    reject_priors(priors, "elo2k")
    dim = params["dim"]
    u, v = starting_vectors(prepared, dim, params["seed"], params["init_max"])
    start.overlay({"u": u, "v": v})
    known = start.league_known
    sum_u = np.where(known[:, None], start.league["sum_u"], 0.0)
    sum_v = np.where(known[:, None], start.league["sum_v"], 0.0)
    field_players = np.where(known, start.league["players"], 0.0).astype(np.int64)
    seen = start.known.copy()
    played = start.seq.copy()
    use_schedule = params["a"] is not None
    out = new_outputs(prepared.n_rows, has_sd=False)
    elo2k_replay_kernel(
        prepared.order,
        prepared.state_a,
        prepared.state_b,
        prepared.league,
        prepared.score,
        prepared.weight,
        u,
        v,
        sum_u,
        sum_v,
        seen,
        field_players,
        played,
        league_players(prepared, start) if use_schedule else np.zeros(prepared.n_leagues, np.int64),
        params["eta"],
        params["a"] if use_schedule else 0.0,
        params["b"] if use_schedule else 0.0,
        use_schedule,
        params["initial"],
        points_per_natural(params["scale"]),
        kernel_outputs(out),
    )
    return out, EndState(
        player={"u": u, "v": v},
        league={"players": field_players.astype(np.float64), "sum_u": sum_u, "sum_v": sum_v},
    )


def _check_schedule(params: dict) -> None:
    if (params["a"] is None) != (params["b"] is None):
        raise DuckrateInputError(
            f"elo2k: parameters a and b go together (decaying schedule η_t = sqrt(a·N/(t+b))); got a={params['a']}, b={params['b']}"
        )


DEFAULT_ETA = ELO.defaults["k"] * LN10 / ELO.defaults["scale"]  # the step of default Elo, in natural units


def _read_state(state: pl.DataFrame, saved: dict) -> Players:
    """Each player's vector pair from a saved state, rated against the league's field as the replay reports."""
    players = state_rows(state, "player")
    values = field_values(players["value"], ELO2K.player_state, saved, "player")
    league, fields = league_fields(players, state, ELO2K, saved)
    u, v = np.ascontiguousarray(values["u"]), np.ascontiguousarray(values["v"])
    rating = field_ratings(
        u,
        v,
        league,
        np.ascontiguousarray(fields["sum_u"]),
        np.ascontiguousarray(fields["sum_v"]),
        fields["players"].astype(np.int64),
        saved["initial"],
        points_per_natural(saved["scale"]),
    )
    return Players(players_frame(players, rating, None), {"u": u, "v": v}, saved=saved)


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    return elo2k_forecasts(players.vectors["u"], players.vectors["v"], a, b), None


ELO2K = ReplaySystem(
    name="elo2k",
    summary=(
        "Elo2k (Tang, Wang & Jin): k-dimensional ratings that can express intransitive matchups; rating columns "
        "hold each player's mean log-odds against the league's field so far, on the Elo scale."
    ),
    parameters=(
        Parameter("dim", 4, "an integer vector dimension k between 1 and 64", lambda v: 1 <= v <= 64, integer=True),
        Parameter(
            "eta", DEFAULT_ETA, "a finite learning rate η > 0 (natural units)", lambda v: math.isfinite(v) and v > 0
        ),
        Parameter(
            "a",
            None,
            "a > 0 for the decaying schedule, or NULL for a fixed η",
            lambda v: math.isfinite(v) and v > 0,
            nullable=True,
        ),
        Parameter(
            "b",
            None,
            "b >= 0 for the decaying schedule, or NULL for a fixed η",
            lambda v: math.isfinite(v) and v >= 0,
            nullable=True,
        ),
        Parameter("seed", 0, "an integer seed", lambda v: math.isfinite(v) and -(2**63) <= v < 2**63, integer=True),
        Parameter(
            "init_max",
            0.1,
            "a finite init_max >= 0 (entries start Uniform[0, init_max])",
            lambda v: math.isfinite(v) and v >= 0,
        ),
        Parameter("initial", 1500.0, "a finite display offset"),
        Parameter("scale", 400.0, "a finite scale > 0 (400: Elo points)", lambda v: math.isfinite(v) and v > 0),
    ),
    run=_run,
    check=_check_schedule,
    has_sd=False,
    player_state=(StateField("u", lambda params: params["dim"]), StateField("v", lambda params: params["dim"])),
    league_state=(
        StateField("players"),
        StateField("sum_u", lambda params: params["dim"]),
        StateField("sum_v", lambda params: params["dim"]),
    ),
    check_resume=check_schedule_resume,
    forecast=Forecast(_forecast, read_state=_read_state, state_holds="each player's vector pair"),
    grid={"eta": [0.05, 0.1, 0.18420680743952367, 0.3]},
    presets=(Preset(), Preset({"dim": 2, "seed": 7}), Preset({"seed": 3})),
)


def elo2k(
    matches: pl.DataFrame,
    dim: int = 4,
    eta: float = DEFAULT_ETA,
    a: float | None = None,
    b: float | None = None,
    seed: int = 0,
    init_max: float = 0.1,
    initial: float = 1500.0,
    scale: float = 400.0,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Elo2k (mElo) replay over a matches table.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` and
        optionally ``league`` and ``weight`` (multiplies the step).
    dim : k, the length of each player's U and V (4 in the paper).
    eta : fixed learning rate in natural units (default: Elo's K = 32 step, 32·ln10/400).
    a, b : decaying schedule ``η_t = sqrt(a·N/(t+b))`` (Appendix D); give both or neither.
    seed : seeds each player's Uniform[0, init_max] starting entries (by player name).
    init_max : upper end of the starting entries (0.1 in the paper).
    initial, scale : display scale of the reported ratings.
    priors : not supported (Elo2k has no scalar state); a non-empty table is an error.
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, and the result is that of one replay over the whole history (with the decaying
        schedule, only while no league gains players: its N would change every step already taken).
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match, the replay columns; ``expected_a = σ(U_a·V_b - U_b·V_a)`` before
    the match and ``rating_*`` the mean log-odds against the league's field so far (the players seen up
    to and including this match) on the display scale.
    """
    return replay_frame(
        ELO2K,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        dim=dim,
        eta=eta,
        a=a,
        b=b,
        seed=seed,
        init_max=init_max,
        initial=initial,
        scale=scale,
    )
