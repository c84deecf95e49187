"""The arrays one league's history is fitted on: batches of games, the teams and players of each game, and the
skills of each batch.

TTT has one skill variable per player and time step at which the player plays (Dangauthier et al. 2007:
``s_{i,t}``); here each is a *slot*. A batch holds the games of one time step. Everything is laid
out CSR-style, in one counting pass over the games in their canonical order (time step, then ``played_at``
and ``match_id``; players coded by name), so the layout, and so every bit of the fit, is the same whatever
the input's row order:

- games ``batch_games[b] : batch_games[b + 1]`` belong to batch ``b``, whose step is ``batch_step[b]``;
- slots ``batch_slots[b] : batch_slots[b + 1]`` are the skills of batch ``b`` (its players, in order of
  their first game in the batch);
- teams ``game_teams[g] : game_teams[g + 1]`` are game ``g``'s, members ``team_members[t] :
  team_members[t + 1]`` team ``t``'s; ``team_rank[t]`` is the team's place in its game (1 the best; equal
  places tie), ``member_slot[m]`` the member's slot and ``member_weight[m]`` its share of the game (partial
  play). Two-player matches leave ``game_teams`` and ``team_members`` empty: every game is then two teams
  (``2g``, ``2g + 1``: side A, side B) of one member each (member ``t`` of team ``t``), which the kernels
  read without the offsets (:func:`teams_of`, :func:`members_of`); ``member_weight`` is empty when every
  weight is 1;
- ``slot_player[s]`` is the slot's player, ``slot_prev[s]`` / ``slot_next[s]`` the same player's slots in
  the batches before and after (-1 for none): the chain that carries the forward and backward messages;
  ``slot_elapsed[s]`` the steps since the player's previous batch (0 at the first), ``slot_games[s]`` the
  games the player played in the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.fits.through_time.game import A_WINS, DRAW


@dataclass(frozen=True)
class Layout:
    """One league's history as arrays (see the module docstring)."""

    batch_step: np.ndarray
    batch_games: np.ndarray
    batch_slots: np.ndarray
    game_teams: np.ndarray
    team_members: np.ndarray
    team_rank: np.ndarray
    member_slot: np.ndarray
    member_weight: np.ndarray
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

    @property
    def n_games(self) -> int:
        return int(self.batch_games[-1])

    @property
    def n_members(self) -> int:
        return self.member_slot.shape[0]

    @property
    def two_player(self) -> bool:
        """Every game two sides of one player (a matches table's layout)."""
        return self.game_teams.shape[0] == 0 and self.team_members.shape[0] == 0

    @property
    def game_slots(self) -> np.ndarray:
        """A two-player layout's slots of side A and side B per game (a view of ``member_slot``)."""
        if not self.two_player:
            raise ValueError("game_slots: the layout has games of teams")
        return self.member_slot.reshape(-1, 2)

    @property
    def max_batch_slots(self) -> int:
        """The most slots (players) in one batch."""
        return int(np.diff(self.batch_slots).max(initial=0))

    @property
    def max_teams(self) -> int:
        """The most teams in one game."""
        if self.game_teams.shape[0] < 2:
            return 2
        return max(2, int(np.diff(self.game_teams).max()))


@inlined_kernel
def teams_of(g, game_teams):
    """The range of game ``g``'s teams."""
    if game_teams.shape[0] == 0:
        return 2 * g, 2 * g + 2
    return game_teams[g], game_teams[g + 1]


@inlined_kernel
def members_of(t, team_members):
    """The range of team ``t``'s members."""
    if team_members.shape[0] == 0:
        return t, t + 1
    return team_members[t], team_members[t + 1]


@kernel
def _build(step, game_teams, team_members, member_player, n_players):
    n_games = step.shape[0]
    n_members = member_player.shape[0]
    n_batches = 0
    for g in range(n_games):
        if g == 0 or step[g] != step[g - 1]:
            n_batches += 1
    batch_step = np.empty(n_batches, dtype=np.int64)
    batch_games = np.empty(n_batches + 1, dtype=np.int64)
    batch_slots = np.empty(n_batches + 1, dtype=np.int64)
    member_slot = np.empty(n_members, dtype=np.int64)
    # at most one new slot per member
    slot_player = np.empty(n_members, dtype=np.int64)
    slot_prev = np.empty(n_members, dtype=np.int64)
    slot_elapsed = np.empty(n_members, dtype=np.float64)
    slot_games = np.zeros(n_members, dtype=np.int64)
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
        t_lo, t_hi = teams_of(g, game_teams)
        for t in range(t_lo, t_hi):
            m_lo, m_hi = members_of(t, team_members)
            for m in range(m_lo, m_hi):
                player = member_player[m]
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
                member_slot[m] = slot
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
        member_slot,
        slot_player[:n_slots].copy(),
        slot_prev[:n_slots].copy(),
        slot_next,
        slot_elapsed[:n_slots].copy(),
        slot_games[:n_slots].copy(),
    )


def _checked_steps(step: np.ndarray) -> np.ndarray:
    if step.shape[0] and np.any(np.diff(step) < 0):
        raise ValueError("build_layout: the games' steps must be non-decreasing")
    return np.ascontiguousarray(step, dtype=np.int64)


def _layout(step, game_teams, team_members, team_rank, member_player, member_weight, n_players) -> Layout:
    game_teams = np.ascontiguousarray(game_teams, dtype=np.int64)
    team_members = np.ascontiguousarray(team_members, dtype=np.int64)
    batch_step, batch_games, batch_slots, member_slot, *slots = _build(
        _checked_steps(step), game_teams, team_members, np.ascontiguousarray(member_player, dtype=np.int64), n_players
    )
    return Layout(
        batch_step,
        batch_games,
        batch_slots,
        game_teams,
        team_members,
        np.ascontiguousarray(team_rank, dtype=np.int32),
        member_slot,
        np.ascontiguousarray(member_weight, dtype=np.float64),
        *slots,
    )


def build_layout(step: np.ndarray, player_a: np.ndarray, player_b: np.ndarray, outcome: np.ndarray, n_players: int):
    """The :class:`Layout` of two-player games given in canonical order: their time ``step`` (non-decreasing),
    the players' codes ``0 .. n_players - 1`` on each side and the ``outcome`` codes
    (:data:`~.game.A_WINS`, :data:`~.game.DRAW`, :data:`~.game.B_WINS`)."""
    outcome = np.asarray(outcome)
    rank = np.empty((outcome.shape[0], 2), dtype=np.int32)
    rank[:, 0] = np.where(outcome == A_WINS, 1, np.where(outcome == DRAW, 1, 2))
    rank[:, 1] = np.where(outcome == A_WINS, 2, 1)
    members = np.empty((outcome.shape[0], 2), dtype=np.int64)
    members[:, 0] = player_a
    members[:, 1] = player_b
    empty = np.empty(0, dtype=np.int64)
    return _layout(step, empty, empty, rank.ravel(), members.ravel(), np.empty(0), n_players)


def build_team_layout(
    step: np.ndarray,
    game_teams: np.ndarray,
    team_members: np.ndarray,
    team_rank: np.ndarray,
    member_player: np.ndarray,
    member_weight: np.ndarray,
    n_players: int,
) -> Layout:
    """The :class:`Layout` of team games given in canonical order: per game its time ``step``
        (non-decreasing) and the offsets of its teams (``game_teams``, ``n_games + 1``), per team its members'
        offsets (``team_members``) and its place (``team_rank``, 1 the best; the kernels take a game's teams by
    place, tied teams in the layout's order), per member its
        player's code ``0 .. n_players - 1`` and weight (``member_weight``, empty when all are 1)."""
    return _layout(step, game_teams, team_members, team_rank, member_player, member_weight, n_players)


def prefix(layout: Layout, n_batches: int) -> Layout:
    """The layout of the history's first ``n_batches`` batches alone: views of ``layout``'s arrays (the slots,
    games, teams and members of a batch come after those of the batches before it), but for ``slot_next``,
    where a next slot beyond them is none (-1). A fit over it is a fit of those games (what the replay
    refits)."""
    games = int(layout.batch_games[n_batches])
    teams = int(layout.game_teams[games]) if layout.game_teams.shape[0] else 2 * games
    members = int(layout.team_members[teams]) if layout.team_members.shape[0] else teams
    slots = int(layout.batch_slots[n_batches])
    slot_next = layout.slot_next[:slots].copy()
    slot_next[slot_next >= slots] = -1
    return Layout(
        batch_step=layout.batch_step[:n_batches],
        batch_games=layout.batch_games[: n_batches + 1],
        batch_slots=layout.batch_slots[: n_batches + 1],
        game_teams=layout.game_teams[: games + 1] if layout.game_teams.shape[0] else layout.game_teams,
        team_members=layout.team_members[: teams + 1] if layout.team_members.shape[0] else layout.team_members,
        team_rank=layout.team_rank[:teams],
        member_slot=layout.member_slot[:members],
        member_weight=layout.member_weight[:members] if layout.member_weight.shape[0] else layout.member_weight,
        slot_player=layout.slot_player[:slots],
        slot_prev=layout.slot_prev[:slots],
        slot_next=slot_next,
        slot_elapsed=layout.slot_elapsed[:slots],
        slot_games=layout.slot_games[:slots],
    )
