"""The oracle of ``loss_curve``: the cumulative mean log loss along a rating replay (Tang, Wang & Jin,
Figure 5), in Polars, independent of the engines' SQL."""

from __future__ import annotations

from numbers import Integral

import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.replay_rows import (
    GROUP_KEYS,
    PLAYER_FORECAST_COLUMNS,
    log_loss_expr,
    require_columns,
    require_forecasts,
)
from duckrate.marts.parameters import POINTS

LOSS_CURVE_INPUT_COLUMNS: tuple[str, ...] = PLAYER_FORECAST_COLUMNS
"""Replay columns that :func:`loss_curve` reads."""

LOSS_CURVE_COLUMNS: tuple[str, ...] = ("league", "system", "t", "t_over_n", "mean_log_loss")
"""Columns of the frame :func:`loss_curve` returns, in order."""


def _checkpoint_steps(points: int) -> pl.Expr:
    """Checkpoint steps ``t`` (Int64, ascending) of one ``(league, system)`` group.

    Meant for a ``group_by(...).agg`` context, where ``pl.len()`` is the
    group's number of matches ``T``.  With ``T <= points`` every step
    ``1..T``; otherwise ``t_k = 1 + round((T - 1) * k / (points - 1))`` for
    ``k = 0 .. points - 1`` (halves rounded up, exact integer arithmetic):
    evenly spaced from 1 to ``T``, both included, and distinct because the
    spacing exceeds one step.  ``points == 1`` gives only ``T``.
    """
    total = pl.len().cast(pl.Int64)
    if points == 1:
        return pl.int_range(total, total + 1, dtype=pl.Int64)
    k = pl.int_range(0, pl.min_horizontal(total, pl.lit(points, pl.Int64)), dtype=pl.Int64)
    spread = 1 + (2 * (total - 1) * k + (points - 1)) // (2 * (points - 1))
    return pl.when(total <= points).then(k + 1).otherwise(spread)


def loss_curve(replay: pl.DataFrame, points: int = POINTS.default) -> pl.DataFrame:
    """Running mean log loss of the forecasts, in replay order.

    For each ``(league, system)`` with ``T`` matches and ``N`` distinct
    players, the matches are taken in ``seq`` order and the cumulative mean
    log loss ``L_t / t`` (``L_t`` the summed log loss of the first ``t``
    matches) is reported at checkpoints ``t``, together with ``t / N``: the
    quantity plotted in Figure 5 of Tang, Wang & Jin's paper on Elo under
    misspecification.

    Parameters
    ----------
    replay : pl.DataFrame
        One row per match with at least ``league``, ``system``, ``seq``,
        ``player_a``, ``player_b``, ``expected_a`` and ``score_a``; the
        latter two non-null and in ``[0, 1]``.  Row order does not matter.
    points : int, default 200
        Most checkpoints per ``(league, system)``, at least 1.  When ``T <=
        points`` every ``t`` in ``1..T`` is reported; otherwise ``points``
        steps evenly spaced over ``1..T`` (both ends included; ``points == 1``
        gives only ``T``).

    Returns
    -------
    pl.DataFrame
        Columns ``league, system, t, t_over_n, mean_log_loss``, sorted by
        ``league`` (null first), ``system``, ``t``.  ``t`` is Int64; the
        log loss is ``-(s ln p + (1 - s) ln(1 - p))`` with ``p = expected_a``
        clipped to ``[1e-15, 1 - 1e-15]`` and ``s = score_a``.

    Raises
    ------
    ValueError
        If a required column is missing, ``points`` is not a positive
        integer, or ``expected_a`` / ``score_a`` hold nulls or values
        outside ``[0, 1]``.
    """
    if isinstance(points, bool) or not isinstance(points, Integral) or points < 1:
        raise DuckrateInputError(f"loss_curve: expected points to be a positive integer, got {points!r}")
    require_columns(replay, LOSS_CURVE_INPUT_COLUMNS, caller="loss_curve")
    require_forecasts(replay, caller="loss_curve")
    points = int(points)

    appearances = pl.concat(
        [replay.lazy().select(*GROUP_KEYS, pl.col(f"player_{side}").alias("player")) for side in ("a", "b")],
        how="vertical",
    )
    players_per_group = appearances.group_by(*GROUP_KEYS).agg(
        pl.col("player").n_unique().cast(pl.Int64).alias("players")
    )
    steps = _checkpoint_steps(points)
    running_at_checkpoints = (
        replay.lazy()
        .group_by(*GROUP_KEYS)
        .agg(
            steps.alias("t"),
            log_loss_expr().sort_by("seq").cum_sum().gather(steps - 1).alias("_cumulative_log_loss"),
        )
    )
    running_at_checkpoints, players_per_group = pl.collect_all(
        [running_at_checkpoints, players_per_group],
        engine="in-memory",  # bit-reproducible float sums
    )
    return (
        running_at_checkpoints.explode(["t", "_cumulative_log_loss"])
        .join(players_per_group, on=list(GROUP_KEYS), how="left", nulls_equal=True)
        .with_columns(
            (pl.col("t") / pl.col("players")).alias("t_over_n"),
            (pl.col("_cumulative_log_loss") / pl.col("t")).alias("mean_log_loss"),
        )
        .sort([*GROUP_KEYS, "t"], nulls_last=False)
        .select(LOSS_CURVE_COLUMNS)
    )
