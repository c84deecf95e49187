"""The marts' Python API gives the same bits on every call and for every row order of the replay.

The API runs the marts' SQL in DuckDB, which reads the frame in parallel: the sums are exact (DECIMAL) and
the leaderboards only pick rows, so no float sum depends on the order the rows arrive in. Many repeated
calls make a regression show up here reliably.
"""

from __future__ import annotations

import polars as pl

import duckrate
from duckrate.synthetic import generate_matches


def _bits(frame: pl.DataFrame) -> list[bytes]:
    return [
        frame[c].cast(pl.Utf8).to_arrow().to_string().encode()
        if frame[c].dtype == pl.Utf8
        else frame[c].to_numpy().tobytes()
        for c in frame.columns
    ]


def test_marts_are_bit_identical_across_calls_and_row_order():
    games = generate_matches(10_240, 300, n_leagues=3, seed=11)
    replay = pl.concat(
        [
            duckrate.glicko(games, period_length=0.01).with_columns(system=pl.lit("glicko")),
            duckrate.elo(games).with_columns(system=pl.lit("elo")),
        ],
        how="diagonal_relaxed",
    )
    marts = {
        "calibration_bins": lambda r: duckrate.calibration_bins(r, bins=10),
        "calibration_summary": lambda r: duckrate.calibration_summary(r, min_games=5, warmup=0.1),
        "loss_curve": lambda r: duckrate.loss_curve(r, points=50),
        "loss_by_gap": lambda r: duckrate.loss_by_gap(r, bin_width=25),
        "leaderboard": lambda r: duckrate.leaderboard(r),
    }
    for name, mart in marts.items():
        first = _bits(mart(replay))
        for seed in range(12):
            frame = replay if seed % 2 else replay.sample(fraction=1.0, shuffle=True, seed=seed)
            assert _bits(mart(frame)) == first, (name, seed)
