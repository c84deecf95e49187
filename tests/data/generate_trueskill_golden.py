"""Regenerate trueskill_golden.json: truncated-Gaussian moments and outcome probabilities at 100 digits.

Not a test (pytest collects only test_*.py). Needs mpmath, which duckrate does not depend on:

    pip install mpmath && python tests/data/generate_trueskill_golden.py

Each value is the exact quantity rounded once to a double, so the tolerances in the JSON bound the
error of duckrate.systems.trueskill's double-precision evaluation (the tolerances were set at about
four times the largest error observed over these points and 25,000 random ones).
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath as mp

mp.mp.dps = 100
TINY = 1e-300  # values below this are stored as 0.0 when they underflow a double's normal range


def q(x):
    """P(Z > x)."""
    return mp.erfc(x / mp.sqrt(2)) / 2


def pdf(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def upper(alpha):
    """Mean, variance and W_win = mean (mean - alpha) of Z | Z > alpha."""
    alpha = mp.mpf(alpha)
    mass = q(alpha)
    mean = pdf(alpha) / mass
    return mean, 1 + alpha * pdf(alpha) / mass - mean * mean, mean * (mean - alpha)


def interval(s, h):
    """Mean and variance of Z | s - h <= Z <= s + h (h = 0: the point s)."""
    s, h = mp.mpf(s), mp.mpf(h)
    if h == 0:
        return s, mp.mpf(0)
    lo, hi = s - h, s + h
    mass = q(lo) - q(hi)
    mean = (pdf(lo) - pdf(hi)) / mass
    return mean, 1 + (lo * pdf(lo) - hi * pdf(hi)) / mass - mean * mean


def probabilities(t, h):
    t, h = mp.mpf(t), mp.mpf(h)
    return q(h - t), q(abs(t) - h) - q(abs(t) + h), q(h + t)


def as_double(x):
    value = float(x)
    return value if abs(value) >= TINY else 0.0


def main() -> None:
    alphas = [
        -1e6,
        -40.0,
        -38.0,
        -30.0,
        -10.0,
        -3.0,
        -1.0,
        -1e-3,
        0.0,
        0.5,
        1.0,
        2.9999999,
        3.0,
        3.0000001,
        3.4999999,
        3.5,
        4.0,
        5.0,
        8.0,
        10.0,
        20.0,
        40.0,
        100.0,
        1e4,
        1e6,
    ]
    ss = [0.0, 1e-9, 0.1, 1.0, 2.5, 3.0, 3.5, 5.0, 10.0, 40.0, 1e3, 1e5]
    hs = [0.0, 1e-12, 1e-6, 1e-3, 0.0563, 0.126, 0.5, 1.0, 2.0, 5.0]
    pairs = [(s, h) for s in ss for h in hs]
    for s in (0.0, 0.5, 1.0, 2.0, 4.0, 10.0):  # both sides of the Hermite-series regime h·(1 + s) = 1
        pairs += [(s, (1.0 / (1.0 + s)) * (1 - 1e-9)), (s, (1.0 / (1.0 + s)) * (1 + 1e-9))]
    for h in (0.3, 1.0, 2.0):  # both sides of the continued-fraction regime s - h = 3
        pairs += [(3.0 + h - 1e-9, h), (3.0 + h + 1e-9, h)]
    ts = [-40.0, -10.0, -3.0, -1.0, 0.0, 0.5, 3.0, 10.0, 40.0]
    golden = {
        "description": (
            "Moments of the truncated standard normal and TrueSkill outcome probabilities, computed with "
            "mpmath at 100 digits by tests/data/generate_trueskill_golden.py. upper: [alpha, E[Z|Z>alpha], "
            "Var[Z|Z>alpha], 1 - Var] (V_win(t, h) = mean and W_win(t, h) = 1 - Var at alpha = h - t). interval: [s, h, "
            "E[Z|s-h<=Z<=s+h], Var] (V_draw = -sign(t) mean at s = |t|, W_draw = 1 - var). probabilities: "
            "[t, h, P(win), P(draw), P(loss)]. Values below 1e-300 are stored as 0."
        ),
        "tolerance": {
            "mean_relative": 2e-13,
            "var_absolute": 1e-13,
            "var_relative": 4e-12,
            "w_relative": 1e-12,
            "probability_relative": 1e-12,
            "note": (
                "mean: relative error (|mean| grows with alpha); var = 1 - w: absolute error, and relative "
                "error where var >= 1e-250; w (upper rows): relative error where w >= 1e-250; probabilities: relative error where >= 1e-250, else absolute 1e-300."
            ),
        },
        "upper": [[a, *map(as_double, upper(a))] for a in alphas],
        "interval": [[s, h, *map(as_double, interval(s, h))] for s, h in pairs],
        "probabilities": [
            [t, h, *map(as_double, probabilities(t, h))] for t in ts for h in (0.0, 1e-6, 0.0563, 0.5, 3.0)
        ],
    }
    path = Path(__file__).with_name("trueskill_golden.json")
    lines = ["{"]
    for key, value in golden.items():  # one row per line: readable diffs
        if isinstance(value, list):
            rows = ",\n".join("  " + json.dumps(row) for row in value)
            lines.append(f" {json.dumps(key)}: [\n{rows}\n ],")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)},")
    lines[-1] = lines[-1].rstrip(",")
    path.write_text("\n".join(lines) + "\n}\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
