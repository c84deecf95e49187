"""Game weights that undo adaptive sampling: ``reweight := 'inverse_pair_frequency'``.

When a platform samples some pairs far more often than others (LMArena shows new models against the
leaders), the fit's information concentrates on those pairs. Weighting each game by the inverse of how often
its (unordered) pair was played, ``1 / max(n_pair, min_pair_count)``, gives every pair about the same say, as
arena-rank does (LMArena's July 2025 method); the floor keeps rarely played pairs from dominating. The factors
are scaled to mean 1 over the league's games (the point estimate of a plain MLE does not depend on the scale;
a prior's weight relative to the data does), then multiply any ``weight`` column.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel
from duckrate.fits.bradley_terry.pairs import group_pairs


@kernel
def _unordered_counts(code_a, code_b, games, n_players):
    low = np.minimum(code_a, code_b)
    high = np.maximum(code_a, code_b)
    group, _, _ = group_pairs(low, high, n_players)
    counts = np.zeros(group.shape[0], dtype=np.float64)
    for r in range(group.shape[0]):
        counts[group[r]] += games[r]
    out = np.empty(group.shape[0], dtype=np.float64)
    for r in range(group.shape[0]):
        out[r] = counts[group[r]]
    return out


def inverse_pair_frequency(
    code_a: np.ndarray, code_b: np.ndarray, n_players: int, floor: int, games: np.ndarray | None = None
) -> np.ndarray:
    """Each game's factor ``1 / max(n_pair, floor)``, scaled to mean 1 over the games (n_pair counts both
    orders). With ``games``, the entries are summed pairs instead of games (the Spark path): entry ``r``
    stands for ``games[r]`` games of its ordered pair, and gets their common factor."""
    if code_a.shape[0] == 0:
        return np.empty(0)
    games = np.ones(code_a.shape[0]) if games is None else np.asarray(games, dtype=np.float64)
    counts = _unordered_counts(
        np.ascontiguousarray(code_a, np.int64), np.ascontiguousarray(code_b, np.int64), games, int(n_players)
    )
    factor = 1.0 / np.maximum(counts, float(floor))
    return factor / (np.sum(factor * games) / np.sum(games))
