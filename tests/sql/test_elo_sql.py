"""elo_replay in real DuckDB: agreement with duckrate.elo, input types, errors, registration, determinism."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers.replay_cases import CONTRACT_COLUMNS

import duckrate
from duckrate.sql.registry import register_macros

FLOAT_COLUMNS = ["score_a", "expected_a", "rating_a_before", "rating_b_before", "rating_a_after", "rating_b_after"]
SD_COLUMNS = ["sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after"]
KEY = ["league", "seq"]
N_ROWS = 5000

MATCH_ID_SQL = {"integer": "s.id", "varchar": "'m' || s.id::VARCHAR"}  # 'm10' < 'm9' as text
PLAYED_AT_SQL = {
    "bigint": "s.t::BIGINT",
    "timestamp": "TIMESTAMP '2024-01-01 00:00:00' + to_minutes(s.t)",
    "date": "DATE '2024-01-01' + (s.t // 40)::INTEGER",  # ~130 rows per day: long runs of ties
}


def source_frame(seed=0, n=N_ROWS, n_players=40):
    rng = np.random.default_rng(seed)
    leagues = np.array(["chess", "go", "shogi", None], dtype=object)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    kind = rng.integers(0, 3, n)
    score = np.where(
        kind == 0, rng.choice([0.0, 0.5, 1.0], n), np.where(kind == 1, rng.random(n), rng.choice([0.0, 1.0], n))
    )
    weight = rng.uniform(0.2, 3.0, n)
    return pl.DataFrame(
        {
            "id": rng.permutation(n * 2)[:n],
            "t": rng.integers(0, n // 2, n),  # about two matches per instant: ties everywhere
            "player_a": [f"player {x}" for x in a],
            "player_b": [f"player {x}" for x in b],
            "score_a": score,
            "league": leagues[rng.choice(4, n, p=[0.4, 0.3, 0.2, 0.1])].tolist(),
            "weight": [None if rng.random() < 0.1 else float(w) for w in weight],
        },
        schema_overrides={"league": pl.Utf8, "weight": pl.Float64},
    )


def create_matches(con, name="matches", match_id="integer", played_at="bigint", league=True, weight=True, seed=0):
    con.register("source_frame", source_frame(seed))
    columns = [
        f"{MATCH_ID_SQL[match_id]} AS match_id",
        f"{PLAYED_AT_SQL[played_at]} AS played_at",
        "s.player_a",
        "s.player_b",
        "s.score_a",
    ]
    columns += ["s.league"] * league + ["s.weight"] * weight
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT {', '.join(columns)} FROM source_frame AS s")
    con.unregister("source_frame")


def create_priors(con, with_league=True):
    if with_league:
        con.execute(
            "CREATE OR REPLACE TABLE priors AS SELECT * FROM (VALUES ('player 0', 1700.0, NULL), "
            "('player 1', 1600.0, NULL), ('player 1', 1300.0, 'chess'), ('player 2', 1820.5, 'go'), "
            "('nobody', 2500.0, NULL), ('player 3', 1400.0, 'not-a-league')) AS p(player, rating, league)"
        )
    else:
        con.execute(
            "CREATE OR REPLACE TABLE priors AS SELECT * FROM (VALUES ('player 0', 1650.0), ('player 5', 1410.0)) "
            "AS p(player, rating)"
        )


def sql_arguments(params):
    parts = [
        f"{name} := {'NULL' if value is None else repr(value)}" for name, value in params.items() if name != "priors"
    ]
    if "priors" in params:
        parts.append(f"priors := '{params['priors']}'")
    return "".join(", " + part for part in parts)


def replay_sql(con, table, **params):
    return con.sql(f"SELECT * FROM elo_replay('{table}'{sql_arguments(params)})").pl().sort(KEY, nulls_last=True)


def replay_python(con, table, **params):
    priors = params.pop("priors", None)
    frame = con.sql(f"SELECT * FROM {table}").pl()
    prior_frame = None if priors is None else con.sql(f"SELECT * FROM {priors}").pl()
    return duckrate.elo(frame, priors=prior_frame, **params).sort(KEY, nulls_last=True)


def assert_same_replay(got, want, tol=1e-12):
    assert got.columns == want.columns == CONTRACT_COLUMNS
    assert got.height == want.height
    exact = ["league", "seq", "match_id", "played_at", "player_a", "player_b"]
    assert got.select(exact).equals(want.select(exact))
    for column in FLOAT_COLUMNS:
        np.testing.assert_allclose(got[column].to_numpy(), want[column].to_numpy(), rtol=0, atol=tol, err_msg=column)
    for column in SD_COLUMNS:
        assert got[column].null_count() == got.height


@pytest.fixture(params=["memory", "file"])
def any_con(request, tmp_path):
    connection = duckdb.connect(":memory:" if request.param == "memory" else str(tmp_path / "elo.duckdb"))
    duckrate.register(connection)
    yield connection
    connection.close()


@pytest.mark.parametrize(
    ("match_id", "played_at"),
    [
        ("integer", "bigint"),
        ("varchar", "bigint"),
        ("integer", "timestamp"),
        ("varchar", "timestamp"),
        ("integer", "date"),
        ("varchar", "date"),
    ],
)
def test_sql_equals_python(any_con, match_id, played_at):
    create_matches(any_con, match_id=match_id, played_at=played_at)
    params = {"k": 24.0, "advantage": 35.0, "initial": 1450.0}
    assert_same_replay(replay_sql(any_con, "matches", **params), replay_python(any_con, "matches", **params))


@pytest.mark.parametrize("params", [{}, {"a": 0.7, "b": 10.0}, {"scale": 173.7178, "advantage": -20.0}])
def test_sql_equals_python_parameters(con, params):
    create_matches(con, match_id="varchar", played_at="timestamp", seed=1)
    assert_same_replay(replay_sql(con, "matches", **params), replay_python(con, "matches", **params))


def test_sql_view_as_input(con):
    create_matches(con, name="base_matches")
    con.execute("CREATE VIEW matches_view AS SELECT * FROM base_matches WHERE league IS DISTINCT FROM 'shogi'")
    got = replay_sql(con, "matches_view")
    assert_same_replay(got, replay_python(con, "matches_view"))
    assert "shogi" not in got["league"].to_list()


def test_sql_table_without_league(con):
    create_matches(con, league=False, weight=False)
    got = replay_sql(con, "matches")
    assert got["league"].null_count() == got.height == N_ROWS
    assert got["seq"].to_list() == list(range(1, N_ROWS + 1))
    assert_same_replay(got, replay_python(con, "matches"))


@pytest.mark.parametrize("with_league", [True, False])
@pytest.mark.parametrize("params", [{}, {"a": 1.5, "b": 2.0}])
def test_sql_priors(any_con, with_league, params):
    create_matches(any_con, match_id="varchar", played_at="date", seed=2)
    create_priors(any_con, with_league)
    got = replay_sql(any_con, "matches", priors="priors", **params)
    assert_same_replay(got, replay_python(any_con, "matches", priors="priors", **params))
    assert not got["rating_a_before"].equals(replay_sql(any_con, "matches", **params)["rating_a_before"])
    if with_league:
        first = {}
        for row in got.iter_rows(named=True):
            for side in ("a", "b"):
                first.setdefault((row["league"], row[f"player_{side}"]), row[f"rating_{side}_before"])
        assert first[("chess", "player 1")] == 1300.0
        assert first[("go", "player 1")] == 1600.0
        assert first[(None, "player 0")] == 1700.0
        assert first[("go", "player 2")] == 1820.5
        assert first[("chess", "player 2")] == 1500.0
        assert first[("chess", "player 3")] == 1500.0


def test_sql_priors_on_table_without_league(con):
    create_matches(con, league=False, seed=3)
    create_priors(con, with_league=True)
    got = replay_sql(con, "matches", priors="priors")
    assert_same_replay(got, replay_python(con, "matches", priors="priors"))


# --------------------------------------------------------------------------------------------------
# Errors surface as DuckDB exceptions carrying duckrate's message.


def small_table(con, name="bad", **overrides):
    rows = {
        "match_id": [5, 7, 9],
        "played_at": [1, 2, 3],
        "player_a": ["ann", "bob", "cy"],
        "player_b": ["bob", "cy", "ann"],
        "score_a": [1.0, 0.5, 0.0],
    }
    for column, value in overrides.items():
        rows[column][1] = value  # the row of match_id 7
    frame = pl.DataFrame(
        rows,
        schema={
            "match_id": pl.Int64,
            "played_at": pl.Int64,
            "player_a": pl.Utf8,
            "player_b": pl.Utf8,
            "score_a": pl.Float64,
        },
    )
    con.register("small_frame", frame)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM small_frame")
    con.unregister("small_frame")


@pytest.mark.parametrize(
    ("column", "value", "shown"),
    [
        ("player_a", None, "None"),
        ("player_b", None, "None"),
        ("player_b", "", "''"),
        ("player_b", "bob", "'bob'"),
        ("score_a", None, "None"),
        ("score_a", 1.5, "1.5"),
        ("score_a", -0.5, "-0.5"),
        ("played_at", None, "None"),
    ],
)
def test_sql_bad_values(con, column, value, shown):
    small_table(con, **{column: value})
    with pytest.raises(duckdb.Error) as error:
        con.sql("SELECT * FROM elo_replay('bad')").fetchall()
    message = str(error.value)
    assert "DuckrateInputError" in message
    assert f"column '{column}' has {shown} at match_id=7" in message
    assert "'bad'" in message  # the table is named


@pytest.mark.parametrize("kind", ["BIGINT", "VARCHAR"])
def test_sql_duplicate_match_id(con, kind):
    small_table(con, match_id=5)
    con.execute(f"CREATE OR REPLACE TABLE dup AS SELECT match_id::{kind} AS match_id, * EXCLUDE (match_id) FROM bad")
    with pytest.raises(duckdb.Error) as error:
        con.sql("SELECT * FROM elo_replay('dup')").fetchall()
    message = str(error.value)
    shown = "match_id=5" if kind == "BIGINT" else "match_id='5'"
    assert "column 'match_id'" in message and shown in message and "duplicate" in message


def test_sql_bad_parameter(con):
    small_table(con)
    with pytest.raises(duckdb.Error, match="parameter k"):
        con.sql("SELECT * FROM elo_replay('bad', k := -1)").fetchall()
    with pytest.raises(duckdb.Error, match="a and b go together"):
        con.sql("SELECT * FROM elo_replay('bad', a := 1)").fetchall()
    with pytest.raises(duckdb.Error):
        con.sql("SELECT * FROM elo_replay('bad', no_such_parameter := 1)").fetchall()


def test_sql_missing_table(con):
    with pytest.raises(duckdb.CatalogException, match="no_such_matches_table"):
        con.sql("SELECT * FROM elo_replay('no_such_matches_table')").fetchall()


def test_sql_empty_table(con):
    small_table(con)
    con.execute("CREATE TABLE empty_matches AS SELECT * FROM bad WHERE false")
    relation = con.sql("SELECT * FROM elo_replay('empty_matches')")
    assert relation.columns == CONTRACT_COLUMNS
    assert relation.fetchall() == []


# --------------------------------------------------------------------------------------------------
# Registration, types, determinism, persistence.


def test_register_twice_and_cursor():
    con = duckdb.connect()  # a plain connection: register() and the TEMP macros of a cursor of it
    small_table(con, name="few")
    assert duckrate.register(con) is con
    first = con.sql("SELECT * FROM elo_replay('few') ORDER BY seq").fetchall()
    cursor = con.cursor()
    try:
        register_macros(cursor)
        register_macros(cursor)
        assert cursor.sql("SELECT * FROM elo_replay('few') ORDER BY seq").fetchall() == first
    finally:
        cursor.close()
    assert first[0][CONTRACT_COLUMNS.index("rating_a_after")] == 1516.0
    assert first[0][CONTRACT_COLUMNS.index("rating_b_after")] == 1484.0


@pytest.mark.parametrize(("match_id", "match_id_type"), [("integer", "BIGINT"), ("varchar", "VARCHAR")])
@pytest.mark.parametrize(
    ("played_at", "played_at_type"), [("bigint", "BIGINT"), ("timestamp", "TIMESTAMP"), ("date", "DATE")]
)
def test_sql_output_columns_and_types(con, match_id, match_id_type, played_at, played_at_type):
    create_matches(con, match_id=match_id, played_at=played_at)
    relation = con.sql("SELECT * FROM elo_replay('matches')")
    assert relation.columns == CONTRACT_COLUMNS
    types = dict(zip(relation.columns, map(str, relation.types)))
    assert types == {
        "league": "VARCHAR",
        "seq": "BIGINT",
        "match_id": match_id_type,
        "played_at": played_at_type,
        "player_a": "VARCHAR",
        "player_b": "VARCHAR",
        "score_a": "DOUBLE",
        "expected_a": "DOUBLE",
        **{name: "DOUBLE" for name in CONTRACT_COLUMNS[8:]},
    }


def test_sql_determinism_and_threads(con):
    create_matches(con, match_id="varchar", played_at="date", seed=4)
    query = "SELECT * FROM elo_replay('matches', a := 1.0, b := 5.0) ORDER BY league NULLS LAST, seq"
    con.execute("SET threads = 2")
    first = con.sql(query).fetchall()
    assert con.sql(query).fetchall() == first
    con.execute("SET threads = 1")
    assert con.sql(query).fetchall() == first
    assert len(first) == N_ROWS


def test_result_in_file_database_readable_without_duckrate(tmp_path):
    path = str(tmp_path / "replay.duckdb")
    writer = duckdb.connect(path)
    try:
        duckrate.register(writer)
        create_matches(writer, match_id="varchar", played_at="timestamp", seed=5)
        writer.execute("CREATE TABLE replay_elo AS SELECT * FROM elo_replay('matches')")
        written = writer.sql("SELECT * FROM replay_elo ORDER BY league NULLS LAST, seq").fetchall()
    finally:
        writer.close()
    reader = duckdb.connect(path)
    try:
        assert reader.sql(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE 'duckrate%'"
        ).fetchall() == [(0,)]
        assert reader.sql("SELECT * FROM replay_elo ORDER BY league NULLS LAST, seq").fetchall() == written
        assert [c for c in reader.sql("SELECT * FROM replay_elo").columns] == CONTRACT_COLUMNS
    finally:
        reader.close()
    assert len(written) == N_ROWS
