"""The marts' Python API over Polars frames (``duckrate.leaderboard(replay)`` etc.): the replay frame handed
to an in-process DuckDB connection and the mart's table macro run over it, so the Python API computes
exactly what the SQL macros and the dbt models compute (the one definition of :mod:`duckrate.marts`).

The call's parameters and the frame's columns are checked in Python first (a bad one raises
:class:`~duckrate.DuckrateInputError` naming it); a bad value the query meets (a NULL or out-of-range
forecast, a NULL ``seq``) raises one with the macro's message.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping

import duckdb
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.replay_rows import GROUP_KEYS, require_columns
from duckrate.marts import mart_named, required_columns
from duckrate.marts.parameters import BIN_WIDTH, BINS, MAX_SD, MIN_GAMES, POINTS, WARMUP, checked_values

_VIEW = "duckrate_python_replay"
# A column of the frame that holds only nulls (Polars type Null) is typed as its mart input: present, so a
# NULL forecast or seq is reported as such (DuckDB would read an untyped NULL column as a missing one).
_NULL_COLUMN_TYPES = {"seq": pl.Int64, "text": pl.Utf8, "number": pl.Float64, "forecast": pl.Float64}
_LOCK = threading.Lock()
_CONNECTION: list[duckdb.DuckDBPyConnection] = []


def _connection() -> duckdb.DuckDBPyConnection:
    """The module's in-process DuckDB connection with duckrate registered (made on first use)."""
    if not _CONNECTION:
        from duckrate.sql.registry import register

        _CONNECTION.append(register(duckdb.connect()))
    return _CONNECTION[0]


def _literal(value) -> str:
    """A checked parameter value as a DuckDB literal."""
    if value is None:
        return "NULL"
    if isinstance(value, Mapping):
        return "MAP {" + ", ".join(f"{_literal(key)}: {_literal(item)}" for key, item in value.items()) + "}"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return f"CAST('{value}' AS DOUBLE)"
    return f"CAST('{float(value)!r}' AS DOUBLE)"


def _error_message(error: duckdb.Error, name: str) -> str | None:
    """The mart's own message in a DuckDB error (``<mart>: ...``), without DuckDB's prefix; None if none."""
    text = str(error)
    start = text.find(f"{name}: ")
    return text[start:].strip() if start >= 0 else None


def run_mart(name: str, replay: pl.DataFrame, **given) -> pl.DataFrame:
    """The rows of the mart ``name`` over the replay frame ``replay`` with the parameters ``given``, as its
    macro computes them (sorted as the macro sorts them)."""
    mart = mart_named(name)
    values = checked_values(mart, given)
    keys = ("league",) if mart.contest else GROUP_KEYS
    needed = dict.fromkeys((*keys, *required_columns(mart, values)))
    require_columns(replay, needed, caller=name)
    kinds = {"league": "text", "system": "text", **{column.name: column.kind for column in mart.inputs}}
    replay = replay.with_columns(
        pl.col(name).cast(_NULL_COLUMN_TYPES[kinds[name]])
        for name, kind in replay.schema.items()
        if kind == pl.Null and kinds.get(name) in _NULL_COLUMN_TYPES
    )
    arguments = "".join(f", {key} := {_literal(value)}" for key, value in values.items())
    with _LOCK:
        con = _connection()
        con.register(_VIEW, replay)
        try:
            return con.sql(f"SELECT * FROM {name}('{_VIEW}'{arguments})").pl()
        except duckdb.Error as error:
            message = _error_message(error, name)
            if message is None:
                raise
            raise DuckrateInputError(message) from error
        finally:
            con.unregister(_VIEW)


def leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Rank every player by their rating after their last match (the ``leaderboard`` macro).

    ``replay``: one row per match with ``league``, ``system``, ``seq``, ``played_at``, ``player_a``,
    ``player_b``, ``rating_a_after``, ``rating_b_after``, ``sd_a_after``, ``sd_b_after``; row order does
    not matter, ``seq`` orders the matches within each ``(league, system)`` (assumed unique there).

    Returns one row per ``(league, system, player)``: ``league, system, player, rank, rating, sd, lower,
    upper, games, last_played_at, rank_upper, rank_lower, tier``. ``rating``/``sd`` are the player's
    ``rating_*_after``/``sd_*_after`` of their match with the largest ``seq``; ``lower``/``upper`` =
    rating ∓ 1.959963984540054·sd (95%), null when ``sd`` is; ``games`` = matches played;
    ``last_played_at`` = that match's ``played_at``; ``rank`` 1 = highest rating, ordinal, ties by player
    name, null ratings last; ``rank_upper``/``rank_lower``/``tier``: :mod:`duckrate.core.ranks`.
    Sorted by league (null first), system, rank. Raises ``DuckrateInputError`` for a missing column or a
    null ``seq``.
    """
    return run_mart("leaderboard", replay)


def calibration_bins(replay: pl.DataFrame, bins: int = BINS.default) -> pl.DataFrame:
    """Reliability table (the ``calibration_bins`` macro): observed mean score per equal-width bin of the
    forecast.

    ``replay``: ``league``, ``system``, ``expected_a`` and ``score_a`` (both non-null, in [0, 1]); ``bins``
    >= 1 equal-width bins over [0, 1]. Returns ``league, system, bin, n, mean_expected, mean_score, lower,
    upper``, one row per non-empty bin: ``bin`` (1..bins) = ``floor(expected_a · bins) + 1``, 1.0 in the
    last; the means from exact sums; ``lower``/``upper`` the 95% Wilson interval of ``mean_score`` over
    ``n`` trials (conservative with draws, which score 0.5). Sorted by league (null first), system, bin.
    """
    return run_mart("calibration_bins", replay, bins=bins)


def calibration_summary(
    replay: pl.DataFrame,
    *,
    min_games: int = MIN_GAMES.default,
    max_sd: float | Mapping[str, float] | None = MAX_SD.default,
    warmup: float = WARMUP.default,
) -> pl.DataFrame:
    """Scoring rules of the forecasts per ``(league, system)`` (the ``calibration_summary`` macro).

    ``replay``: ``league``, ``system``, ``seq``, ``player_a``, ``player_b``, ``expected_a``, ``score_a``
    (and ``sd_a_before``, ``sd_b_before`` with ``max_sd``). A match is *established* when both players had
    at least ``min_games`` earlier matches (by ``seq``, counting those dropped by ``warmup``) and, with
    ``max_sd`` (a number, or a mapping from system to number; systems it does not name have no bound),
    both sds before the match at most that bound (a null sd does not exclude it). ``warmup`` in [0, 1):
    the first ``floor(warmup · T)`` of each group's T matches (in seq order) are not scored.

    Returns ``league, system, n, log_loss, brier, accuracy, n_established, log_loss_established``:
    ``log_loss`` the mean of ``-(s ln p + (1 - s) ln(1 - p))`` (p clipped to [1e-15, 1 - 1e-15]),
    ``brier`` of ``(p - s)²``, ``accuracy`` over decisive matches (p = 0.5 counts half; null without
    any), the established matches' count and mean log loss (null when none). Sorted by league (null
    first), system.
    """
    return run_mart("calibration_summary", replay, min_games=min_games, max_sd=max_sd, warmup=warmup)


def loss_curve(replay: pl.DataFrame, points: int = POINTS.default) -> pl.DataFrame:
    """Running mean log loss of the forecasts in replay order (the ``loss_curve`` macro; Tang, Wang & Jin,
    Figure 5).

    ``replay``: ``league``, ``system``, ``seq``, ``player_a``, ``player_b``, ``expected_a``, ``score_a``.
    Per ``(league, system)`` with T matches and N distinct players: the mean log loss of the first t
    matches at ``points`` checkpoints t evenly spaced over 1..T (every t when T <= points; ``points = 1``:
    only T), and ``t / N``. Returns ``league, system, t, t_over_n, mean_log_loss``, sorted by league (null
    first), system, t.
    """
    return run_mart("loss_curve", replay, points=points)


def loss_by_gap(replay: pl.DataFrame, bin_width: float | None = BIN_WIDTH.default) -> pl.DataFrame:
    """Mean log loss and share of the total log loss per bin of the rating difference (the ``loss_by_gap``
    macro; Cowan, Figure 5.1).

    ``replay``: ``league``, ``system``, ``rating_a_before``, ``rating_b_before``, ``expected_a``,
    ``score_a``. ``bin_width``: the width of the bins of ``gap = rating_a_before - rating_b_before`` on the
    system's own scale; None: 50, or 1 for ``trueskill``. Returns ``league, system, gap_bin, n,
    mean_log_loss, share_of_total_loss``, ``gap_bin = floor(gap / w) · w`` (null when a rating is null or
    NaN), sorted by league, system, gap_bin (nulls first).
    """
    return run_mart("loss_by_gap", replay, bin_width=bin_width)


def contest_leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Every player's rating after their last contest, ranked per ``(league, system)`` (the
    ``contest_leaderboard`` macro).

    ``replay``: a contest replay with ``league``, ``seq``, ``played_at``, ``player``, ``rating_after``,
    ``sd_after`` (``system`` optional). Returns ``league, system, player, rank, rating, sd, lower, upper,
    contests, last_played_at, rank_upper, rank_lower, tier``: rating/sd of the player's contest with the
    largest ``seq``, rating ∓ 1.96·sd, contests played, rank 1 = highest rating (ties by player name),
    sorted by league (null first), system, rank.
    """
    return run_mart("contest_leaderboard", replay)


def team_leaderboard(replay: pl.DataFrame) -> pl.DataFrame:
    """Every player's rating after their last team match, ranked per ``(league, system)`` (the
    ``team_leaderboard`` macro).

    ``replay``: a team replay with ``league``, ``seq``, ``played_at``, ``player``, ``rating_after``,
    ``sd_after`` and optionally ``system``. Returns ``league, system, player, rank, rating, sd, ordinal, lower,
    upper, matches, last_played_at, rank_upper, rank_lower, tier``: rating/sd of the player's match with the
    largest ``seq``, ordinal = rating - 3·sd (openskill's display rating), rating ∓ 1.96·sd, matches played,
    rank 1 = highest rating (ties by player name), and the interval ranks and tier."""
    return run_mart("team_leaderboard", replay)


def team_match_forecasts(replay: pl.DataFrame) -> pl.DataFrame:
    """The two-team matches of a team replay as two-player replay rows (the ``team_match_forecasts`` macro), which
    :func:`calibration_bins`, :func:`calibration_summary`, :func:`loss_curve` and :func:`loss_by_gap` score.

    ``replay``: a team replay with ``league``, ``seq``, ``match_id``, ``played_at``, ``team``, ``rank``,
    ``p_team_win``, ``rating_before``, ``sd_before`` and optionally ``system``. Returns ``league, system, seq,
    match_id, played_at, player_a, player_b, score_a, expected_a, rating_a_before, rating_b_before,
    sd_a_before, sd_b_before``: team A is the team whose key sorts first as text; ``score_a`` 1, ½ or 0 as A
    placed; ``expected_a`` = A's ``p_team_win`` plus half the probability that neither team wins; the teams'
    summed ratings and the root of their summed variances."""
    return run_mart("team_match_forecasts", replay)
