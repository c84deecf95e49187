"""Calibration and power of bt_lr_test's tests on data whose truth is known (Tang, Wang & Jin, Appendix F).

Two tables, from games drawn with ``duckrate.synthetic`` (uniform matchmaking unless stated):

1. *Calibration*: data drawn from a Bradley-Terry model. A trustworthy test's p-values are uniform
   there: printed per test are the rejection rates at 1% and 5% over ``--seeds`` data sets and the
   Kolmogorov-Smirnov p-value of the p-values against Uniform(0, 1) (small: not uniform).
   Run at N = 100 (dense, 2T/N = 400 with T = 20k) and N = 1000 (sparse, 2T/N = 40 with T = 20k).
2. *Power*: for each generator (BT, SST-by-row/-diagonal/-entry, WST-by-row/-diagonal/-entry, a BT
   matrix drifting into a different BT matrix, and BT under rating-window matchmaking) at N = 100 and
   N = 1000 with T = 100k, the share of ``--power-seeds`` data sets on which each test rejects at 1% (p <= 0.01).

Nothing is asserted; the output is pasted into BENCHMARKS.md and summarised in the README.

    .venv/bin/python bench/bt_lr_test_power.py [--seeds 100] [--power-seeds 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common


def calibration(n_players: int, n_matches: int, seeds: int) -> list[list[str]]:
    import numpy as np
    from scipy import stats

    import duckrate
    from duckrate.synthetic import matrix_matches, win_matrix

    p_values: dict[str, list[float]] = {}
    for seed in range(seeds):
        games = matrix_matches(win_matrix("bt", n_players, seed=10_000 + seed), n_matches, seed=seed).drop("p_true")
        out = duckrate.bt_lr_test(games, seed=seed)
        for test, p in zip(out["test"], out["p_value"]):
            p_values.setdefault(test, []).append(p)
    rows = []
    for test, values in p_values.items():
        values = np.array(values, dtype=float)
        rows.append(
            [
                test,
                f"{n_players}",
                f"{2 * n_matches / n_players:.0f}",
                f"{np.mean(values < 0.01):.2f}",
                f"{np.mean(values < 0.05):.2f}",
                f"{stats.kstest(values, 'uniform').pvalue:.3g}",
            ]
        )
    return rows


GENERATORS = (
    "bt",
    "sst_byrow",
    "sst_bydiagonal",
    "sst_byentry",
    "wst_byrow",
    "wst_bydiagonal",
    "wst_byentry",
    "bt_drifting",
    "bt_rating_window",
)


def power(n_players: int, n_matches: int, seeds: int) -> list[list[str]]:
    import duckrate
    from duckrate.fits.bt_lr_test import TESTS
    from duckrate.synthetic import matrix_matches, win_matrix

    rows = []
    for generator in GENERATORS:
        rejections = {test: 0 for test in TESTS}
        for seed in range(seeds):
            kind = "bt" if generator.startswith("bt") else generator
            start = win_matrix(kind, n_players, seed=20_000 + seed)
            options = {}
            if generator == "bt_drifting":
                options["final_matrix"] = win_matrix("bt", n_players, seed=30_000 + seed)
            if generator == "bt_rating_window":
                options["matchmaking"] = "rating_window"
            games = matrix_matches(start, n_matches, seed=seed, **options).drop("p_true")
            out = duckrate.bt_lr_test(games, seed=seed)
            for test, p in zip(out["test"], out["p_value"]):
                rejections[test] += p is not None and p <= 0.01
        rows.append([generator, str(n_players)] + [f"{rejections[t] / seeds:.1f}" for t in TESTS])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--power-seeds", type=int, default=5)
    args = parser.parse_args()
    print("\n".join(common.machine_lines()))
    from duckrate.fits.bt_lr_test import TESTS

    started = time.perf_counter()
    rows = calibration(100, 20_000, args.seeds) + calibration(1000, 20_000, args.seeds)
    print(
        f"\nCalibration on Bradley-Terry data, {args.seeds} seeds each, T = 20k ({time.perf_counter() - started:.0f} s)"
    )
    print(common.format_table(["test", "N", "2T/N", "reject @1%", "reject @5%", "KS p (uniform?)"], rows))
    started = time.perf_counter()
    rows = power(100, 100_000, args.power_seeds) + power(1000, 100_000, args.power_seeds)
    print(
        f"\nPower: share of {args.power_seeds} data sets rejected at 1%, T = 100k ({time.perf_counter() - started:.0f} s)"
    )
    print(common.format_table(["generator", "N", *TESTS], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
