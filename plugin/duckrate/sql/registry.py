"""The only module that talks to DuckDB: registers duckrate's UDFs and TEMP macros on a connection.

UDFs are registered once per connection (they are shared by its cursors); TEMP macros and the empty
priors view live per cursor, so :func:`register_macros` runs for every cursor (dbt-duckdb's
``configure_cursor``). Both steps are idempotent.
"""

from __future__ import annotations

import duckdb

from ..systems import REPLAY_SYSTEMS
from . import contest_udf, evaluation_udf, fit_udf, lr_test_udf, replay_udf

# DuckDB keeps only a borrowed reference to a Python UDF: keep every registered callable alive here.
_REGISTERED_UDFS: list = []


def _function_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [name]).fetchall()[0][0])


def register_udfs(con: duckdb.DuckDBPyConnection) -> None:
    """Register every UDF not yet on ``con`` (call on the parent connection, never a short-lived cursor)."""
    for system in REPLAY_SYSTEMS:
        if not _function_exists(con, replay_udf.udf_name(system)):
            _create(con, replay_udf.udf_name(system), replay_udf.make_udf(system), replay_udf.return_type(system))
        if not _function_exists(con, replay_udf.udf_name(system, "state")):
            _create(con, replay_udf.udf_name(system, "state"), replay_udf.make_state_udf(system), replay_udf.STATE_RETURN_TYPE)
            _create(con, replay_udf.udf_name(system, "check"), replay_udf.make_check_udf(system), "VARCHAR")
        if not _function_exists(con, replay_udf.udf_name(system, "replay_and_state")):
            _create(con, replay_udf.udf_name(system, "replay_and_state"), replay_udf.make_replay_and_state_udf(system),
                    replay_udf.rows_and_state_type(replay_udf.return_type(system)))
    for mart in evaluation_udf.MARTS:
        if not _function_exists(con, mart.udf_name):
            _create(con, mart.udf_name, evaluation_udf.make_udf(mart), mart.return_type)
    if not _function_exists(con, lr_test_udf.UDF_NAME):
        _create(con, lr_test_udf.UDF_NAME, lr_test_udf.make_udf(), lr_test_udf.RETURN_TYPE)
    if not _function_exists(con, contest_udf.REPLAY_UDF):
        _create(con, contest_udf.REPLAY_UDF, contest_udf.make_replay_udf(), contest_udf.replay_return_type())
    if not _function_exists(con, contest_udf.STATE_UDF):
        _create(con, contest_udf.STATE_UDF, contest_udf.make_state_udf(), replay_udf.STATE_RETURN_TYPE)
        _create(con, contest_udf.CHECK_UDF, contest_udf.make_check_udf(), "VARCHAR")
    if not _function_exists(con, contest_udf.REPLAY_AND_STATE_UDF):
        _create(con, contest_udf.REPLAY_AND_STATE_UDF, contest_udf.make_replay_and_state_udf(),
                replay_udf.rows_and_state_type(contest_udf.replay_return_type()))
    for mart in contest_udf.MARTS:
        if not _function_exists(con, mart.udf_name):
            _create(con, mart.udf_name, evaluation_udf.make_udf(mart), mart.return_type)
    if not _function_exists(con, fit_udf.UDF_NAME):
        _create(con, fit_udf.UDF_NAME, fit_udf.make_udf(), fit_udf.RETURN_TYPE)


def _create(con: duckdb.DuckDBPyConnection, name: str, udf, return_type: str) -> None:
    # parameters=None accepts any argument types; "special" null handling hands NULL arguments to Python
    # (the default would skip the call and return NULL whenever a parameter is NULL).
    con.create_function(name, udf, parameters=None, return_type=return_type, type="arrow",
                        null_handling="special", side_effects=False)
    _REGISTERED_UDFS.append(udf)


def register_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) the TEMP table macros on this connection or cursor."""
    con.execute(replay_udf.EMPTY_PRIORS_SQL)
    con.execute(replay_udf.EMPTY_STATE_SQL)
    for system in REPLAY_SYSTEMS:
        con.execute(replay_udf.macro_sql(system))
        con.execute(replay_udf.macro_sql(system, with_state=True))
        con.execute(replay_udf.state_macro_sql(system))
        con.execute(replay_udf.check_macro_sql(system))
    for mart in evaluation_udf.MARTS:
        con.execute(evaluation_udf.macro_sql(mart))
    con.execute(lr_test_udf.macro_sql())
    con.execute(contest_udf.replay_macro_sql())
    con.execute(contest_udf.replay_macro_sql(with_state=True))
    con.execute(contest_udf.state_macro_sql())
    con.execute(contest_udf.check_macro_sql())
    for mart in contest_udf.MARTS:
        con.execute(evaluation_udf.macro_sql(mart))
    con.execute(fit_udf.macro_sql())


def register(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Add every duckrate UDF and SQL macro to ``con``; safe to call again. Returns ``con``."""
    register_udfs(con)
    register_macros(con)
    return con
