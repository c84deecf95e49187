"""The time steps of the whole-history fits (WHR, TrueSkill Through Time), from ``played_at`` and a
``period`` parameter (:data:`PERIOD`, one declaration for both).

WHR's prior links a player's ratings at consecutive time steps by a Wiener process whose variance grows
by ``w2`` per step (Coulom 2008, section 3.1), and TrueSkill Through Time's skill drift adds ``gamma²`` per
step, so a step is the unit of time those are given in:

- TIMESTAMP and DATE: ``'day'`` (the default: whole days since 1970-01-01, UTC; what the ``whr`` package
  calls a time step), ``'week'`` (ISO weeks, Monday to Sunday: weeks since Monday 1969-12-29),
  ``'month'`` (calendar months since January 1970) or ``'year'`` (calendar years since 1970). Times before
  1970 give negative steps (floored, so a step always starts at or before its games).
- An integer order: each value is its own step and the gap between two values is their difference, as
  the package's integer time steps; ``period`` must be NULL (None) or ``'value'``.

A step's start (``period_start``) is reported as the input's own type: a DATE for dates, a TIMESTAMP of
the input's unit and time zone for timestamps, the value itself for integers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter

#: The periods of a TIMESTAMP or DATE ``played_at``; the first is the default.
TIME_PERIODS = ("day", "week", "month", "year")
#: The periods of an integer ``played_at``.
INTEGER_PERIODS = ("value",)

#: The ``period`` parameter of every whole-history fit (checked against ``played_at``'s type by
#: :func:`resolve_period`).
PERIOD = Parameter(
    "period",
    None,
    f"NULL (the default of played_at's type), {', '.join(repr(p) for p in TIME_PERIODS)} for a "
    "TIMESTAMP or DATE played_at, or 'value' for an integer one",
    nullable=True,
    text=True,
)

# Units of the time key (``PreparedMatches.time_unit``) per day.
_PER_DAY = {
    "days": 1,
    "seconds": 86_400,
    "milliseconds": 86_400_000,
    "microseconds": 86_400_000_000,
    "nanoseconds": 86_400_000_000_000,
}
# 1970-01-01 was a Thursday: ISO weeks start 3 days earlier, on Monday 1969-12-29.
_WEEK_OFFSET_DAYS = 3


def resolve_period(period: str | None, played_at_type: pa.DataType, owner: str = "whr_fit") -> str:
    """The period to use for a ``played_at`` of type ``played_at_type`` (None: its default); raises
    :class:`DuckrateInputError` naming the parameter, the column type and the allowed values."""
    is_time = pa.types.is_timestamp(played_at_type) or pa.types.is_date(played_at_type)
    allowed = TIME_PERIODS if is_time else INTEGER_PERIODS
    if period is None:
        return allowed[0]
    if not isinstance(period, str) or period.lower() not in allowed:
        listed = ", ".join(repr(p) for p in allowed)
        kind = "TIMESTAMP or DATE" if is_time else "integer"
        hint = (
            ""
            if is_time
            else " (each distinct value is a step; cast played_at to a DATE or TIMESTAMP for calendar periods)"
        )
        raise DuckrateInputError(
            f"{owner}: parameter period = {period!r} does not fit column 'played_at' of type {played_at_type} "
            f"({kind}); expected NULL or one of {listed}{hint}"
        )
    return period.lower()


def checked_period(period: str | None, time_unit: str) -> str:
    """A ``period`` already checked against ``played_at``'s type (:func:`resolve_period`), resolved from the
    time unit of the prepared matches (``PreparedMatches.time_unit``) alone: its default when None."""
    allowed = INTEGER_PERIODS if time_unit == "integer" else TIME_PERIODS
    return allowed[0] if period is None else period.lower()


def days_since_epoch(time_key: np.ndarray, time_unit: str) -> np.ndarray:
    """Whole days since 1970-01-01 (floored) of a time key in ``time_unit``."""
    per_day = _PER_DAY[time_unit]
    return time_key if per_day == 1 else np.floor_divide(time_key, per_day)


def time_steps(time_key: np.ndarray, time_unit: str, period: str) -> np.ndarray:
    """Each row's integer time step (int64) from its time key (``PreparedMatches.time_key``/``time_unit``)
    and a resolved ``period``."""
    if time_unit == "integer":
        return np.asarray(time_key, dtype=np.int64)
    days = days_since_epoch(np.asarray(time_key, dtype=np.int64), time_unit)
    if period == "day":
        return days.astype(np.int64, copy=False)
    if period == "week":
        return np.floor_divide(days + _WEEK_OFFSET_DAYS, 7).astype(np.int64)
    calendar = "M" if period == "month" else "Y"
    return days.astype("datetime64[D]").astype(f"datetime64[{calendar}]").astype(np.int64)


def step_starts_in_days(steps: np.ndarray, period: str) -> np.ndarray:
    """Days since 1970-01-01 of the first day of each step (calendar periods)."""
    steps = np.asarray(steps, dtype=np.int64)
    if period == "day":
        return steps
    if period == "week":
        return steps * 7 - _WEEK_OFFSET_DAYS
    calendar = "M" if period == "month" else "Y"
    return steps.astype(f"datetime64[{calendar}]").astype("datetime64[D]").astype(np.int64)


def period_starts(steps: np.ndarray, period: str, played_at_type: pa.DataType) -> pa.Array:
    """Each step's start as an Arrow array of ``played_at``'s type (DATE for dates, TIMESTAMP of the same
    unit and zone for timestamps, the value for integers)."""
    steps = np.asarray(steps, dtype=np.int64)
    if period == "value":
        return pa.array(steps, pa.int64())
    days = step_starts_in_days(steps, period)
    if pa.types.is_date(played_at_type):
        return pa.array(days.astype(np.int32), pa.int32()).cast(pa.date32())
    per_day = _PER_DAY[
        {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}[played_at_type.unit]
    ]
    return pa.array(days * per_day, pa.int64()).cast(played_at_type)
