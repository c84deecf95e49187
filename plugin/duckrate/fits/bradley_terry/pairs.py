"""Games aggregated into ordered pairs: the only data the Bradley-Terry solvers read.

Every game of side A (``player_a``) against side B contributes its weight to the pair ``(a, b)``:
``wins += w·s`` and ``losses += w·(1 - s)``, so a draw counts as half a win each way.
Pairs are ordered (``(a, b)`` and ``(b, a)`` stay apart) so that an order (first-move, home) effect can be
fitted from the same arrays. Aggregation is one counting pass in a fixed order: the same rows in the same
order give the same pairs and the same sums bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel


@dataclass(frozen=True)
class Pairs:
    """Ordered pairs of one fit.

    Attributes
    ----------
    n_players : number of players (codes ``0 .. n_players-1``).
    a, b : int64 arrays, the two players of each pair (side A, side B).
    wins, losses : float64 arrays, weighted score of side A against side B and its complement.
    games : int64 array, games (rows) per player, unweighted.
    row_pair : int64 array, the pair of each input row (in the order the rows were given).
    row_wins, row_losses : float64 arrays, each row's weighted contribution (for bootstrap resamples).
    row_a, row_b : int64 arrays, each row's two players (the row-level fits: covariates, sandwich).
    """

    n_players: int
    a: np.ndarray
    b: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    games: np.ndarray
    row_pair: np.ndarray
    row_wins: np.ndarray
    row_losses: np.ndarray
    row_a: np.ndarray
    row_b: np.ndarray

    @property
    def n_pairs(self) -> int:
        return self.a.shape[0]


@kernel
def group_pairs(first, second, n_keys):
    """Group items by (first, second), keys in ``0 .. n_keys-1``: a stable counting sort by ``first``, then,
    within each ``first``, groups in order of their first item (a marker array). O(items + keys).

    Returns the group of each item and each group's ``first`` and ``second``; within a group, items keep
    their given order, so sums over a group's items add in the same order whatever the grouping."""
    n = first.shape[0]
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for r in range(n):
        start[first[r] + 1] += 1
    for i in range(n_keys):
        start[i + 1] += start[i]
    fill = start[:-1].copy()
    by_first = np.empty(n, dtype=np.int64)
    for r in range(n):
        by_first[fill[first[r]]] = r
        fill[first[r]] += 1
    marker = np.full(n_keys, -1, dtype=np.int64)
    slot = np.empty(n_keys, dtype=np.int64)
    group = np.empty(n, dtype=np.int64)
    group_first = np.empty(n, dtype=np.int64)
    group_second = np.empty(n, dtype=np.int64)
    n_groups = 0
    for i in range(n_keys):
        for k in range(start[i], start[i + 1]):
            r = by_first[k]
            j = second[r]
            if marker[j] != i:
                marker[j] = i
                slot[j] = n_groups
                group_first[n_groups] = i
                group_second[n_groups] = j
                n_groups += 1
            group[r] = slot[j]
    return group, group_first[:n_groups].copy(), group_second[:n_groups].copy()


@kernel
def _aggregate(code_a, code_b, score, weight, n_players):
    """Rows grouped into ordered pairs (:func:`group_pairs`: by side A, then pairs in order of their first
    row), each pair's weighted wins and losses summed in row order."""
    n_rows = code_a.shape[0]
    weighted = weight.shape[0] == n_rows
    games = np.zeros(n_players, dtype=np.int64)
    for r in range(n_rows):
        games[code_a[r]] += 1
        games[code_b[r]] += 1
    row_pair, pair_a, pair_b = group_pairs(code_a, code_b, n_players)
    n_pairs = pair_a.shape[0]
    wins = np.zeros(n_pairs, dtype=np.float64)
    losses = np.zeros(n_pairs, dtype=np.float64)
    row_wins = np.empty(n_rows, dtype=np.float64)
    row_losses = np.empty(n_rows, dtype=np.float64)
    for r in range(n_rows):
        w = weight[r] if weighted else 1.0
        won = w * score[r]
        lost = w * (1.0 - score[r])
        wins[row_pair[r]] += won
        losses[row_pair[r]] += lost
        row_wins[r] = won
        row_losses[r] = lost
    return pair_a, pair_b, wins, losses, games, row_pair, row_wins, row_losses


def pairs_from_rows(
    code_a: np.ndarray, code_b: np.ndarray, score: np.ndarray, weight: np.ndarray | None, n_players: int
) -> Pairs:
    """Aggregate games given as integer codes (``0 <= code < n_players``, ``code_a != code_b``), scores in
    [0, 1] and optional positive weights (None: every game weighs 1) into :class:`Pairs`."""
    code_a = np.ascontiguousarray(code_a, dtype=np.int64)
    code_b = np.ascontiguousarray(code_b, dtype=np.int64)
    score = np.ascontiguousarray(score, dtype=np.float64)
    weight = np.ones(1, dtype=np.float64) if weight is None else np.ascontiguousarray(weight, dtype=np.float64)
    a, b, wins, losses, games, row_pair, row_wins, row_losses = _aggregate(
        code_a, code_b, score, weight, int(n_players)
    )
    return Pairs(int(n_players), a, b, wins, losses, games, row_pair, row_wins, row_losses, code_a, code_b)


def pairs_from_sums(
    code_a: np.ndarray, code_b: np.ndarray, wins: np.ndarray, losses: np.ndarray, games: np.ndarray, n_players: int
) -> Pairs:
    """:class:`Pairs` from sums already made elsewhere (the Spark path): one entry per distinct ordered
    pair, ``wins``/``losses`` its summed weighted score and complement, ``games`` its number of rows,
    entries in the order of each pair's first game (as :func:`pairs_from_rows` meets them). The pairs come
    out in :func:`pairs_from_rows`' order; the row arrays hold one row per pair (the pairs fits read none)."""
    code_a = np.ascontiguousarray(code_a, dtype=np.int64)
    code_b = np.ascontiguousarray(code_b, dtype=np.int64)
    group, a, b = group_pairs(code_a, code_b, int(n_players))
    ordered_wins = np.empty(a.shape[0], dtype=np.float64)
    ordered_losses = np.empty(a.shape[0], dtype=np.float64)
    ordered_wins[group] = wins
    ordered_losses[group] = losses
    per_player = np.zeros(int(n_players), dtype=np.int64)
    np.add.at(per_player, code_a, np.asarray(games, dtype=np.int64))
    np.add.at(per_player, code_b, np.asarray(games, dtype=np.int64))
    return Pairs(
        int(n_players),
        a,
        b,
        ordered_wins,
        ordered_losses,
        per_player,
        group,
        np.asarray(wins, dtype=np.float64),
        np.asarray(losses, dtype=np.float64),
        code_a,
        code_b,
    )


@kernel
def _resample_sums(row_pair, row_wins, row_losses, counts, n_pairs):
    wins = np.zeros(n_pairs, dtype=np.float64)
    losses = np.zeros(n_pairs, dtype=np.float64)
    for r in range(row_pair.shape[0]):
        c = counts[r]
        if c:
            wins[row_pair[r]] += c * row_wins[r]
            losses[row_pair[r]] += c * row_losses[r]
    return wins, losses


def resampled(pairs: Pairs, counts: np.ndarray) -> Pairs:
    """The same pairs with each row counted ``counts[row]`` times (a bootstrap resample); pairs left with
    no game keep zero wins and losses, which adds nothing to the likelihood."""
    wins, losses = _resample_sums(
        pairs.row_pair, pairs.row_wins, pairs.row_losses, np.ascontiguousarray(counts, np.int64), pairs.n_pairs
    )
    return Pairs(
        pairs.n_players,
        pairs.a,
        pairs.b,
        wins,
        losses,
        pairs.games,
        pairs.row_pair,
        pairs.row_wins,
        pairs.row_losses,
        pairs.row_a,
        pairs.row_b,
    )
