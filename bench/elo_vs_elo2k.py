"""Tang, Wang & Jin, Section 4.2 on synthetic data: sparsity decides between Elo and Elo2k.

For non-BT (SST/WST) win matrices with uniform matchmaking, T = 100k games, N = 1000 players (sparse,
t/N <= 100) and N = 100 (dense, t/N <= 1000): Elo, Elo2k (k = 4) and Pairwise, each with its decaying
schedule ``η_t = sqrt(a·N/(t+b))`` (Elo2k, Elo) chosen from a small grid by the paper's criterion
(Appendix F.2: Σ_i CE_i + 5 (CE_i - ln 2)·[CE_i > ln 2] over 30 checkpoints), then the cumulative loss
``(1/t)·L_t`` at t/N = 1, 10, 100 (and 1000 when dense) is printed. The paper's finding: in the sparse
regime Elo's cumulative loss is below Elo2k's; in the dense regime the order reverses.

    .venv/bin/python bench/elo_vs_elo2k.py [--generators wst_byentry sst_byrow]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

T = 100_000
GRID = [(a, b) for a in (0.002, 0.01, 0.05, 0.2, 1.0, 5.0) for b in (10.0, 1000.0)]


def cumulative_loss(out):
    import numpy as np

    out = out.sort("seq")
    p = np.clip(out["expected_a"].to_numpy(), 1e-15, 1 - 1e-15)
    o = out["score_a"].to_numpy()
    loss = -(o * np.log(p) + (1 - o) * np.log1p(-p))
    return np.cumsum(loss) / np.arange(1, len(loss) + 1)


def criterion(curve) -> float:
    """Appendix F.2 over 30 evenly spaced checkpoints."""
    checkpoints = [curve[int(len(curve) * (i + 1) / 30) - 1] for i in range(30)]
    return sum(ce + 5 * (ce - math.log(2)) * (ce > math.log(2)) for ce in checkpoints)


def best_curve(run, games) -> tuple[tuple, list]:
    best = None
    for a, b in GRID:
        curve = cumulative_loss(run(games, a=a, b=b))
        score = criterion(curve)
        if best is None or score < best[0]:
            best = (score, (a, b), curve)
    return best[1], best[2]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generators", nargs="+", default=["sst_byrow", "wst_byentry", "wst_byrow"])
    args = parser.parse_args()
    print("\n".join(common.machine_lines()))
    import duckrate
    from duckrate.synthetic import matrix_matches, win_matrix

    rows = []
    started = time.perf_counter()
    for generator in args.generators:
        for n in (1000, 100):
            games = matrix_matches(win_matrix(generator, n, seed=1), T, seed=2).drop("p_true")
            elo_params, elo = best_curve(duckrate.elo, games)
            elo2k_params, elo2k = best_curve(lambda g, a, b: duckrate.elo2k(g, a=a, b=b), games)
            pairwise = cumulative_loss(duckrate.pairwise(games))
            marks = [1, 10, 100] + ([1000] if T // n >= 1000 else [])
            for mark in marks:
                t = mark * n
                winner = "Elo" if elo[t - 1] < elo2k[t - 1] else "Elo2k"
                rows.append(
                    [
                        generator,
                        str(n),
                        str(mark),
                        f"{elo[t - 1]:.4f}",
                        f"{elo2k[t - 1]:.4f}",
                        f"{pairwise[t - 1]:.4f}",
                        winner,
                    ]
                )
            rows.append([generator, str(n), "(a, b)", str(elo_params), str(elo2k_params), "-", ""])
    print(f"\nCumulative loss (1/t)·L_t, T = {T:,}, uniform matchmaking ({time.perf_counter() - started:.0f} s)")
    print(common.format_table(["generator", "N", "t/N", "Elo", "Elo2k", "Pairwise", "lower"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
