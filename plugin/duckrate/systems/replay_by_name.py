"""Saved replay state from Python: continue a replay where the last run stopped.

``rows, state = duckrate.replay_with_state("elo", matches, k=24)`` replays and returns the state table;
tomorrow ``duckrate.replay_with_state("elo", new_matches, state=state, k=24)`` rates only the new matches
and returns the rows and state one replay of everything would give. ``duckrate.replay_state`` returns the
state alone; each system's function (``duckrate.elo(..., state=state)``) returns the rows alone. See
:mod:`duckrate.systems.saved_state` for the table's layout and what forces a full replay
(:class:`RebuildRequired`).
"""

from __future__ import annotations

import polars as pl

from duckrate.core.registry import SYSTEMS
from duckrate.systems.saved_state import RebuildRequired


def replay_with_state(
    system: str,
    matches: pl.DataFrame,
    state: pl.DataFrame | None = None,
    priors: pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Replay ``system`` (e.g. ``"elo"``) over ``matches``, continuing ``state`` when given.

    Parameters
    ----------
    system : the system's name, as in its SQL macro (``elo``, ``glicko``, ``glicko2``, ``trueskill``,
        ``chance``, ``elo2k``, ``pairwise``, or ``elo_mmr`` over contest results).
    matches : the matches after the state (for a periodic Glicko state, also its open period's matches,
        listed in the state's ``pending_ids``); for ``elo_mmr`` a ``contest_results`` frame of the
        contests after the state.
    state : a state table from an earlier call, or None to start from scratch.
    priors : newcomers' starting states, as for the system's function.
    chunk_size : the most matches (or contest results) replayed at once (default ``DEFAULT_CHUNK_ROWS``);
        a longer history replays in chunks, each continuing from the state the one before left.
    **params : the system's parameters; a state only continues with the parameters it was saved with.

    Returns
    -------
    (rows, state): the replay rows of ``matches`` (``seq`` continuing the state's) and the state after them.

    Raises
    ------
    RebuildRequired
        When the state cannot be continued with these matches (a late match, other parameters...).
    """
    chosen = SYSTEMS.get(system, "replay_state")
    rows, after = chosen.with_state(matches, state=state, priors=priors, chunk_size=chunk_size, **params)
    assert after is not None  # the state is asked for
    return rows, after


def replay_state(
    system: str,
    matches: pl.DataFrame,
    state: pl.DataFrame | None = None,
    priors: pl.DataFrame | None = None,
    chunk_size: int | None = None,
    **params,
) -> pl.DataFrame:
    """The state table after replaying ``matches`` (continuing ``state`` when given); see :func:`replay_with_state`."""
    return replay_with_state(system, matches, state, priors, chunk_size, **params)[1]


__all__ = ["RebuildRequired", "replay_state", "replay_with_state"]
