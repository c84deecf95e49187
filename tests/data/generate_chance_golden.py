"""Regenerate chance_golden.json: the grid system's check values.

    python tests/data/generate_chance_golden.py

Exact fractions of Cowan's Examples 4.1 and 4.2, eq. (4) by adaptive quadrature, and check values of one
match between newcomers from the numpy reference (tests/helpers/chance_reference.py). On another machine the
quadrature values may differ in their last digit (summation order); the tests compare them within
``tolerance_relative``.
"""

from __future__ import annotations

import json
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for helpers (run as a script)

from helpers.chance_reference import eq_4, frame_of, reference_chance

GOLDEN_PATH = Path(__file__).with_name("chance_golden.json")


def write_golden() -> None:
    a, b = [2, 5, 13], [3, 7, 11]
    rho_a = [Fraction(9, 20), Fraction(3, 20), Fraction(8, 20)]
    rho_b = [Fraction(2, 11), Fraction(4, 11), Fraction(5, 11)]
    lam = [[Fraction(x, x + y) for y in b] for x in a]
    raw_a = [rho_a[j] * sum(rho_b[k] * lam[j][k] for k in range(3)) for j in range(3)]
    raw_b = [rho_b[k] * sum(rho_a[j] * lam[j][k] for j in range(3)) for k in range(3)]
    expected = sum(rho_a[j] * rho_b[k] * lam[j][k] for j in range(3) for k in range(3))
    squares = {n * n for n in range(1, 11)}
    support = [n for n in range(1, 101) if any(n + d in squares for d in (-1, 0, 1))]
    ms = [
        -2000.0,
        -1000.0,
        0.0,
        500.0,
        1000.0,
        1250.0,
        1500.0,
        1750.0,
        1900.0,
        2000.0,
        2100.0,
        2250.0,
        2500.0,
        2750.0,
        3000.0,
        3500.0,
        4000.0,
    ]
    sigmas, betas = [50.0, 100.0, 200.0], [0.8, 0.99, 1.0]
    rows = [[beta, sigma, m, eq_4(m, sigma, beta)] for beta in betas for sigma in sigmas for m in ms]
    newcomers = {}
    for score in (1.0, 0.5, 0.0):
        frame = frame_of([0], [1], [score])
        newcomers[str(score)] = {k: v for k, v in reference_chance(frame)[0][1].items() if k not in ("league", "seq")}
    golden = {
        "description": (
            "Check values of the luck-aware grid system (Cowan, 'Paired comparisons for games of chance'), written "
            "by tests/data/generate_chance_golden.py. example_4_1: rho_A', rho_B' and L after A > B with Lambda = x/(x+y) "
            "(exact fractions). example_4_2: support and value of the drifted distribution (exact). figure_3_1: "
            "rows [beta, sigma, m, m' - m] of eq. (4) on the display scale with B = delta_2000, by adaptive "
            "trapezoid rule in z = (x - m)/sigma (h = 0.002 on [-40, 40]; checked against scipy quad to "
            "tolerance_relative). newcomers: one match between two newcomers at the default "
            "parameters by the dense-matrix numpy reference in tests/helpers/chance_reference.py."
        ),
        "example_4_1": {
            "rho_a": [str(v / sum(raw_a)) for v in raw_a],
            "rho_b": [str(v / sum(raw_b)) for v in raw_b],
            "expected": str(expected),
        },
        "example_4_2": {"support": support, "value": str(Fraction(1, len(support)))},
        "figure_3_1": {"beta": betas, "sigma": sigmas, "m": ms, "tolerance_relative": 1e-9, "rows": rows},
        "newcomers": {"tolerance": 1e-9, "rows": newcomers},
    }
    lines = ["{"]
    for key, value in golden.items():
        if key == "figure_3_1":
            inner = {k: v for k, v in value.items() if k != "rows"}
            body = ",\n".join("   " + json.dumps(row) for row in value["rows"])
            lines.append(f' "figure_3_1": {json.dumps(inner)[:-1]}, "rows": [\n{body}\n ]}},')
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)},")
    lines[-1] = lines[-1].rstrip(",")
    GOLDEN_PATH.write_text("\n".join(lines) + "\n}\n")
    print(f"wrote {GOLDEN_PATH}")


if __name__ == "__main__":
    write_golden()
