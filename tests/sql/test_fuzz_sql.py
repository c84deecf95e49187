"""Hypothesis fuzz over duckrate's SQL surface (issue 8, bad input).

Strategies build small tables (up to ~25 rows) with adversarial values in every column (NULL, NaN, ±inf,
out-of-range scores, duplicate ids, self-matches, empty/Unicode/long names) and random column types (ids
as integers, text or doubles; played_at as BIGINT, TIMESTAMP, DATE, TIMESTAMPTZ, text or DOUBLE; ...),
sometimes without a required column, and random parameter dicts (known names with in- or out-of-range
values of any type, unknown names). Each is run through the macros on a real DuckDB connection.

The invariant: the call either fails with a DuckDB error carrying duckrate's clear message
(``DuckrateInputError`` and "expected", or DuckDB's own "does not support the supplied arguments" for an
unknown parameter name), or succeeds with exactly one output row per input row and the same ids (replays,
contest replays), or one row per (league, player) that played (bt_fit). Anything else fails the test.

Each test also counts its drawn calls and fails when fewer than a third of them complete (the rest refused
with a clean error): a strategy that drifts to drawing mostly bad input would otherwise fuzz little past the
input checks.

Deterministic (``derandomize=True``) so CI is stable; the whole file runs in well under a minute.
"""

from __future__ import annotations

import math
from collections import Counter

import duckdb
from helpers.systems import two_player_systems
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import duckrate
from duckrate.fits.bt_lr_test import PARAMETERS as LR_TEST_PARAMETERS
from duckrate.systems.elo_mmr.replay import ELO_MMR

FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_CONNECTION: list = []


def connection() -> duckdb.DuckDBPyConnection:
    """One registered connection for the whole file (hypothesis runs many examples per test)."""
    if not _CONNECTION:
        con = duckdb.connect()
        duckrate.register(con)
        _CONNECTION.append(con)
    return _CONNECTION[0]


NAMES = [
    "ann",
    "bob",
    "cid",
    "Ann",
    "ANN",
    "é",
    "e\u0301",
    "😀",
    "x" * 2000,
    "",
    "  ann  ",
    "tab\tname",
    "\u200b",
    "42",
]
SCORES = [0.0, 0.5, 1.0, 0.25, math.nan, math.inf, -math.inf, 2.0, -1.0, None]
WEIGHTS = [1.0, 2.5, 0.1, 0.0, -1.0, math.nan, math.inf, None]

# SQL producing each column type from the raw columns (m BIGINT id, p BIGINT time, s DOUBLE score, ...).
MATCH_ID_TYPES = {
    "BIGINT": "m",
    "VARCHAR": "'m' || m",
    "DOUBLE": "m::DOUBLE",
    "UBIGINT": "abs(m)::UBIGINT",
    "DOUBLE with NaN": "CASE WHEN m % 7 = 3 THEN 'nan'::DOUBLE ELSE m::DOUBLE END",
}
PLAYED_AT_TYPES = {
    "BIGINT": "p",
    "TIMESTAMP": "TIMESTAMP '2024-01-01' + to_seconds(p)",
    "DATE": "DATE '2024-01-01' + p::INTEGER",
    "TIMESTAMPTZ": "(TIMESTAMP '2024-01-01' + to_seconds(p))::TIMESTAMPTZ",
    "VARCHAR": "(DATE '2024-01-01' + p::INTEGER)::VARCHAR",
    "DOUBLE": "p::DOUBLE",
    "TIMESTAMP_NS": "(TIMESTAMP '2024-01-01' + to_seconds(p))::TIMESTAMP_NS",
}
SCORE_TYPES = {
    "DOUBLE": "s",
    "FLOAT": "s::FLOAT",
    "VARCHAR": "s::VARCHAR",
    "INTEGER": "CASE WHEN isfinite(s) THEN round(s)::INTEGER END",
    "DECIMAL": "CASE WHEN isfinite(s) THEN s::DECIMAL(6, 3) END",
}
PLAYER_TYPES = {"VARCHAR": "{c}", "BIGINT": "hash({c}) % 1000"}


CLEAN_MATCH_ID_TYPES = ("BIGINT", "VARCHAR", "UBIGINT")
CLEAN_PLAYED_AT_TYPES = ("BIGINT", "TIMESTAMP", "DATE", "TIMESTAMPTZ", "TIMESTAMP_NS")


def sometimes(draw, odd, usual, one_in: int):
    """``odd`` (a strategy) one time in ``one_in``, else ``usual``."""
    return draw(odd) if draw(st.integers(1, one_in)) == 1 else draw(usual)


@st.composite
def match_tables(draw, mostly_clean: bool = False):
    """(raw rows, SQL selecting the table's columns from the raw table) for a matches table: half the
    time (``mostly_clean``: two times in three) a clean one (which must replay), else adversarial values
    and types in every column."""
    clean = draw(st.integers(0, 2)) > 0 if mostly_clean else draw(st.booleans())
    n = draw(st.integers(0, 25))
    ids = (
        list(range(n)) if clean or draw(st.booleans()) else draw(st.lists(st.integers(-5, 40), min_size=n, max_size=n))
    )
    players, usual_score = st.sampled_from(NAMES[:4]), st.sampled_from([0.0, 0.5, 1.0])
    rows = []
    for i in range(n):
        if clean:
            a = draw(st.sampled_from(NAMES))
            b = draw(st.sampled_from([name for name in NAMES if name != a]))
            if "" in (a, b):
                a, b = a or "empty", b or "empty!"
            rows.append(
                (
                    ids[i],
                    draw(st.integers(0, 30)),
                    a,
                    b,
                    draw(usual_score),
                    draw(st.sampled_from(["chess", "go", None, "😀"])),
                    draw(st.sampled_from([1.0, None])),
                    draw(st.integers(0, 3)),
                )
            )
            continue
        rows.append(
            (
                sometimes(draw, st.none(), st.just(ids[i]), 10),
                sometimes(draw, st.none(), st.integers(0, 30), 10),
                sometimes(draw, st.sampled_from(NAMES + [None]), players, 6),
                sometimes(draw, st.sampled_from(NAMES + [None]), players, 6),
                sometimes(draw, st.sampled_from(SCORES), usual_score, 5),
                draw(st.sampled_from(["chess", "go", None, "😀"])),
                sometimes(draw, st.sampled_from(WEIGHTS), st.none(), 5),
                draw(st.one_of(st.none(), st.integers(0, 3))),
            )
        )
    pick = lambda options, clean_options: draw(st.sampled_from(sorted(clean_options if clean else options)))
    columns = {
        "match_id": MATCH_ID_TYPES[pick(MATCH_ID_TYPES, CLEAN_MATCH_ID_TYPES)],
        "played_at": PLAYED_AT_TYPES[pick(PLAYED_AT_TYPES, CLEAN_PLAYED_AT_TYPES)],
        "player_a": PLAYER_TYPES[pick(PLAYER_TYPES, ["VARCHAR"])].format(c="a"),
        "player_b": PLAYER_TYPES[pick(PLAYER_TYPES, ["VARCHAR"])].format(c="b"),
        "score_a": SCORE_TYPES[pick(SCORE_TYPES, ["DOUBLE", "FLOAT", "DECIMAL"])],
    }
    for optional, expression in (("league", "league"), ("weight", "w"), ("period", "per")):
        if draw(st.booleans()):
            columns[optional] = expression
    if not clean and draw(st.integers(0, 9)) == 0:  # sometimes a required column is missing
        del columns[draw(st.sampled_from(["match_id", "played_at", "player_a", "player_b", "score_a"]))]
    return rows, columns


def create_matches(con, rows, columns) -> None:
    con.execute(
        "CREATE OR REPLACE TABLE raw (m BIGINT, p BIGINT, a VARCHAR, b VARCHAR, s DOUBLE, league VARCHAR, w DOUBLE, per BIGINT)"
    )
    if rows:
        con.executemany("INSERT INTO raw VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    select = ", ".join(f"{expression} AS {name}" for name, expression in columns.items())
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT {select} FROM raw")


ODD_VALUES = [None, 0, -1, 1, 2.5, 1e308, "nan", "inf", "-inf", "abc", "logistic", True, 3]


def literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value in ("nan", "inf", "-inf"):
        return f"'{value}'::DOUBLE"
    if isinstance(value, str):
        return f"'{value}'"
    return repr(value)


@st.composite
def parameter_calls(draw, defaults: dict):
    """``(sql arguments, has an unknown name)``: half the time none; else a few known names, each with its
    default (in range) or an odd value (out of range, wrong type, NULL), and maybe an unknown name."""
    if draw(st.booleans()):
        return "", False
    chosen = draw(st.lists(st.sampled_from(sorted(defaults)), unique=True, max_size=3)) if defaults else []
    arguments = {name: sometimes(draw, st.just(defaults[name]), st.sampled_from(ODD_VALUES), 2) for name in chosen}
    unknown = draw(st.integers(0, 5)) == 0
    if unknown:
        arguments["no_such_parameter"] = 1
    return "".join(f", {name} := {literal(value)}" for name, value in arguments.items()), unknown


REPLAY_PARAMETERS = {system.name: {p.name: p.default for p in system.parameters} for system in two_player_systems()}
BT_PARAMETERS = {
    "prior_sd": 300.0,
    "method": "mm",
    "home_advantage": False,
    "anchor_player": "ann",
    "anchor_rating": 1500.0,
    "uncertainty": "hessian",
    "seed": 1,
    "tol": 1e-9,
}  # resamples and max_iter fixed: bounded cost
LR_PARAMETERS = {p.name: p.default for p in LR_TEST_PARAMETERS if p.name not in ("permutations", "lowrank_epochs")}


# Documented errors about the data as a whole rather than one value (no row or column to name).
MODEL_ERRORS = ("no finite maximum-likelihood Bradley-Terry ratings exist",)


def check_error(error: duckdb.Error, unknown: bool) -> None:
    message = str(error)
    if unknown and "does not support the supplied arguments" in message:
        return
    assert "DuckrateInputError" in message, message
    assert "expected" in message or any(known in message for known in MODEL_ERRORS), message


def rows_of(con, sql):
    return con.execute(sql).fetchall()


class Calls:
    """A fuzz test's drawn calls: how many completed and how many were refused with a clean error."""

    def __init__(self) -> None:
        self.completed = self.refused = 0

    def check_enough_completed(self, test: str) -> None:
        drawn = self.completed + self.refused
        assert drawn > 0 and 3 * self.completed >= drawn, (
            f"{test}: {self.completed} of {drawn} drawn calls completed, fewer than a third: the strategies "
            "draw mostly calls that are refused, so little past the input checks is fuzzed"
        )


CALLS: list[Calls] = []  # the running fuzz test's


def counting_calls(test):
    """Run the hypothesis test ``test`` over all its examples (each call through :func:`run_or_check`), then
    fail when fewer than a third of its drawn calls completed rather than being refused. Deterministic as
    the examples are (``derandomize``)."""

    def counted() -> None:
        CALLS[:] = [Calls()]
        try:
            test()
            CALLS[0].check_enough_completed(test.__name__)
        finally:
            CALLS.clear()

    counted.__name__, counted.__qualname__, counted.__doc__ = test.__name__, test.__qualname__, test.__doc__
    return counted


def run_or_check(con, sql: str, unknown: bool):
    """The query's rows, or None after checking its error is one of duckrate's clear errors; counted in the
    running test's :class:`Calls`."""
    try:
        rows = rows_of(con, sql)
    except duckdb.Error as error:  # any other exception type propagates and fails the test
        check_error(error, unknown)
        CALLS[0].refused += 1
        return None
    CALLS[0].completed += 1
    return rows


def same_ids(con, output_ids) -> None:
    input_ids = [row[0] for row in rows_of(con, "SELECT match_id FROM t")]
    assert len(output_ids) == len(input_ids)
    assert Counter(map(repr, output_ids)) == Counter(map(repr, input_ids))


@counting_calls
@FUZZ
@given(table=match_tables(), system=st.sampled_from(sorted(REPLAY_PARAMETERS)), data=st.data())
def test_replays_error_clearly_or_keep_every_row(table, system, data):
    con = connection()
    rows, columns = table
    create_matches(con, rows, columns)
    arguments, unknown = data.draw(parameter_calls(REPLAY_PARAMETERS[system]))
    if system == "chance":
        arguments += ", grid_points := 31"  # keep the grid small: the fuzz is about input, not speed
    out = run_or_check(con, f"SELECT match_id FROM {system}_replay('t'{arguments})", unknown)
    if out is not None:
        same_ids(con, [row[0] for row in out])


@counting_calls
@FUZZ
@given(table=match_tables(mostly_clean=True), data=st.data())
def test_bt_fit_errors_clearly_or_rates_every_player(table, data):
    con = connection()
    rows, columns = table
    create_matches(con, rows, columns)
    arguments, unknown = data.draw(parameter_calls(BT_PARAMETERS))
    if "prior_sd" not in arguments and data.draw(st.booleans()):
        arguments += ", prior_sd := 300"  # a MAP fit: finite ratings for any schedule
    out = run_or_check(con, f"SELECT league, player FROM bt_fit('t'{arguments}, resamples := 5)", unknown)
    if out is not None and not rows:
        assert out == []  # nothing played (the table may lack a column the query below names)
    elif out is not None:
        played = rows_of(
            con,
            "SELECT DISTINCT league::VARCHAR, player::VARCHAR FROM (SELECT league, player_a AS player FROM t "
            "UNION ALL SELECT league, player_b FROM t)"
            if "league" in columns
            else "SELECT DISTINCT NULL, player::VARCHAR FROM (SELECT player_a AS player FROM t UNION ALL SELECT player_b FROM t)",
        )
        assert sorted(out, key=repr) == sorted(played, key=repr)


@counting_calls
@settings(FUZZ, max_examples=60)
@given(table=match_tables(), data=st.data())
def test_bt_lr_test_errors_clearly_or_answers(table, data):
    con = connection()
    rows, columns = table
    create_matches(con, rows, columns)
    arguments, unknown = data.draw(parameter_calls(LR_PARAMETERS))
    out = run_or_check(
        con, f"SELECT test, n_games FROM bt_lr_test('t'{arguments}, permutations := 3, lowrank_epochs := 3)", unknown
    )
    if out is not None and rows:
        n_rows = len(rows)
        assert sum(games for test, games in out if test == "split") == n_rows  # every match counted once per test


@st.composite
def contest_tables(draw):
    n = draw(st.integers(0, 20))
    rows = []
    clean = draw(st.integers(0, 2)) > 0  # two times in three
    if clean:  # a clean table (which must replay): each player once per contest, usable column types
        for contest in range(draw(st.integers(0, 5))):
            for player in draw(st.lists(st.sampled_from(NAMES[:6] + NAMES[7:9]), unique=True, max_size=5)):
                rows.append((contest, None, player, float(draw(st.integers(1, 4))), None))
        n = 0
    for _ in range(n):
        rows.append(
            (
                draw(st.one_of(st.integers(0, 4), st.none()))
                if draw(st.integers(0, 9)) == 0
                else draw(st.integers(0, 4)),
                draw(st.one_of(st.integers(0, 4), st.none()))
                if draw(st.integers(0, 9)) == 0
                else None,  # None: from contest
                draw(st.sampled_from(NAMES + [None]))
                if draw(st.integers(0, 5)) == 0
                else draw(st.sampled_from(NAMES[:6])),
                draw(st.sampled_from([1.0, 2.0, 3.0, 0.0, -1.0, 1.5, math.nan, math.inf, None]))
                if draw(st.integers(0, 5)) == 0
                else float(draw(st.integers(1, 4))),
                draw(st.sampled_from(WEIGHTS)) if draw(st.integers(0, 5)) == 0 else None,
            )
        )
    rank = draw(st.sampled_from(["BIGINT", "DOUBLE"] if clean else ["BIGINT", "DOUBLE", "VARCHAR"]))
    played_at = draw(st.sampled_from(["BIGINT", "DATE", "TIMESTAMP"] + ([] if clean else ["VARCHAR", "DOUBLE"])))
    columns = {
        "contest_id": draw(st.sampled_from(["c", "'c' || c"])),
        "played_at": {
            "BIGINT": "coalesce(p, c)",
            "DATE": "DATE '2024-01-01' + coalesce(p, c)::INTEGER",
            "TIMESTAMP": "TIMESTAMP '2024-01-01' + to_days(coalesce(p, c)::INTEGER)",
            "VARCHAR": "(DATE '2024-01-01' + coalesce(p, c)::INTEGER)::VARCHAR",
            "DOUBLE": "coalesce(p, c)::DOUBLE",
        }[played_at],
        "player": "player",
        "rank": {"BIGINT": "CASE WHEN isfinite(r) THEN r::BIGINT END", "DOUBLE": "r", "VARCHAR": "r::VARCHAR"}[rank],
    }
    if draw(st.booleans()):
        columns["weight"] = "w"
    if not clean and draw(st.integers(0, 9)) == 0:
        del columns[draw(st.sampled_from(["contest_id", "played_at", "player", "rank"]))]
    return rows, columns


@counting_calls
@FUZZ
@given(table=contest_tables(), data=st.data())
def test_elo_mmr_errors_clearly_or_keeps_every_row(table, data):
    con = connection()
    rows, columns = table
    con.execute("CREATE OR REPLACE TABLE raw_c (c BIGINT, p BIGINT, player VARCHAR, r DOUBLE, w DOUBLE)")
    if rows:
        con.executemany("INSERT INTO raw_c VALUES (?, ?, ?, ?, ?)", rows)
    select = ", ".join(f"{expression} AS {name}" for name, expression in columns.items())
    con.execute(f"CREATE OR REPLACE TABLE c AS SELECT {select} FROM raw_c")
    arguments, unknown = data.draw(parameter_calls({p.name: p.default for p in ELO_MMR.parameters}))
    out = run_or_check(con, f"SELECT contest_id, player FROM elo_mmr_replay('c'{arguments})", unknown)
    if out is not None:
        expected = rows_of(con, "SELECT contest_id, player FROM c")
        assert Counter(map(repr, out)) == Counter(map(repr, expected))
