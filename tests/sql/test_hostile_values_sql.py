"""Hostile values through every replay and the fits (docs/bad-input.md, "Values"): -0.0, all draws, every
player new, DECIMAL / UTINYINT / BOOLEAN where a number is expected, TIMESTAMPTZ across a daylight-saving change.
Each case either gives the rows of an equivalent plain table (bit for bit) or a clear error naming the column;
NaN, ±inf, empty and one-row tables and a million players are in test_bad_input_sql.py."""

from __future__ import annotations

import duckdb
import pytest
from helpers.systems import two_player_systems

import duckrate

REPLAYS = [
    f"{system.name}_replay('{{t}}'{', p_draw := 0.25' if system.name == 'ttt' else ''})"
    for system in two_player_systems()
]
CALLS = [*REPLAYS, "bt_fit('{t}', prior_sd := 200)"]
GOOD = """SELECT * FROM (VALUES
    (1, TIMESTAMP '2024-10-26 22:00', 'ann', 'bob', 1.0::DOUBLE),
    (2, TIMESTAMP '2024-10-27 00:30', 'bob', 'cid', 0.0),
    (3, TIMESTAMP '2024-10-27 01:10', 'cid', 'ann', 1.0),
    (4, TIMESTAMP '2024-10-27 02:00', 'ann', 'cid', 0.0),
    (5, TIMESTAMP '2024-10-27 03:00', 'bob', 'ann', 0.5)
) AS g(match_id, played_at, player_a, player_b, score_a)"""

GOOD_ROWS = "SELECT * FROM good"
# (case, SQL making table t from table good, SQL making the plain table it must equal, or None: an error
# whose message holds every fragment)
EQUAL_CASES = [
    (
        "score -0.0",
        "SELECT * REPLACE (CASE WHEN score_a = 0 THEN -0.0 ELSE score_a END AS score_a) FROM good",
        GOOD_ROWS,
    ),
    ("score DECIMAL", "SELECT * REPLACE (score_a::DECIMAL(2, 1) AS score_a) FROM good", GOOD_ROWS),
    ("score FLOAT", "SELECT * REPLACE (score_a::FLOAT AS score_a) FROM good", GOOD_ROWS),
    (
        "score UTINYINT (wins and losses)",
        "SELECT * REPLACE (score_a::UTINYINT AS score_a) FROM good WHERE score_a <> 0.5",
        "SELECT * FROM good WHERE score_a <> 0.5",
    ),
    # Berlin leaves summer time at 03:00 CEST = 01:00 UTC on 2024-10-27: the wall clock goes back an hour. The
    # TIMESTAMPTZ values are written in local time with their offsets; the order is the instants', not the
    # wall clock's (match 3 at 02:10+01 is after match 2 at 02:30+02).
    (
        "TIMESTAMPTZ across a DST change",
        "SELECT * REPLACE ((played_at::VARCHAR || '+00')::TIMESTAMPTZ AS played_at) FROM good",
        GOOD_ROWS,
    ),
    (
        "every player new",
        "SELECT match_id, played_at, player_a || match_id AS player_a, player_b || match_id AS player_b, score_a FROM good",
        None,
    ),
    ("all draws", "SELECT * REPLACE (0.5 AS score_a) FROM good", None),
]
ERROR_CASES = [
    ("score BOOLEAN", "SELECT * REPLACE (score_a = 1 AS score_a) FROM good", ["'score_a'", "expected a number"]),
    ("weight -0.0", "SELECT *, -0.0::DOUBLE AS weight FROM good", ["'weight'", "expected a finite weight > 0"]),
]


@pytest.fixture(scope="module")
def registered():
    connection = duckrate.register(duckdb.connect())
    connection.execute("SET TimeZone = 'Europe/Berlin'")  # the session's zone must not change an instant's place
    yield connection
    connection.close()


@pytest.fixture
def hostile(registered):
    """One registered connection for the module (registering costs 0.4 s); each test's tables dropped after it."""
    registered.execute(f"CREATE OR REPLACE TABLE good AS {GOOD}")
    yield registered
    for table in ("t", "p"):
        registered.execute(f"DROP TABLE IF EXISTS {table}")


def rows(con: duckdb.DuckDBPyConnection, call: str, table: str) -> list[tuple]:
    sql = f"SELECT COLUMNS(lambda c: c NOT IN ('played_at', 'player_a', 'player_b')) FROM {call.format(t=table)}"
    return sorted(con.execute(sql).fetchall(), key=repr)


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("case, make, plain", EQUAL_CASES, ids=[case for case, _, _ in EQUAL_CASES])
def test_a_value_in_another_type_or_spelling_gives_the_plain_rows(hostile, call, case, make, plain):
    hostile.execute(f"CREATE TABLE t AS {make}")
    got = rows(hostile, call, "t")
    if plain is None:  # only the case's own answer: one row per match (per player for bt_fit), all finite
        assert got and all(value == value for row in got for value in row if isinstance(value, float))
        return
    hostile.execute(f"CREATE TABLE p AS {plain}")
    assert got == rows(hostile, call, "p"), case


def test_timestamptz_order_is_the_instants(hostile):
    hostile.execute(
        """CREATE TABLE t AS SELECT * FROM (VALUES
        (1, TIMESTAMPTZ '2024-10-27 02:30:00+02', 'ann', 'bob', 1.0::DOUBLE),
        (2, TIMESTAMPTZ '2024-10-27 02:10:00+01', 'bob', 'cid', 0.0)
    ) AS g(match_id, played_at, player_a, player_b, score_a)"""
    )
    assert [row[0] for row in hostile.execute("SELECT match_id FROM elo_replay('t') ORDER BY seq").fetchall()] == [1, 2]


@pytest.mark.parametrize("call", CALLS)
@pytest.mark.parametrize("case, make, fragments", ERROR_CASES, ids=[case for case, _, _ in ERROR_CASES])
def test_a_value_that_is_no_number_is_refused_naming_the_column(hostile, call, case, make, fragments):
    hostile.execute(f"CREATE TABLE t AS {make}")
    if "weight" in make and any(name in call for name in ("trueskill_", "chance_", "elo2k_", "pairwise_", "ttt_")):
        fragments = ["weight"]  # these systems take no weights at all
    with pytest.raises(duckdb.Error) as raised:
        hostile.execute(f"SELECT * FROM {call.format(t='t')}").fetchall()
    for fragment in fragments:
        assert fragment in str(raised.value), (case, call, str(raised.value)[:300])


def test_the_python_api_reads_the_same_types(hostile):
    hostile.execute("CREATE TABLE t AS SELECT * REPLACE (score_a::DECIMAL(2, 1) AS score_a) FROM good")
    frame = hostile.sql("SELECT * FROM t").pl()
    plain = hostile.sql("SELECT * FROM good").pl()
    assert duckrate.elo(frame).drop("played_at").equals(duckrate.elo(plain).drop("played_at"))
