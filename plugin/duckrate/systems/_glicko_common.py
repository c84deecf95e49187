"""What Glicko and Glicko-2 share: their common parameters, checks of the priors, the step-2 sums of a
game, the rating-period boundaries in the kernels, and the call of a periodic replay kernel.

Both replay kernels take the same arguments around their own states and constants::

    kernel(order, period, periodic, state_a, state_b, league, score, weight, *states, seen, last_period,
           played_in_league, *constants, kernel_outputs(new_outputs(n_rows)))

and :func:`run_periodic` makes that call (see ``glicko_replay_kernel`` and ``glicko2_replay_kernel``).
``seen``, ``last_period`` (per slot) and ``played_in_league`` (per league) are what the kernels carry
from one period to the next besides the ratings; they are updated in place, so a replay continued from
a saved state (:mod:`._state`) starts from them: :func:`carried_start` and :func:`carried_end` convert
them from and to the float64 values of the state table.

Numba's on-disk cache does not notice a change to a kernel called from another file: after editing
:func:`period_stop` or :func:`add_game_terms`, clear the cached glicko and glicko2 kernels (``__pycache__``).
"""

from __future__ import annotations

import math

import numpy as np

from .._numba import kernel
from ..errors import DuckrateInputError
from ..matches import PreparedMatches
from ..parameters import Parameter
from ._periods import periodic_order
from ._replay import kernel_outputs, new_outputs

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


def run_periodic(
    replay_kernel,
    prepared: PreparedMatches,
    period: np.ndarray | None,
    states: tuple,
    seen: np.ndarray,
    last_period: np.ndarray,
    played_in_league: np.ndarray,
    constants: tuple,
) -> dict:
    """Run ``replay_kernel`` over the matches in periodic order (``period`` from ``row_periods``; None: every
    match its own period) with the system's ``states``, ``seen``, ``last_period`` (per slot) and
    ``played_in_league`` (matches already replayed per league), all updated in place, and ``constants``;
    the output columns by name. ``prepared.order`` may hold only some of the rows."""
    order = periodic_order(prepared, period)
    out = new_outputs(prepared.n_rows)
    replay_kernel(
        order,
        period if period is not None else np.zeros(0, np.int64),
        period is not None,
        prepared.state_a,
        prepared.state_b,
        prepared.league,
        prepared.score,
        prepared.weight,
        *states,
        seen,
        last_period,
        played_in_league,
        *constants,
        kernel_outputs(out),
    )
    return out


@kernel
def period_stop(order, period, periodic, start):
    """(stop, period) of the rating period that begins at position ``start`` of ``order``: with ``periodic``
    the run of rows sharing ``period[row]``, otherwise the one row (period 0)."""
    n = order.shape[0]
    stop = start + 1
    current = period[order[start]] if periodic else 0
    if periodic:
        while stop < n and period[order[stop]] == current:
            stop += 1
    return stop, current


@kernel
def add_game_terms(information, surprise, slot_a, slot_b, g_a, g_b, e_a, e_b, w, s):
    """Add one game (weight ``w``, score ``s`` of side a) to both players' period sums, each against the
    other's g and with its own E: ``information += w·g²·E(1 - E)`` (Glicko's 1/d² over q², Glicko-2's 1/v)
    and ``surprise += w·g·(score - E)``."""
    information[slot_a] += w * g_b * g_b * e_a * (1.0 - e_a)
    surprise[slot_a] += w * g_b * (s - e_a)
    information[slot_b] += w * g_a * g_a * e_b * (1.0 - e_b)
    surprise[slot_b] += w * g_a * ((1.0 - s) - e_b)
