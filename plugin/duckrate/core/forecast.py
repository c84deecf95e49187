"""A system's forecast between two players, and what it reads: the players of a ratings table, one row per
(league, player), with what the forecasts from a saved state need besides.

Each system declares its :class:`Forecast` on its registry entry (:class:`duckrate.core.protocol.System`);
``win_probability`` and ``win_matrix`` (:mod:`duckrate.evaluation.win_probability`) find it there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from duckrate.core.parameters import Parameter, Signature

PLAYER_COLUMNS = {
    "league": pl.Utf8,
    "player": pl.Utf8,
    "rating": pl.Float64,
    "sd": pl.Float64,
    "home_advantage": pl.Float64,
}
"""The columns of :attr:`Players.frame`, one row per (league, player)."""


@dataclass(frozen=True)
class Players:
    """The players a forecast reads: ``frame`` (:data:`PLAYER_COLUMNS`), and for the forecasts from a saved
    state the per-row ``vectors`` (e.g. ``rho``: players x grid points), the ``pairs`` counts
    (:data:`PAIR_COUNTS`, both directions) and the parameters the state was ``saved`` with."""

    frame: pl.DataFrame
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    pairs: pl.DataFrame | None = None
    saved: dict = field(default_factory=dict)


PAIR_COUNTS = {"league": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "wins_a": pl.Float64, "games": pl.Float64}
"""A Pairwise state's counts, one row per pair and direction: the wins of ``a`` over ``b`` and their games."""

Probabilities = tuple[np.ndarray, np.ndarray | None]
"""A forecast's result: (expected_a, P(draw) or None when the model has no draws), one value per pair."""


@dataclass(frozen=True)
class Forecast:
    """A forecast between two players: ``compute(players, a_rows, b_rows, params)`` gives the pairs' expected
    scores (and draw probabilities where the model has draws).

    Its parameters are ``uses``, names of its owner's own parameters (declarations and defaults are the
    replay's), then ``parameters`` of its own. Two kinds: from each player's rating and sd (any table that
    holds them: a replay's latest state, a leaderboard, a fit), or, with ``read_state(state, saved)``, from a
    saved state's rows (``kind``, ``league``, ``player``, ``opponent``, ``value``) and the parameters it was
    saved with; ``state_holds`` then says what the state holds that no replay table does."""

    compute: Callable[[Players, np.ndarray, np.ndarray, dict], Probabilities]
    uses: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    read_state: Callable[[pl.DataFrame, dict], Players] | None = None
    state_holds: str = ""

    @property
    def from_state(self) -> bool:
        return self.read_state is not None

    def declarations(self, owner: Signature) -> tuple[Parameter, ...]:
        """The forecast's parameters: ``owner``'s declarations of :attr:`uses`, then its own."""
        by_name = {p.name: p for p in owner.parameters}
        return (*(by_name[name] for name in self.uses), *self.parameters)


def column(players: Players, name: str, rows: np.ndarray) -> np.ndarray:
    """A players column at ``rows`` as float64 (a forecast's input)."""
    return players.frame[name].to_numpy()[rows].astype(np.float64)
