"""What Glicko and Glicko-2 share around their rules: their common parameters and checks, and the
per-player fields carried between rating periods (the rules and the period loop: :mod:`.glicko_rules`).

``seen``, ``last_period`` (per slot) and ``played_in_league`` (per league) are what the period loop
carries from one period to the next besides the ratings; they are updated in place, so a replay continued
from a saved state (:mod:`._state`) starts from them: :func:`carried_start` and :func:`carried_end` convert
them from and to the float64 values of the state table.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter

# Parameters of both systems (in each system's list in this order: initial, rd, ..., rd_min, period_length).
INITIAL = Parameter("initial", 1500.0, "a finite starting rating")
RD = Parameter("rd", 350.0, "a finite starting rating deviation > 0", lambda v: math.isfinite(v) and v > 0)
RD_MIN = Parameter("rd_min", 0.0, "a finite minimum rating deviation >= 0", lambda v: math.isfinite(v) and v >= 0)
PERIOD_LENGTH = Parameter(
    "period_length",
    None,
    "a finite period length > 0 (days for DATE/TIMESTAMP played_at), or NULL",
    lambda v: math.isfinite(v) and v > 0,
    nullable=True,
)


def check_rd_min_below_rd(params: dict, system: str) -> None:
    """rd_min must be below the newcomer rd (the floor applies to every stored and reported RD)."""
    if params["rd_min"] >= params["rd"]:
        raise DuckrateInputError(
            f"{system}: parameter rd_min = {params['rd_min']!r} is not below rd = {params['rd']!r}; expected rd_min < rd"
        )


# Per-player fields both systems save besides their ratings (see _state.StateField): whether the player
# was rated in some period yet, and the last period it was rated in (an integer, exact below 2^53).
CARRIED_FIELDS = ("seen", "last_period")


def carried_newcomers(n_states: int) -> dict[str, np.ndarray]:
    """Newcomer values of :data:`CARRIED_FIELDS` (float64, as saved): never rated, period 0."""
    return {"seen": np.zeros(n_states, np.float64), "last_period": np.zeros(n_states, np.float64)}


def carried_start(values: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(seen, last_period) as the kernels take them, from the float64 values of :func:`carried_newcomers`
    overlaid with the saved state."""
    return values["seen"] != 0.0, values["last_period"].astype(np.int64)


def carried_end(seen: np.ndarray, last_period: np.ndarray) -> dict[str, np.ndarray]:
    """The kernels' (seen, last_period) after a run, as the float64 values the state table saves."""
    return {"seen": seen.astype(np.float64), "last_period": last_period.astype(np.float64)}
