"""Time steps of TrueSkill Through Time: which batch a match falls in, and back from a step to a time.

Minimal on purpose: a shared module of periods ('day', 'week', 'month', 'year') is being written for every
system that groups games in time; these two functions will be folded into it. Until then an integer
``played_at`` is its own step and a DATE or TIMESTAMP is bucketed by whole days since 1970-01-01 (UTC).
The elapsed time between two of a player's batches (what the skill drift ``gamma^2 t`` multiplies) is
the difference of their steps.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError

PERIODS = ("day",)  # what ``period`` accepts besides None, for now

_UNITS_PER_DAY = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}


def time_steps(played_at: pa.Array, period: str | None) -> np.ndarray:
    """The int64 time step of each row of ``played_at``.

    An integer column gives its values (``period`` must be None); a TIMESTAMP or DATE gives whole days
    since the epoch in UTC (``period`` None or 'day'), rounded down.
    """
    kind = played_at.type
    if period is not None and period not in PERIODS:
        raise DuckrateInputError(f"ttt_fit: parameter period = {period!r}; expected NULL or 'day'")
    if pa.types.is_integer(kind):
        if period is not None:
            raise DuckrateInputError(
                f"ttt_fit: parameter period = {period!r} needs a TIMESTAMP or DATE played_at; "
                f"played_at is {kind}, whose values are the time steps (expected period NULL)"
            )
        return np.asarray(played_at, dtype=np.int64)
    if pa.types.is_date32(kind):
        return np.asarray(played_at.view(pa.int32()), dtype=np.int64)
    if pa.types.is_date64(kind):
        return np.floor_divide(np.asarray(played_at.view(pa.int64()), dtype=np.int64), 86_400_000)
    if pa.types.is_timestamp(kind):
        units = _UNITS_PER_DAY[kind.unit]
        return np.floor_divide(np.asarray(played_at.view(pa.int64()), dtype=np.int64), units)
    raise DuckrateInputError(f"ttt_fit: column 'played_at' has type {kind}; expected TIMESTAMP, DATE or an integer")


def step_starts(steps: np.ndarray, kind: pa.DataType) -> pa.Array:
    """Each step as a value of ``played_at``'s type ``kind``: the start of its day (UTC) for a TIMESTAMP or
    DATE, the step itself for an integer."""
    steps = np.asarray(steps, dtype=np.int64)
    if pa.types.is_date32(kind):
        return pa.array(steps.astype(np.int32), pa.int32()).view(pa.date32())
    if pa.types.is_date64(kind):
        return pa.array(steps * 86_400_000, pa.int64()).view(pa.date64())
    if pa.types.is_timestamp(kind):
        return pa.array(steps * _UNITS_PER_DAY[kind.unit], pa.int64()).view(kind)
    return pa.array(steps, pa.int64())
