"""Each league's games in a canonical form shared by the batch fits and the tests of fit: rows in replay
order and players coded 0..n-1 by name, so nothing downstream depends on the input's row order."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import pyarrow.compute as pc

from duckrate.core.contests import PlayerRows
from duckrate.core.matches import PreparedMatches


def name_ordered_codes(
    prepared: PreparedMatches | PlayerRows, states: tuple[np.ndarray, ...] | None = None
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Per state slot, its player's index within its league when players are sorted by name (-1 for
    unused slots); and per league, the slots in that order. Sorting by name makes the fit independent of
    the input's row order, bit for bit. ``states``: the state slots used (by default a matches table's
    ``state_a`` and ``state_b``)."""
    used = np.zeros(prepared.n_states, dtype=np.bool_)
    for used_states in states if states is not None else (prepared.state_a, prepared.state_b):
        used[used_states] = True
    name_rank = np.empty(len(prepared.players), dtype=np.int64)
    name_rank[np.asarray(pc.sort_indices(prepared.players), dtype=np.int64)] = np.arange(len(prepared.players))
    slots = np.flatnonzero(used)
    key = prepared.state_league[slots] * len(prepared.players) + name_rank[prepared.state_player[slots]]
    slots = slots[np.argsort(key, kind="stable")]
    leagues = prepared.state_league[slots]
    bounds = np.searchsorted(leagues, np.arange(prepared.n_leagues + 1))
    local = np.full(prepared.n_states, -1, dtype=np.int64)
    per_league = []
    for league in range(prepared.n_leagues):
        members = slots[bounds[league] : bounds[league + 1]]
        local[members] = np.arange(members.size)
        per_league.append(members)
    return local, per_league


def league_rows(prepared: PreparedMatches) -> list[np.ndarray]:
    """Each league's rows in replay order (played_at, then match_id): a canonical order of the games."""
    order = prepared.order
    if prepared.n_leagues == 1:
        return [order]
    grouped = order[np.argsort(prepared.league[order], kind="stable")]
    bounds = np.searchsorted(prepared.league[grouped], np.arange(prepared.n_leagues + 1))
    return [grouped[bounds[i] : bounds[i + 1]] for i in range(prepared.n_leagues)]


def each_league(replay: Callable[[int, bool], None], leagues: list[int]) -> None:
    """``replay(league, alone)`` for each of ``leagues``: side by side on numba's thread count of threads when
    there are several (``alone`` False: the kernels release the GIL, and a league should then not start
    threads of its own), else in the calling thread (``alone`` True). Leagues share nothing, so the bits do
    not depend on the threads; an error is raised as in the calling thread (the first league's first)."""
    threads = min(numba.get_num_threads(), len(leagues))
    if threads <= 1:
        for league in leagues:
            replay(league, True)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for done in [pool.submit(replay, league, False) for league in leagues]:
            done.result()
