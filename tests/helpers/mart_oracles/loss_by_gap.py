"""The oracle of ``loss_by_gap``, in Polars, independent of the engines' SQL: log loss by rating difference (Cowan, paired comparisons for games of chance, Figure 5.1).

The forecast's rating difference ``gap = rating_a_before - rating_b_before`` (signed, on each system's own
scale: A is the replay's first player) is cut into equal-width bins; per ``(league, system)`` and bin the
number of matches, their mean log loss, and the bin's share of the group's summed log loss.
"""

from __future__ import annotations

import math
from numbers import Real

import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.replay_rows import GROUP_KEYS, log_loss_expr, require_columns, require_forecasts
from duckrate.marts.parameters import BIN_WIDTH, DEFAULT_BIN_WIDTH, system_bin_widths

LOSS_BY_GAP_INPUT_COLUMNS: tuple[str, ...] = (
    *GROUP_KEYS,
    "rating_a_before",
    "rating_b_before",
    "expected_a",
    "score_a",
)
"""Replay columns that :func:`loss_by_gap` reads."""

LOSS_BY_GAP_COLUMNS: tuple[str, ...] = ("league", "system", "gap_bin", "n", "mean_log_loss", "share_of_total_loss")
"""Columns of the frame :func:`loss_by_gap` returns, in order."""


def _check_bin_width(bin_width) -> float | None:
    if bin_width is None:
        return None
    if (
        isinstance(bin_width, bool)
        or not isinstance(bin_width, Real)
        or not (math.isfinite(bin_width) and bin_width > 0)
    ):
        raise DuckrateInputError(f"loss_by_gap: parameter bin_width = {bin_width!r}; expected {BIN_WIDTH.expected}")
    return float(bin_width)


def loss_by_gap(replay: pl.DataFrame, bin_width: float | None = BIN_WIDTH.default) -> pl.DataFrame:
    """Mean log loss and share of the total log loss per bin of the rating difference.

    Parameters
    ----------
    replay : pl.DataFrame
        One row per match with at least ``league``, ``system``,
        ``rating_a_before``, ``rating_b_before``, ``expected_a`` and
        ``score_a``.
    bin_width : float or None, default None
        Width of the equal-width bins of ``gap = rating_a_before -
        rating_b_before``, on the system's own rating scale. None: 50 rating
        points, or 1 for the system ``trueskill`` (its μ scale).

    Returns
    -------
    pl.DataFrame
        One row per ``(league, system, gap_bin)``, sorted by those (nulls
        first), with ``gap_bin`` = ``floor(gap / w) * w`` (Float64: the lower
        edge of the bin ``[gap_bin, gap_bin + w)``; null when either rating
        is null or NaN), ``n`` (Int64), ``mean_log_loss`` (the log loss of
        :func:`calibration_summary`, averaged over the bin) and
        ``share_of_total_loss`` (the bin's summed log loss over the group's;
        the shares of a group add up to 1).

    Raises
    ------
    ValueError
        If a required column is missing, ``bin_width`` is not a positive
        number, or ``expected_a`` / ``score_a`` hold nulls or values outside
        ``[0, 1]``.
    """
    width = _check_bin_width(bin_width)
    require_columns(replay, LOSS_BY_GAP_INPUT_COLUMNS, caller="loss_by_gap")
    require_forecasts(replay, caller="loss_by_gap")
    if width is None:
        widths = (
            pl.col("system")
            .cast(pl.Utf8)
            .replace_strict(system_bin_widths(), default=DEFAULT_BIN_WIDTH, return_dtype=pl.Float64)
        )
    else:
        widths = pl.lit(width, pl.Float64)
    gap = pl.col("rating_a_before").cast(pl.Float64) - pl.col("rating_b_before").cast(pl.Float64)
    gap = pl.when(gap.is_nan()).then(None).otherwise(gap)
    binned = (
        replay.lazy()
        .select(
            *GROUP_KEYS,
            ((gap / widths).floor() * widths).alias("gap_bin"),
            log_loss_expr().alias("_log_loss"),
        )
        .group_by(*GROUP_KEYS, "gap_bin")
        .agg(pl.len().cast(pl.Int64).alias("n"), pl.col("_log_loss").sum().alias("_total"))
        .collect(engine="in-memory")
    )
    group_total = pl.col("_total").sum().over(list(GROUP_KEYS))
    return (
        binned.with_columns(
            (pl.col("_total") / pl.col("n")).alias("mean_log_loss"),
            pl.when(group_total > 0).then(pl.col("_total") / group_total).alias("share_of_total_loss"),
        )
        .sort([*GROUP_KEYS, "gap_bin"], nulls_last=False)
        .select(LOSS_BY_GAP_COLUMNS)
    )
