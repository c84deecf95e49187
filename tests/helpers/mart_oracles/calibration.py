"""The oracle of ``calibration_bins`` and ``calibration_summary``: Polars, independent of the engines' SQL
(the reliability bins and the scoring-rule summary, summed in floats in seq order)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real

import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.replay_rows import (
    GROUP_KEYS,
    PLAYER_FORECAST_COLUMNS,
    Z_95,
    log_loss_expr,
    require_columns,
    require_forecasts,
)
from duckrate.marts.parameters import BINS, MAX_SD, MIN_GAMES, WARMUP

CALIBRATION_BINS_COLUMNS: tuple[str, ...] = (
    "league",
    "system",
    "bin",
    "n",
    "mean_expected",
    "mean_score",
    "lower",
    "upper",
)
"""Columns of the frame :func:`calibration_bins` returns, in order."""

CALIBRATION_SUMMARY_COLUMNS: tuple[str, ...] = (
    "league",
    "system",
    "n",
    "log_loss",
    "brier",
    "accuracy",
    "n_established",
    "log_loss_established",
)
"""Columns of the frame :func:`calibration_summary` returns, in order."""

_FORECAST_COLUMNS: tuple[str, ...] = ("league", "system", "expected_a", "score_a")
_SUMMARY_COLUMNS: tuple[str, ...] = PLAYER_FORECAST_COLUMNS
_SD_BEFORE_COLUMNS: tuple[str, ...] = ("sd_a_before", "sd_b_before")


def _wilson_bounds(proportion: pl.Expr, trials: pl.Expr, z: float = Z_95) -> tuple[pl.Expr, pl.Expr]:
    """Lower and upper Wilson score interval bounds for ``proportion`` over ``trials``."""
    z_squared = z * z
    n = trials.cast(pl.Float64)
    denominator = 1.0 + z_squared / n
    centre = (proportion + z_squared / (2.0 * n)) / denominator
    half_width = z * (proportion * (1.0 - proportion) / n + z_squared / (4.0 * n * n)).sqrt() / denominator
    return (centre - half_width).clip(0.0, 1.0), (centre + half_width).clip(0.0, 1.0)


def calibration_bins(replay: pl.DataFrame, bins: int = BINS.default) -> pl.DataFrame:
    """Reliability table: observed mean score per equal-width bin of the forecast.

    Parameters
    ----------
    replay : pl.DataFrame
        One row per match with at least ``league``, ``system``,
        ``expected_a`` and ``score_a``; both of the latter non-null and in
        ``[0, 1]``.  A null ``league`` is one unnamed league.
    bins : int, default 10
        Number of equal-width bins over ``[0, 1]``; at least 1.

    Returns
    -------
    pl.DataFrame
        Columns ``league, system, bin, n, mean_expected, mean_score, lower,
        upper``, one row per non-empty bin, sorted by ``league`` (null
        first), ``system``, ``bin``:

        - ``bin`` (Int64, 1..bins): ``floor(expected_a * bins) + 1``, with
          ``expected_a == 1.0`` put in the last bin;
        - ``n`` (Int64): matches in the bin;
        - ``mean_expected`` / ``mean_score``: means of ``expected_a`` and
          ``score_a`` in the bin;
        - ``lower`` / ``upper``: 95% Wilson score interval for
          ``mean_score``, treating it as a proportion over ``n`` trials.

    Raises
    ------
    ValueError
        If a required column is missing, ``bins`` is not a positive integer,
        or ``expected_a`` / ``score_a`` hold nulls or values outside ``[0, 1]``.

    Notes
    -----
    Draws count as a score of 0.5.  A score in ``[0, 1]`` with mean ``m``
    has variance at most ``m (1 - m)``, the Bernoulli variance the Wilson
    interval assumes, so with draws the interval is conservative (too wide).
    """
    if isinstance(bins, bool) or not isinstance(bins, Integral) or bins < 1:
        raise DuckrateInputError(f"calibration_bins: expected bins to be a positive integer, got {bins!r}")
    require_columns(replay, _FORECAST_COLUMNS, caller="calibration_bins")
    require_forecasts(replay, caller="calibration_bins")
    bins = int(bins)
    expected = pl.col("expected_a").cast(pl.Float64)
    bin_of_forecast = ((expected * bins).floor().cast(pl.Int64).clip(0, bins - 1) + 1).alias("bin")
    # Sorted by the summed values themselves, so the float sums (and means) are the same bit for bit
    # whatever order the rows arrive in (e.g. from a parallel DuckDB scan).
    per_bin = (
        replay.sort([*GROUP_KEYS, "expected_a", "score_a"], nulls_last=False)
        .lazy()
        .group_by(*GROUP_KEYS, bin_of_forecast)
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            expected.mean().alias("mean_expected"),
            pl.col("score_a").cast(pl.Float64).mean().alias("mean_score"),
        )
        .collect(engine="in-memory")  # the streaming engine sums floats in a timing-dependent order
    )
    lower, upper = _wilson_bounds(pl.col("mean_score"), pl.col("n"))
    return (
        per_bin.with_columns(lower.alias("lower"), upper.alias("upper"))
        .sort([*GROUP_KEYS, "bin"], nulls_last=False)
        .select(CALIBRATION_BINS_COLUMNS)
    )


def _valid_max_sd(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, Real) and not math.isnan(value) and float(value) >= 0


def _validate_summary_options(min_games: int, max_sd, warmup: float) -> None:
    """Raise when the options of :func:`calibration_summary` are out of range."""
    if isinstance(min_games, bool) or not isinstance(min_games, Integral) or min_games < 0:
        raise DuckrateInputError(
            f"calibration_summary: expected min_games to be a non-negative integer, got {min_games!r}"
        )
    if isinstance(max_sd, Mapping):
        bad = {
            system: value for system, value in max_sd.items() if not isinstance(system, str) or not _valid_max_sd(value)
        }
        if bad:
            raise DuckrateInputError(
                f"calibration_summary: expected max_sd to map system names to non-negative numbers, got {bad!r}"
            )
    elif max_sd is not None and not _valid_max_sd(max_sd):
        raise DuckrateInputError(
            "calibration_summary: expected max_sd to be None, a non-negative number, or a mapping "
            f"from system to such a number, got {max_sd!r}"
        )
    if isinstance(warmup, bool) or not isinstance(warmup, Real) or math.isnan(warmup) or not 0.0 <= warmup < 1.0:
        raise DuckrateInputError(f"calibration_summary: expected warmup to be a share in [0, 1), got {warmup!r}")


def _earlier_games(replay: pl.DataFrame) -> pl.DataFrame:
    """Add ``earlier_games_a`` / ``earlier_games_b``: each player's earlier matches.

    Both sides are stacked into one long frame (A rows first, then B rows,
    in the replay's row order) so that a player's matches as A and as B are
    counted together; the count is the player's 0-based position in ``seq``
    order within their ``(league, system)``.  Window expressions keep the
    row order, so the two halves of the result line up with the replay rows.
    """
    appearances = pl.concat(
        [replay.select(*GROUP_KEYS, "seq", pl.col(f"player_{side}").alias("player")) for side in ("a", "b")],
        how="vertical",
    )
    earlier = appearances.select(
        pl.col("seq").rank("ordinal").over([*GROUP_KEYS, "player"]).cast(pl.Int64) - 1
    ).to_series()
    return replay.with_columns(
        earlier.slice(0, replay.height).alias("earlier_games_a"),
        earlier.slice(replay.height, replay.height).alias("earlier_games_b"),
    )


def calibration_summary(
    replay: pl.DataFrame,
    *,
    min_games: int = MIN_GAMES.default,
    max_sd: float | Mapping[str, float] | None = MAX_SD.default,
    warmup: float = WARMUP.default,
) -> pl.DataFrame:
    """Scoring rules of the forecasts per ``(league, system)``.

    Parameters
    ----------
    replay : pl.DataFrame
        One row per match with at least ``league``, ``system``, ``seq``,
        ``player_a``, ``player_b``, ``expected_a``, ``score_a`` (and
        ``sd_a_before``, ``sd_b_before`` when ``max_sd`` is given).  Row
        order does not matter; ``seq`` orders the matches.
    min_games : int, default 10
        A match is *established* when both players had at least this many
        earlier matches (by ``seq``) in the same ``(league, system)``,
        counting matches dropped by ``warmup`` too.
    max_sd : float, mapping of system to float, or None, default None
        When given, an established match also needs ``sd_a_before`` and
        ``sd_b_before`` at most ``max_sd``; a null sd (systems without
        uncertainty, such as Elo) does not exclude the match. A mapping sets
        the bound per system (sds are on each system's own scale: TrueSkill's
        σ is not Glicko's RD), and systems it does not name use ``min_games``
        alone; e.g. ``{"chance": 70}`` is the games-of-chance paper's filter
        (both players' variance below 70², display scale).
    warmup : float, default 0.0
        Share in ``[0, 1)`` of each ``(league, system)`` to drop from the
        start (in ``seq`` order) before scoring: the first
        ``floor(warmup * T)`` of its ``T`` matches.

    Returns
    -------
    pl.DataFrame
        One row per ``(league, system)``, sorted by ``league`` (null first)
        and ``system``, with columns:

        - ``n`` (Int64): matches scored (after the warmup);
        - ``log_loss``: mean of ``-(s ln p + (1 - s) ln(1 - p))`` with
          ``s = score_a`` (draws as the soft target 0.5) and ``p =
          expected_a`` clipped to ``[1e-15, 1 - 1e-15]``;
        - ``brier``: mean of ``(p - s)**2``;
        - ``accuracy``: over decisive matches (``s`` 0 or 1) only, the share
          where ``p > 0.5`` and A won or ``p < 0.5`` and A lost, with
          ``p == 0.5`` counting one half; null without decisive matches;
        - ``n_established`` (Int64) and ``log_loss_established``: count and
          mean log loss of the established matches (null when none).

    Raises
    ------
    ValueError
        If a required column is missing, an option is out of range, or
        ``expected_a`` / ``score_a`` hold nulls or values outside ``[0, 1]``.
    """
    _validate_summary_options(min_games, max_sd, warmup)
    needed = _SUMMARY_COLUMNS + (_SD_BEFORE_COLUMNS if max_sd is not None else ())
    require_columns(replay, needed, caller="calibration_summary")
    require_forecasts(replay, caller="calibration_summary")

    # Window expressions run eagerly here: on large frames they are several
    # times faster than inside a lazy query.
    # In seq order, so the float sums below do not depend on the order the rows arrive in.
    ordered = replay.select(needed).sort([*GROUP_KEYS, "seq"], nulls_last=False)
    matches = _earlier_games(ordered).drop("player_a", "player_b")
    if warmup > 0.0:
        position = pl.col("seq").rank("ordinal").over(GROUP_KEYS)
        dropped = (pl.len().over(GROUP_KEYS).cast(pl.Float64) * warmup).floor()
        matches = matches.filter(position > dropped)

    established = (pl.col("earlier_games_a") >= min_games) & (pl.col("earlier_games_b") >= min_games)
    if max_sd is not None:
        if isinstance(max_sd, Mapping):
            bound = pl.col("system").replace_strict(
                {system: float(value) for system, value in max_sd.items()}, default=None, return_dtype=pl.Float64
            )
        else:
            bound = pl.lit(float(max_sd))
        for column in _SD_BEFORE_COLUMNS:
            established = established & (
                bound.is_null() | pl.col(column).is_null() | (pl.col(column).cast(pl.Float64) <= bound)
            )

    p = pl.col("expected_a").cast(pl.Float64)
    s = pl.col("score_a").cast(pl.Float64)
    decisive = (s == 0.0) | (s == 1.0)
    # Null for draws and other fractional scores, so the mean runs over decisive matches.
    correct = pl.when(decisive & (p > 0.5)).then(s).when(decisive & (p < 0.5)).then(1.0 - s).when(decisive).then(0.5)
    log_loss = pl.col("_log_loss")
    summary = (
        matches.lazy()
        .with_columns(log_loss_expr().alias("_log_loss"), established.alias("_established"))
        .group_by(*GROUP_KEYS)
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            log_loss.mean().alias("log_loss"),
            ((p - s) ** 2).mean().alias("brier"),
            correct.mean().alias("accuracy"),
            pl.col("_established").sum().cast(pl.Int64).alias("n_established"),
            pl.when(pl.col("_established")).then(log_loss).mean().alias("log_loss_established"),
        )
        .collect(engine="in-memory")  # the streaming engine sums floats in a timing-dependent order
    )
    return summary.sort(list(GROUP_KEYS), nulls_last=False).select(CALIBRATION_SUMMARY_COLUMNS)
