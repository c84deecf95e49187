"""duckrate.tune: the protocols against a naive transcription over full replay frames, thread- and
row-order independence, ranking, default grids, and errors that name what was expected."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest
from helpers.systems import contest_systems, two_player_systems

import duckrate
from duckrate import DuckrateInputError
from duckrate.synthetic import generate_contests, generate_matches
from duckrate.tuning.scores import checkpoint_steps

GRID = {"k": [10.0, 24.0, 40.0]}


@pytest.fixture(scope="module")
def matches():
    frame = generate_matches(3000, 80, seed=5, n_leagues=2)
    # a few draws, so accuracy skips them and log loss uses the soft target
    return frame.with_columns(
        pl.when(pl.int_range(pl.len()) % 17 == 0).then(0.5).otherwise(pl.col("score_a")).alias("score_a")
    )


def naive_scores(replay: pl.DataFrame, protocol: str, train_share: float, points: int) -> dict:
    """Per league, from the replay frame in seq order, with plain Python loops."""
    out = {}
    for (league,), part in replay.sort("seq").group_by(["league"], maintain_order=True):
        p = part["expected_a"].to_list()
        s = part["score_a"].to_list()
        losses, briers, hits = [], [], []
        for pi, si in zip(p, s):
            c = min(max(pi, 1e-15), 1 - 1e-15)
            losses.append(-(si * math.log(c) + (1 - si) * math.log(1 - c)))
            briers.append((pi - si) ** 2)
            hits.append(None if si not in (0.0, 1.0) else (si if pi > 0.5 else (1 - si if pi < 0.5 else 0.5)))
        if protocol == "holdout":
            cut = math.floor(train_share * len(p))
            criterion = sum(losses[:cut]) / cut
            losses, briers, hits = losses[cut:], briers[cut:], hits[cut:]
        else:
            total = len(losses)
            if total <= points:
                steps = list(range(1, total + 1))
            else:
                steps = [1 + round_half_up((total - 1) * k / (points - 1)) for k in range(points)]
            criterion = sum(sum(losses[:t]) / t for t in steps) / len(steps)
        kept = [h for h in hits if h is not None]
        out[league] = (sum(losses) / len(losses), sum(briers) / len(briers), sum(kept) / len(kept), criterion)
    return out


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5)


@pytest.mark.parametrize("protocol", ["holdout", "cumulative"])
def test_scores_equal_a_naive_transcription_over_the_replays(matches, protocol):
    table = duckrate.tune(matches, "elo", GRID, protocol=protocol, train_share=0.2, points=50)
    assert table.height == 2 * 3
    for row in table.iter_rows(named=True):
        params = json.loads(row["params"])
        expected = naive_scores(duckrate.elo(matches, **params), protocol, 0.2, 50)[row["league"]]
        assert row["protocol"] == protocol and row["system"] == "elo"
        assert [row["log_loss"], row["brier"], row["accuracy"], row["criterion"]] == pytest.approx(expected, rel=1e-12)


def test_checkpoints_are_the_loss_curve_marts(matches):
    curve = duckrate.loss_curve(duckrate.elo(matches).with_columns(pl.lit("elo").alias("system")), points=37)
    for (league,), part in curve.group_by(["league"]):
        total = matches.filter(pl.col("league") == league).height
        assert part.sort("t")["t"].to_list() == checkpoint_steps(total, 37).tolist()


def test_ranks_follow_the_criterion_and_results_do_not_depend_on_threads_or_row_order(matches):
    table = duckrate.tune(matches, "elo", GRID, threads=2)
    assert table.equals(duckrate.tune(matches, "elo", GRID, threads=1))
    shuffled = matches.sample(fraction=1.0, shuffle=True, seed=3)
    assert table.equals(duckrate.tune(shuffled, "elo", GRID, threads=2))
    for (_,), part in table.group_by(["league"]):
        ordered = part.sort("rank")
        assert ordered["rank"].to_list() == [1, 2, 3]
        assert np.all(np.diff(ordered["criterion"].to_numpy()) >= 0)


def test_fixed_parameters_and_a_list_grid(matches):
    table = duckrate.tune(matches, "elo", [{"k": 16.0}, {"k": 16.0, "scale": 200.0}], initial=1000.0)
    assert sorted(table["params"].unique().to_list()) == sorted(
        [json.dumps({"initial": 1000.0, "k": 16.0}), json.dumps({"initial": 1000.0, "k": 16.0, "scale": 200.0})]
    )


def test_contest_systems_are_scored_by_the_contest_metrics():
    results = generate_contests(30, 25, 120, seed=2)
    table = duckrate.tune(results, "topcoder", {"weight_limit": [0.1, 0.3]}, train_share=0.2)
    assert table["log_loss"].is_null().all()
    for row in table.iter_rows(named=True):
        replay = duckrate.topcoder(results, **json.loads(row["params"]))
        reported = duckrate.contest_metrics(replay, warmup=0.2)
        assert row["pair_inversion"] == reported["pair_inversion"][0]
        assert row["rank_deviation"] == reported["rank_deviation"][0]
        assert row["n"] == reported["n"][0]
        seq_cut = math.floor(replay["seq"].max() * 0.2)
        chosen = duckrate.contest_metrics(replay.filter(pl.col("seq") <= seq_cut), warmup=0.0, min_history=1)
        assert row["criterion"] == pytest.approx(1.0 - chosen["pair_inversion"][0], rel=1e-15)


def test_every_system_has_a_default_grid_of_valid_parameters():
    for system in (*two_player_systems(), *contest_systems()):
        grid = system.grid
        assert grid, system.name
        for name, values in grid.items():
            for value in values:
                system.resolve({name: value})
    assert duckrate.systems.ELO.grid == {"k": [8.0, 12.0, 16.0, 20.0, 24.0, 32.0, 40.0, 48.0, 64.0]}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"system": "elo9"}, "unknown system 'elo9'"),
        ({"system": "elo", "grid": {"k": []}}, "grid entry 'k'"),
        ({"system": "elo", "grid": "{k: 1"}, "not valid JSON"),
        ({"system": "elo", "grid": {"kk": [1.0]}}, "unknown parameter(s) kk"),
        ({"system": "elo", "grid": {"k": [-1.0]}}, "k"),
        ({"system": "elo", "protocol": "later"}, "protocol"),
        ({"system": "elo", "train_share": 1.0}, "train_share"),
    ],
)
def test_errors_name_what_was_expected(matches, kwargs, message):
    with pytest.raises(DuckrateInputError, match=None) as error:
        duckrate.tune(matches, **kwargs)
    assert message in str(error.value)


def test_sql_macros_equal_the_python_api(matches):
    import duckdb

    con = duckrate.register(duckdb.connect())
    con.register("matches_frame", matches)
    con.execute("CREATE TABLE m AS SELECT * FROM matches_frame")
    sql = con.sql("SELECT * FROM tune('elo', 'm', grid := {'k': [10.0, 24.0]}, fixed := {'scale': 300.0})").pl()
    assert sql.equals(duckrate.tune(matches, "elo", {"k": [10.0, 24.0]}, scale=300.0))
    as_json = con.sql(
        """SELECT * FROM tune('elo', 'm', grid := '{"k": [10.0, 24.0]}', protocol := 'cumulative')"""
    ).pl()
    assert as_json.equals(duckrate.tune(matches, "elo", {"k": [10.0, 24.0]}, protocol="cumulative"))
    results = generate_contests(20, 20, 80, seed=3)
    con.register("results_frame", results)
    con.execute("CREATE TABLE c AS SELECT * FROM results_frame")
    contests = con.sql("SELECT * FROM tune_contests('codeforces', 'c', grid := {'weight': [0.5, 1.0]})").pl()
    assert contests.equals(duckrate.tune(results, "codeforces", {"weight": [0.5, 1.0]}))
    with pytest.raises(duckdb.Error, match="rates ranked contests; tune it with tune_contests"):
        con.sql("SELECT * FROM tune('codeforces', 'c')").fetchall()
