"""The arrays one league's history is fitted on: batches of games, and the skills of each batch.

TTT has one skill variable per player and time step at which the player plays (Dangauthier et al. 2007:
``s_{i,t}``); here each is a *slot*. A batch holds the games of one time step. Everything is laid
out CSR-style, in one counting pass over the games in their canonical order (time step, then ``played_at``
and ``match_id``; players coded by name), so the layout, and so every bit of the fit, is the same whatever
the input's row order:

- games ``batch_games[b] : batch_games[b + 1]`` belong to batch ``b``, whose step is ``batch_step[b]``;
- slots ``batch_slots[b] : batch_slots[b + 1]`` are the skills of batch ``b`` (its players, in order of
  their first game in the batch);
- ``game_slots[g]`` holds the slots of game ``g``'s side A and side B, ``game_outcome[g]`` its result
  (:data:`~.game.A_WINS`, :data:`~.game.DRAW`, :data:`~.game.B_WINS`);
- ``slot_player[s]`` is the slot's player, ``slot_prev[s]`` / ``slot_next[s]`` the same player's slots in
  the batches before and after (-1 for none): the chain that carries the forward and backward messages;
  ``slot_elapsed[s]`` the steps since the player's previous batch (0 at the first), ``slot_games[s]`` the
  games the player played in the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel


@dataclass(frozen=True)
class Layout:
    """One league's history as arrays (see the module docstring)."""

    batch_step: np.ndarray
    batch_games: np.ndarray
    batch_slots: np.ndarray
    game_slots: np.ndarray
    game_outcome: np.ndarray
    slot_player: np.ndarray
    slot_prev: np.ndarray
    slot_next: np.ndarray
    slot_elapsed: np.ndarray
    slot_games: np.ndarray

    @property
    def n_batches(self) -> int:
        return self.batch_step.shape[0]

    @property
    def n_slots(self) -> int:
        return self.slot_player.shape[0]


@kernel
def _build(step, player_a, player_b, outcome, n_players):
    n_games = step.shape[0]
    n_batches = 0
    for g in range(n_games):
        if g == 0 or step[g] != step[g - 1]:
            n_batches += 1
    batch_step = np.empty(n_batches, dtype=np.int64)
    batch_games = np.empty(n_batches + 1, dtype=np.int64)
    batch_slots = np.empty(n_batches + 1, dtype=np.int64)
    game_slots = np.empty((n_games, 2), dtype=np.int64)
    game_outcome = np.empty(n_games, dtype=np.int8)
    # at most two new slots per game
    slot_player = np.empty(2 * n_games, dtype=np.int64)
    slot_prev = np.empty(2 * n_games, dtype=np.int64)
    slot_elapsed = np.empty(2 * n_games, dtype=np.float64)
    slot_games = np.zeros(2 * n_games, dtype=np.int64)
    last_slot = np.full(n_players, -1, dtype=np.int64)  # each player's latest slot so far
    last_step = np.zeros(n_players, dtype=np.int64)
    batch = -1
    n_slots = 0
    for g in range(n_games):
        if g == 0 or step[g] != step[g - 1]:
            batch += 1
            batch_step[batch] = step[g]
            batch_games[batch] = g
            batch_slots[batch] = n_slots
        game_outcome[g] = outcome[g]
        for side in range(2):
            player = player_a[g] if side == 0 else player_b[g]
            slot = last_slot[player]
            if slot < 0 or slot < batch_slots[batch]:  # the player's first game of this batch
                slot_player[n_slots] = player
                slot_prev[n_slots] = slot
                slot_elapsed[n_slots] = 0.0 if slot < 0 else float(step[g] - last_step[player])
                slot = n_slots
                n_slots += 1
                last_slot[player] = slot
                last_step[player] = step[g]
            slot_games[slot] += 1
            game_slots[g, side] = slot
    batch_games[n_batches] = n_games
    batch_slots[n_batches] = n_slots
    slot_next = np.full(n_slots, -1, dtype=np.int64)
    for s in range(n_slots):
        if slot_prev[s] >= 0:
            slot_next[slot_prev[s]] = s
    return (
        batch_step,
        batch_games,
        batch_slots,
        game_slots,
        game_outcome,
        slot_player[:n_slots].copy(),
        slot_prev[:n_slots].copy(),
        slot_next,
        slot_elapsed[:n_slots].copy(),
        slot_games[:n_slots].copy(),
    )


def build_layout(step: np.ndarray, player_a: np.ndarray, player_b: np.ndarray, outcome: np.ndarray, n_players: int):
    """The :class:`Layout` of games given in canonical order: their time ``step`` (non-decreasing), the
    players' codes ``0 .. n_players - 1`` on each side and the ``outcome`` codes."""
    if step.shape[0] and np.any(np.diff(step) < 0):
        raise ValueError("build_layout: the games' steps must be non-decreasing")
    arrays = _build(
        np.ascontiguousarray(step, dtype=np.int64),
        np.ascontiguousarray(player_a, dtype=np.int64),
        np.ascontiguousarray(player_b, dtype=np.int64),
        np.ascontiguousarray(outcome, dtype=np.int8),
        n_players,
    )
    return Layout(*arrays)


def prefix(layout: Layout, n_batches: int) -> Layout:
    """The layout of the history's first ``n_batches`` batches alone: views of ``layout``'s arrays (the slots
    and games of a batch come after those of the batches before it), but for ``slot_next``, where a next
    slot beyond them is none (-1). A fit over it is a fit of those games (what the replay refits)."""
    games = int(layout.batch_games[n_batches])
    slots = int(layout.batch_slots[n_batches])
    slot_next = layout.slot_next[:slots].copy()
    slot_next[slot_next >= slots] = -1
    return Layout(
        batch_step=layout.batch_step[:n_batches],
        batch_games=layout.batch_games[: n_batches + 1],
        batch_slots=layout.batch_slots[: n_batches + 1],
        game_slots=layout.game_slots[:games],
        game_outcome=layout.game_outcome[:games],
        slot_player=layout.slot_player[:slots],
        slot_prev=layout.slot_prev[:slots],
        slot_next=slot_next,
        slot_elapsed=layout.slot_elapsed[:slots],
        slot_games=layout.slot_games[:slots],
    )
