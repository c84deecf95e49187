"""The synthetic win matrices and game streams of Tang, Wang & Jin, "Elo misspecification", Appendix F.

One job: draw games from a known win-probability matrix ``P`` (``P[i, j]`` = chance that i beats j), so
tests of the Bradley-Terry model and comparisons of rating systems can be run where the truth is known.

* :func:`win_matrix` builds ``P`` for N players, ordered strongest first (π(i) = N - i, Appendix F.1):
  ``bt`` (Bradley-Terry, θ ~ N(0, bt_sd²)), ``sst_byrow``, ``sst_bydiagonal``, ``sst_byentry`` (noisy
  sorting, P = 0.6), ``wst_byrow``, ``wst_bydiagonal``, ``wst_byentry``. Each specifies ``P[i, j]`` for
  i < j and completes ``P[j, i] = 1 - P[i, j]``, ``P[i, i] = ½``.
* :func:`matrix_matches` plays T games: ``uniform`` matchmaking (i, j uniform; the paper draws j
  independently of i, here a j equal to i is redrawn, as a player cannot meet itself), or Appendix F.3's
  ``rating_window`` (j uniform among the players whose rank by a running Elo score is within K/2 of i's,
  K = N/5). Passing a second matrix makes the win rates drift linearly, ``P^t = (1 - t/T) P⁰ + (t/T) Pᵀ``.

Deterministic: all randomness comes from one ``numpy.random.Generator(PCG64(seed))`` drawn in a fixed
order; the sequential part runs in numba.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.jit import kernel
from duckrate.core.scales import ELO_SCALE, LN10
from duckrate.synthetic.columns import player_names

KINDS = ("bt", "sst_byrow", "sst_bydiagonal", "sst_byentry", "wst_byrow", "wst_bydiagonal", "wst_byentry")
MATCHMAKING = ("uniform", "rating_window")
_MATCHMAKING_ELO_K = 32.0  # the running Elo score that ranks players for rating_window matchmaking


def win_matrix(kind: str, n_players: int, seed: int = 0, bt_sd: float = 1.0) -> np.ndarray:
    """An ``n x n`` win-probability matrix of the given kind (Appendix F.1), strongest player first.

    Parameters
    ----------
    kind : one of ``KINDS``.
    n_players : N >= 2.
    seed : seeds the random sequence r (or U, or θ for ``bt``).
    bt_sd : standard deviation of the natural-scale strengths θ for ``bt``.
    """
    if kind not in KINDS:
        raise ValueError(f"win_matrix: kind={kind!r}; expected one of {', '.join(KINDS)}")
    if int(n_players) != n_players or n_players < 2:
        raise ValueError(f"win_matrix: n_players={n_players!r}; expected an integer >= 2")
    n = int(n_players)
    rng = np.random.Generator(np.random.PCG64(seed))
    i, j = np.triu_indices(n, k=1)  # i < j: i is the stronger (lower index) player
    if kind == "bt":
        theta = np.sort(rng.normal(0.0, bt_sd, n))[::-1]
        upper = 1.0 / (1.0 + np.exp(theta[j] - theta[i]))
    elif kind == "sst_byentry":
        upper = np.full(i.size, 0.6)
    elif kind == "wst_byentry":
        upper = 0.5 + 0.5 * rng.uniform(0.0, 1.0, i.size)
    else:
        r = np.sort(rng.uniform(0.0, 1.0, n - 1))  # ascending: r_1 <= ... <= r_{N-1}
        if kind.startswith("sst"):
            r = r[::-1]  # SST uses the descending sequence
        if kind.endswith("byrow"):
            upper = 0.5 + 0.5 * r[i]  # P_ij = ½ + ½ r_i (1-based i)
        else:
            upper = 0.5 + 0.5 * r[n - 1 - (j - i)]  # P_ij = ½ + ½ r_{N-j+i} (1-based)
    matrix = np.full((n, n), 0.5)
    matrix[i, j] = upper
    matrix[j, i] = 1.0 - upper
    return matrix


@kernel
def _play(
    p_start, p_end, drift, n_matches, window, rating_window, initial_order, first, second_draw, outcome_draw, elo_step
):
    """Sequential part: pick the pairs (uniform or by running-Elo rank window) and the outcomes."""
    n = p_start.shape[0]
    player_a = np.empty(n_matches, dtype=np.int64)
    player_b = np.empty(n_matches, dtype=np.int64)
    score = np.empty(n_matches, dtype=np.float64)
    truth = np.empty(n_matches, dtype=np.float64)
    rating = np.zeros(n, dtype=np.float64)
    by_rank = initial_order.copy()  # players sorted by running Elo score, highest first (ties: random)
    rank_of = np.empty(n, dtype=np.int64)
    for position in range(n):
        rank_of[by_rank[position]] = position
    half = window // 2
    for t in range(n_matches):
        a = first[t]
        if rating_window:
            low = max(rank_of[a] - half, 0)
            high = min(rank_of[a] + half, n - 1)
            pick = low + int(second_draw[t] * (high - low))  # uniform over the window minus a itself
            if pick >= rank_of[a]:
                pick += 1
            b = by_rank[pick]
        else:
            b = int(second_draw[t] * (n - 1))
            if b >= a:
                b += 1
        if drift:
            share = t / n_matches
            p = (1.0 - share) * p_start[a, b] + share * p_end[a, b]
        else:
            p = p_start[a, b]
        won = 1.0 if outcome_draw[t] < p else 0.0
        player_a[t] = a
        player_b[t] = b
        score[t] = won
        truth[t] = p
        if rating_window:
            expected = 1.0 / (1.0 + math.exp(rating[b] - rating[a]))
            change = elo_step * (won - expected)
            rating[a] += change
            rating[b] -= change
            for moved in (a, b):  # restore the rank order by moving the two players (insertion steps)
                position = rank_of[moved]
                while position > 0 and rating[by_rank[position - 1]] < rating[moved]:
                    other = by_rank[position - 1]
                    by_rank[position] = other
                    rank_of[other] = position
                    position -= 1
                while position < n - 1 and rating[by_rank[position + 1]] > rating[moved]:
                    other = by_rank[position + 1]
                    by_rank[position] = other
                    rank_of[other] = position
                    position += 1
                by_rank[position] = moved
                rank_of[moved] = position
    return player_a, player_b, score, truth


def matrix_matches(
    matrix: np.ndarray,
    n_matches: int,
    seed: int = 0,
    matchmaking: str = "uniform",
    final_matrix: np.ndarray | None = None,
    window: int | None = None,
) -> pl.DataFrame:
    """T games drawn from a win matrix, as a ``matches`` table.

    Parameters
    ----------
    matrix : ``P`` (or ``P⁰`` when ``final_matrix`` is given), ``n x n``.
    n_matches : T.
    seed : seeds the pairs and outcomes.
    matchmaking : ``uniform`` or ``rating_window`` (Appendix F.3).
    final_matrix : ``Pᵀ``; win rates then drift linearly from ``matrix`` to it over the T games.
    window : K of the rating window (default N/5).

    Returns
    -------
    DataFrame ``match_id`` (1..T), ``played_at`` (= match_id), ``player_a``, ``player_b`` (``p000001`` is
    the strongest), ``score_a`` (1 or 0) and ``p_true`` (the win probability the game was drawn from).
    """
    matrix = np.ascontiguousarray(matrix, dtype=np.float64)
    n = matrix.shape[0]
    if matrix.ndim != 2 or matrix.shape[1] != n or n < 2:
        raise ValueError(f"matrix_matches: matrix of shape {matrix.shape}; expected a square matrix, N >= 2")
    if matchmaking not in MATCHMAKING:
        raise ValueError(f"matrix_matches: matchmaking={matchmaking!r}; expected one of {', '.join(MATCHMAKING)}")
    end = matrix if final_matrix is None else np.ascontiguousarray(final_matrix, dtype=np.float64)
    if end.shape != matrix.shape:
        raise ValueError(f"matrix_matches: final_matrix of shape {end.shape}; expected {matrix.shape}")
    k = max(2, n // 5) if window is None else int(window)
    rng = np.random.Generator(np.random.PCG64(seed))
    initial_order = rng.permutation(n).astype(np.int64)
    first = rng.integers(0, n, n_matches)
    second = rng.uniform(0.0, 1.0, n_matches)
    outcome = rng.uniform(0.0, 1.0, n_matches)
    player_a, player_b, score, truth = _play(
        matrix,
        end,
        final_matrix is not None,
        int(n_matches),
        k,
        matchmaking == "rating_window",
        initial_order,
        first,
        second,
        outcome,
        _MATCHMAKING_ELO_K * LN10 / ELO_SCALE,
    )
    names = player_names(n)
    ids = np.arange(1, n_matches + 1, dtype=np.int64)
    return pl.DataFrame(
        {
            "match_id": ids,
            "played_at": ids,
            "player_a": names.gather(player_a),
            "player_b": names.gather(player_b),
            "score_a": score,
            "p_true": truth,
        }
    )
