"""The marts in real DuckDB over replay tables without a ``system`` column, labelled with ``system :=``:
the union of the marts per replay equals the mart over the union of the replays (what the dbt
materialization duckrate_mart relies on), and the marts' oracles (tests/helpers/mart_oracles: Polars,
independent of the marts' one SQL definition)."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers import mart_oracles

import duckrate

MART_CALLS = {
    "leaderboard": ("leaderboard", ""),
    "calibration_bins": ("calibration_bins", ", bins := 7"),
    "calibration_summary": ("calibration_summary", ", min_games := 3, max_sd := MAP {'glicko': 150}"),
    "loss_curve": ("loss_curve", ", points := 25"),
    "loss_by_gap": ("loss_by_gap", ", bin_width := 40"),
}
SYSTEMS = ("elo", "glicko")


@pytest.fixture(scope="module")
def con():
    rng = np.random.default_rng(7)
    n = 3000
    a = rng.integers(0, 60, n)
    b = (a + rng.integers(1, 60, n)) % 60
    matches = pl.DataFrame(
        {
            "match_id": np.arange(n),
            "played_at": np.sort(rng.integers(0, 400, n)),
            "player_a": [f"p{i}" for i in a],
            "player_b": [f"p{i}" for i in b],
            "score_a": rng.choice([0.0, 0.5, 1.0], n),
            "league": rng.choice(["east", "west"], n),
        }
    )
    connection = duckdb.connect()
    duckrate.register(connection)
    connection.register("matches_frame", matches)
    connection.execute("CREATE TABLE matches AS SELECT * FROM matches_frame")
    for system in SYSTEMS:
        connection.execute(f"CREATE TABLE replay_{system} AS SELECT * FROM {system}_replay('matches')")
    connection.execute(
        "CREATE TABLE tagged AS "
        + " UNION ALL BY NAME ".join(f"SELECT '{s}' AS system, * FROM replay_{s}" for s in SYSTEMS)
    )
    yield connection
    connection.close()


@pytest.mark.parametrize("mart", MART_CALLS)
def test_marts_per_replay_labelled_with_system_equal_the_mart_over_the_union(con, mart):
    name, params = MART_CALLS[mart]
    per_replay = " UNION ALL ".join(f"SELECT * FROM {name}('replay_{s}'{params}, system := '{s}')" for s in SYSTEMS)
    actual = con.sql(f"SELECT * FROM ({per_replay}) ORDER BY ALL").fetchall()
    expected = con.sql(f"SELECT * FROM {name}('tagged'{params}) ORDER BY ALL").fetchall()
    assert actual == expected
    assert {row[1] for row in actual} == set(SYSTEMS)  # column 2 of every mart is system


def test_without_system_the_rows_have_a_null_system_and_a_table_keeps_its_own(con):
    unlabelled = con.sql("SELECT DISTINCT system FROM leaderboard('replay_elo')").fetchall()
    assert unlabelled == [(None,)]
    # a table with a system column keeps it: system := only labels rows that have none
    kept = con.sql("SELECT DISTINCT system FROM leaderboard('tagged', system := 'other') ORDER BY 1").fetchall()
    assert kept == [("elo",), ("glicko",)]


def test_labelled_leaderboard_equals_the_python_function(con):
    replay = con.sql("SELECT * FROM replay_glicko").pl().with_columns(system=pl.lit("glicko"))
    expected = mart_oracles.leaderboard(replay).sort("league", "rank")
    actual = con.sql("SELECT * FROM leaderboard('replay_glicko', system := 'glicko')").pl().sort("league", "rank")
    assert actual.columns == expected.columns
    assert actual.equals(expected)


@pytest.mark.parametrize("bins", [1, 7, 10])
def test_calibration_bins_in_sql_equal_the_polars_function_within_1e_12(con, bins):
    replay = con.sql(
        "SELECT 'elo' AS system, * FROM replay_elo UNION ALL BY NAME SELECT 'glicko' AS system, * FROM replay_glicko"
    ).pl()
    expected = mart_oracles.calibration_bins(replay, bins=bins).sort("league", "system", "bin")
    actual = con.sql(f"SELECT * FROM calibration_bins('tagged', bins := {bins})").pl().sort("league", "system", "bin")
    assert actual.columns == expected.columns
    assert actual.select("league", "system", "bin", "n").equals(expected.select("league", "system", "bin", "n"))
    for column in ("mean_expected", "mean_score", "lower", "upper"):
        np.testing.assert_allclose(actual[column].to_numpy(), expected[column].to_numpy(), rtol=1e-12, atol=0)


def test_sql_marts_do_not_depend_on_the_thread_count(con):
    results = []
    for threads in (1, 4):
        con.execute(f"SET threads = {threads}")
        results.append(
            [
                con.sql(f"SELECT * FROM {mart}('tagged')").fetchall()
                for mart in ("leaderboard", "calibration_bins", "loss_curve", "calibration_summary", "loss_by_gap")
            ]
        )
    con.execute("RESET threads")
    assert results[0] == results[1]


@pytest.mark.parametrize("points", [1, 2, 25, 5000])
def test_loss_curve_in_sql_equals_the_polars_function_within_1e_12(con, points):
    replay = con.sql(
        "SELECT 'elo' AS system, * FROM replay_elo UNION ALL BY NAME SELECT 'glicko' AS system, * FROM replay_glicko"
    ).pl()
    expected = mart_oracles.loss_curve(replay, points=points).sort("league", "system", "t")
    actual = con.sql(f"SELECT * FROM loss_curve('tagged', points := {points})").pl().sort("league", "system", "t")
    assert actual.columns == expected.columns
    assert actual.select("league", "system", "t").equals(expected.select("league", "system", "t"))
    for column in ("t_over_n", "mean_log_loss"):
        np.testing.assert_allclose(actual[column].to_numpy(), expected[column].to_numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("bin_width", [None, 7.5, 40, 1000])
def test_loss_by_gap_in_sql_equals_the_polars_function_within_1e_12(con, bin_width):
    replay = con.sql(
        "SELECT 'elo' AS system, * FROM replay_elo UNION ALL BY NAME SELECT 'glicko' AS system, * FROM replay_glicko"
    ).pl()
    expected = mart_oracles.loss_by_gap(replay, bin_width=bin_width).sort("league", "system", "gap_bin")
    argument = "" if bin_width is None else f", bin_width := {bin_width}"
    actual = con.sql(f"SELECT * FROM loss_by_gap('tagged'{argument})").pl().sort("league", "system", "gap_bin")
    assert actual.columns == expected.columns
    keys = ("league", "system", "gap_bin", "n")
    assert actual.select(keys).equals(expected.select(keys))
    for column in ("mean_log_loss", "share_of_total_loss"):
        np.testing.assert_allclose(actual[column].to_numpy(), expected[column].to_numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"min_games": 0, "warmup": 0.25},
        {"min_games": 3, "max_sd": 150},
        {"min_games": 3, "max_sd": {"glicko": 150}, "warmup": 0.1},
    ],
)
def test_calibration_summary_in_sql_equals_the_polars_function_within_1e_12(con, options):
    replay = con.sql(
        "SELECT 'elo' AS system, * FROM replay_elo UNION ALL BY NAME SELECT 'glicko' AS system, * FROM replay_glicko"
    ).pl()
    expected = mart_oracles.calibration_summary(replay, **options).sort("league", "system")
    sql_options = "".join(
        f", {name} := "
        + (
            "MAP {" + ", ".join(f"'{k}': {v}" for k, v in value.items()) + "}"
            if isinstance(value, dict)
            else repr(value)
        )
        for name, value in options.items()
    )
    actual = con.sql(f"SELECT * FROM calibration_summary('tagged'{sql_options})").pl().sort("league", "system")
    assert actual.columns == expected.columns
    assert actual.select("league", "system", "n", "n_established").equals(
        expected.select("league", "system", "n", "n_established")
    )
    for column in ("log_loss", "brier", "accuracy", "log_loss_established"):
        np.testing.assert_allclose(actual[column].to_numpy(), expected[column].to_numpy(), rtol=1e-12, atol=0)


@pytest.mark.parametrize("mart", MART_CALLS)
def test_the_python_api_gives_the_macros_bits(con, mart):
    """``duckrate.<mart>(frame)`` runs the macro over the frame: the same rows, bit for bit."""
    name, params = MART_CALLS[mart]
    replay = con.sql("SELECT * FROM tagged").pl()
    keywords = {
        "calibration_bins": {"bins": 7},
        "calibration_summary": {"min_games": 3, "max_sd": {"glicko": 150}},
        "loss_curve": {"points": 25},
        "loss_by_gap": {"bin_width": 40},
    }.get(mart, {})
    expected = con.sql(f"SELECT * FROM {name}('tagged'{params})").pl()
    assert getattr(duckrate, name)(replay, **keywords).equals(expected)
