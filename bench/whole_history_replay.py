"""Benchmark: the whole-history replays with honest forecasts (``duckrate.whr``, ``duckrate.ttt``) against one cold
fit of the same history (``whr_fit``, ``ttt_fit``), and what refitting less often costs in log loss.

Target: with the default ``refit_every``, a replay of a tennis-sized history (200k games, 20k players, 50 years of
daily steps) costs at most 5x one cold fit. Nothing is asserted; the script prints tables to paste into
BENCHMARKS.md and docs/whole-history.md.

The history (:func:`tennis_history`, generated here, seeded): careers of 2-15 years placed over the 50 years (some
cut by its ends), an activity per player (log-normal) that sets how often they play, each game between a player and
an opponent active on the same day, true skills on the Elo scale (sd 200) that drift by a random walk (3 points a
day), results from the logistic on the true skills, no draws: about 20 games per player on average, a few players
with hundreds, games on nearly every day.

* ``cost``: numba warmed up on a small history; then ``--repeats`` times each of ``whr_fit``, ``ttt_fit`` (cold fits)
  and ``whr``, ``ttt`` at their default ``refit_every`` over the 200k games; medians and the ratio replay / fit.
* ``loss``: the log loss of the replays' forecasts at several ``refit_every`` (1 included) on a 3k-game history
  (300 players, 8 years), at the default parameters and at parameters closer to the data's scale (WHR ``w2`` 10;
  TTT ``sigma`` 1.5, ``gamma`` 0.015), with Elo, Glicko and TrueSkill on the same games; and at the default
  ``refit_every`` and with the final fit alone on the 200k games. For WHR also without the filter between refits
  (``filtered`` False of :func:`duckrate.fits.whole_history.replay.replay_matches`, a measuring switch).

Usage (from the repository root)::

    .venv/bin/python bench/whole_history_replay.py            # cost (3 repeats) and loss
    .venv/bin/python bench/whole_history_replay.py --quick    # cost (1 repeat), loss on the small history only
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

SEED = 20_250_101


def tennis_history(n_games: int, n_players: int, years: float, seed: int, drift: float = 3.0, skill_sd: float = 200.0):
    """The synthetic tennis-like history described in the module docstring, as a Polars matches frame."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(seed)
    total = years * 365.25
    length = rng.uniform(2.0, 15.0, n_players) * 365.25
    start = rng.uniform(-0.5 * length, total - 0.5 * length)
    end = np.minimum(start + length, total)
    start = np.maximum(start, 0.0)
    activity = rng.lognormal(0.0, 1.0, n_players)
    weight = activity * (end - start)
    a = rng.choice(n_players, n_games, p=weight / weight.sum())
    day = np.floor(start[a] + rng.uniform(0.0, 1.0, n_games) * (end[a] - start[a])).astype(np.int64)
    b = np.full(n_games, -1)
    todo = np.arange(n_games)
    while todo.size:  # an opponent active that day, drawn by activity
        candidate = rng.choice(n_players, todo.size, p=activity / activity.sum())
        ok = (candidate != a[todo]) & (start[candidate] <= day[todo]) & (day[todo] < end[candidate])
        b[todo[ok]] = candidate[ok]
        todo = todo[~ok]
    # each player's true skill: a random walk over the days they play
    player = np.concatenate([a, b])
    days = np.concatenate([day, day])
    order = np.lexsort((days, player))
    sorted_player, sorted_day = player[order], days[order]
    first = np.r_[True, sorted_player[1:] != sorted_player[:-1]]
    gap = np.where(first, 0, np.r_[0, np.diff(sorted_day)])
    steps = np.where(first, 0.0, rng.normal(0.0, 1.0, 2 * n_games) * drift * np.sqrt(gap))
    walk = np.cumsum(steps)
    walk -= walk[np.maximum.accumulate(np.where(first, np.arange(2 * n_games), 0))]
    skill = np.empty(2 * n_games)
    skill[order] = rng.normal(0.0, skill_sd, n_players)[sorted_player] + walk
    wins = rng.uniform(0.0, 1.0, n_games) < 1.0 / (1.0 + 10.0 ** (-(skill[:n_games] - skill[n_games:]) / 400.0))
    played_at = (np.datetime64("1970-01-01") + day.astype("timedelta64[D]")).astype("datetime64[us]")
    played_at = played_at + rng.integers(0, 86_400, n_games).astype("timedelta64[s]")
    frame = pl.DataFrame(
        {
            "match_id": np.arange(n_games, dtype=np.int64),
            "played_at": played_at,
            "player_a": [f"p{i:05d}" for i in a],
            "player_b": [f"p{i:05d}" for i in b],
            "score_a": wins.astype(np.float64),
        }
    )
    return frame.sort("played_at", "match_id").with_columns(match_id=pl.int_range(pl.len(), dtype=pl.Int64))


def log_loss(expected, score) -> float:
    import numpy as np

    p = np.clip(np.asarray(expected, dtype=np.float64), 1e-15, 1.0 - 1e-15)
    s = np.asarray(score, dtype=np.float64)
    return float(-np.mean(s * np.log(p) + (1.0 - s) * np.log(1.0 - p)))


def timed(function, repeats: int) -> float:
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        seconds.append(time.perf_counter() - started)
    return common.median(seconds)


def cost(frame, repeats: int) -> None:
    import duckrate
    from duckrate.fits.through_time.replay import REFIT_EVERY as TTT_EVERY
    from duckrate.fits.whole_history.replay import REFIT_EVERY as WHR_EVERY

    steps = frame["played_at"].dt.date().n_unique()
    rows = []
    for name, fit, replay, every in (
        ("whr", duckrate.whr_fit, duckrate.whr, WHR_EVERY.default),
        ("ttt", duckrate.ttt_fit, duckrate.ttt, TTT_EVERY.default),
    ):
        cold = timed(lambda fit=fit: fit(frame), repeats)
        whole = timed(lambda replay=replay: replay(frame), repeats)
        refits = -(-steps // every)
        rows.append([name, f"{every}", f"{refits}", f"{cold:.2f}", f"{whole:.2f}", f"{whole / cold:.1f}x"])
    print(f"\ncost: {frame.height:,} games, {steps:,} daily steps, median of {repeats}")
    print(common.format_table(["system", "refit_every", "refits", "cold fit s", "replay s", "ratio"], rows))


def loss(frame, every: list[int], label: str) -> None:
    import duckrate
    from duckrate.core.matches import columns_from_polars, prepare_matches
    from duckrate.fits.whole_history.replay import WHR, replay_matches
    from duckrate.systems.two_player import new_outputs

    steps = frame["played_at"].dt.date().n_unique()
    print(f"\nlog loss: {label} ({frame.height:,} games, {steps:,} daily steps)")
    references = {
        "elo": duckrate.elo(frame),
        "glicko": duckrate.glicko(frame),
        "trueskill": duckrate.trueskill(frame, draw_probability=0.0),
    }
    print(", ".join(f"{name} {log_loss(rows['expected_a'], rows['score_a']):.4f}" for name, rows in references.items()))
    prepared = prepare_matches(columns_from_polars(frame))
    cases = {
        "whr": {},
        "whr w2=10": {"w2": 10.0},
        "ttt": {},
        "ttt sigma=1.5 gamma=0.015": {"sigma": 1.5, "gamma": 0.015},
    }
    rows = []
    for name, params in cases.items():
        losses, seconds = [], []
        for k in every:
            started = time.perf_counter()
            if name.startswith("whr"):
                out = new_outputs(prepared.n_rows)
                replay_matches(prepared, WHR.resolve({**params, "refit_every": k}), out)
                value = log_loss(out["expected_a"], prepared.score)
            else:
                out = duckrate.ttt(frame, refit_every=k, **params)
                value = log_loss(out["expected_a"], out["score_a"])
            seconds.append(time.perf_counter() - started)
            losses.append(f"{value:.4f}")
        rows.append([name, *losses])
        if name.startswith("whr"):  # the same without the filter between refits
            plain = []
            for k in every:
                out = new_outputs(prepared.n_rows)
                replay_matches(prepared, WHR.resolve({**params, "refit_every": k}), out, filtered=False)
                plain.append(f"{log_loss(out['expected_a'], prepared.score):.4f}")
            rows.append([f"{name}, no filter", *plain])
    print(common.format_table(["refit_every", *(str(k) for k in every)], rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat; the loss table on the small history only")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import duckrate

    print("\n".join(common.machine_lines()))
    small = tennis_history(3_000, 300, 8.0, SEED + 1)
    big = tennis_history(200_000, 20_000, 50.0, SEED)
    for function in (duckrate.whr_fit, duckrate.ttt_fit, duckrate.whr, duckrate.ttt):  # numba's cache, warmed
        function(small.head(2_000))
    cost(big, 1 if args.quick else args.repeats)
    loss(small, [1, 30, 365, 1825, 3650, 10**9], "small history")
    if not args.quick:
        loss(big, [1825, 3650, 10**9], "tennis-sized history")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
