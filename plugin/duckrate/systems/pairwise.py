"""Pairwise: the empirical win rate of each pair of players, shrunk towards one half.

Tang, Wang & Jin, "Elo misspecification", Appendix D, eq. (8): the forecast for a game between a and b
is ``P[a, b] = (5 + wins_ab) / (10 + games_ab)``, counted over their earlier games; a draw is half a win
each way and a match ``weight`` counts as that many games. ``prior_games`` generalises the 10 (and its
half, the 5). It has N(N-1)/2 parameters, which is why it needs dense data.

Pairwise has no scalar rating, so the ``rating_*`` columns report the player's mean forecast log-odds
against the rest of the league's field, on the display scale:
``rating_i = initial + scale/ln10 · Σ_{j≠i} logit P[i, j] / (N - 1)`` (pairs never played count as
P = ½, logit 0), kept as a running sum per player. The field is causal: N counts the league's players
seen so far, this match's two included (a player joins the field at their first match), so a replay
continued from a saved state (per-player sums, per-pair counts, the league's N) equals a full replay.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pyarrow.compute as pc

from duckrate.core.forecast import PAIR_COUNTS, Forecast, Players, Probabilities
from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches
from duckrate.core.parameters import Parameter
from duckrate.core.priors import reject_priors
from duckrate.core.protocol import Preset
from duckrate.core.scales import points_per_natural
from duckrate.systems.saved_state import EndState, StartState, StateField, field_values
from duckrate.systems.state_players import league_fields, players_frame, state_rows
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame


def pair_index(prepared: PreparedMatches) -> tuple[np.ndarray, np.ndarray]:
    """A dense index per row of its unordered pair of state slots, and the sorted pair keys
    ``low·n_states + high`` it numbers."""
    low = np.minimum(prepared.state_a, prepared.state_b)
    high = np.maximum(prepared.state_a, prepared.state_b)
    keys = low * np.int64(prepared.n_states) + high
    unique, inverse = np.unique(keys, return_inverse=True)
    return np.ascontiguousarray(inverse.reshape(-1), dtype=np.int64), unique


@kernel
def pair_expected(wins_a, games, half, prior_games):
    """P[a, b] = (half + wins_a)/(prior_games + games), ``half`` = prior_games/2: the shrunk win rate."""
    return (half + wins_a) / (prior_games + games)


@kernel
def pairwise_forecasts(wins_a, games, prior_games):
    """:func:`pair_expected` for each pair's counts (0 and 0 for a pair never played: ½)."""
    half = 0.5 * prior_games
    out = np.empty(wins_a.shape[0], dtype=np.float64)
    for i in range(wins_a.shape[0]):
        out[i] = pair_expected(wins_a[i], games[i], half, prior_games)
    return out


@kernel
def field_rating(logit_sum, field_players, initial, points_per_logit):
    """A player's reported rating: ``initial + points_per_logit · logit_sum / (N - 1)``, N the league's field
    (at least 2 in the divisor)."""
    return initial + points_per_logit * logit_sum / max(field_players - 1, 1)


@kernel
def field_ratings(logit_sum, field_players, initial, points_per_logit):
    """:func:`field_rating` for each player (``field_players``: the size of each one's league field)."""
    out = np.empty(logit_sum.shape[0], dtype=np.float64)
    for i in range(logit_sum.shape[0]):
        out[i] = field_rating(logit_sum[i], field_players[i], initial, points_per_logit)
    return out


@kernel
def pairwise_replay_kernel(
    order,
    state_a,
    state_b,
    league,
    score,
    weight,
    pair,
    wins_low,
    wins_high,
    games,
    logit_sum,
    seen,
    league_players,
    played_in_league,
    prior_games,
    initial,
    points_per_logit,
    outputs,
):
    """Replay matches in ``order`` (some or all rows), updating the state arrays in place.

    ``wins_low[pair]``/``wins_high[pair]`` count the wins of the pair's lower/higher slot, each
    accumulated on its own (never as games minus the other's wins), so the result does not depend on
    which player got the lower slot. ``seen[slot]`` marks the players already in their league's field;
    ``league_players`` counts them (a player joins at their first match) and ``played_in_league`` the
    league's matches so far.

    ``outputs``: the output columns (``kernel_outputs``), indexed by input row.
    """
    seq, expected_a, rating_a_before, rating_b_before, rating_a_after, rating_b_after = outputs
    weighted = weight.shape[0] == score.shape[0]
    half = 0.5 * prior_games
    for position in range(order.shape[0]):
        row = order[position]
        a = state_a[row]
        b = state_b[row]
        this_league = league[row]
        t = played_in_league[this_league] + 1
        played_in_league[this_league] = t
        if not seen[a]:
            seen[a] = True
            league_players[this_league] += 1
        if not seen[b]:
            seen[b] = True
            league_players[this_league] += 1
        field = league_players[this_league]
        k = pair[row]
        a_is_low = a < b
        wins_a = wins_low[k] if a_is_low else wins_high[k]
        p = pair_expected(wins_a, games[k], half, prior_games)
        old_logit = math.log(p) - math.log1p(-p)
        rating_a_before[row] = field_rating(logit_sum[a], field, initial, points_per_logit)
        rating_b_before[row] = field_rating(logit_sum[b], field, initial, points_per_logit)
        w = weight[row] if weighted else 1.0
        won = w * score[row]
        lost = w * (1.0 - score[row])
        if a_is_low:
            wins_low[k] += won
            wins_high[k] += lost
            wins_a = wins_low[k]
        else:
            wins_high[k] += won
            wins_low[k] += lost
            wins_a = wins_high[k]
        games[k] += w
        p_new = pair_expected(wins_a, games[k], half, prior_games)
        change = (math.log(p_new) - math.log1p(-p_new)) - old_logit
        logit_sum[a] += change
        logit_sum[b] -= change
        seq[row] = t
        expected_a[row] = p
        rating_a_after[row] = field_rating(logit_sum[a], field, initial, points_per_logit)
        rating_b_after[row] = field_rating(logit_sum[b], field, initial, points_per_logit)


def _name_rank(prepared: PreparedMatches) -> np.ndarray:
    """Each player code's rank in the byte order of the names: pair rows are saved with the lower
    name as ``player``, whatever slots a run gave the two."""
    rank = np.empty(len(prepared.players), dtype=np.int64)
    rank[np.asarray(pc.sort_indices(prepared.players), dtype=np.int64)] = np.arange(len(prepared.players))
    return rank


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    reject_priors(priors, "pairwise")
    pair, keys = pair_index(prepared)
    n_pairs = keys.size
    wins_low = np.zeros(n_pairs, dtype=np.float64)
    wins_high = np.zeros(n_pairs, dtype=np.float64)
    games = np.zeros(n_pairs, dtype=np.float64)
    touched = np.zeros(n_pairs, dtype=np.bool_)
    slot_a, slot_b, values = start.pairs
    if slot_a.size:  # saved counts of pairs among these players (only those that meet in these rows)
        saved_keys = np.minimum(slot_a, slot_b) * np.int64(prepared.n_states) + np.maximum(slot_a, slot_b)
        at = np.minimum(np.searchsorted(keys, saved_keys), n_pairs - 1)
        found = keys[at] == saved_keys
        a_low = slot_a < slot_b
        wins_low[at[found]] = np.where(a_low, values[:, 0], values[:, 1])[found]
        wins_high[at[found]] = np.where(a_low, values[:, 1], values[:, 0])[found]
        games[at[found]] = values[:, 2][found]
        touched[at[found]] = True
    touched[pair[prepared.order]] = True
    logit_sum = start.overlay({"logit_sum": np.zeros(prepared.n_states, dtype=np.float64)})["logit_sum"]
    seen = start.known.copy()
    league_players = np.where(start.league_known, start.league["players"], 0.0).astype(np.int64)
    played = start.seq.copy()
    out = new_outputs(prepared.n_rows, has_sd=False)
    pairwise_replay_kernel(
        prepared.order,
        prepared.state_a,
        prepared.state_b,
        prepared.league,
        prepared.score,
        prepared.weight,
        pair,
        wins_low,
        wins_high,
        games,
        logit_sum,
        seen,
        league_players,
        played,
        params["prior_games"],
        params["initial"],
        points_per_natural(params["scale"]),
        kernel_outputs(out),
    )
    # pair rows: the lower name first, [its wins, the opponent's wins, games]
    index = np.flatnonzero(touched)
    low, high = keys[index] // prepared.n_states, keys[index] % prepared.n_states
    rank = _name_rank(prepared)
    low_first = rank[prepared.state_player[low]] < rank[prepared.state_player[high]]
    pairs = (
        np.where(low_first, low, high),
        np.where(low_first, high, low),
        np.column_stack(
            [
                np.where(low_first, wins_low[index], wins_high[index]),
                np.where(low_first, wins_high[index], wins_low[index]),
                games[index],
            ]
        ),
    )
    return out, EndState(
        player={"logit_sum": logit_sum}, league={"players": league_players.astype(np.float64)}, pairs=pairs
    )


def _read_state(state: pl.DataFrame, saved: dict) -> Players:
    """Ratings as the replay reports them against the league's whole field; the pair rows (saved once per
    pair, the lower name as ``player``) in both directions: (league, a, b, wins of a, games)."""
    players = state_rows(state, "player")
    values = field_values(players["value"], PAIRWISE.player_state, saved, "player")
    league, fields = league_fields(players, state, PAIRWISE, saved)
    rating = field_ratings(
        values["logit_sum"],
        fields["players"][league].astype(np.int64),
        saved["initial"],
        points_per_natural(saved["scale"]),
    )
    pairs = state_rows(state, "pair")
    counts = field_values(pairs["value"], PAIRWISE.pair_state, saved, "pair")
    forward = pl.DataFrame(
        {
            "league": pairs["league"],
            "a": pairs["player"],
            "b": pairs["opponent"],
            "wins_a": counts["wins_player"],
            "games": counts["games"],
        },
        schema=PAIR_COUNTS,
    )
    backward = forward.select(
        "league", pl.col("b").alias("a"), pl.col("a").alias("b"), pl.Series("wins_a", counts["wins_opponent"]), "games"
    )
    return Players(players_frame(players, rating, None), pairs=pl.concat([forward, backward]), saved=saved)


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """Each pair's counts (a pair that never met has none: P = ½)."""
    assert players.pairs is not None  # read_state gives the pair counts
    names = players.frame.select("league", "player")
    queries = pl.DataFrame(
        {"league": names["league"].gather(a), "a": names["player"].gather(a), "b": names["player"].gather(b)}
    ).with_row_index("query")
    counts = (
        queries.join(players.pairs, on=["league", "a", "b"], how="left", nulls_equal=True)
        .sort("query")
        .select(pl.col("wins_a").fill_null(0.0), pl.col("games").fill_null(0.0))
    )
    prior_games = players.saved["prior_games"]
    return pairwise_forecasts(counts["wins_a"].to_numpy(), counts["games"].to_numpy(), prior_games), None


PAIRWISE = ReplaySystem(
    name="pairwise",
    summary=(
        "The Pairwise online estimator (Tang, Wang & Jin): forecasts from per-pair counts; its state keeps one "
        "row per pair met."
    ),
    parameters=(
        Parameter(
            "prior_games",
            10.0,
            "a finite prior_games > 0 (pseudo-games at one half; 10 in the paper)",
            lambda v: math.isfinite(v) and v > 0,
        ),
        Parameter("initial", 1500.0, "a finite display offset"),
        Parameter("scale", 400.0, "a finite scale > 0 (400: Elo points)", lambda v: math.isfinite(v) and v > 0),
    ),
    run=_run,
    has_sd=False,
    player_state=(StateField("logit_sum"),),
    league_state=(StateField("players"),),
    pair_state=(StateField("wins_player"), StateField("wins_opponent"), StateField("games")),
    forecast=Forecast(_forecast, read_state=_read_state, state_holds="each pair's win counts"),
    grid={"prior_games": [2.0, 5.0, 10.0, 20.0, 40.0]},
    presets=(Preset(), Preset({"prior_games": 3.0, "initial": 0.0, "scale": 1.0})),
)


def pairwise(
    matches: pl.DataFrame,
    prior_games: float = 10.0,
    initial: float = 1500.0,
    scale: float = 400.0,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Pairwise replay over a matches table.

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` and
        optionally ``league`` and ``weight`` (a match counts as ``weight`` games).
    prior_games : pseudo-games at one half in the shrinkage ``(prior_games/2 + wins)/(prior_games + games)``.
    initial, scale : display scale of the reported ratings.
    priors : not supported (Pairwise has no scalar state); a non-empty table is an error.
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, and the result is that of one replay over the whole history.
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match, the replay columns; ``expected_a`` is P[a, b] before the match and
    ``rating_*`` the mean log-odds against the league's field so far (the players seen up to and
    including this match) on the display scale.
    """
    return replay_frame(
        PAIRWISE, matches, priors, state, chunk_size=chunk_size, prior_games=prior_games, initial=initial, scale=scale
    )
