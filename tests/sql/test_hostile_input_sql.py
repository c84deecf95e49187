"""Hostile names and strings through every macro (docs/bad-input.md, "Names and strings").

Every call ``duckrate warm`` makes (each replay, state, fit, test, mart, tune and forecast macro: the same list
that keeps the numba cache complete) runs over small tables, then again over copies of its tables whose names
are hostile: SQL keywords, both kinds of quote, semicolons and ``--``, an injection attempt, right-to-left marks,
NUL, 10,000 characters, a dot, a name in other case. Each such call must return exactly the rows of the plain
call. Then every named parameter of every macro is given hostile strings: each call must either answer or fail
with a clear error (duckrate's own, which says what was expected, or DuckDB's naming the value or the table).
Throughout, a canary table must survive, and DuckDB's query log must hold no statement but the ones this test
ran: nothing the input said was ever executed.

A table name is read as DuckDB's ``query_table`` reads it, as a qualified name (``schema.table``): a table whose
name holds a double quote or a dot is named by its quoted identifier inside the string (``'"dot.ted"'``); the
tests name every hostile table that way, and the plain keywords both ways.
"""

from __future__ import annotations

import re

import duckdb
import pytest

import duckrate
from duckrate.synthetic import generate_contests, generate_matches, generate_team_matches
from duckrate.tools import warm

pytestmark = pytest.mark.slow

HOSTILE_NAMES = {
    "keyword": "select",
    # one name with all the rest: quotes of both kinds, semicolon and comment, an injection, right-to-left
    # marks, emoji and accents, NUL, a dot, 10,000 characters
    "everything else": "it's \"we\"; ird -- x '; DROP TABLE canary; -- \u202e\u200f\u05d0\u05d1 😀 ünï nul\x00 dot.ted "
    + "x" * 10_000,
}
HOSTILE_STRINGS = {
    "injection with both quotes": "'; DROP TABLE canary; --\"",
    "NUL and a right-to-left mark": "a\x00b\u202e",
    "10,000 characters": "y" * 10_000,
}


def one_call_per_macro() -> list[str]:
    """The first of ``duckrate warm``'s calls of each macro (its replay, state and both share the table
    handling)."""
    calls: dict[str, str] = {}
    for call in warm.every_call():
        calls.setdefault(re.search(r"FROM (\w+)\(", call).group(1), call)
    return list(calls.values())


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Session:
    """One registered connection that logs every query; every statement this test runs goes through ``run``."""

    def __init__(self) -> None:
        self.con = duckrate.register(duckdb.connect())
        self.issued: set[str] = set()

    def start_log(self) -> None:
        """From here on, every statement is logged (the tables are made before)."""
        self.run("CREATE TABLE canary AS SELECT 42 AS alive")
        self.run("CALL enable_logging('QueryLog')")

    def run(self, sql: str, fetch: bool = False):
        self.issued.add(sql)
        result = self.con.execute(sql)
        return result.fetchall() if fetch else result.fetchall() and None

    def check_untouched(self) -> None:
        """The canary is alive and every logged statement is one this test ran (the log ends a statement at
        a NUL)."""
        assert self.run("SELECT alive FROM canary", fetch=True) == [(42,)]
        query = "SELECT message FROM duckdb_logs WHERE type = 'QueryLog'"
        logged = [row[0] for row in self.con.execute(query).fetchall()]
        issued = {sql.split("\x00")[0] for sql in self.issued} | {query}
        strangers = [sql for sql in logged if sql not in issued]
        assert not strangers, strangers[:3]


@pytest.fixture(scope="module")
def session() -> Session:
    session = Session()
    con = session.con
    con.register("m_frame", generate_matches(800, 20, seed=3))
    con.register("c_frame", generate_contests(4, 12, 24, seed=3, n_leagues=2))
    con.register(
        "t_frame", generate_team_matches(60, 24, seed=3, teams_per_match=(2, 3), team_size=(1, 2), scores=True)
    )
    for table in ("m", "c", "t"):
        session.run(f"CREATE TABLE {table} AS SELECT * FROM {table}_frame")
    warm.match_tables(con)
    warm.group_tables(con)
    session.start_log()
    return session


def _tables_in(sql: str, tables: set[str]) -> list[str]:
    return [name for name in re.findall(r"'(\w+)'", sql) if name in tables]


def _rows(session: Session, call: str) -> list[tuple]:
    """The call's rows without wall-clock ``seconds``, in a canonical order (NaN equal to NaN)."""
    body = call.replace("SELECT count(*) FROM ", "SELECT COLUMNS(lambda c: c != 'seconds') FROM ", 1)
    return sorted(
        (tuple("NaN" if value != value else value for value in row) for row in session.run(body, fetch=True)), key=repr
    )


def _base_tables(session: Session) -> set[str]:
    return {row[0] for row in session.run("SELECT table_name FROM duckdb_tables()", fetch=True)} - {"canary"}


def test_hostile_table_names_give_the_rows_of_plain_ones(session):
    calls = one_call_per_macro()
    tables = _base_tables(session)
    used = sorted({name for call in calls for name in _tables_in(call, tables)})
    assert {"m", "c", "t", "r", "cr", "tr"} <= set(used)
    for name in HOSTILE_NAMES.values():
        for table in used:
            session.run(f"CREATE TABLE {quoted(name + '_' + table)} AS SELECT * FROM {table}")
    failures = []
    for call in calls:
        expected = _rows(session, call)
        for label, name in HOSTILE_NAMES.items():
            hostile = call
            for table in _tables_in(call, tables):
                hostile = hostile.replace(f"'{table}'", literal(quoted(name + "_" + table)))
            try:
                got = _rows(session, hostile)
            except duckdb.Error as error:
                failures.append((label, call, f"{type(error).__name__}: {str(error)[:200]}"))
                continue
            if got != expected:
                failures.append((label, call, "different rows"))
        # a keyword unquoted, and a name in other case (DuckDB's names ignore case): the same table
        for variant in ("select_{}", "SELECT_{}"):
            plain = call
            for table in _tables_in(call, tables):
                plain = plain.replace(f"'{table}'", literal(variant.format(table)))
            if _rows(session, plain) != expected:
                failures.append((variant, call, "different rows"))
    session.check_untouched()
    assert not failures, failures[:5]


#: What a clear error says: duckrate's own say what was expected; DuckDB's name the value, table or parameter.
CLEAR = re.compile(
    r"duckrate|expected|does not exist|Could not convert|Conversion Error|not a valid|Invalid Input|"
    r"does not support the supplied arguments|Unexpected quote|must be",
    re.IGNORECASE,
)


def _macro_parameters(session: Session) -> dict[str, list[str]]:
    query = "SELECT function_name, parameters FROM duckdb_functions() WHERE function_type = 'table_macro'"
    return {name: list(parameters) for name, parameters in session.run(query, fetch=True)}


def test_hostile_strings_in_every_named_parameter_answer_or_fail_clearly(session):
    """Each named parameter of each macro gets one of the hostile strings, in turn (every string reaches
    parameters of every kind: tables, names, numbers, choices)."""
    parameters = _macro_parameters(session)
    values = list(HOSTILE_STRINGS.values())
    outcomes: dict[str, int] = {}
    unclear = []
    turn = 0
    for call in one_call_per_macro():
        macro = re.search(r"FROM (\w+)\(", call).group(1)
        given = set(re.findall(r"(\w+) :=", call))
        for parameter in parameters[macro][1:]:  # the first is the table
            if parameter in given:
                continue
            value = values[turn % len(values)]
            turn += 1
            hostile = call[: call.rindex(")")] + f", {parameter} := {literal(value)})"
            try:
                session.run(hostile)
                outcomes["answered"] = outcomes.get("answered", 0) + 1
            except duckdb.Error as error:
                message = str(error)
                if CLEAR.search(message):
                    outcomes["clear error"] = outcomes.get("clear error", 0) + 1
                else:
                    unclear.append((macro, parameter, value[:20], message[:300]))
    session.check_untouched()
    assert not unclear, unclear[:5]
    assert outcomes.get("clear error", 0) > 100 and outcomes.get("answered", 0) > 0, outcomes


def test_columns_named_like_keywords_or_injections_are_data(session):
    """A column called ``order`` as a covariate gives the fit of the same column called ``gap``; extra columns
    with hostile names do not change a replay."""
    session.run('CREATE TABLE keyword_columns AS SELECT *, (match_id % 3)::DOUBLE AS "order" FROM m')
    session.run("CREATE TABLE plain_columns AS SELECT *, (match_id % 3)::DOUBLE AS gap FROM m")
    keyword = _rows(session, "SELECT count(*) FROM bt_fit('keyword_columns', prior_sd := 200, covariates := ['order'])")
    plain = _rows(session, "SELECT count(*) FROM bt_fit('plain_columns', prior_sd := 200, covariates := ['gap'])")
    renamed = sorted((tuple("gap" if value == "order" else value for value in row) for row in keyword), key=repr)
    assert renamed == plain and any("gap" in row for row in plain)  # the covariate's own row, by its name
    extra = ", ".join(f"1 AS {quoted(name)}" for name in HOSTILE_NAMES.values())
    session.run(f"CREATE TABLE hostile_columns AS SELECT *, {extra} FROM m")
    assert _rows(session, "SELECT count(*) FROM elo_replay('hostile_columns')") == _rows(
        session, "SELECT count(*) FROM elo_replay('m')"
    )
    session.check_untouched()
