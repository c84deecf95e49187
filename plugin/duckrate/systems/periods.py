"""Rating periods for the Glicko systems: which period each match falls in, and the periodic replay order.

Glickman treats all games of one rating period as simultaneous (Glicko step 2, Glicko-2 steps 3-7). A
period comes from the ``period`` column of the matches, or from ``played_at`` and a ``period_length``:
``floor(played_at / period_length)``, the length in days when ``played_at`` is a DATE or TIMESTAMP and
in ``played_at``'s own units when it is an integer. With neither, every match is its own period for its
two players (the systems handle that case; :func:`row_periods` returns None).
"""

from __future__ import annotations

import numpy as np

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import PreparedMatches

# How many units of PreparedMatches.time_key make one day, per time_unit.
_UNITS_PER_DAY = {
    "days": 1,
    "seconds": 86_400,
    "milliseconds": 86_400_000,
    "microseconds": 86_400_000_000,
    "nanoseconds": 86_400_000_000_000,
}
_INT64_LIMIT = 2.0**63


def row_periods(prepared: PreparedMatches, period_length: float | None, system: str) -> np.ndarray | None:
    """The int64 rating period of every input row, or None when matches carry no periods.

    Parameters
    ----------
    prepared : the encoded matches (``period`` column, ``time_key`` and ``time_unit`` are read).
    period_length : length of a period, > 0: in days for a DATE/TIMESTAMP ``played_at``, in its own units
        for an integer ``played_at``; None when periods come from the ``period`` column or not at all.
    system : name used in error messages.

    Raises
    ------
    DuckrateInputError
        When the matches have a ``period`` column and ``period_length`` is given too, or when the periods
        of ``played_at / period_length`` do not fit a 64-bit integer.
    """
    if prepared.period is not None:
        if period_length is not None:
            raise DuckrateInputError(
                f"{system}: the matches have a 'period' column and period_length = {period_length!r} was given; "
                "give one (the period column, or period_length to derive periods from played_at)"
            )
        return prepared.period
    if period_length is None:
        return None
    unit = prepared.time_unit
    length = float(period_length) * (1 if unit == "integer" else _UNITS_PER_DAY[unit])
    key = prepared.time_key
    if length.is_integer() and length < _INT64_LIMIT:
        return np.floor_divide(key, np.int64(int(length)))  # exact for integer lengths (the usual case)
    periods = np.floor(key / length)  # float: exact to within float64 rounding of played_at
    if periods.size and not (np.abs(periods).max() < _INT64_LIMIT):
        raise DuckrateInputError(
            f"{system}: period_length = {period_length!r} is too short for played_at: periods overflow a 64-bit integer"
        )
    return periods.astype(np.int64)


def periodic_order(prepared: PreparedMatches, period: np.ndarray | None) -> np.ndarray:
    """Input row indices in periodic replay order: by period, then ``played_at`` and ``match_id``.

    ``prepared.order`` stable-sorted by period. Leagues interleave within a period; they never share
    state slots, so rating one period of all leagues together equals rating each league on its own.
    Periods derived from ``played_at`` are already monotone in ``prepared.order``: no sort then.
    """
    if period is None:
        return prepared.order
    in_order = period[prepared.order]
    if in_order.size < 2 or bool(np.all(in_order[1:] >= in_order[:-1])):
        return prepared.order
    return prepared.order[np.argsort(in_order, kind="stable")]
