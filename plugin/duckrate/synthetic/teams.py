"""Team matches (two or more teams of one or more players, one ranking of the teams each), in the
``team_results`` shape of one row per player per match: :func:`generate_team_matches`.

Deterministic: all randomness comes from one ``numpy.random.Generator(PCG64(seed))`` drawn in a fixed order
(the entrants in fixed-size chunks); the sequential parts (drawing entrants, the skills' random walk) run
single-threaded in numba over arrays for all matches at once, the rest is vectorised NumPy, so a million
matches of five against five take about a second.
"""

from __future__ import annotations

import math
from datetime import datetime

import numpy as np
import polars as pl

from duckrate.core.jit import kernel
from duckrate.synthetic.columns import MICROSECONDS_PER_SECOND, league_names, player_names, to_epoch_microseconds

# TrueSkill's scale: skills around 25, spread 25/3, performance noise (beta) 25/6, dynamics (tau) 25/300.
_MEAN_SKILL = 25.0
_SECONDS_PER_DAY = 86_400
# Random numbers for drawing the entrants come in chunks of about this many. It is part of the definition of
# the output for a given seed: changing it changes the data.
_DRAW_CHUNK = 1 << 22
# A league whose pool is at most this many times a match's largest number of players is drawn by Gumbel
# top-k over the whole pool; larger pools by rejection (see generate_team_matches).
_DENSE_FACTOR = 8
# Partial play: a player's share of the match is uniform in [_MIN_SHARE, 1).
_MIN_SHARE = 0.2
# Scores: the last team's mean count, and the cap of the extra count per place.
_BASE_SCORE_MEAN = 1.0
_MAX_SCORE_GAP_MEAN = 100.0


@kernel
def _alias_tables(weight, league_start, league_size, keep, other):
    """Walker/Vose alias tables of ``weight``, one per league's slice ``league_start[l]:+league_size[l]``.

    Slot ``s`` of a league is kept with probability ``keep[start + s]``, else replaced by slot
    ``other[start + s]`` (within the league).
    """
    for league in range(league_start.shape[0]):
        start = league_start[league]
        size = league_size[league]
        total = 0.0
        for s in range(size):
            total += weight[start + s]
        scaled = np.empty(size, dtype=np.float64)
        small = np.empty(size, dtype=np.int64)
        large = np.empty(size, dtype=np.int64)
        n_small = 0
        n_large = 0
        for s in range(size):
            scaled[s] = weight[start + s] * size / total
            if scaled[s] < 1.0:
                small[n_small] = s
                n_small += 1
            else:
                large[n_large] = s
                n_large += 1
        while n_small > 0 and n_large > 0:
            n_small -= 1
            low = small[n_small]
            n_large -= 1
            high = large[n_large]
            keep[start + low] = scaled[low]
            other[start + low] = high
            scaled[high] = scaled[high] + scaled[low] - 1.0
            if scaled[high] < 1.0:
                small[n_small] = high
                n_small += 1
            else:
                large[n_large] = high
                n_large += 1
        for i in range(n_large):
            keep[start + large[i]] = 1.0
            other[start + large[i]] = large[i]
        for i in range(n_small):
            keep[start + small[i]] = 1.0
            other[start + small[i]] = small[i]


@kernel
def _draw_sparse_entrants(
    uniform,
    match,
    row,
    match_row_start,
    n_leagues,
    league_start,
    league_size,
    dense,
    alias_keep,
    alias_other,
    last_match,
    player,
):
    """Draw the entrants of matches ``match, match + 1, ...`` (resuming at ``row``) in the leagues that are
    not ``dense``: draws with replacement (alias method, one uniform each), each repeated until it is new to
    the match.

    Match ``m`` is in league ``m % n_leagues``, whose slot ``s`` is player ``league + s * n_leagues``. Returns
    the match and row to resume at when the uniforms run out (the match count when all are drawn).
    """
    n_matches = match_row_start.shape[0] - 1
    used = 0
    while match < n_matches:
        league = match % n_leagues
        if not dense[league]:
            size = league_size[league]
            start = league_start[league]
            stop = match_row_start[match + 1]
            while row < stop:
                if used == uniform.shape[0]:
                    return match, row
                x = uniform[used] * size
                used += 1
                slot = min(int(x), size - 1)
                if x - slot >= alias_keep[start + slot]:
                    slot = alias_other[start + slot]
                candidate = league + slot * n_leagues
                if last_match[candidate] != match:
                    last_match[candidate] = match
                    player[row] = candidate
                    row += 1
        match += 1
        if match < n_matches:
            row = match_row_start[match]
    return match, row


def _draw_dense_entrants(
    rng: np.random.Generator,
    league: int,
    n_leagues: int,
    match_row_start: np.ndarray,
    log_activity: np.ndarray,
    player: np.ndarray,
) -> None:
    """Draw the entrants of ``league``'s matches by Gumbel top-k over its whole pool, in chunks of matches."""
    members = np.arange(league, log_activity.shape[0], n_leagues, dtype=np.int64)
    matches = np.arange(league, match_row_start.shape[0] - 1, n_leagues, dtype=np.int64)
    entrants = match_row_start[matches + 1] - match_row_start[matches]
    most = int(entrants.max(initial=0))
    per_chunk = max(1, _DRAW_CHUNK // members.shape[0])
    for first in range(0, matches.shape[0], per_chunk):
        chunk = slice(first, first + per_chunk)
        keys = log_activity[members] + rng.gumbel(size=(entrants[chunk].shape[0], members.shape[0]))
        # The `most` best keys of each match, best first (the entrants are shuffled afterwards anyway).
        if most < members.shape[0]:
            best = np.argpartition(-keys, most - 1, axis=1)[:, :most]
        else:
            best = np.broadcast_to(np.arange(members.shape[0]), keys.shape)
        best = np.take_along_axis(best, np.argsort(-np.take_along_axis(keys, best, axis=1), axis=1), axis=1)
        taken = np.arange(most) < entrants[chunk, None]
        rows = match_row_start[matches[chunk], None] + np.arange(most)
        player[rows[taken]] = members[best[taken]]


@kernel
def _shuffle_segments(values, segment_start, uniform):
    """Shuffle each ``values[segment_start[i]:segment_start[i + 1]]`` in place (Fisher-Yates, ``uniform[j]``
    for the draw at row ``j``)."""
    for i in range(segment_start.shape[0] - 1):
        first = segment_start[i]
        for j in range(segment_start[i + 1] - 1, first, -1):
            k = first + min(int(uniform[j] * (j - first + 1)), j - first)
            held = values[j]
            values[j] = values[k]
            values[k] = held


@kernel
def _team_performances(
    player,
    weight,
    match_day,
    match_team_start,
    team_row_start,
    drift_normal,
    perf_normal,
    skill,
    last_day,
    drift_sd,
    perf_sd,
    team_performance,
):
    """Walk the skills lazily to each match's day and sum each team's weighted performances, in match order."""
    for match in range(match_day.shape[0]):
        day = match_day[match]
        for team in range(match_team_start[match], match_team_start[match + 1]):
            total = 0.0
            for row in range(team_row_start[team], team_row_start[team + 1]):
                p = player[row]
                idle = day - last_day[p]
                if idle > 0:
                    skill[p] += drift_sd * math.sqrt(idle) * drift_normal[row]
                    last_day[p] = day
                total += (skill[p] + perf_sd * perf_normal[row]) * weight[row]
            team_performance[team] = total


def _size_range(value: int | tuple[int, int], name: str, minimum: int) -> tuple[int, int]:
    """``(low, high)`` of an int or an inclusive ``(low, high)`` pair, both at least ``minimum``."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or a (low, high) pair")
        low, high = int(value[0]), int(value[1])
    else:
        low = high = int(value)
    if low < minimum or high < low:
        raise ValueError(f"{name} must be >= {minimum} (and low <= high for a range)")
    return low, high


def generate_team_matches(
    n_matches: int,
    pool_size: int,
    seed: int = 0,
    *,
    teams_per_match: int | tuple[int, int] = 2,
    team_size: int | tuple[int, int] = 5,
    n_leagues: int = 1,
    skill_sd: float = 25.0 / 3.0,
    perf_sd: float = 25.0 / 6.0,
    drift_sd: float = 25.0 / 300.0,
    tie_rate: float = 0.10,
    partial_play_rate: float = 0.0,
    scores: bool = False,
    start: datetime = datetime(2024, 1, 1),
    matches_per_day: float = 1_000.0,
    activity_sd: float = 1.0,
) -> pl.DataFrame:
    """Generate team matches: teams of players, one ranking of the teams per match (the ``team_results`` shape).

    Model
    -----
    * Pool player ``i`` (0-based) belongs to league ``i % n_leagues``; match ``m`` (0-based) is held in league
      ``m % n_leagues`` at ``start + floor(m * 86400 / matches_per_day)`` seconds (all leagues share one
      time line); its day is the whole days since ``start``.
    * Sizes: ``teams_per_match`` and ``team_size`` are fixed ints, or inclusive ``(low, high)`` ranges drawn
      uniformly per match and per team.
    * Participants are drawn without replacement from the league's pool with probability proportional to a
      per-player activity ``exp(N(0, activity_sd))`` (successive sampling, the distribution of Gumbel top-k),
      so some players play far more often, then split into the teams at random. A league whose pool is at
      most 8 times the largest match is drawn by Gumbel top-k over the whole pool; a larger one by draws
      with replacement (alias method), each repeated until it is new to the match, which gives the same
      distribution in time proportional to the match instead of the pool.
    * True skills start at ``N(25, skill_sd)`` and drift as a Gaussian random walk with ``drift_sd`` per
      day (applied lazily when a player plays).
    * A player's share of the match (``weight``) is 1, or with probability ``partial_play_rate`` uniform in
      ``[0.2, 1)``. Team performance is the sum over its players of ``(skill + N(0, perf_sd)) * weight``;
      teams are ordered by performance, and each place ties with the one above it with probability
      ``tie_rate``. Ranks are dense: 1, 1, 2, ...
    * Scores (``scores=True``, drawn last, so the other columns do not change): the last place scores
      ``Poisson(1)``; each place above scores as much as the place below it if tied, else
      ``1 + Poisson(gap / (2 perf_sd sqrt(n_a + n_b)))`` more, where ``gap`` is the difference of the two
      teams' performances and ``n_a + n_b`` their players (``perf_sd`` taken as 1 when zero; the mean
      capped at 100). Equal scores exactly when teams tie.

    Parameters
    ----------
    n_matches : int
        Number of matches.
    pool_size : int
        Number of distinct players over all leagues; every league needs at least the largest match's
        number of players (``teams_per_match * team_size``, their upper bounds).
    seed : int, default 0
        Seed of the ``PCG64`` generator; equal arguments give identical frames.
    teams_per_match : int or (int, int), default 2
        Teams per match (at least 2), or an inclusive range drawn per match.
    team_size : int or (int, int), default 5
        Players per team (at least 1), or an inclusive range drawn per team.
    n_leagues : int, default 1
        Number of disjoint leagues.
    skill_sd, perf_sd, drift_sd : float, default 25/3, 25/6, 25/300
        Spread of initial skills, of per-match performance noise per player, and of the skill random walk
        per day (TrueSkill's sigma, beta and tau).
    tie_rate : float, default 0.10
        Probability that a place ties with the place above it (TrueSkill's default draw probability).
    partial_play_rate : float, default 0.0
        Probability that a player plays only part of the match.
    scores : bool, default False
        Also return a ``score`` column.
    start : datetime, default 2024-01-01 00:00
        Time of the first match.
    matches_per_day : float, default 1000.0
        Matches per day over all leagues.
    activity_sd : float, default 1.0
        Log-scale spread of the players' activity weights.

    Returns
    -------
    polars.DataFrame
        Columns ``match_id`` (Int64, 1..n), ``played_at`` (Datetime('us'), non-decreasing), ``league``
        (Utf8), ``team`` (Utf8: ``red``, ``blue`` when ``teams_per_match == 2``, else ``t1``, ``t2``, ...),
        ``player`` (Utf8), ``rank`` (Int64, 1 = best, tied teams share a rank), ``weight`` (Float64 in
        ``(0, 1]``), and with ``scores`` ``score`` (Float64, whole numbers, higher is better); one row per
        player per match, ordered by match, then team, players within a team in random order.
    """
    if n_matches < 0:
        raise ValueError("n_matches must be >= 0")
    if n_leagues < 1:
        raise ValueError("n_leagues must be >= 1")
    teams_low, teams_high = _size_range(teams_per_match, "teams_per_match", 2)
    size_low, size_high = _size_range(team_size, "team_size", 1)
    largest_match = teams_high * size_high
    if largest_match > pool_size // n_leagues:
        raise ValueError("the largest match (teams_per_match * team_size) must fit in the smallest league's pool")
    if min(skill_sd, perf_sd, drift_sd, activity_sd) < 0.0:
        raise ValueError("skill_sd, perf_sd, drift_sd and activity_sd must be >= 0")
    if not 0.0 <= tie_rate <= 1.0:
        raise ValueError("tie_rate must be in [0, 1]")
    if not 0.0 <= partial_play_rate <= 1.0:
        raise ValueError("partial_play_rate must be in [0, 1]")
    if not matches_per_day > 0.0:
        raise ValueError("matches_per_day must be > 0")

    rng = np.random.Generator(np.random.PCG64(seed))
    skill = rng.normal(_MEAN_SKILL, skill_sd, pool_size)
    log_activity = rng.normal(0.0, activity_sd, pool_size)

    # Layout: match m's teams are match_team_start[m]:[m + 1]; team t's rows team_row_start[t]:[t + 1].
    if teams_low == teams_high:
        teams_in_match = np.full(n_matches, teams_low, dtype=np.int64)
    else:
        teams_in_match = rng.integers(teams_low, teams_high + 1, n_matches, dtype=np.int64)
    match_team_start = np.zeros(n_matches + 1, dtype=np.int64)
    np.cumsum(teams_in_match, out=match_team_start[1:])
    n_teams = int(match_team_start[-1])
    if size_low == size_high:
        size_of_team = np.full(n_teams, size_low, dtype=np.int64)
    else:
        size_of_team = rng.integers(size_low, size_high + 1, n_teams, dtype=np.int64)
    team_row_start = np.zeros(n_teams + 1, dtype=np.int64)
    np.cumsum(size_of_team, out=team_row_start[1:])
    n_rows = int(team_row_start[-1])
    match_row_start = team_row_start[match_team_start]

    # Entrants: league l's slot s is player l + s * n_leagues.
    league_size = (pool_size - np.arange(n_leagues, dtype=np.int64) + n_leagues - 1) // n_leagues
    league_start = np.zeros(n_leagues, dtype=np.int64)
    np.cumsum(league_size[:-1], out=league_start[1:])
    dense = league_size <= _DENSE_FACTOR * largest_match
    player = np.empty(n_rows, dtype=np.int64)
    for league in np.flatnonzero(dense):
        _draw_dense_entrants(rng, int(league), n_leagues, match_row_start, log_activity, player)
    player_of_slot = np.argsort(np.arange(pool_size, dtype=np.int64) % n_leagues, kind="stable")
    activity_of_slot = np.exp(log_activity[player_of_slot] - log_activity.max(initial=0.0))
    alias_keep = np.ones(pool_size, dtype=np.float64)
    alias_other = np.arange(pool_size, dtype=np.int64) - np.repeat(league_start, league_size)
    _alias_tables(activity_of_slot, league_start, league_size, alias_keep, alias_other)
    last_match = np.full(pool_size, -1, dtype=np.int64)
    match, row = 0, 0
    while match < n_matches and not dense.all():
        match, row = _draw_sparse_entrants(
            rng.random(_DRAW_CHUNK),
            match,
            row,
            match_row_start,
            n_leagues,
            league_start,
            league_size,
            dense,
            alias_keep,
            alias_other,
            last_match,
            player,
        )
    del last_match, alias_keep, alias_other, activity_of_slot, player_of_slot
    _shuffle_segments(player, match_row_start, rng.random(n_rows))

    weight = np.ones(n_rows, dtype=np.float64)
    if partial_play_rate > 0.0:
        partial = np.flatnonzero(rng.random(n_rows) < partial_play_rate)
        weight[partial] = rng.uniform(_MIN_SHARE, 1.0, partial.shape[0])
        del partial

    match_index = np.arange(n_matches, dtype=np.int64)
    match_seconds = np.floor(match_index * _SECONDS_PER_DAY / matches_per_day).astype(np.int64)
    match_day = match_seconds // _SECONDS_PER_DAY
    team_performance = np.empty(n_teams, dtype=np.float64)
    _team_performances(
        player,
        weight,
        match_day,
        match_team_start,
        team_row_start,
        rng.standard_normal(n_rows),
        rng.standard_normal(n_rows),
        skill,
        np.zeros(pool_size, dtype=np.int64),
        float(drift_sd),
        float(perf_sd),
        team_performance,
    )

    # Places: order[j] is the team in place j of its match (best first); ties and dense ranks by place.
    first_place = match_team_start[:-1]
    if teams_low == teams_high:
        by_match = np.argsort(-team_performance.reshape(n_matches, teams_low), axis=1, kind="stable")
        order = (by_match + first_place[:, None]).ravel()
        del by_match
    else:
        order = np.lexsort((-team_performance, np.repeat(match_index, teams_in_match)))
    new_rank = rng.random(n_teams) >= tie_rate
    new_rank[first_place] = True
    rank_count = np.cumsum(new_rank)
    team_rank = np.empty(n_teams, dtype=np.int64)
    team_rank[order] = rank_count - np.repeat(rank_count[first_place], teams_in_match) + 1

    team_position = np.arange(n_teams, dtype=np.int64) - np.repeat(first_place, teams_in_match)
    if teams_low == teams_high == 2:
        labels = pl.Series(["red", "blue"], dtype=pl.Utf8)
    else:
        labels = pl.Series([f"t{i}" for i in range(1, teams_high + 1)], dtype=pl.Utf8)
    played_at_us = to_epoch_microseconds(start) + match_seconds * MICROSECONDS_PER_SECOND
    rows_in_match = np.diff(match_row_start)
    columns = {
        "match_id": pl.Series(np.repeat(match_index + 1, rows_in_match), dtype=pl.Int64),
        "played_at": pl.Series(np.repeat(played_at_us, rows_in_match), dtype=pl.Int64).cast(pl.Datetime("us")),
        "league": league_names(n_leagues).gather(np.repeat(match_index % n_leagues, rows_in_match)),
        "team": labels.gather(np.repeat(team_position, size_of_team)),
        "player": player_names(pool_size).gather(player),
        "rank": pl.Series(np.repeat(team_rank, size_of_team), dtype=pl.Int64),
        "weight": pl.Series(weight, dtype=pl.Float64),
    }
    del player, weight
    if scores:
        # Scores by place, from the last up: score[j] = base + the increments of the places below j.
        performance_by_place = team_performance[order]
        size_by_place = size_of_team[order].astype(np.float64)
        gap = np.zeros(n_teams, dtype=np.float64)
        gap[1:] = performance_by_place[:-1] - performance_by_place[1:]
        gap[first_place] = 0.0
        pair_size = np.ones(n_teams, dtype=np.float64)
        pair_size[1:] = size_by_place[:-1] + size_by_place[1:]
        goal_scale = 2.0 * (perf_sd if perf_sd > 0.0 else 1.0)
        gap_mean = np.minimum(gap / (goal_scale * np.sqrt(pair_size)), _MAX_SCORE_GAP_MEAN)
        base = rng.poisson(_BASE_SCORE_MEAN, n_matches)
        increment = np.where(new_rank, 1 + rng.poisson(gap_mean), 0)
        increment[first_place] = 0
        total_below = np.cumsum(increment)
        last_place = match_team_start[1:] - 1
        below = np.repeat(total_below[last_place] + base, teams_in_match) - total_below
        team_score = np.empty(n_teams, dtype=np.float64)
        team_score[order] = below
        columns["score"] = pl.Series(np.repeat(team_score, size_of_team), dtype=pl.Float64)
    return pl.DataFrame(columns)
