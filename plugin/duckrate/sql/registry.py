"""The only module that talks to DuckDB: registers duckrate's UDFs and TEMP macros on a connection.

UDFs are registered once per connection (they are shared by its cursors); TEMP macros and the empty
priors view live per cursor, so :func:`register_macros` runs for every cursor (dbt-duckdb's
``configure_cursor``). Both steps are idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from types import ModuleType

import duckdb

import duckrate.fits  # noqa: F401  (registers the fits in FITS)
from duckrate.core.registry import FITS, SYSTEMS
from duckrate.core.teams import TEAM_RESULTS
from duckrate.marts import MARTS
from duckrate.sql import (
    bridge,
    evaluation_udf,
    event_udf,
    fit_udf,
    lr_test_udf,
    mart_sql,
    ranks_udf,
    readers,
    replay_udf,
    team_predictions_udf,
    tune_udf,
    win_probability_udf,
)
from duckrate.sql.sql_types import struct_sql
from duckrate.systems import contest, team, two_player

# DuckDB keeps only a borrowed reference to a Python UDF: keep every registered callable alive here.
_REGISTERED_UDFS: list = []


def _existing_functions(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT DISTINCT function_name FROM duckdb_functions()").fetchall()}


def _event_systems() -> tuple:
    """Every contest and team system, and the aliases of team systems (:meth:`SystemRegistry.alias`)."""
    return (*contest.registered(), *team.registered(), *SYSTEMS.aliases(TEAM_RESULTS))


def _udfs() -> list[tuple[str, Callable[[], Callable], str]]:
    """Every UDF as (name, factory, SQL return type)."""
    udfs: list[tuple[str, Callable[[], Callable], str]] = [
        (bridge.NEW_TOKEN_UDF, lambda: bridge.new_token_udf, "BIGINT"),
        (bridge.COLLECT_UDF, lambda: bridge.collect_udf, "BOOLEAN"),
    ]
    udfs += [
        (
            replay_udf.fetch_udf_name(has_sd),
            partial(bridge.make_fetch_udf, replay_udf.fetch_udf_name(has_sd), replay_udf.fetch_type(has_sd)),
            struct_sql(replay_udf.fetch_type(has_sd)),
        )
        for has_sd in (True, False)
    ]
    for kind in (contest.ContestSystem, team.TeamSystem):
        shape = event_udf.family(kind)
        udfs.append(
            (
                shape.fetch_udf,
                partial(bridge.make_fetch_udf, shape.fetch_udf, shape.fetch_type),
                struct_sql(shape.fetch_type),
            )
        )
    udfs.append(
        (
            replay_udf.TAKE_STATE_UDF,
            lambda: bridge.make_take_state_udf(replay_udf.STATE_ARROW, replay_udf.state_struct),
            replay_udf.STATE_RETURN_TYPE,
        )
    )
    udfs.append(
        (
            replay_udf.CARRIED_LEAGUES_UDF,
            lambda: bridge.make_take_state_udf(replay_udf.STATE_ARROW, replay_udf.league_rows_struct, take=False),
            replay_udf.STATE_RETURN_TYPE,
        )
    )
    families = ((replay_udf, two_player.registered()), (event_udf, _event_systems()))
    for module, systems in families:
        for system in systems:
            udfs.append(
                (
                    replay_udf.udf_name(system, "compute"),
                    partial(module.make_compute_udf, system),
                    "BIGINT",
                )
            )
            udfs.append(
                (
                    replay_udf.udf_name(system, "check"),
                    partial(module.make_check_udf, system),
                    "VARCHAR",
                )
            )
    for mart in [mart for mart in MARTS if mart.compute is not None]:
        udfs.append(
            (evaluation_udf.udf_name(mart), partial(evaluation_udf.make_udf, mart), evaluation_udf.return_type(mart))
        )
    udfs.append((lr_test_udf.UDF_NAME, lr_test_udf.make_udf, lr_test_udf.RETURN_TYPE))
    for fit in FITS:
        udfs.append((fit_udf.udf_name(fit), partial(fit_udf.make_udf, fit), "BIGINT"))
        udfs.append(
            (
                fit_udf.fetch_udf_name(fit),
                partial(bridge.make_rows_udf, fit_udf.fetch_udf_name(fit), fit_udf.fetch_type(fit)),
                fit_udf.fetch_return_type(fit),
            )
        )
    udfs.append((tune_udf.UDF_NAME, tune_udf.make_udf, tune_udf.RETURN_TYPE))
    udfs.append((team_predictions_udf.UDF_NAME, team_predictions_udf.make_udf, team_predictions_udf.RETURN_TYPE))
    udfs.append((ranks_udf.UDF_NAME, ranks_udf.make_udf, ranks_udf.RETURN_TYPE))
    udfs.append((tune_udf.CONTEST_UDF_NAME, tune_udf.make_contest_udf, tune_udf.RETURN_TYPE))
    udfs.append(
        (
            win_probability_udf.PROBABILITY_UDF,
            win_probability_udf.make_probability_udf,
            win_probability_udf.PROBABILITY_RETURN_TYPE,
        )
    )
    udfs.append(
        (win_probability_udf.MATRIX_UDF, win_probability_udf.make_matrix_udf, win_probability_udf.MATRIX_RETURN_TYPE)
    )
    return udfs


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Register every UDF not yet on ``con`` (call on the parent connection, never a short-lived cursor)."""
    existing = _existing_functions(con)
    for name, factory, return_type in _udfs():
        if name not in existing:
            _create(con, name, factory(), return_type)


def _create(con: duckdb.DuckDBPyConnection, name: str, udf, return_type: str) -> None:
    # parameters=None accepts any argument types; "special" null handling hands NULL arguments to Python
    # (the default would skip the call and return NULL whenever a parameter is NULL). The bridge's UDFs
    # (compute, fetch, take the state) hand results over once: marked volatile, DuckDB never evaluates one
    # call twice or folds two calls into one.
    con.create_function(
        name,
        udf,
        parameters=None,
        return_type=return_type,
        type="arrow",
        null_handling="special",
        side_effects=bridge.is_bridge_udf(name),
    )  # type: ignore[call-overload]  # duckdb's stubs take only enums for type and null_handling; it takes their names
    _REGISTERED_UDFS.append(udf)


def _macro_statements() -> Iterator[str]:
    """Every ``CREATE OR REPLACE TEMP MACRO`` (and the empty views they default to); a macro finds the others
    when it is called, so their order is free."""
    yield replay_udf.EMPTY_PRIORS_SQL
    yield replay_udf.EMPTY_STATE_SQL
    yield replay_udf.NEXT_STATE_MACRO_SQL
    yield replay_udf.NO_CARRY_SQL
    yield replay_udf.carried_systems_macro_sql(two_player.registered())
    yield replay_udf.whole_history_systems_macro_sql(two_player.registered())
    yield replay_udf.CARRIED_LEAGUES_MACRO_SQL
    yield replay_udf.DEFAULT_CHUNK_MACRO_SQL
    # each system's replay, replay and state, state, resume check, token and rows macros, by family
    families: tuple[tuple[Callable[..., str], ModuleType, tuple], ...] = (
        (replay_udf.macro_sql, replay_udf, two_player.registered()),
        (event_udf.replay_macro_sql, event_udf, _event_systems()),
    )
    for replay_macro, module, systems in families:
        for system in systems:
            yield replay_macro(system)
            yield replay_macro(system, with_state=True)
            yield module.state_macro_sql(system)
            yield module.check_macro_sql(system)
            yield module.token_macro_sql(system)
            yield module.rows_macro_sql(system)
    for mart in MARTS:
        yield mart_sql.macro_sql(mart)
    yield lr_test_udf.macro_sql()
    for fit in FITS:
        yield fit_udf.macro_sql(fit)
    yield tune_udf.macro_sql()
    yield tune_udf.contest_macro_sql()
    yield tune_udf.team_macro_sql()
    yield win_probability_udf.probability_macro_sql()
    yield win_probability_udf.matrix_macro_sql()
    yield from team_predictions_udf.macro_sqls()
    yield from readers.macro_sqls()


def register_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) the TEMP table macros on this connection or cursor (they live as long as it)."""
    for sql in _macro_statements():
        con.execute(sql)


#: The attached in-memory catalog that holds the macros shared by every cursor of one database instance
#: (:func:`register_shared_macros`).
SHARED_CATALOG = "duckrate_macros"
_TEMP_OBJECT = re.compile(r"^(\s*CREATE OR REPLACE) TEMP (MACRO|VIEW) ")


def register_shared_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create the macros once for every cursor of ``con``'s database: in an attached in-memory catalog
    (:data:`SHARED_CATALOG`), which every connection to the instance sees, instead of as TEMP objects,
    which live per cursor. Parsing them all takes about 0.35 s, which dbt-duckdb would otherwise pay for
    every node it runs (it opens a cursor per node). A cursor finds them through
    :func:`use_shared_macros`."""
    con.execute(f"ATTACH IF NOT EXISTS ':memory:' AS {SHARED_CATALOG}")
    for sql in _macro_statements():
        shared, replaced = _TEMP_OBJECT.subn(rf"\1 \2 {SHARED_CATALOG}.main.", sql, count=1)
        if not replaced:
            raise AssertionError(f"not a TEMP macro or view: {sql[:80]!r}")
        con.execute(shared)


def use_shared_macros(cursor: duckdb.DuckDBPyConnection) -> None:
    """Put the shared macros on ``cursor``'s search path, after what it searches already (the profile's
    ``search_path`` setting, else its current database and schema), so unqualified calls such as
    ``elo_replay('matches')`` find them and nothing else resolves differently."""
    path, database, schema = cursor.execute(
        "SELECT current_setting('search_path'), current_database(), current_schema()"
    ).fetchall()[0]
    entries = [entry for entry in path.split(",") if entry.strip()] or [f"{_quoted(database)}.{_quoted(schema)}"]
    shared = f"{SHARED_CATALOG}.main"
    if shared not in entries:
        value = ",".join([*entries, shared]).replace("'", "''")
        cursor.execute(f"SET search_path = '{value}'")


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Add every duckrate UDF and SQL macro to ``con``; safe to call again. Returns ``con``."""
    register_udfs(con)
    register_macros(con)
    return con
