"""Deterministic synthetic data for duckrate: head-to-head matches and ranked contests.

Everything here is reproducible bit for bit: all randomness comes from one
``numpy.random.Generator(numpy.random.PCG64(seed))`` per call, drawn in a fixed
order and in fixed-size chunks, and the sequential part runs single-threaded in
numba. The output therefore depends only on the arguments, never on the number
of threads or on the machine's core count.

Two generators are provided:

* :func:`generate_matches` -- two-player games (chess-like, with draws and a
  first-mover advantage) between players paired by a running Elo estimate.
* :func:`generate_contests` -- multi-player contests (many players, one
  ranking each) with competition-ranking ties.
* :func:`win_matrix` and :func:`matrix_matches` -- the known-truth win matrices
  (Bradley-Terry, SST and WST by row, diagonal or entry), drifting win rates and
  rating-window matchmaking of Tang, Wang & Jin, Appendix F (``_win_matrices``).
* :func:`generate_battles` -- arena-shaped battles (LMArena-like): a static
  Bradley-Terry truth with style covariates, ties, users with correlated votes
  and non-uniform (adaptive) pair sampling; fully vectorised, so 10M rows take
  seconds. ``return_truth=True`` also returns the :class:`BattleTruth`.

:func:`write_demo_seeds` writes the two small CSV seeds bundled with the dbt
package (in a *raw* layout, with a few deliberately bad match rows), and
:func:`main` is a small command-line interface::

    python -m duckrate.synthetic matches --n-matches 100000 --n-players 5000 --out m.parquet
    python -m duckrate.synthetic contests --n-contests 50 --players-per-contest 300 \\
        --pool-size 2000 --out c.csv
    python -m duckrate.synthetic battles --n-models 130 --n-battles 1500000 --out b.parquet
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
from scipy.special import expit, ndtr

from duckrate.core.jit import kernel
from duckrate.core.scales import POINTS_PER_NATURAL
from duckrate.synthetic_win_matrices import KINDS as WIN_MATRIX_KINDS
from duckrate.synthetic_win_matrices import MATCHMAKING, matrix_matches, win_matrix

__all__ = [
    "BATTLE_COVARIATES",
    "DEMO_BAD_MATCH_ROWS",
    "DEMO_DUPLICATED_GAME_ID",
    "BattleTruth",
    "generate_battles",
    "generate_contests",
    "generate_matches",
    "main",
    "matrix_matches",
    "win_matrix",
    "write_demo_seeds",
]

#: Number of deliberately invalid rows that :func:`write_demo_seeds` injects into
#: ``demo_matches.csv`` (on top of the valid generated games); see its docstring.
DEMO_BAD_MATCH_ROWS = 6

#: ``game_id`` of the valid demo game that the injected duplicate row reuses.
DEMO_DUPLICATED_GAME_ID = 27_500

_INITIAL_ESTIMATE = 1500.0
_MEAN_SKILL = 1500.0
_SECONDS_PER_DAY = 86_400.0
_MICROSECONDS_PER_SECOND = 1_000_000
_EPOCH = datetime(1970, 1, 1)
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


def _to_epoch_microseconds(moment: datetime) -> int:
    """Microseconds since 1970-01-01 of a naive (or UTC-converted aware) datetime."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * _MICROSECONDS_PER_SECOND + delta.microseconds


def _player_names(n_players: int) -> pl.Series:
    """Names ``p000001``, ``p000002``, ... (at least six digits) for player indices 0..n-1."""
    width = max(6, len(str(n_players)))
    return pl.Series([f"p{i:0{width}d}" for i in range(1, n_players + 1)], dtype=pl.Utf8)


def _league_names(n_leagues: int) -> pl.Series:
    """``['main']`` for one league, else ``['league_1', ..., 'league_L']``."""
    if n_leagues == 1:
        return pl.Series(["main"], dtype=pl.Utf8)
    return pl.Series([f"league_{i}" for i in range(1, n_leagues + 1)], dtype=pl.Utf8)


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

    played_at_us = _to_epoch_microseconds(start) + minute_index * (60 * _MICROSECONDS_PER_SECOND)
    names = _player_names(n_players)
    columns = {
        "match_id": pl.Series(np.arange(1, n_matches + 1, dtype=np.int64)),
        "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
        "league": _league_names(n_leagues).gather(league_of_player[player_a]),
        "player_a": names.gather(player_a),
        "player_b": names.gather(player_b),
        "score_a": pl.Series(score_a, dtype=pl.Float64),
    }
    if include_true_skills:
        columns["true_skill_a"] = pl.Series(true_skill_a, dtype=pl.Float64)
        columns["true_skill_b"] = pl.Series(true_skill_b, dtype=pl.Float64)
    return pl.DataFrame(columns)


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
    week_us = 7 * 86_400 * _MICROSECONDS_PER_SECOND
    played_at_us = _to_epoch_microseconds(start) + (contest_index // n_leagues) * week_us
    return pl.DataFrame(
        {
            "contest_id": pl.Series(contest_index + 1, dtype=pl.Int64),
            "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
            "league": _league_names(n_leagues).gather(contest_index % n_leagues),
            "player": _player_names(pool_size).gather(participant),
            "rank": pl.Series(rank, dtype=pl.Int64),
        }
    )


#: Names of the style covariates of :func:`generate_battles`, in column order (more are ``x5_diff``, ...).
BATTLE_COVARIATES = ("len_diff", "md_headers_diff", "bold_diff", "md_lists_diff")
#: Default true coefficients of those covariates, natural (logit) units per unit of the covariate.
_BATTLE_BETA = (0.8, 0.4, 0.2, 0.1)
#: Rating points per natural (logit) unit: ``400 / ln 10``.
_POINTS = POINTS_PER_NATURAL


@dataclass(frozen=True)
class BattleTruth:
    """The known truth behind :func:`generate_battles`'s output.

    Attributes
    ----------
    ratings : polars.DataFrame
        One row per model/player, in index order: ``player`` (Utf8), ``theta`` (Float64, natural units,
        mean zero), ``rating`` (``1500 + 400/ln10 * theta``), ``activity`` (Float64, the relative sampling
        weight of the player as the first of a pair, mean one).
    covariates : tuple of str
        Names of the covariate columns, in order.
    beta : numpy.ndarray
        True coefficients of the covariates in natural (logit) units per unit of the covariate.
    tie_scale : float
        ``kappa`` of the tie model: ``P(tie) = kappa * 4 p (1 - p)``.
    user_corr : float
        Largest correlation of the latent vote noise between two battles of one user.
    """

    ratings: pl.DataFrame
    covariates: tuple[str, ...]
    beta: np.ndarray
    tie_scale: float
    user_corr: float

    @property
    def theta(self) -> np.ndarray:
        """True strengths in natural units (mean zero), by player index."""
        return self.ratings["theta"].to_numpy()

    @property
    def beta_points(self) -> np.ndarray:
        """True coefficients in rating points per unit of the covariate (``400/ln10 * beta``)."""
        return self.beta * _POINTS


def generate_battles(
    n_models: int = 130,
    n_battles: int = 1_500_000,
    seed: int = 0,
    *,
    tie_rate: float = 0.10,
    n_covariates: int = 3,
    beta: Sequence[float] | None = None,
    adaptive: bool = True,
    n_users: int | None = None,
    user_corr: float = 0.3,
    skill_sd: float = 100.0,
    activity_sd: float = 1.0,
    user_activity_sd: float = 2.0,
    match_window: float | None = None,
    style_sd: float = 0.5,
    start: datetime = datetime(2024, 1, 1),
    seconds_between_battles: float = 1.0,
    return_truth: bool = False,
) -> pl.DataFrame | tuple[pl.DataFrame, BattleTruth]:
    """Generate arena-shaped battles (LMArena-like) from a known static Bradley-Terry truth.

    With ``n_covariates=0`` and many players it also makes large plain rating sets (for example
    ``generate_battles(50_000, 1_000_000, n_covariates=0)``); everything is vectorised, so 10M battles
    take seconds.

    Model
    -----
    * Model ``i`` has a fixed strength ``theta_i ~ N(0, skill_sd)`` (drawn in rating points, stored in
      natural units ``theta = points * ln10 / 400``, then centred to mean zero) and an activity weight
      ``exp(N(0, activity_sd))``.
    * Pairs (non-uniform): the first model of a pair is drawn by activity. With ``adaptive`` its opponent
      is the model ``1 + floor(Exp(match_window))`` places above or below it in the true order
      (wrapping around), so near pairs are far more frequent than far ones, as LMArena's sampling favours
      some pairs; without it the opponent is drawn by activity too. Which model is ``player_a`` is a
      fair coin. Every model plays at least twice and the comparison graph is connected: ``n_models - 1``
      battles, at random places in the frame, pair the neighbours of the true order (a chain) and are
      ties, which also makes the plain maximum-likelihood fit finite (a draw links both ways).
    * Covariates: for covariate ``k`` each model has a style level ``m_ki ~ N(0, style_sd)``; a battle's
      value is the normalised difference ``(L_a - L_b) / (L_a + L_b)`` of lognormal per-response amounts
      ``L = exp(m + N(0, 0.5))``, that is ``tanh((m_ka - m_kb) / 2 + N(0, 0.5) / sqrt(2))`` in ``(-1, 1)``.
      Columns are named ``len_diff``, ``md_headers_diff``, ``bold_diff``, ``md_lists_diff``, then
      ``x5_diff``, ...; styles are tied to models, so leaving them out shifts the ratings.
    * Outcome: ``p = sigmoid(theta_a - theta_b + beta . x)``; a tie happens with probability
      ``t = kappa * 4 p (1 - p)``, ``player_a`` wins with ``p - t/2`` and loses with ``1 - p - t/2``, so the
      expected ``score_a`` is exactly ``p`` (a Bradley-Terry fit with ties as half points estimates the
      truth, and ties make the sandwich variance smaller than the model's). ``kappa`` (at most 1/2) is set
      so that the expected tie rate, the chain's ties included, is ``tie_rate`` (lower if out of reach).
    * Users: battle ``g`` has a ``user_id`` drawn by a heavy-tailed lognormal activity over ``n_users``
      users (a few users cast many votes). Each user has a lean ``z ~ N(0, 1)``; the latent normal behind
      the outcome's uniform is ``c z + sqrt(1 - c^2) e`` with loading ``c = sqrt(user_corr) *
      clip(h, -1, 1)``, where ``h`` is the first covariate (length) plus ``+-1`` when the two models are in
      different halves of a fixed random split of the models (sign: ``player_a``'s half). So a user
      consistently favours longer answers, or one half of the models, while every battle's outcome
      probabilities stay exactly as above: a user's battles are correlated, and a sandwich clustered by
      ``user_id`` is wider than the per-battle one (about twice for the length coefficient by default,
      a few to tens of percent for the strengths).
    * ``played_at`` increases by exponential gaps of mean ``seconds_between_battles`` (whole seconds).

    Parameters
    ----------
    n_models : int, default 130
        Number of models (players), at least 2.
    n_battles : int, default 1_500_000
        Number of battles, at least ``n_models - 1``.
    seed : int, default 0
        Seed of the ``PCG64`` generator; equal arguments give identical frames.
    tie_rate : float, default 0.10
        Expected share of ties, in ``[0, 0.5)``.
    n_covariates : int, default 3
        Number of style covariate columns.
    beta : sequence of float, optional
        True covariate coefficients in natural units per unit of the covariate; defaults to the first
        ``n_covariates`` of ``(0.8, 0.4, 0.2, 0.1)`` (0.1 beyond).
    adaptive : bool, default True
        Pair models near in strength far more often (see Model).
    n_users : int, optional
        Number of users; defaults to ``max(1, n_battles // 20)``.
    user_corr : float, default 0.3
        Largest within-user correlation of the latent vote noise, in ``[0, 1]`` (0: independent votes).
    skill_sd : float, default 100.0
        Spread of the true strengths in rating points.
    activity_sd : float, default 1.0
        Log-scale spread of the models' activity weights.
    user_activity_sd : float, default 2.0
        Log-scale spread of the users' activity weights.
    match_window : float, optional
        Mean distance in places of an adaptive pairing; defaults to ``max(2, n_models / 10)``.
    style_sd : float, default 0.5
        Spread of the models' style levels.
    start : datetime, default 2024-01-01 00:00
        Time origin.
    seconds_between_battles : float, default 1.0
        Mean gap between consecutive battles.
    return_truth : bool, default False
        Also return the :class:`BattleTruth`.

    Returns
    -------
    polars.DataFrame, or (polars.DataFrame, BattleTruth) with ``return_truth``
        Columns ``match_id`` (Int64, 1..n), ``played_at`` (Datetime('us'), non-decreasing), ``player_a``,
        ``player_b`` (Utf8, ``p000001``, ...), ``score_a`` (Float64: 1, 0.5 or 0), the covariates
        (Float64), ``user_id`` (Int64, 1..n_users).
    """
    if n_models < 2:
        raise ValueError("n_models must be >= 2")
    if n_battles < n_models - 1:
        raise ValueError("n_battles must be >= n_models - 1 (the chain that connects every model)")
    if not 0.0 <= tie_rate < 0.5:
        raise ValueError("tie_rate must be in [0, 0.5)")
    if n_covariates < 0:
        raise ValueError("n_covariates must be >= 0")
    if beta is None:
        beta = [_BATTLE_BETA[k] if k < len(_BATTLE_BETA) else 0.1 for k in range(n_covariates)]
    beta = np.asarray(beta, dtype=np.float64)
    if beta.shape != (n_covariates,):
        raise ValueError("beta must have n_covariates entries")
    if n_users is None:
        n_users = max(1, n_battles // 20)
    if n_users < 1:
        raise ValueError("n_users must be >= 1")
    if not 0.0 <= user_corr <= 1.0:
        raise ValueError("user_corr must be in [0, 1]")
    if match_window is None:
        match_window = max(2.0, n_models / 10.0)
    if match_window <= 0:
        raise ValueError("match_window must be > 0")
    if seconds_between_battles < 0:
        raise ValueError("seconds_between_battles must be >= 0")
    names = [BATTLE_COVARIATES[k] if k < len(BATTLE_COVARIATES) else f"x{k + 1}_diff" for k in range(n_covariates)]

    rng = np.random.Generator(np.random.PCG64(seed))
    # Per model, per user; the order of the draws is part of the output's definition.
    theta = rng.normal(0.0, skill_sd, n_models) / _POINTS
    theta -= theta.mean()
    activity = np.exp(rng.normal(0.0, activity_sd, n_models))
    activity /= activity.mean()
    style = rng.normal(0.0, style_sd, (n_covariates, n_models))
    group = np.where(rng.random(n_models) < 0.5, 1.0, -1.0)
    user_weight = np.exp(rng.normal(0.0, user_activity_sd, n_users))
    user_lean = rng.standard_normal(n_users)

    # Per battle.
    # Draws by weight: multinomial counts, repeated and shuffled (far faster than inverse-CDF look-ups).
    first = np.repeat(np.arange(n_models, dtype=np.int64), rng.multinomial(n_battles, activity / activity.sum()))
    rng.shuffle(first)
    partner_uniform = rng.random(n_battles)
    upward = rng.random(n_battles) < 0.5
    swap = rng.random(n_battles) < 0.5
    order = np.argsort(theta, kind="stable")  # places in the true order, weakest first
    if adaptive:
        place = np.empty(n_models, dtype=np.int64)
        place[order] = np.arange(n_models, dtype=np.int64)
        distance = 1 + np.floor(-match_window * np.log1p(-partner_uniform)).astype(np.int64)
        distance = 1 + (distance - 1) % (n_models - 1)  # in 1..n-1: never the model itself
        second = order[(place[first] + np.where(upward, distance, -distance)) % n_models]
    else:
        second = np.repeat(np.arange(n_models, dtype=np.int64), rng.multinomial(n_battles, activity / activity.sum()))
        rng.shuffle(second)
        # A model drawn against itself meets a uniformly chosen other one instead.
        other = (first + 1 + np.floor(partner_uniform * (n_models - 1)).astype(np.int64)) % n_models
        second = np.where(second == first, other, second)
    chain = rng.choice(n_battles, n_models - 1, replace=False)
    first[chain] = order[:-1]
    second[chain] = order[1:]
    player_a = np.where(swap, second, first)
    player_b = np.where(swap, first, second)
    del first, second, partner_uniform, upward, swap

    covariates = np.empty((n_covariates, n_battles))
    logit = theta[player_a] - theta[player_b]
    for k in range(n_covariates):
        noise = rng.standard_normal(n_battles) * (0.5 / math.sqrt(2.0))
        covariates[k] = np.tanh(0.5 * (style[k, player_a] - style[k, player_b]) + noise)
        logit += beta[k] * covariates[k]
    user = np.repeat(np.arange(n_users, dtype=np.int64), rng.multinomial(n_battles, user_weight / user_weight.sum()))
    rng.shuffle(user)
    latent = rng.standard_normal(n_battles)
    # The user's lean loads on which side is in the first group and on the first covariate (length).
    loading = 0.5 * (group[player_a] - group[player_b])
    if n_covariates:
        loading += covariates[0]
    loading = math.sqrt(user_corr) * np.clip(loading, -1.0, 1.0)
    latent = loading * user_lean[user] + np.sqrt(1.0 - loading * loading) * latent
    del loading
    gaps = rng.exponential(seconds_between_battles, n_battles)

    p = expit(logit)
    del logit
    spread = 4.0 * p * (1.0 - p)
    # The chain's forced ties count towards tie_rate.
    spread[chain] = 0.0
    tie_scale = min(0.5, max(0.0, tie_rate * n_battles - chain.size) / max(float(spread.sum()), 1e-300))
    tie = tie_scale * spread
    uniform = ndtr(latent)
    loss_below = 1.0 - p - 0.5 * tie
    score_a = np.where(uniform < loss_below, 0.0, np.where(uniform < loss_below + tie, 0.5, 1.0))
    score_a[chain] = 0.5
    del p, spread, tie, uniform, loss_below, latent

    seconds = np.floor(np.cumsum(gaps)).astype(np.int64)
    played_at_us = _to_epoch_microseconds(start) + seconds * _MICROSECONDS_PER_SECOND
    players = _player_names(n_models)
    columns = {
        "match_id": pl.Series(np.arange(1, n_battles + 1, dtype=np.int64)),
        "played_at": pl.Series(played_at_us, dtype=pl.Int64).cast(pl.Datetime("us")),
        "player_a": players.gather(player_a),
        "player_b": players.gather(player_b),
        "score_a": pl.Series(score_a, dtype=pl.Float64),
    }
    for k, name in enumerate(names):
        columns[name] = pl.Series(covariates[k], dtype=pl.Float64)
    columns["user_id"] = pl.Series(user + 1, dtype=pl.Int64)
    frame = pl.DataFrame(columns)
    if not return_truth:
        return frame
    truth = BattleTruth(
        ratings=pl.DataFrame(
            {
                "player": players,
                "theta": pl.Series(theta, dtype=pl.Float64),
                "rating": pl.Series(1500.0 + _POINTS * theta, dtype=pl.Float64),
                "activity": pl.Series(activity, dtype=pl.Float64),
            }
        ),
        covariates=tuple(names),
        beta=beta,
        tie_scale=tie_scale,
        user_corr=float(user_corr),
    )
    return frame, truth


def _demo_matches_raw(matches: pl.DataFrame) -> pl.DataFrame:
    """Turn canonical matches into the raw demo layout (all columns as text or ints)."""
    return matches.select(
        pl.col("match_id").alias("game_id"),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M:%S").alias("played_at"),
        pl.col("league"),
        pl.col("player_a").alias("white"),
        pl.col("player_b").alias("black"),
        pl.col("score_a")
        .replace_strict({1.0: "1-0", 0.0: "0-1", 0.5: "1/2-1/2"}, return_dtype=pl.Utf8)
        .alias("result"),
    )


def _with_injected_bad_rows(raw_matches: pl.DataFrame) -> pl.DataFrame:
    """Insert the ``DEMO_BAD_MATCH_ROWS`` bad rows documented in :func:`write_demo_seeds`."""
    n_valid = raw_matches.height
    # (valid game_id the bad row follows, game_id of the bad row, column overrides)
    bad_rows = [
        (5_000, n_valid + 1, {"black": None}),
        (10_000, n_valid + 2, {"black": "__white__"}),
        (15_000, n_valid + 3, {"result": "2-0"}),
        (20_000, n_valid + 4, {"played_at": None}),
        (25_000, n_valid + 5, {"played_at": "2024-13-45 25:61:00"}),
        (DEMO_DUPLICATED_GAME_ID, DEMO_DUPLICATED_GAME_ID, {"result": "__flip__"}),
    ]
    assert len(bad_rows) == DEMO_BAD_MATCH_ROWS
    flipped_result = {"1-0": "0-1", "0-1": "1-0", "1/2-1/2": "1-0"}

    pieces = []
    previous_game_id = 0
    for after_game_id, bad_game_id, overrides in bad_rows:
        pieces.append(raw_matches.slice(previous_game_id, after_game_id - previous_game_id))
        bad_row = raw_matches.row(after_game_id - 1, named=True)
        bad_row["game_id"] = bad_game_id
        for column, value in overrides.items():
            if value == "__white__":
                value = bad_row["white"]
            elif value == "__flip__":
                value = flipped_result[bad_row[column]]
            bad_row[column] = value
        pieces.append(pl.DataFrame([bad_row], schema=raw_matches.schema))
        previous_game_id = after_game_id
    pieces.append(raw_matches.slice(previous_game_id))
    return pl.concat(pieces)


def write_demo_seeds(directory: str | Path) -> None:
    """Write the two demo seed CSVs bundled with the dbt package into ``directory``.

    ``demo_matches.csv`` holds ``generate_matches(30_000, 1_000, n_leagues=2,
    seed=2024)`` in a raw layout: ``game_id, played_at, league, white, black,
    result`` with ``game_id = match_id``, ``played_at`` as text
    ``YYYY-MM-DD HH:MM:SS``, ``white = player_a`` (first mover), ``black =
    player_b`` and ``result`` one of ``'1-0'``, ``'0-1'``, ``'1/2-1/2'``.

    Rows are in ``game_id`` order, except for ``DEMO_BAD_MATCH_ROWS`` (6)
    injected invalid rows. Each is a copy of the valid game it directly
    follows, with one field broken:

    ==========  ===========  ==============================================
    follows     game_id      what is wrong
    ==========  ===========  ==============================================
    game 5000   30001        ``black`` is empty
    game 10000  30002        self-match: ``black`` equals ``white``
    game 15000  30003        ``result`` is ``'2-0'``
    game 20000  30004        ``played_at`` is empty
    game 25000  30005        ``played_at`` is ``'2024-13-45 25:61:00'``
    game 27500  27500        duplicate ``game_id`` (``DEMO_DUPLICATED_GAME_ID``)
                             with the result changed
    ==========  ===========  ==============================================

    The duplicate comes right after the valid game 27500 in the file; the
    valid rows alone (game_id 1..30000, first occurrence) are exactly the
    generated matches.

    ``demo_contest_results.csv`` holds ``generate_contests(40, 200, 1_000,
    seed=2024)`` as ``contest_id, played_at, league, handle, place`` (``handle
    = player``, ``place = rank``, ``played_at`` as text); it has no bad rows.

    Parameters
    ----------
    directory : str or pathlib.Path
        Target directory; created if missing. Existing files are overwritten.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)

    matches = generate_matches(30_000, 1_000, n_leagues=2, seed=2024)
    raw_matches = _with_injected_bad_rows(_demo_matches_raw(matches))
    raw_matches.write_csv(directory / "demo_matches.csv")

    contests = generate_contests(40, 200, 1_000, seed=2024)
    raw_contests = contests.select(
        pl.col("contest_id"),
        pl.col("played_at").dt.strftime("%Y-%m-%d %H:%M:%S"),
        pl.col("league"),
        pl.col("player").alias("handle"),
        pl.col("rank").alias("place"),
    )
    raw_contests.write_csv(directory / "demo_contest_results.csv")


def _write_frame(frame: pl.DataFrame, out: Path) -> None:
    """Write ``frame`` as CSV or Parquet depending on the extension of ``out``."""
    suffix = out.suffix.lower()
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        frame.write_csv(out)
    elif suffix == ".parquet":
        frame.write_parquet(out)
    else:
        raise ValueError(f"unsupported output extension {out.suffix!r}; use .csv or .parquet")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m duckrate.synthetic",
        description="Generate deterministic synthetic rating data (CSV or Parquet by extension).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    matches = commands.add_parser("matches", help="two-player games with draws")
    matches.add_argument("--n-matches", type=int, required=True)
    matches.add_argument("--n-players", type=int, required=True)
    matches.add_argument("--n-leagues", type=int, default=1)
    matches.add_argument("--seed", type=int, default=0)
    matches.add_argument("--out", type=Path, required=True)

    contests = commands.add_parser("contests", help="ranked multi-player contests")
    contests.add_argument("--n-contests", type=int, required=True)
    contests.add_argument("--players-per-contest", type=int, required=True)
    contests.add_argument("--pool-size", type=int, required=True)
    contests.add_argument("--n-leagues", type=int, default=1)
    contests.add_argument("--seed", type=int, default=0)
    contests.add_argument("--out", type=Path, required=True)

    matrix = commands.add_parser("matrix", help="games drawn from a known win matrix (Tang, Wang & Jin, Appendix F)")
    matrix.add_argument("--kind", choices=WIN_MATRIX_KINDS, required=True)
    matrix.add_argument("--final-kind", choices=WIN_MATRIX_KINDS, help="drift linearly towards a second matrix")
    matrix.add_argument("--n-players", type=int, required=True)
    matrix.add_argument("--n-matches", type=int, required=True)
    matrix.add_argument("--matchmaking", choices=MATCHMAKING, default="uniform")
    matrix.add_argument("--seed", type=int, default=0)
    matrix.add_argument("--out", type=Path, required=True)

    battles = commands.add_parser("battles", help="arena-shaped battles with style covariates and users")
    battles.add_argument("--n-models", type=int, default=130)
    battles.add_argument("--n-battles", type=int, default=1_500_000)
    battles.add_argument("--n-covariates", type=int, default=3)
    battles.add_argument("--tie-rate", type=float, default=0.10)
    battles.add_argument("--uniform-pairs", action="store_true", help="pairs by activity only (not adaptive)")
    battles.add_argument("--seed", type=int, default=0)
    battles.add_argument("--out", type=Path, required=True)

    demo = commands.add_parser("demo-seeds", help="write the bundled demo seed CSVs")
    demo.add_argument("--dir", type=Path, required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "matches":
            frame = generate_matches(args.n_matches, args.n_players, args.n_leagues, args.seed)
            _write_frame(frame, args.out)
        elif args.command == "contests":
            frame = generate_contests(
                args.n_contests,
                args.players_per_contest,
                args.pool_size,
                args.seed,
                n_leagues=args.n_leagues,
            )
            _write_frame(frame, args.out)
        elif args.command == "battles":
            frame = generate_battles(
                args.n_models,
                args.n_battles,
                args.seed,
                tie_rate=args.tie_rate,
                n_covariates=args.n_covariates,
                adaptive=not args.uniform_pairs,
            )
            _write_frame(frame, args.out)
        elif args.command == "matrix":
            start = win_matrix(args.kind, args.n_players, args.seed)
            final = None if args.final_kind is None else win_matrix(args.final_kind, args.n_players, args.seed + 1)
            frame = matrix_matches(start, args.n_matches, args.seed, args.matchmaking, final_matrix=final)
            _write_frame(frame, args.out)
        else:
            write_demo_seeds(args.dir)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
