"""Shared checks and expressions for the replay frames that evaluation reads.

A *replay* is a Polars DataFrame with one row per match, as written by any
rating system's replay: ``system``, ``league``, ``seq``, ``match_id``,
``played_at``, ``player_a``, ``player_b``, ``score_a``, ``expected_a`` and the
``rating_*`` / ``sd_*`` before and after columns.  Matches are ordered by
``seq`` within each ``(league, system)``; the row order of the frame itself
carries no meaning.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from duckrate.core.errors import DuckrateInputError

GROUP_KEYS: tuple[str, str] = ("league", "system")
"""Columns that identify one independent replay (a league rated by a system)."""

PLAYER_FORECAST_COLUMNS: tuple[str, ...] = (*GROUP_KEYS, "seq", "player_a", "player_b", "expected_a", "score_a")
"""Replay columns read by the marts that follow each player's games (calibration_summary, loss_curve)."""

PROBABILITY_CLIP: float = 1e-15
"""Forecasts are clipped to ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]`` before ``log``."""

Z_95: float = 1.959963984540054
"""Two-sided 95% standard normal quantile."""


def require_columns(replay: pl.DataFrame, needed: Iterable[str], *, caller: str) -> None:
    """Raise when ``replay`` is not a DataFrame or lacks any of ``needed``.

    Parameters
    ----------
    replay : pl.DataFrame
        The frame to check.
    needed : Iterable[str]
        Column names the caller reads.
    caller : str
        Name of the public function, used in the error message.

    Raises
    ------
    TypeError
        If ``replay`` is not a ``polars.DataFrame``.
    ValueError
        If columns are missing; the message names the missing columns and
        lists the ones expected.
    """
    if not isinstance(replay, pl.DataFrame):
        raise TypeError(f"{caller}: expected the replay as a polars.DataFrame, got {type(replay).__name__}")
    needed = list(needed)
    present = set(replay.columns)
    missing = [name for name in needed if name not in present]
    if missing:
        raise DuckrateInputError(
            f"{caller}: replay is missing column(s) {', '.join(map(repr, missing))}; "
            f"expected columns {', '.join(needed)}"
        )


def require_forecasts(replay: pl.DataFrame, *, caller: str) -> None:
    """Raise unless ``expected_a`` and ``score_a`` are non-null numbers in ``[0, 1]``.

    Parameters
    ----------
    replay : pl.DataFrame
        A replay that has the ``expected_a`` and ``score_a`` columns.
    caller : str
        Name of the public function, used in the error message.

    Raises
    ------
    ValueError
        If either column holds nulls, NaN, or values outside ``[0, 1]``.
    """
    checks = replay.select(
        [
            expr
            for name in ("expected_a", "score_a")
            for expr in (
                pl.col(name).null_count().alias(f"{name}:nulls"),
                pl.col(name).cast(pl.Float64).is_nan().sum().alias(f"{name}:nans"),
                pl.col(name).cast(pl.Float64).min().alias(f"{name}:min"),
                pl.col(name).cast(pl.Float64).max().alias(f"{name}:max"),
            )
        ]
    ).row(0, named=True)
    for name in ("expected_a", "score_a"):
        nulls, nans = checks[f"{name}:nulls"], checks[f"{name}:nans"]
        low, high = checks[f"{name}:min"], checks[f"{name}:max"]
        if nulls or nans:
            raise DuckrateInputError(
                f"{caller}: expected {name} without nulls or NaN, found {nulls} null and {nans} NaN value(s)"
            )
        if low is not None and (low < 0.0 or high > 1.0):
            raise DuckrateInputError(f"{caller}: expected {name} within [0, 1], found values from {low} to {high}")


def log_loss_expr(expected: str = "expected_a", score: str = "score_a") -> pl.Expr:
    """Per-match log loss ``-(s ln p + (1 - s) ln(1 - p))`` as a Polars expression.

    Parameters
    ----------
    expected : str, default "expected_a"
        Column with the forecast ``p``; clipped to
        ``[PROBABILITY_CLIP, 1 - PROBABILITY_CLIP]``.
    score : str, default "score_a"
        Column with the outcome ``s`` in ``[0, 1]``; fractional outcomes such
        as draws (``0.5``) are used as soft targets.

    Returns
    -------
    pl.Expr
        Float64 expression, one value per row.
    """
    p = pl.col(expected).cast(pl.Float64).clip(PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    s = pl.col(score).cast(pl.Float64)
    return -(s * p.log() + (1.0 - s) * (1.0 - p).log())
