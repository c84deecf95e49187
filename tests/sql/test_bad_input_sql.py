"""Bad input through the SQL surface, tried as a new user would (issue 8): every case ends in a clear
error (DuckDB error carrying duckrate's message: the column, the row key and the value, or the missing
table/parameter and what was expected) or a documented result (one output row per input row).

The "Bad input" table of docs/bad-input.md lists the same cases; the hypothesis fuzz test (test_fuzz_sql.py) covers
random mixtures of them.
"""

from __future__ import annotations

import time

import duckdb
import pytest
from helpers.systems import two_player_systems

import duckrate

REPLAYS = tuple(system.name for system in two_player_systems())
# every macro over a matches table, as a call template ({t}: the table name)
MATCH_MACROS = {
    **{f"{name}_replay": f"{name}_replay('{{t}}')" for name in REPLAYS},
    "bt_fit": "bt_fit('{t}', prior_sd := 200)",
    "bt_lr_test": "bt_lr_test('{t}', permutations := 3, lowrank_epochs := 3)",
}
GOOD = """SELECT * FROM (VALUES
    (1, TIMESTAMP '2024-01-01 10:00', 'ann', 'bob', 1.0::DOUBLE, 1.0::DOUBLE, 'chess'),
    (2, TIMESTAMP '2024-01-02 10:00', 'bob', 'cid', 0.0, 2.0, 'chess'),
    (3, TIMESTAMP '2024-01-03 10:00', 'cid', 'ann', 1.0, NULL, NULL),
    (4, TIMESTAMP '2024-01-04 10:00', 'ann', 'cid', 0.0, 1.0, 'chess')
) AS g(match_id, played_at, player_a, player_b, score_a, weight, league)"""
UNWEIGHTED = (
    "trueskill_replay",
    "chance_replay",
    "elo2k_replay",
    "pairwise_replay",
    "ttt_replay",
)  # reject weight != 1

# (case id, SQL creating table t from table good, fragments every match macro's error must contain)
ERROR_CASES = [
    (
        "null match_id",
        "UPDATE t SET match_id = NULL WHERE match_id = 2",
        ["'match_id'", "None", "expected a non-NULL match_id"],
    ),
    (
        "null played_at",
        "UPDATE t SET played_at = NULL WHERE match_id = 2",
        ["'played_at'", "match_id=2", "expected a non-NULL"],
    ),
    (
        "null player_a",
        "UPDATE t SET player_a = NULL WHERE match_id = 2",
        ["'player_a'", "match_id=2", "expected a non-NULL"],
    ),
    (
        "null player_b",
        "UPDATE t SET player_b = NULL WHERE match_id = 2",
        ["'player_b'", "match_id=2", "expected a non-NULL"],
    ),
    (
        "null score_a",
        "UPDATE t SET score_a = NULL WHERE match_id = 2",
        ["'score_a'", "match_id=2", "expected a non-NULL"],
    ),
    (
        "NaN score",
        "UPDATE t SET score_a = 'nan' WHERE match_id = 2",
        ["'score_a'", "nan", "match_id=2", "expected a score in [0, 1]"],
    ),
    (
        "+inf score",
        "UPDATE t SET score_a = 'inf' WHERE match_id = 2",
        ["'score_a'", "inf", "match_id=2", "expected a score in [0, 1]"],
    ),
    (
        "-inf score",
        "UPDATE t SET score_a = '-inf' WHERE match_id = 2",
        ["'score_a'", "-inf", "match_id=2", "expected a score"],
    ),
    (
        "score above 1",
        "UPDATE t SET score_a = 2 WHERE match_id = 2",
        ["'score_a'", "2.0", "match_id=2", "expected a score"],
    ),
    ("NaN weight", "UPDATE t SET weight = 'nan' WHERE match_id = 2", ["'weight'", "nan", "match_id=2", "expected"]),
    ("+inf weight", "UPDATE t SET weight = 'inf' WHERE match_id = 2", ["'weight'", "inf", "match_id=2", "expected"]),
    ("zero weight", "UPDATE t SET weight = 0 WHERE match_id = 2", ["'weight'", "0.0", "match_id=2", "expected"]),
    (
        "duplicate match_id",
        "UPDATE t SET match_id = 1 WHERE match_id = 2",
        ["'match_id'", "match_id=1", "expected a unique match_id"],
    ),
    (
        "self-match",
        "UPDATE t SET player_b = 'bob' WHERE match_id = 2",
        ["'player_b'", "'bob'", "match_id=2", "self-match"],
    ),
    (
        "empty player name",
        "UPDATE t SET player_b = '' WHERE match_id = 2",
        ["'player_b'", "''", "match_id=2", "non-empty"],
    ),
    (
        "NaN float match_id",
        "CREATE OR REPLACE TABLE t AS SELECT * REPLACE (CASE WHEN match_id = 2 THEN 'nan'::DOUBLE "
        "ELSE match_id END AS match_id) FROM good",
        ["'match_id'", "nan", "expected a finite match_id"],
    ),
    (
        "played_at VARCHAR of dates",
        "CREATE OR REPLACE TABLE t AS SELECT * REPLACE (played_at::VARCHAR AS played_at) FROM good",
        ["'played_at'", "type string", "expected TIMESTAMP, DATE or an integer order", "played_at::TIMESTAMP"],
    ),
    (
        "played_at DOUBLE",
        "CREATE OR REPLACE TABLE t AS SELECT * REPLACE (epoch(played_at) AS played_at) FROM good",
        ["'played_at'", "type double", "expected TIMESTAMP, DATE or an integer order"],
    ),
    (
        "played_at UNION(VARCHAR, DATE)",
        "CREATE OR REPLACE TABLE t AS SELECT * REPLACE (CASE WHEN match_id = 1 THEN "
        "union_value(s := played_at::VARCHAR)::UNION(s VARCHAR, d DATE) ELSE union_value(d := played_at::DATE)::UNION(s VARCHAR, d DATE) "
        "END AS played_at) FROM good",
        ["'played_at'", "union", "expected TIMESTAMP, DATE or an integer order"],
    ),
    (
        "score_a VARCHAR",
        "CREATE OR REPLACE TABLE t AS SELECT * REPLACE (score_a::VARCHAR AS score_a) FROM good",
        ["'score_a'", "type string", "expected a number"],
    ),
    *[
        (
            f"missing column {column}",
            f"CREATE OR REPLACE TABLE t AS SELECT * EXCLUDE ({column}) FROM good",
            ["missing column(s)", f"'{column}'", "expected columns match_id, played_at, player_a, player_b, score_a"],
        )
        for column in ("match_id", "played_at", "player_a", "player_b", "score_a")
    ],
]


@pytest.fixture(scope="module")
def shared_connection():
    connection = duckdb.connect()
    duckrate.register(connection)
    yield connection
    connection.close()


@pytest.fixture
def con(shared_connection):
    """One registered connection for the module (registering costs ~0.2-0.7 s), emptied before each test."""
    for (name,) in shared_connection.execute("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
        shared_connection.execute(f'DROP TABLE "{name}"')
    return shared_connection


def make_table(con, setup: str) -> None:
    con.execute(f"CREATE OR REPLACE TABLE good AS {GOOD}")
    con.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM good")
    con.execute(setup)


def assert_error(con, sql: str, fragments) -> str:
    with pytest.raises(duckdb.Error) as raised:
        con.execute(sql).fetchall()
    message = str(raised.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return message


@pytest.mark.parametrize("macro", MATCH_MACROS)
@pytest.mark.parametrize("case, setup, fragments", ERROR_CASES, ids=[case for case, _, _ in ERROR_CASES])
def test_bad_matches_give_a_clear_error(con, macro, case, setup, fragments):
    make_table(con, setup)
    message = assert_error(con, f"SELECT * FROM {MATCH_MACROS[macro].format(t='t')}", fragments)
    assert "DuckrateInputError" in message


@pytest.mark.parametrize("macro", MATCH_MACROS)
def test_a_table_that_does_not_exist_is_named(con, macro):
    assert_error(
        con, f"SELECT * FROM {MATCH_MACROS[macro].format(t='no_such_table')}", ["no_such_table", "does not exist"]
    )


def replay_ids(con, sql: str) -> list:
    return sorted(row[0] for row in con.execute(f"SELECT match_id FROM {sql}").fetchall())


@pytest.mark.parametrize("name", REPLAYS)
def test_empty_table_gives_zero_rows_with_the_contract_columns(con, name):
    con.execute(f"CREATE TABLE t AS {GOOD} WHERE false")
    relation = con.sql(f"SELECT * FROM {name}_replay('t')")
    assert relation.fetchall() == []
    assert relation.columns[:4] == ["league", "seq", "match_id", "played_at"] and "expected_a" in relation.columns


def test_empty_table_through_the_other_macros(con):
    con.execute(f"CREATE TABLE t AS {GOOD} WHERE false")
    con.execute("CREATE TABLE r AS SELECT * FROM elo_replay('t')")
    for sql in (
        "bt_fit('t')",
        "bt_lr_test('t')",
        "leaderboard('r')",
        "calibration_bins('r')",
        "calibration_summary('r')",
        "loss_curve('r')",
    ):
        assert con.execute(f"SELECT * FROM {sql}").fetchall() == [], sql
    con.execute("CREATE TABLE c (contest_id BIGINT, played_at TIMESTAMP, player VARCHAR, rank BIGINT)")
    assert con.execute("SELECT * FROM elo_mmr_replay('c')").fetchall() == []


@pytest.mark.parametrize("name", REPLAYS)
def test_one_match_and_unsorted_input_keep_every_row(con, name):
    con.execute(f"CREATE TABLE one AS {GOOD} WHERE match_id = 3")
    assert replay_ids(con, f"{name}_replay('one')") == [3]
    # the same matches, stored in reverse time order, replay identically (order is played_at, then match_id)
    con.execute(f"CREATE TABLE sorted AS {GOOD}")
    con.execute("CREATE TABLE unsorted AS SELECT * FROM sorted ORDER BY played_at DESC")
    columns = "match_id, seq, expected_a, rating_a_after, rating_b_after"
    weight = "" if f"{name}_replay" not in UNWEIGHTED else "UPDATE {t} SET weight = NULL"
    for table in ("sorted", "unsorted"):
        if weight:
            con.execute(weight.format(t=table))
    forward = con.execute(f"SELECT {columns} FROM {name}_replay('sorted') ORDER BY match_id").fetchall()
    backward = con.execute(f"SELECT {columns} FROM {name}_replay('unsorted') ORDER BY match_id").fetchall()
    assert forward == backward and len(forward) == 4


NAMES = [
    "x" * 10_000,
    "😀🎲",
    "Ä",
    "A\u0308",
    "ａ",
    "a",
    "A",
    "tab\there",
    "bell\x07",
    "\u200b",
    "  padded  ",
    "é",
    "e\u0301",
    "'; DROP TABLE t; --",
    "NULL",
    "\U0010ffff",
]


@pytest.mark.parametrize("name", REPLAYS)
def test_unicode_long_and_lookalike_names_are_distinct_players(con, name):
    rows = [(i, i, a, b, 1.0 if i % 2 else 0.0) for i, (a, b) in enumerate(zip(NAMES, NAMES[1:] + NAMES[:1]))]
    con.execute(
        "CREATE TABLE u (match_id BIGINT, played_at BIGINT, player_a VARCHAR, player_b VARCHAR, score_a DOUBLE)"
    )
    con.executemany("INSERT INTO u VALUES (?, ?, ?, ?, ?)", rows)
    out = con.execute(f"SELECT match_id, player_a, player_b FROM {name}_replay('u')").fetchall()
    assert sorted(out) == [(i, a, b) for i, _, a, b, _ in rows]  # names come back byte for byte
    con.execute(f"CREATE TABLE r AS SELECT * FROM {name}_replay('u')")
    players = con.execute("SELECT count(*) FROM leaderboard('r')").fetchall()[0][0]
    assert players == len(NAMES)  # none merged: case, normalisation and padding all tell players apart


@pytest.mark.slow  # 5-9 s on 2 cores: a replay of a million matches
def test_a_million_distinct_players(con):
    con.execute(
        "CREATE TABLE m AS SELECT i AS match_id, i AS played_at, 'a' || i AS player_a, 'b' || i AS player_b, "
        "(i % 2)::DOUBLE AS score_a FROM range(1000000) AS r(i)"
    )
    start = time.perf_counter()
    rows, ids, players, first = con.execute(
        "SELECT count(*), count(DISTINCT match_id), count(DISTINCT player_a) + count(DISTINCT player_b), "
        "count(*) FILTER (WHERE rating_a_before = 1500 AND rating_b_before = 1500) FROM elo_replay('m')"
    ).fetchall()[0]
    assert (rows, ids, players, first) == (1_000_000, 1_000_000, 2_000_000, 1_000_000)
    assert time.perf_counter() - start < 60  # a generous bound: about 3 s measured on 2 shared cores


@pytest.mark.parametrize(
    "played_at",
    [
        "played_at::TIMESTAMPTZ",
        "played_at::DATE",
        "epoch(played_at)::BIGINT",
        "played_at::TIMESTAMP_NS",
        "played_at::TIMESTAMP_S",
        "epoch(played_at)::UBIGINT",
    ],
)
def test_every_supported_played_at_type_keeps_every_row(con, played_at):
    con.execute(f"CREATE TABLE good AS {GOOD}")
    con.execute(f"CREATE TABLE t AS SELECT * REPLACE ({played_at} AS played_at) FROM good")
    assert replay_ids(con, "elo_replay('t')") == [1, 2, 3, 4]
    assert (
        con.execute("SELECT typeof(played_at) FROM elo_replay('t') LIMIT 1").fetchall()
        == con.execute("SELECT typeof(played_at) FROM t LIMIT 1").fetchall()
    )  # passed through in its own type


# (call, error fragments): unknown names, out-of-range values, wrong types
PARAMETER_CASES = [
    ("elo_replay('t', bogus := 1)", ["elo_replay", "does not support the supplied arguments", "k := 32"]),
    ("elo_replay('t', k := 'abc')", ["elo: parameter k = 'abc'", "expected a finite K factor >= 0"]),
    ("elo_replay('t', k := '32')", ["elo: parameter k = '32'", "expected"]),
    ("elo_replay('t', k := -1)", ["parameter k = -1", "expected"]),
    ("elo_replay('t', k := 'nan'::DOUBLE)", ["parameter k = nan", "expected"]),
    ("elo_replay('t', k := NULL)", ["parameter k is NULL", "expected"]),
    ("elo_replay('t', k := true)", ["parameter k = True", "expected"]),
    ("elo_replay('t', scale := 0)", ["parameter scale = 0", "expected a finite scale > 0"]),
    (
        "glicko_replay('t', period_length := INTERVAL 1 DAY)",
        ["parameter period_length", "expected a finite period length"],
    ),
    ("glicko2_replay('t', tau := -1)", ["parameter tau = -1", "expected"]),
    (
        "trueskill_replay('t', draw_probability := 1)",
        ["parameter draw_probability = 1", "expected a draw probability in [0, 1)"],
    ),
    ("chance_replay('t', grid_points := 2.5)", ["parameter grid_points = 2.5", "expected an integer"]),
    ("chance_replay('t', sigmoid := 'foo')", ["parameter sigmoid = 'foo'", "expected one of"]),
    ("elo2k_replay('t', dim := 1000)", ["parameter dim = 1000", "between 1 and 64"]),
    ("pairwise_replay('t', prior_games := 0)", ["parameter prior_games = 0", "expected"]),
    ("bt_fit('t', method := 'foo')", ["bt_fit: parameter method = 'foo'", "expected 'newton' or 'mm'"]),
    ("bt_fit('t', prior_sd := -1)", ["parameter prior_sd = -1", "expected"]),
    ("bt_fit('t', bogus := 1)", ["bt_fit", "does not support the supplied arguments"]),
    ("bt_lr_test('t', permutations := 0)", ["parameter permutations = 0", "expected"]),
    ("bt_lr_test('t', seed := 'x')", ["parameter seed = 'x'", "expected an integer seed"]),
    ("elo_replay('t', priors := 'no_such_priors')", ["no_such_priors", "does not exist"]),
    ("calibration_bins('r', bins := 0)", ["calibration_bins: parameter bins = 0", "expected an integer >= 1"]),
    ("calibration_bins('r', bins := 'x')", ["calibration_bins: parameter bins = 'x'", "expected a number"]),
    ("calibration_summary('r', warmup := 2)", ["calibration_summary", "warmup", "[0, 1)"]),
    ("calibration_summary('r', max_sd := 'x')", ["parameter max_sd = 'x'", "expected a number"]),
    ("loss_curve('r', points := NULL)", ["loss_curve: parameter points = None", "expected a number"]),
    ("leaderboard('r', bogus := 1)", ["leaderboard", "does not support the supplied arguments"]),
    (
        "contest_metrics('cr', min_contests := -1)",
        ["contest_metrics: parameter min_contests = -1", "expected an integer >= 0"],
    ),
    ("elo_mmr_replay('c', variant := 'foo')", ["elo_mmr: parameter variant = 'foo'", "expected"]),
    ("elo_mmr_replay('c', max_history := 2.5)", ["parameter max_history = 2.5", "expected an integer"]),
]


@pytest.fixture
def tables(con):
    con.execute(f"CREATE TABLE t AS {GOOD}")
    con.execute("UPDATE t SET weight = NULL")
    con.execute("CREATE TABLE r AS SELECT * FROM elo_replay('t')")
    con.execute(
        "CREATE TABLE c AS SELECT * FROM (VALUES (1, DATE '2024-01-01', 'ann', 1), (1, DATE '2024-01-01', 'bob', 2), "
        "(2, DATE '2024-01-02', 'bob', 1), (2, DATE '2024-01-02', 'ann', 2)) AS c(contest_id, played_at, player, rank)"
    )
    con.execute("CREATE TABLE cr AS SELECT * FROM elo_mmr_replay('c')")
    return con


@pytest.mark.parametrize("call, fragments", PARAMETER_CASES, ids=[call for call, _ in PARAMETER_CASES])
def test_bad_parameters_give_a_clear_error(tables, call, fragments):
    assert_error(tables, f"SELECT * FROM {call}", fragments)


PRIOR_CASES = [
    ("SELECT 'ann' AS player", ["player_priors", "'rating'", "NULL on every row", "expected columns player, rating"]),
    ("SELECT 1700.0 AS rating", ["player_priors", "'player'", "NULL on every row"]),
    (
        "SELECT 'ann' AS player, 'high' AS rating",
        ["player_priors: column 'rating' has type string", "expected a number"],
    ),
    (
        "SELECT 'ann' AS player, 'nan'::DOUBLE AS rating",
        ["column 'rating' has nan for player 'ann'", "expected a finite number"],
    ),
    (
        "SELECT 'ann' AS player, 'inf'::DOUBLE AS rating",
        ["column 'rating' has inf for player 'ann'", "expected a finite number"],
    ),
    (
        "SELECT * FROM (VALUES ('ann', 1700.0), ('bob', NULL)) AS p(player, rating)",
        ["'rating' is NULL at row 2", "player='bob'"],
    ),
    (
        "SELECT * FROM (VALUES ('ann', 1700.0), ('ann', 1600.0)) AS p(player, rating)",
        ["player 'ann' has more than one prior row"],
    ),
    (
        "SELECT 'ann' AS player, 1700.0 AS rating, -5.0 AS sd",
        ["column 'sd' has -5.0 for player 'ann'", "expected sd > 0"],
    ),
    ("SELECT 'ann' AS player, 1700.0 AS rating, 'wide' AS sd", ["column 'sd' has type string", "expected a number"]),
]


@pytest.mark.parametrize(
    "macro", ["glicko_replay", "glicko2_replay", "trueskill_replay", "chance_replay", "bt_fit", "elo_mmr_replay"]
)
@pytest.mark.parametrize("priors, fragments", PRIOR_CASES, ids=[sql for sql, _ in PRIOR_CASES])
def test_a_bad_priors_table_gives_a_clear_error(tables, macro, priors, fragments):
    tables.execute(f"CREATE TABLE p AS {priors}")
    source = "c" if macro == "elo_mmr_replay" else "t"
    extra = ", prior_sd := 200" if macro == "bt_fit" else ""
    assert_error(tables, f"SELECT * FROM {macro}('{source}', priors := 'p'{extra})", fragments)


def test_priors_for_systems_without_a_starting_state_are_refused(tables):
    tables.execute("CREATE TABLE p AS SELECT 'ann' AS player, 1700.0 AS rating")
    for name in ("elo2k", "pairwise"):
        assert_error(
            tables,
            f"SELECT * FROM {name}_replay('t', priors := 'p')",
            [f"{name}: a player_priors table was given", "expected no priors"],
        )


CONTEST_CASES = [
    (
        "UPDATE c SET contest_id = NULL WHERE player = 'bob' AND rank = 2",
        ["'contest_id'", "None", "expected a non-NULL contest_id"],
    ),
    (
        "UPDATE c SET played_at = NULL WHERE player = 'bob' AND rank = 2",
        ["'played_at'", "(contest_id=1, player='bob')", "expected a non-NULL"],
    ),
    ("UPDATE c SET player = NULL WHERE player = 'bob' AND rank = 2", ["'player'", "expected a non-NULL player"]),
    (
        "UPDATE c SET rank = NULL WHERE player = 'bob' AND rank = 2",
        ["'rank'", "(contest_id=1, player='bob')", "expected a non-NULL rank"],
    ),
    ("UPDATE c SET rank = 0 WHERE player = 'bob' AND rank = 2", ["'rank'", "0", "expected a rank >= 1"]),
    (
        "UPDATE c SET player = 'ann' WHERE player = 'bob' AND rank = 2",
        ["'player'", "'ann'", "at most once per contest"],
    ),
    (
        "UPDATE c SET played_at = DATE '2020-01-01' WHERE player = 'bob' AND rank = 2",
        ["'played_at'", "one played_at per contest"],
    ),
    (
        "CREATE OR REPLACE TABLE c AS SELECT * REPLACE (CASE WHEN player = 'bob' THEN 'nan'::DOUBLE ELSE rank END AS rank) FROM c0",
        ["'rank'", "nan", "expected a whole-number rank"],
    ),
    (
        "CREATE OR REPLACE TABLE c AS SELECT * REPLACE (rank + 0.5 AS rank) FROM c0",
        ["'rank'", "1.5", "expected a whole-number rank"],
    ),
    (
        "CREATE OR REPLACE TABLE c AS SELECT *, 'inf'::DOUBLE AS weight FROM c0",
        ["'weight'", "inf", "expected a finite contest weight"],
    ),
    (
        "CREATE OR REPLACE TABLE c AS SELECT * REPLACE (played_at::VARCHAR AS played_at) FROM c0",
        ["'played_at'", "type string", "expected TIMESTAMP"],
    ),
    *[
        (
            f"CREATE OR REPLACE TABLE c AS SELECT * EXCLUDE ({column}) FROM c0",
            ["missing column(s)", f"'{column}'", "expected columns contest_id"],
        )
        for column in ("contest_id", "played_at", "player", "rank")
    ],
]


@pytest.mark.parametrize("setup, fragments", CONTEST_CASES, ids=[setup for setup, _ in CONTEST_CASES])
def test_bad_contest_results_give_a_clear_error(tables, setup, fragments):
    tables.execute("CREATE TABLE c0 AS SELECT * FROM c")
    tables.execute(setup)
    assert_error(tables, "SELECT * FROM elo_mmr_replay('c')", fragments)


MART_CASES = [
    (
        "leaderboard",
        "SELECT * EXCLUDE (seq) FROM r",
        ["leaderboard: the table is missing column(s) 'seq'", "expected a replay table"],
    ),
    ("leaderboard", "SELECT * EXCLUDE (played_at) FROM r", ["leaderboard: the table is missing column 'played_at'"]),
    ("calibration_bins", "SELECT * EXCLUDE (expected_a) FROM r", ["missing column(s) 'expected_a'"]),
    (
        "calibration_summary",
        "SELECT * REPLACE ('nan'::DOUBLE AS expected_a) FROM r",
        ["expected expected_a without nulls or NaN"],
    ),
    (
        "loss_curve",
        "SELECT * REPLACE (seq::VARCHAR AS seq) FROM r",
        ["loss_curve: column 'seq' has type string", "expected an integer"],
    ),
    ("contest_leaderboard", "SELECT * EXCLUDE (player) FROM cr", ["missing column(s) 'player'"]),
    ("contest_metrics", "SELECT * EXCLUDE (rank) FROM cr", ["missing column(s) 'rank'"]),
]


@pytest.mark.parametrize("mart, table, fragments", MART_CASES, ids=[f"{m}: {t}" for m, t, _ in MART_CASES])
def test_a_bad_replay_table_gives_the_marts_a_clear_error(tables, mart, table, fragments):
    tables.execute(f"CREATE TABLE bad AS {table}")
    assert_error(tables, f"SELECT * FROM {mart}('bad')", fragments)
