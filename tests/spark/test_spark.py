"""``duckrate.spark`` in Spark local mode, against the DuckDB path and the Python API (one Spark session per
test process, from tests/spark/conftest.py).

Replays give the DuckDB macros' rows and state bit for bit (each league one task; two-player and contest
systems), continue a saved state (their own or one the DuckDB path saved) as a full replay would, replay
leagues longer than ``chunk_size`` in time slices round after round with the same result, and raise the
Python API's errors with its messages. ``bt_fit`` (games summed per pair in Spark, solved on the driver)
equals ``duckrate.bt_fit`` within 1e-9 (bit for bit without weights) whatever the partitioning, raises its
input errors, and refuses, saying why, the options that need every game's row."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers.spark_frames import from_spark, match_id_repeated_across_leagues, to_spark, with_values
from helpers.state_cases import history
from helpers.systems import team_systems
from polars.testing import assert_frame_equal

import duckrate
from duckrate.synthetic import generate_contests, generate_matches, generate_team_matches

pytest.importorskip("pyspark", reason="duckrate.spark needs PySpark: pip install 'duckrate[spark]'")
import duckrate.spark
from duckrate.spark.league_slices import SLICE, league_slices

ROW_ORDER = ["league", "seq"]
STATE_ORDER = ["kind", "league", "player", "opponent"]
ROW_TYPES = {
    "league": "string",
    "seq": "bigint",
    "match_id": "bigint",
    "played_at": "timestamp",
    "player_a": "string",
    "player_b": "string",
    "score_a": "double",
    **{
        name: "double"
        for name in (
            "expected_a",
            "rating_a_before",
            "rating_b_before",
            "sd_a_before",
            "sd_b_before",
            "rating_a_after",
            "rating_b_after",
            "sd_a_after",
            "sd_b_after",
        )
    },
}
STATE_TYPES = {
    "league": "string",
    "kind": "string",
    "player": "string",
    "opponent": "string",
    "value": "array<double>",
    "system": "string",
    "params": "string",
    "seq": "bigint",
    "n_players": "bigint",
    "last_time_key": "bigint",
    "time_unit": "string",
    "last_match_id": "string",
    "resume_period": "bigint",
    "pending_ids": "array<string>",
}


@pytest.fixture(scope="module")
def matches() -> pl.DataFrame:
    return generate_matches(1500, 90, n_leagues=3, seed=7)


@pytest.fixture()
def con():
    connection = duckrate.register(duckdb.connect())
    yield connection
    connection.close()


def table(con, name: str, frame: pl.DataFrame) -> None:
    con.register("duckrate_test_frame", frame)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM duckrate_test_frame")
    con.unregister("duckrate_test_frame")


def sorted_rows(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(ROW_ORDER, nulls_last=True)


def sorted_state(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(STATE_ORDER, nulls_last=True)


@pytest.mark.parametrize("system", ["elo", "glicko", "glicko2", "trueskill"])
def test_rows_and_state_equal_the_duckdb_path(spark, con, matches, system):
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, matches), system)
    assert dict(rows.dtypes) == ROW_TYPES and rows.columns == list(ROW_TYPES)
    assert dict(state.dtypes) == STATE_TYPES and state.columns == list(STATE_TYPES)
    table(con, "matches", matches)
    got = from_spark(rows)
    assert got["league"].n_unique() == 3
    expected_rows = con.sql(f"SELECT * FROM {system}_replay('matches')").pl()
    assert_frame_equal(sorted_rows(got), sorted_rows(expected_rows), check_exact=True)
    expected_state = con.sql(f"SELECT * FROM {system}_state('matches')").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)


@pytest.mark.parametrize("system", ["whr", "ttt"])
def test_a_whole_history_replay_is_one_task_per_league(spark, con, matches, system):
    """The whole-history replays (each league one task, whatever its length): rows and state as the macros';
    an explicit chunk_size below a league's matches is the Python API's error, and a saved league refuses to
    continue as it does there."""
    params = dict(duckrate.SYSTEMS.get(system).presets[0].params)
    args = "".join(f", {name} := {value!r}" for name, value in params.items())
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, matches), system, **params)
    table(con, "matches", matches)
    expected_rows = con.sql(f"SELECT * FROM {system}_replay('matches'{args})").pl()
    assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected_rows), check_exact=True)
    expected_state = con.sql(f"SELECT * FROM {system}_state('matches'{args})").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)
    if system != "ttt":
        return
    with pytest.raises(duckrate.DuckrateInputError, match=r"ttt: chunk_size = 100 is below the \d+ matches"):
        duckrate.spark.replay(to_spark(spark, matches), system, chunk_size=100, **params)
    later = matches.with_columns(pl.col("played_at").dt.offset_by("30d"), pl.col("match_id") + 10**6)
    with pytest.raises(duckrate.RebuildRequired, match="a whole-history replay forecasts each match"):
        duckrate.spark.replay(to_spark(spark, later), system, state=state, **params)


def test_a_system_registered_at_run_time_replays_on_spark(spark, matches):
    """The task carries the registry entry itself: a system defined in the tests (pickled by value, as the
    workers cannot import the tests) replays in the workers and equals its DuckDB macro."""
    import helpers.toy_system as toy
    from pyspark import cloudpickle

    from duckrate.core.registry import SYSTEMS

    cloudpickle.register_pickle_by_value(toy)
    SYSTEMS.add(toy.TOY)
    try:
        rows, state = duckrate.spark.replay_with_state(to_spark(spark, matches), toy.NAME, step=25.0)
        con = duckrate.register(duckdb.connect())
        table(con, "matches", matches)
        expected_rows = con.sql(f"SELECT * FROM {toy.NAME}_replay('matches', step := 25.0)").pl()
        assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected_rows), check_exact=True)
        expected_state = con.sql(f"SELECT * FROM {toy.NAME}_state('matches', step := 25.0)").pl()
        assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)
        con.close()
    finally:
        SYSTEMS.remove(toy.NAME)
        cloudpickle.unregister_pickle_by_value(toy)


def test_priors_equal_the_duckdb_path(spark, con):
    """A priors table (league-less rows for every league, league rows for theirs) read as the macro reads it."""
    matches = history(900, 30, 13, True, False)
    priors = pl.DataFrame(
        {
            "player": ["p1", "p2", "p3", "p1"],
            "league": [None, None, "west", "east"],
            "rating": [1700.0, 1300.0, 1550.0, 1620.0],
            "sd": [80.0, 500.0, 10.0, None],
            "volatility": [0.2, None, 0.01, 0.05],
        }
    )
    rows = duckrate.spark.replay(to_spark(spark, matches), "glicko2", priors=to_spark(spark, priors), tau=1.1)
    table(con, "matches", matches)
    table(con, "priors", priors)
    expected = con.sql("SELECT * FROM glicko2_replay('matches', tau := 1.1, priors := 'priors')").pl()
    assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected), check_exact=True)


@pytest.mark.parametrize("chunk_size", [None, 60])
def test_contest_replay_equals_the_duckdb_path(spark, con, chunk_size):
    """A contest system (Elo-MMR) over contest results: each league one task, or (``chunk_size`` 60, 150
    results per league) in slices that never split a contest (one played_at); rows and state as the macros'."""
    results = generate_contests(30, 10, 50, seed=5, n_leagues=2)
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, results), "elo_mmr", chunk_size=chunk_size)
    table(con, "results", results)
    order = ["league", "seq", "rank", "player"]
    expected_rows = con.sql("SELECT * FROM elo_mmr_replay('results')").pl()
    assert_frame_equal(from_spark(rows).sort(order), expected_rows.sort(order), check_exact=True)
    expected_state = con.sql("SELECT * FROM elo_mmr_state('results')").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)


# a Weng-Lin model and TrueSkill: the other Weng-Lin models differ from the first only in their kernel, which
# runs as on one machine (each case is a Spark job of about 12 s)
TEAM_CASES = [team_systems()[0].name, team_systems()[-1].name]


@pytest.mark.parametrize("system", TEAM_CASES)
def test_team_replay_equals_the_duckdb_path(spark, con, system):
    """Team systems over team results (2-4 teams of 1-3 players, partial play, two leagues), in slices of 120
    rows that never split a match: rows and state as the macros'."""
    results = generate_team_matches(
        40, 40, seed=9, n_leagues=2, teams_per_match=(2, 4), team_size=(1, 3), partial_play_rate=0.2
    )
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, results), system, chunk_size=120)
    table(con, "team_results", results)
    order = ["league", "seq", "rank", "team", "player"]
    expected_rows = con.sql(f"SELECT * FROM {system}_replay('team_results')").pl()
    assert_frame_equal(from_spark(rows).sort(order), expected_rows.sort(order), check_exact=True)
    expected_state = con.sql(f"SELECT * FROM {system}_state('team_results')").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)
    if system != TEAM_CASES[0]:
        return
    # the team marts over the Spark rows equal the macros over the DuckDB rows
    table(con, "team_rows", expected_rows)
    for mart, order in (("team_leaderboard", ["league", "rank"]), ("team_metrics", ["league"])):
        got = from_spark(getattr(duckrate.spark, mart)(rows, system=system)).sort(order)
        want = con.sql(f"SELECT * FROM {mart}('team_rows', system := '{system}')").pl().sort(order)
        assert_frame_equal(got, want, check_exact=True)


def test_continuing_a_duckdb_state_leaves_untouched_leagues_as_saved(spark, con):
    """A state saved by the DuckDB path continues on Spark; a league with no new matches keeps its rows."""
    ordered = history(1200, 40, 3, True, False).sort("played_at", "match_id")
    table(con, "first_part", ordered[:700])
    table(con, "rest", ordered[700:].filter(pl.col("league").ne_missing("west")))
    args = ", k := 24, advantage := 30"
    saved = con.sql(f"SELECT * FROM elo_state('first_part'{args})").pl()
    table(con, "saved", saved)
    rest = con.sql("SELECT * FROM rest").pl()
    rows, state = duckrate.spark.replay_with_state(
        to_spark(spark, rest), "elo", state=to_spark(spark, saved), k=24, advantage=30
    )
    expected_rows = con.sql(f"SELECT * FROM elo_replay('rest'{args}, state := 'saved')").pl()
    assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected_rows), check_exact=True)
    expected_state = con.sql(f"SELECT * FROM elo_state('rest'{args}, state := 'saved')").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(expected_state), check_exact=True)
    west = pl.col("league") == "west"
    assert_frame_equal(sorted_state(from_spark(state).filter(west)), sorted_state(saved.filter(west)), check_exact=True)


def test_continuation_with_rating_periods_equals_a_full_replay(spark, con):
    """Glicko with a period column: the state saved on Spark keeps the open period, whose matches are passed
    again; rows and state equal one replay of everything by the DuckDB path."""
    ordered = history(1200, 40, 5, True, True).sort("played_at", "match_id")
    first, later = ordered[:700], ordered[700:]
    _, saved = duckrate.spark.replay_with_state(to_spark(spark, first), "glicko", rd_min=30.0)
    pending = from_spark(saved).filter(pl.col("kind") == "league")["pending_ids"].explode().drop_nulls()
    assert pending.len() > 0
    again = first.filter(pl.col("match_id").cast(pl.Utf8).is_in(pending.implode()))
    rest = pl.concat([again, later])
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, rest), "glicko", state=saved, rd_min=30.0)
    table(con, "everything", ordered)
    full_rows = con.sql("SELECT * FROM glicko_replay('everything', rd_min := 30.0)").pl()
    expected_rows = full_rows.filter(pl.col("match_id").is_in(rest["match_id"].implode()))
    assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected_rows), check_exact=True)
    full_state = con.sql("SELECT * FROM glicko_state('everything', rd_min := 30.0)").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(full_state), check_exact=True)


def _with_a_short_league(frame: pl.DataFrame) -> pl.DataFrame:
    short = history(40, 8, 9, True, True).with_columns(pl.lit("short").alias("league"), pl.col("match_id") + 100_000)
    return pl.concat([frame, short])


def test_league_slices_cut_at_played_at_and_leave_short_leagues_whole(spark):
    """Slices of at most chunk_size rows plus the rest of one played_at's rows; a played_at never split; a
    league of at most chunk_size rows replays whole, in round 0."""
    matches = _with_a_short_league(history(600, 30, 5, True, True))
    slices = league_slices(to_spark(spark, matches), 60)
    tagged = from_spark(slices.large)
    assert "short" not in tagged["league"].to_list() and from_spark(slices.small)["league"].unique().to_list() == [
        "short"
    ]
    assert tagged.height == 600 and slices.rounds > 3
    assert tagged.group_by("league", "played_at").agg(pl.col(SLICE).n_unique())[SLICE].max() == 1
    ties = matches.group_by("league", "played_at").len()["len"].max()
    sizes = tagged.group_by("league", SLICE).len()["len"]
    assert sizes.max() <= 60 + ties and sizes.max() > 40


SLICED_CASES = {"glicko with rating periods": ("glicko", {"rd_min": 30.0}), "elo": ("elo", {"k": 24})}


@pytest.mark.parametrize("case", list(SLICED_CASES))
def test_leagues_longer_than_chunk_size_replay_in_slices(spark, con, case):
    """Leagues longer than chunk_size replay slice after slice, each from the state the one before left,
    continuing a saved state with its open period (the open periods that end slices go again with the next
    slice); a short league replays whole. Rows and state equal one replay of everything by the DuckDB path."""
    system, params = SLICED_CASES[case]
    ordered = _with_a_short_league(history(800, 30, 5, True, True)).sort("played_at", "match_id")
    first, later = ordered[:150], ordered[150:]
    _, saved = duckrate.spark.replay_with_state(to_spark(spark, first), system, **params)
    pending = from_spark(saved).filter(pl.col("kind") == "league")["pending_ids"].explode().drop_nulls()
    assert (pending.len() > 0) == (system == "glicko")
    rest = pl.concat([first.filter(pl.col("match_id").cast(pl.Utf8).is_in(pending.implode())), later])
    rows, state = duckrate.spark.replay_with_state(to_spark(spark, rest), system, saved, chunk_size=80, **params)
    table(con, "everything", ordered)
    args = "".join(f", {name} := {value}" for name, value in params.items())
    full_rows = con.sql(f"SELECT * FROM {system}_replay('everything'{args})").pl()
    expected_rows = full_rows.filter(pl.col("match_id").is_in(rest["match_id"].implode()))
    assert_frame_equal(sorted_rows(from_spark(rows)), sorted_rows(expected_rows), check_exact=True)
    full_state = con.sql(f"SELECT * FROM {system}_state('everything'{args})").pl()
    assert_frame_equal(sorted_state(from_spark(state)), sorted_state(full_state), check_exact=True)


BAD_INPUTS = {
    "score out of range": lambda m: with_values(m, 17, score_a=1.5),
    "NULL player": lambda m: with_values(m, 23, player_b=None),
    "self-match": lambda m: m.with_columns(
        pl.when(pl.col("match_id") == 31).then(pl.col("player_a")).otherwise(pl.col("player_b")).alias("player_b")
    ),
    "match_id repeated across leagues": match_id_repeated_across_leagues,
    "missing column": lambda m: m.drop("score_a"),
    "played_at as text": lambda m: m.with_columns(pl.col("played_at").cast(pl.Utf8)),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_input_errors_are_the_python_apis(spark, matches, case):
    bad = BAD_INPUTS[case](matches)
    with pytest.raises(duckrate.DuckrateInputError) as python_error:
        duckrate.replay_with_state("elo", bad)
    with pytest.raises(duckrate.DuckrateInputError) as spark_error:
        duckrate.spark.replay(to_spark(spark, bad), "elo")
    assert type(spark_error.value) is type(python_error.value)
    assert str(spark_error.value) == str(python_error.value)


def test_parameter_and_continuation_errors_are_the_python_apis(spark):
    ordered = history(400, 20, 11, False, False).sort("played_at", "match_id")
    with pytest.raises(duckrate.DuckrateInputError) as python_error:
        duckrate.replay_with_state("elo", ordered, k=-1.0)
    with pytest.raises(duckrate.DuckrateInputError) as spark_error:
        duckrate.spark.replay(to_spark(spark, ordered), "elo", k=-1.0)
    assert str(spark_error.value) == str(python_error.value)
    _, python_state = duckrate.replay_with_state("elo", ordered)
    late = ordered[100:101].with_columns(pl.lit(10**6).alias("match_id"))
    with pytest.raises(duckrate.RebuildRequired) as python_error:
        duckrate.replay_with_state("elo", late, state=python_state)
    with pytest.raises(duckrate.RebuildRequired) as spark_error:
        duckrate.spark.replay(to_spark(spark, late), "elo", state=to_spark(spark, python_state))
    assert str(spark_error.value) == str(python_error.value)
    # a new league under other parameters: the saved leagues (no new matches) refuse them as a whole state does
    north = ordered[300:310].with_columns(pl.lit("north").alias("league"), pl.col("match_id") + 10**6)
    with pytest.raises(duckrate.RebuildRequired) as python_error:
        duckrate.replay_with_state("elo", north, state=python_state, k=24.0)
    with pytest.raises(duckrate.RebuildRequired) as spark_error:
        duckrate.spark.replay(to_spark(spark, north), "elo", state=to_spark(spark, python_state), k=24.0)
    assert str(spark_error.value) == str(python_error.value)


# ---------------------------------------------------------------------------------------------------
# bt_fit


FIT_ORDER = ["league", "kind", "player"]


@pytest.fixture(scope="module")
def games() -> pl.DataFrame:
    """Two leagues of weighted games (weights make the per-pair sums inexact, so order matters)."""
    frame = generate_matches(2000, 60, n_leagues=2, seed=3)
    rng = np.random.default_rng(3)
    return frame.with_columns(
        pl.Series("weight", rng.uniform(0.5, 2.0, frame.height)), pl.Series("len_diff", rng.normal(size=frame.height))
    )


PRIORS = pl.DataFrame(
    {
        "player": ["p000001", "p000002", "p000004"],
        "rating": [1650.0, 1400.0, 1500.0],
        "sd": [90.0, None, 300.0],
        "league": [None, None, "league_2"],
    }
)
FIT_CASES = {
    "mle, dense intervals": {},
    "ridge with a side-A effect": {"prior_sd": 200.0, "home_advantage": True},
    "mm, sparse intervals": {"method": "mm", "uncertainty": "sparse"},
    "priors": {"prior_sd": 250.0, "priors": PRIORS},
    "inverse pair frequency": {"reweight": "inverse_pair_frequency", "min_pair_count": 2, "prior_sd": 300.0},
}


@pytest.mark.parametrize("case", list(FIT_CASES))
def test_fit_equals_the_python_fit(spark, games, case):
    params = FIT_CASES[case]
    expected = duckrate.bt_fit(games, **params)
    got = from_spark(duckrate.spark.bt_fit(to_spark(spark, games), **params))
    assert got.columns == expected.columns
    assert_frame_equal(got.sort(FIT_ORDER), expected.sort(FIT_ORDER), check_exact=False, rel_tol=0.0, abs_tol=1e-9)


def test_fit_does_not_depend_on_the_partitioning_and_equals_one_machine_without_weights(spark, games):
    """The weighted sums are exact decimals: one partition or seven, in small batches or not, the same bits;
    without weights (sums of halves, exact either way) the Python fit's bits."""
    fits = []
    for partitions, batch_rows in ((1, 10_000), (7, 97)):
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(batch_rows))
        frame = to_spark(spark, games).repartition(partitions)
        fits.append(from_spark(duckrate.spark.bt_fit(frame, prior_sd=300.0)).sort(FIT_ORDER))
    spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    assert_frame_equal(fits[0], fits[1], check_exact=True)
    unweighted = games.drop("weight")
    expected = duckrate.bt_fit(unweighted, prior_sd=300.0).sort(FIT_ORDER)
    got = from_spark(duckrate.spark.bt_fit(to_spark(spark, unweighted).repartition(7), prior_sd=300.0))
    assert_frame_equal(got.sort(FIT_ORDER), expected, check_exact=True)


def test_fit_weights_past_the_exact_sums_are_an_error(spark, games):
    heavy = games.with_columns(pl.col("weight") * 1e16)
    with pytest.raises(duckrate.DuckrateInputError, match="expected smaller weights"):
        duckrate.spark.bt_fit(to_spark(spark, heavy))


def test_fit_input_errors_are_the_python_apis(spark, games):
    bad = games.with_columns(pl.when(pl.col("match_id") == 40).then(-0.5).otherwise(pl.col("score_a")).alias("score_a"))
    with pytest.raises(duckrate.DuckrateInputError) as python_error:
        duckrate.bt_fit(bad)
    with pytest.raises(duckrate.DuckrateInputError) as spark_error:
        duckrate.spark.bt_fit(to_spark(spark, bad))
    assert str(spark_error.value) == str(python_error.value)


@pytest.mark.parametrize(
    "params, named",
    [
        ({"uncertainty": "bootstrap"}, "uncertainty := 'bootstrap'"),
        ({"uncertainty": "sandwich", "cluster": "player_a"}, "cluster"),
        ({"uncertainty": "sandwich"}, "uncertainty := 'sandwich'"),
        ({"covariates": ["len_diff"]}, "covariates"),
    ],
)
def test_row_level_options_are_refused_with_the_reason(spark, games, params, named):
    with pytest.raises(duckrate.DuckrateInputError, match=f"{named} is not supported on Spark: it needs"):
        duckrate.spark.bt_fit(to_spark(spark, games), **params)
