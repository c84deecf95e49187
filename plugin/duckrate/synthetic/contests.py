"""Ranked multi-player contests (many players, one ranking each, competition-ranking ties):
:func:`generate_contests`.

Deterministic: all randomness comes from one ``numpy.random.Generator(PCG64(seed))`` drawn in a fixed order.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import polars as pl

from duckrate.synthetic.columns import MICROSECONDS_PER_SECOND, league_names, player_names, to_epoch_microseconds

_MEAN_SKILL = 1500.0


def _competition_ranks(tied_with_previous: np.ndarray) -> np.ndarray:
    """Competition ranks (1, 2, 2, 4) for places in order, given tie flags.

    ``tied_with_previous[j]`` says whether place ``j + 1`` ties with place ``j``.
    """
    n_places = tied_with_previous.shape[0] + 1
    places = np.arange(1, n_places + 1, dtype=np.int64)
    starts_new_rank = np.concatenate(([True], ~tied_with_previous))
    # Each place takes the place number of the latest place that started a rank.
    return np.maximum.accumulate(np.where(starts_new_rank, places, 0))


def generate_contests(
    n_contests: int,
    players_per_contest: int,
    pool_size: int,
    seed: int = 0,
    *,
    n_leagues: int = 1,
    skill_sd: float = 300.0,
    perf_sd: float = 200.0,
    drift_sd: float = 20.0,
    tie_rate: float = 0.01,
    start: datetime = datetime(2024, 1, 1),
    activity_sd: float = 1.0,
) -> pl.DataFrame:
    """Generate ranked multi-player contests (one ranking of many players each).

    Model
    -----
    * Pool player ``i`` (0-based) belongs to league ``i % n_leagues``; contest
      ``c`` (0-based) is held in league ``c % n_leagues`` on
      ``start + (c // n_leagues)`` weeks, so each league has a weekly contest.
    * Participants are drawn without replacement from the league's pool with
      probability proportional to a per-player activity ``exp(N(0,
      activity_sd))`` (Gumbel top-k), so some players enter far more often.
    * True skills start at ``N(1500, skill_sd)`` and drift as a Gaussian random
      walk with ``drift_sd`` per week (applied lazily when a player enters).
    * Performance is ``skill + N(0, perf_sd)``; participants are ordered by
      performance, and each place ties with the one above it with probability
      ``tie_rate``. Ranks are competition ranks: 1, 2, 2, 4, ...

    Parameters
    ----------
    n_contests : int
        Number of contests.
    players_per_contest : int
        Participants per contest; at most the size of a league's pool.
    pool_size : int
        Number of distinct players over all leagues.
    seed : int, default 0
        Seed of the ``PCG64`` generator; equal seeds give identical frames.
    n_leagues : int, default 1
        Number of disjoint leagues.
    skill_sd, perf_sd, drift_sd : float
        Spread of initial skills, of per-contest performance noise, and of
        the skill random walk per week.
    tie_rate : float, default 0.01
        Probability that a place ties with the place above it.
    start : datetime, default 2024-01-01 00:00
        Date of the first contest(s).
    activity_sd : float, default 1.0
        Log-scale spread of the players' activity weights.

    Returns
    -------
    polars.DataFrame
        Columns ``contest_id`` (Int64, 1..n), ``played_at`` (Datetime('us')),
        ``league`` (Utf8), ``player`` (Utf8), ``rank`` (Int64, 1 = best),
        one row per participant, ordered by contest and rank.
    """
    if n_contests < 0:
        raise ValueError("n_contests must be >= 0")
    if n_leagues < 1:
        raise ValueError("n_leagues must be >= 1")
    smallest_league = pool_size // n_leagues
    if players_per_contest < 1 or players_per_contest > smallest_league:
        raise ValueError("players_per_contest must be between 1 and the smallest league's pool size")
    if not 0.0 <= tie_rate <= 1.0:
        raise ValueError("tie_rate must be in [0, 1]")

    rng = np.random.Generator(np.random.PCG64(seed))
    skill = rng.normal(_MEAN_SKILL, skill_sd, pool_size)
    log_activity = rng.normal(0.0, activity_sd, pool_size)
    last_update_week = np.zeros(pool_size, dtype=np.int64)
    league_of_player = np.arange(pool_size, dtype=np.int64) % n_leagues
    members_of_league = [np.flatnonzero(league_of_player == league) for league in range(n_leagues)]

    n_rows = n_contests * players_per_contest
    participant = np.empty(n_rows, dtype=np.int64)
    rank = np.empty(n_rows, dtype=np.int64)
    for contest in range(n_contests):
        league = contest % n_leagues
        week = contest // n_leagues
        members = members_of_league[league]
        sampling_keys = log_activity[members] + rng.gumbel(size=members.shape[0])
        entrants = members[np.argsort(-sampling_keys, kind="stable")[:players_per_contest]]

        weeks_idle = week - last_update_week[entrants]
        skill[entrants] += drift_sd * np.sqrt(weeks_idle) * rng.standard_normal(players_per_contest)
        last_update_week[entrants] = week

        performance = skill[entrants] + rng.normal(0.0, perf_sd, players_per_contest)
        finishing_order = entrants[np.argsort(-performance, kind="stable")]
        tied_with_previous = rng.random(players_per_contest - 1) < tie_rate

        rows = slice(contest * players_per_contest, (contest + 1) * players_per_contest)
        participant[rows] = finishing_order
        rank[rows] = _competition_ranks(tied_with_previous)

    contest_index = np.repeat(np.arange(n_contests, dtype=np.int64), players_per_contest)
    week_us = 7 * 86_400 * MICROSECONDS_PER_SECOND
    played_at_us = to_epoch_microseconds(start) + (contest_index // n_leagues) * week_us
    return pl.DataFrame(
        {
            "contest_id": pl.Series(contest_index + 1, dtype=pl.Int64),
            "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
            "league": league_names(n_leagues).gather(contest_index % n_leagues),
            "player": player_names(pool_size).gather(participant),
            "rank": pl.Series(rank, dtype=pl.Int64),
        }
    )
