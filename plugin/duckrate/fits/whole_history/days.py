"""The player-days of a Whole-History Rating fit, in the compressed layout the kernels read.

WHR rates each player once per time step at which they played (a *player-day*, Coulom 2008, section 3.1):
the player's rating follows a Wiener process between their steps, and each game links the two players'
ratings on its step. This module lays those out once per fit; the kernels (:mod:`.whr`) then never allocate
per player:

- *units*: one per (league, player), numbered league by league with players in name order (the order of the
  Gauss-Seidel sweep); ``league_unit_start`` bounds each league's units;
- *days*: a unit's steps in increasing order, ``unit_day_start`` bounding each unit's run of days;
  ``day_step`` is the step and ``day_unit`` the unit;
- *entries* (CSR): each game once per side, grouped by day (``entry_start`` bounds a day's run), in replay
  order within a day (``played_at``, then ``match_id``), with the opponent's day (``opp_day``), the side's score
  (``score_a`` or ``1 - score_a``) and the game's weight;
- each input row's two days, ``row_day[row, 0]`` (side A's) and ``row_day[row, 1]`` (side B's).

Everything is ordered canonically (players by name, games by (``played_at``, ``match_id``)), so the same
games in any row order give the same arrays, and the fit the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches
from duckrate.fits.league_games import name_ordered_codes


@dataclass(frozen=True)
class PlayerDays:
    """One fit's player-days (see the module docstring). ``weight`` has one entry per entry, or a single
    1.0 when every game weighs 1; ``unit_slot`` is each unit's state slot in :class:`PreparedMatches`;
    ``row_day`` holds each input row's days (side A, side B)."""

    league_unit_start: np.ndarray
    unit_slot: np.ndarray
    unit_day_start: np.ndarray
    day_unit: np.ndarray
    day_step: np.ndarray
    entry_start: np.ndarray
    opp_day: np.ndarray
    score: np.ndarray
    weight: np.ndarray
    row_day: np.ndarray

    @property
    def n_days(self) -> int:
        return self.day_step.shape[0]

    @property
    def games(self) -> np.ndarray:
        """Games (rows, unweighted) per day."""
        return np.diff(self.entry_start)


@kernel
def _layout(side_unit, side_step, n_units):
    """Sides (two per game, in replay order: ``2k`` side A and ``2k + 1`` side B of the k-th game) grouped by
    unit with a stable counting sort; within a unit they stay in replay order, which is step order because
    steps never decrease along it. Returns each entry's side, each unit's first day, each day's step, unit
    and first entry, each entry's opponent's day, and each side's day."""
    n_sides = side_unit.shape[0]
    unit_start = np.zeros(n_units + 1, dtype=np.int64)
    for i in range(n_sides):
        unit_start[side_unit[i] + 1] += 1
    for u in range(n_units):
        unit_start[u + 1] += unit_start[u]
    cursor = unit_start[:-1].copy()
    entry_side = np.empty(n_sides, dtype=np.int64)
    for i in range(n_sides):
        u = side_unit[i]
        entry_side[cursor[u]] = i
        cursor[u] += 1
    # days: a new one wherever the unit or the step changes along the entries
    n_days = 0
    for e in range(n_sides):
        side = entry_side[e]
        if e == 0 or side_unit[side] != side_unit[entry_side[e - 1]] or side_step[side] != side_step[entry_side[e - 1]]:
            n_days += 1
    unit_day_start = np.zeros(n_units + 1, dtype=np.int64)
    day_step = np.empty(n_days, dtype=np.int64)
    day_unit = np.empty(n_days, dtype=np.int64)
    entry_start = np.empty(n_days + 1, dtype=np.int64)
    side_day = np.empty(n_sides, dtype=np.int64)
    day = -1
    for e in range(n_sides):
        side = entry_side[e]
        if e == 0 or side_unit[side] != side_unit[entry_side[e - 1]] or side_step[side] != side_step[entry_side[e - 1]]:
            day += 1
            day_step[day] = side_step[side]
            day_unit[day] = side_unit[side]
            entry_start[day] = e
            unit_day_start[side_unit[side] + 1] += 1
        side_day[side] = day
    entry_start[n_days] = n_sides
    for u in range(n_units):
        unit_day_start[u + 1] += unit_day_start[u]
    opp_day = np.empty(n_sides, dtype=np.int64)
    for e in range(n_sides):
        opp_day[e] = side_day[entry_side[e] ^ 1]
    return entry_side, unit_day_start, day_step, day_unit, entry_start, opp_day, side_day


def player_days(prepared: PreparedMatches, steps: np.ndarray) -> PlayerDays:
    """The player-days of ``prepared`` with each row's time step ``steps`` (input row order)."""
    local, members = name_ordered_codes(prepared)
    sizes = np.array([m.size for m in members], dtype=np.int64)
    league_unit_start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    unit_slot = np.concatenate(members).astype(np.int64) if members else np.empty(0, dtype=np.int64)
    unit_of_slot = np.full(prepared.n_states, -1, dtype=np.int64)
    unit_of_slot[unit_slot] = np.arange(unit_slot.size, dtype=np.int64)

    order = prepared.order
    n_rows = order.shape[0]
    side_unit = np.empty(2 * n_rows, dtype=np.int64)
    side_unit[0::2] = unit_of_slot[prepared.state_a[order]]
    side_unit[1::2] = unit_of_slot[prepared.state_b[order]]
    side_step = np.repeat(np.asarray(steps, dtype=np.int64)[order], 2)
    entry_side, unit_day_start, day_step, day_unit, entry_start, opp_day, side_day = _layout(
        side_unit, side_step, unit_slot.size
    )
    row_day = np.empty((n_rows, 2), dtype=np.int64)
    row_day[order] = side_day.reshape(-1, 2)
    entry_row = order[entry_side >> 1]
    side_a = (entry_side & 1) == 0
    score = np.where(side_a, prepared.score[entry_row], 1.0 - prepared.score[entry_row])
    weight = prepared.weight[entry_row] if prepared.weight.shape[0] == prepared.n_rows else np.ones(1)
    return PlayerDays(
        league_unit_start=league_unit_start,
        unit_slot=unit_slot,
        unit_day_start=unit_day_start,
        day_unit=day_unit,
        day_step=day_step,
        entry_start=entry_start,
        opp_day=opp_day,
        score=np.ascontiguousarray(score, dtype=np.float64),
        weight=np.ascontiguousarray(weight, dtype=np.float64),
        row_day=row_day,
    )
