"""Two-player games (chess-like: draws, a first-mover advantage) between players paired by a running Elo
estimate: :func:`generate_matches`.

Deterministic: all randomness comes from one ``numpy.random.Generator(PCG64(seed))`` drawn in a fixed order
and in fixed-size chunks; the sequential part (matchmaking, results, the running estimate) runs
single-threaded in numba.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
import polars as pl

from duckrate.core.jit import kernel
from duckrate.synthetic.columns import MICROSECONDS_PER_SECOND, league_names, player_names, to_epoch_microseconds

_INITIAL_ESTIMATE = 1500.0
_MEAN_SKILL = 1500.0
_SECONDS_PER_DAY = 86_400.0
# Random numbers are drawn in chunks of this many matches. It is part of the
# definition of the output for a given seed: changing it changes the data.
_CHUNK_SIZE = 1 << 20


@kernel
def _sort_segments(estimate, order, position, segment_start, segment_end):
    """Sort each league's slice of ``order`` by ``estimate``; refresh ``position``."""
    for league in range(segment_start.shape[0]):
        first = segment_start[league]
        stop = segment_end[league]
        members = order[first:stop].copy()
        keys = np.empty(members.shape[0], dtype=np.float64)
        for i in range(members.shape[0]):
            keys[i] = estimate[members[i]]
        ranking = np.argsort(keys, kind="mergesort")
        for i in range(members.shape[0]):
            player = members[ranking[i]]
            order[first + i] = player
            position[player] = first + i


@kernel
def _play_matches(
    first_match_index,
    chosen_player,
    opponent_uniform,
    colour_uniform,
    result_uniform,
    drift_normal_a,
    drift_normal_b,
    match_day,
    skill,
    last_update_day,
    estimate,
    order,
    position,
    league_of_player,
    segment_start,
    segment_end,
    advantage,
    draw_width,
    drift_sd,
    matchmaking_window,
    resort_every,
    out_player_a,
    out_player_b,
    out_score_a,
    out_skill_a,
    out_skill_b,
):
    """Play one chunk of matches in order, updating the state arrays in place."""
    for i in range(chosen_player.shape[0]):
        if (first_match_index + i) % resort_every == 0:
            _sort_segments(estimate, order, position, segment_start, segment_end)

        # Matchmaking: an opponent among the `matchmaking_window` players next to
        # the chosen one in the (periodically refreshed) order of estimates.
        chosen = chosen_player[i]
        league = league_of_player[chosen]
        first = segment_start[league]
        stop = segment_end[league]
        chosen_position = position[chosen]
        low = chosen_position - matchmaking_window // 2
        high = low + matchmaking_window + 1  # exclusive, includes the chosen one
        if low < first:
            low = first
            high = min(stop, first + matchmaking_window + 1)
        if high > stop:
            high = stop
            low = max(first, stop - matchmaking_window - 1)
        n_candidates = high - low - 1
        offset = min(int(opponent_uniform[i] * n_candidates), n_candidates - 1)
        opponent_position = low + offset
        if opponent_position >= chosen_position:
            opponent_position += 1
        opponent = order[opponent_position]

        if colour_uniform[i] < 0.5:
            player_a = chosen
            player_b = opponent
        else:
            player_a = opponent
            player_b = chosen

        # True skills follow a Gaussian random walk, sampled lazily at play time.
        day = match_day[i]
        skill[player_a] += drift_sd * math.sqrt(day - last_update_day[player_a]) * drift_normal_a[i]
        last_update_day[player_a] = day
        skill[player_b] += drift_sd * math.sqrt(day - last_update_day[player_b]) * drift_normal_b[i]
        last_update_day[player_b] = day

        # Result: draw with a probability peaking for equal players, otherwise
        # a logistic (base 10, scale 400) on the advantage-adjusted gap.
        gap = skill[player_a] + advantage - skill[player_b]
        draw_probability = draw_width * math.exp(-((gap / 400.0) ** 2))
        win_if_decisive = 1.0 / (1.0 + 10.0 ** (-gap / 400.0))
        u = result_uniform[i]
        if u < draw_probability:
            score_a = 0.5
        elif u < draw_probability + (1.0 - draw_probability) * win_if_decisive:
            score_a = 1.0
        else:
            score_a = 0.0

        # Running Elo estimate (K = 32, no advantage term) used for matchmaking.
        expected_a = 1.0 / (1.0 + 10.0 ** ((estimate[player_b] - estimate[player_a]) / 400.0))
        change = 32.0 * (score_a - expected_a)
        estimate[player_a] += change
        estimate[player_b] -= change

        out_player_a[i] = player_a
        out_player_b[i] = player_b
        out_score_a[i] = score_a
        out_skill_a[i] = skill[player_a]
        out_skill_b[i] = skill[player_b]


def generate_matches(
    n_matches: int,
    n_players: int,
    n_leagues: int = 1,
    seed: int = 0,
    *,
    advantage: float = 35.0,
    draw_width: float = 0.25,
    skill_sd: float = 200.0,
    drift_sd: float = 4.0,
    matchmaking_window: int = 20,
    start: datetime = datetime(2024, 1, 1),
    seconds_between_matches: float = 20.0,
    resort_every: int | None = None,
    include_true_skills: bool = False,
) -> pl.DataFrame:
    """Generate two-player games between players paired by similar rating.

    Model
    -----
    * Player ``i`` (0-based) belongs to league ``i % n_leagues``; leagues never
      play each other.
    * True skills start at ``N(1500, skill_sd)`` on the Elo scale and follow a
      Gaussian random walk in time with standard deviation ``drift_sd`` per
      day (applied lazily when a player plays, with variance proportional to
      the days elapsed since their previous game).
    * Time between consecutive matches is exponential with mean
      ``seconds_between_matches``; ``played_at`` is that time truncated to the
      minute, so several consecutive matches share a timestamp.
    * Matchmaking: a uniformly chosen player meets a uniformly chosen one of
      the ``matchmaking_window`` players nearest to them (in the same league)
      in a running Elo estimate (K = 32, everyone starts at 1500) updated from
      the generated results. The order by estimate is refreshed every
      ``resort_every`` matches, so neighbours are approximate in between.
      Which of the two moves first (``player_a``) is a fair coin.
    * Result: with effective gap ``d = skill_a + advantage - skill_b``, a draw
      happens with probability ``draw_width * exp(-(d / 400) ** 2)``; otherwise
      ``player_a`` wins with probability ``1 / (1 + 10 ** (-d / 400))``.

    Parameters
    ----------
    n_matches : int
        Number of matches to generate.
    n_players : int
        Number of players; at least two per league.
    n_leagues : int, default 1
        Number of disjoint leagues.
    seed : int, default 0
        Seed of the ``PCG64`` generator; equal seeds give identical frames.
    advantage : float, default 35.0
        First-mover advantage in Elo points, added to ``player_a``'s skill.
    draw_width : float, default 0.25
        Draw probability between equally strong players (in ``[0, 1]``).
    skill_sd : float, default 200.0
        Standard deviation of the initial true skills.
    drift_sd : float, default 4.0
        Standard deviation of the true-skill random walk per day.
    matchmaking_window : int, default 20
        How many nearest players (by running estimate) an opponent is drawn from.
    start : datetime, default 2024-01-01 00:00
        Time origin; the first match is shortly after it.
    seconds_between_matches : float, default 20.0
        Mean gap between consecutive matches, in seconds.
    resort_every : int, optional
        Matches between refreshes of the order by estimate; defaults to
        ``max(256, n_players // 2)``.
    include_true_skills : bool, default False
        Also return ``true_skill_a`` and ``true_skill_b`` (Float64): the
        players' true skills at the time of the match (before the advantage).

    Returns
    -------
    polars.DataFrame
        Columns ``match_id`` (Int64, 1..n in time order), ``played_at``
        (Datetime('us'), non-decreasing), ``league`` (Utf8), ``player_a``
        (Utf8, first mover), ``player_b`` (Utf8), ``score_a`` (Float64: 1 win,
        0.5 draw, 0 loss for ``player_a``), plus the true skills if asked.
    """
    if n_matches < 0:
        raise ValueError("n_matches must be >= 0")
    if n_leagues < 1:
        raise ValueError("n_leagues must be >= 1")
    if n_players < 2 * n_leagues:
        raise ValueError("need at least two players per league")
    if matchmaking_window < 1:
        raise ValueError("matchmaking_window must be >= 1")
    if not 0.0 <= draw_width <= 1.0:
        raise ValueError("draw_width must be in [0, 1]")
    if seconds_between_matches < 0:
        raise ValueError("seconds_between_matches must be >= 0")
    if resort_every is None:
        resort_every = max(256, n_players // 2)
    if resort_every < 1:
        raise ValueError("resort_every must be >= 1")

    rng = np.random.Generator(np.random.PCG64(seed))
    skill = rng.normal(_MEAN_SKILL, skill_sd, n_players)
    last_update_day = np.zeros(n_players)
    estimate = np.full(n_players, _INITIAL_ESTIMATE)
    league_of_player = np.arange(n_players, dtype=np.int64) % n_leagues
    # Players grouped by league; league l owns order[segment_start[l]:segment_end[l]].
    order = np.argsort(league_of_player, kind="stable").astype(np.int64)
    position = np.empty(n_players, dtype=np.int64)
    position[order] = np.arange(n_players, dtype=np.int64)
    league_sizes = np.bincount(league_of_player, minlength=n_leagues).astype(np.int64)
    segment_end = np.cumsum(league_sizes)
    segment_start = segment_end - league_sizes

    player_a = np.empty(n_matches, dtype=np.int64)
    player_b = np.empty(n_matches, dtype=np.int64)
    score_a = np.empty(n_matches, dtype=np.float64)
    true_skill_a = np.empty(n_matches, dtype=np.float64)
    true_skill_b = np.empty(n_matches, dtype=np.float64)
    minute_index = np.empty(n_matches, dtype=np.int64)

    elapsed_seconds = 0.0
    for first in range(0, n_matches, _CHUNK_SIZE):
        stop = min(first + _CHUNK_SIZE, n_matches)
        size = stop - first
        # Fixed draw order; see _CHUNK_SIZE.
        chosen_player = rng.integers(0, n_players, size, dtype=np.int64)
        opponent_uniform = rng.random(size)
        colour_uniform = rng.random(size)
        result_uniform = rng.random(size)
        drift_normal_a = rng.standard_normal(size)
        drift_normal_b = rng.standard_normal(size)
        match_seconds = elapsed_seconds + np.cumsum(rng.exponential(seconds_between_matches, size))
        elapsed_seconds = float(match_seconds[-1])
        minute_index[first:stop] = np.floor(match_seconds / 60.0).astype(np.int64)
        _play_matches(
            first,
            chosen_player,
            opponent_uniform,
            colour_uniform,
            result_uniform,
            drift_normal_a,
            drift_normal_b,
            match_seconds / _SECONDS_PER_DAY,
            skill,
            last_update_day,
            estimate,
            order,
            position,
            league_of_player,
            segment_start,
            segment_end,
            float(advantage),
            float(draw_width),
            float(drift_sd),
            int(matchmaking_window),
            int(resort_every),
            player_a[first:stop],
            player_b[first:stop],
            score_a[first:stop],
            true_skill_a[first:stop],
            true_skill_b[first:stop],
        )

    played_at_us = to_epoch_microseconds(start) + minute_index * (60 * MICROSECONDS_PER_SECOND)
    names = player_names(n_players)
    columns = {
        "match_id": pl.Series(np.arange(1, n_matches + 1, dtype=np.int64)),
        "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
        "league": league_names(n_leagues).gather(league_of_player[player_a]),
        "player_a": names.gather(player_a),
        "player_b": names.gather(player_b),
        "score_a": pl.Series(score_a, dtype=pl.Float64),
    }
    if include_true_skills:
        columns["true_skill_a"] = pl.Series(true_skill_a, dtype=pl.Float64)
        columns["true_skill_b"] = pl.Series(true_skill_b, dtype=pl.Float64)
    return pl.DataFrame(columns)
