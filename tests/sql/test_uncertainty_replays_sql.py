"""glicko_replay, glicko2_replay, trueskill_replay, chance_replay, elo2k_replay, pairwise_replay, whr_replay and
ttt_replay in real DuckDB:
agreement with the Python functions, rating periods, priors with sd and volatility, parameter errors, determinism
across thread counts."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers.systems import two_player_systems

from duckrate.core.registry import SYSTEMS

N_ROWS = 4000
KEY = ["league", "seq"]
NUMBER_COLUMNS = [
    "score_a",
    "expected_a",
    "rating_a_before",
    "rating_b_before",
    "sd_a_before",
    "sd_b_before",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
]


def source_frame(seed: int, fractional: bool) -> pl.DataFrame:
    """Matches over several leagues with ties in played_at; TrueSkill gets wins, draws and losses only."""
    rng = np.random.default_rng(seed)
    n_players = 60
    a = rng.integers(0, n_players, N_ROWS)
    b = (a + rng.integers(1, n_players, N_ROWS)) % n_players
    score = rng.choice([0.0, 0.5, 1.0], N_ROWS)
    if fractional:
        score = np.where(rng.random(N_ROWS) < 0.2, rng.random(N_ROWS), score)
    leagues = np.array(["chess", "go", None], dtype=object)
    return pl.DataFrame(
        {
            "match_id": rng.permutation(3 * N_ROWS)[:N_ROWS].astype(np.int64),
            "played_at": rng.integers(0, N_ROWS // 3, N_ROWS).astype(np.int64),  # ties everywhere
            "player_a": [f"p{x}" for x in a],
            "player_b": [f"p{x}" for x in b],
            "score_a": score,
            "league": leagues[rng.choice(3, N_ROWS, p=[0.5, 0.3, 0.2])].tolist(),
        },
        schema_overrides={"league": pl.Utf8},
    )


def load(con, frame: pl.DataFrame, name: str = "matches", extra_sql: str = "") -> None:
    con.register("frame_view", frame)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT *{extra_sql} FROM frame_view")
    con.unregister("frame_view")


def arguments(params: dict) -> str:
    return "".join(
        f", {name} := {value!r}" if not isinstance(value, str) else f", {name} := '{value}'"
        for name, value in params.items()
    )


def assert_same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    got, want = got.sort(KEY, nulls_last=True), want.sort(KEY, nulls_last=True)
    assert got.columns == want.columns
    exact = ["league", "seq", "match_id", "played_at", "player_a", "player_b"]
    assert got.select(exact).equals(want.select(exact))
    for column in NUMBER_COLUMNS:
        if want[column].null_count() == want.height:  # a system without uncertainty: NULL on both paths
            assert got[column].null_count() == got.height, column
            continue
        values = got[column].to_numpy()
        assert np.isfinite(values).all(), column
        np.testing.assert_array_equal(values, want[column].to_numpy(), err_msg=column)  # same kernel: bit for bit


CASES = [
    ("glicko", {}, False),
    ("glicko", {"c": 60.0, "rd_max": 300.0, "rd": 300.0, "period_length": 50.0}, False),
    ("glicko2", {}, False),
    ("glicko2", {"tau": 0.3, "volatility": 0.09, "period_length": 25.0}, False),
    ("trueskill", {}, True),
    ("trueskill", {"draw_probability": 0.3, "beta": 3.0, "tau": 0.2}, True),
    ("chance", {}, False),
    ("chance", {"sigmoid": "laplace", "kernel": "laplace", "algorithm": "laplace", "grid_points": 401}, True),
    ("chance", {"sigmoid": "normal", "beta": 0.95, "algorithm": "naive", "grid_points": 201, "grid_max": 5.0}, True),
    ("elo2k", {}, False),
    ("elo2k", {"dim": 2, "a": 0.1, "b": 50.0, "seed": 7, "init_max": 0.3}, False),
    ("pairwise", {}, False),
    ("pairwise", {"prior_games": 3.0, "scale": 173.7178}, False),
    ("whr", {}, False),
    ("whr", {"w2": 30.0, "virtual_games": 1.0, "method": "sweeps", "refit_every": 25}, False),
    ("ttt", {"p_draw": 0.2}, True),
    ("ttt", {"p_draw": 0.3, "gamma": 0.1, "beta": 2.0, "refit_every": 25, "period": "value"}, True),
]


@pytest.mark.parametrize(("system", "params", "ternary"), CASES)
def test_sql_equals_python(con, system, params, ternary):
    frame = source_frame(seed=len(params), fractional=not ternary)
    load(con, frame)
    got = con.sql(f"SELECT * FROM {system}_replay('matches'{arguments(params)})").pl()
    want = SYSTEMS.get(system).frame(frame, **params)
    assert_same(got, want)
    assert got.height == N_ROWS
    if SYSTEMS.get(system).has_sd:
        return
    assert got["sd_a_before"].null_count() == N_ROWS  # no uncertainty: NULL sd columns


@pytest.mark.parametrize("system", ["glicko", "glicko2"])
def test_sql_period_column(con, system):
    frame = source_frame(seed=3, fractional=True).with_columns((pl.col("played_at") // 97).alias("period"))
    load(con, frame)
    got = con.sql(f"SELECT * FROM {system}_replay('matches')").pl()
    assert_same(got, SYSTEMS.get(system).frame(frame))
    # the same periods derived from played_at by period_length give the same replay
    load(con, frame.drop("period"), name="no_period")
    derived = con.sql(f"SELECT * FROM {system}_replay('no_period', period_length := 97)").pl()
    assert_same(derived, got)
    # within a period every game starts from the period's state: a player's before-values repeat
    sides = got.filter(pl.col("league") == "chess").with_columns((pl.col("played_at") // 97).alias("period"))
    before = pl.concat(
        [
            sides.select("period", player="player_a", rating="rating_a_before"),
            sides.select("period", player="player_b", rating="rating_b_before"),
        ]
    )
    assert before.group_by("period", "player").agg(pl.col("rating").n_unique().alias("k"))["k"].max() == 1


@pytest.mark.parametrize("system", ["glicko", "glicko2", "trueskill", "chance"])
def test_sql_priors_with_sd(con, system):
    frame = source_frame(seed=7, fractional=system != "trueskill")
    load(con, frame)
    scale = {
        "glicko": (1500.0, 350.0),
        "glicko2": (1500.0, 350.0),
        "trueskill": (25.0, 25.0 / 3),
        "chance": (1500.0, 0.7 * 400 / np.log(10)),
    }[system]
    priors = pl.DataFrame(
        {
            "player": ["p0", "p1", "p2", "nobody"],
            "rating": [scale[0] + scale[1], scale[0] - scale[1] / 2, scale[0], scale[0]],
            "sd": [scale[1] / 3, None, scale[1] / 2, scale[1]],
            "volatility": [0.04, 0.08, None, 0.06],
            "league": [None, "go", None, None],
        },
        schema_overrides={"sd": pl.Float64, "volatility": pl.Float64},
    )
    load(con, priors, name="priors")
    got = con.sql(f"SELECT * FROM {system}_replay('matches', priors := 'priors')").pl()
    assert_same(got, SYSTEMS.get(system).frame(frame, priors=priors))
    first = got.filter((pl.col("league") == "chess") & (pl.col("player_a") == "p0")).sort("seq").row(0, named=True)
    assert first["sd_a_before"] <= scale[1] / 3 + 1e-9  # p0 starts from the prior's sd (plus at most its growth)


@pytest.mark.parametrize(
    ("system", "arguments_sql", "shown"),
    [
        ("glicko2", "tau := 0", "tau"),
        ("glicko", "rd := -5", "rd"),
        ("trueskill", "draw_probability := 1.0", "draw_probability"),
        ("trueskill", "sigma := -1", "sigma"),
        ("glicko", "period_length := 0", "period_length"),
        ("chance", "sigmoid := 'probit'", "sigmoid"),
        ("chance", "grid_points := 2", "grid_points"),
        ("chance", "algorithm := 'laplace'", "laplace"),
        ("elo2k", "dim := 0", "dim"),
        ("elo2k", "a := 1.0", "a and b"),
        ("pairwise", "prior_games := -1", "prior_games"),
    ],
)
def test_sql_bad_parameter(con, system, arguments_sql, shown):
    load(con, source_frame(seed=1, fractional=False))
    with pytest.raises(duckdb.Error, match=shown):
        con.sql(f"SELECT * FROM {system}_replay('matches', {arguments_sql})").fetchall()


def test_sql_trueskill_rejects_fractional_scores(con):
    load(con, source_frame(seed=2, fractional=True))
    with pytest.raises(duckdb.Error, match="score_a"):
        con.sql("SELECT * FROM trueskill_replay('matches')").fetchall()


@pytest.mark.parametrize("system", [system.name for system in two_player_systems()])
def test_sql_determinism_and_threads(con, system):
    load(con, source_frame(seed=9, fractional=system not in ("trueskill", "ttt")))
    draws = ", p_draw := 0.2" if system == "ttt" else ""  # TrueSkill Through Time's draws need a draw probability
    query = f"SELECT * FROM {system}_replay('matches'{draws}) ORDER BY league NULLS LAST, seq"
    con.execute("SET threads = 2")
    first = con.sql(query).fetchall()
    assert con.sql(query).fetchall() == first
    con.execute("SET threads = 1")
    assert con.sql(query).fetchall() == first
