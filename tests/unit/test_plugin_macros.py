"""The dbt plugin creates the macros once per database, in a catalog every cursor finds through its search path
(dbt-duckdb opens a cursor per node)."""

from __future__ import annotations

import duckdb
import pytest
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin

import duckrate
from duckrate.sql.registry import SHARED_CATALOG

MATCHES = (
    "CREATE TABLE few AS SELECT * FROM (VALUES (1, 1, 'a', 'b', 1.0), (2, 2, 'b', 'c', 0.5), (3, 3, 'c', 'a', 0.0)) "
    "AS t(match_id, played_at, player_a, player_b, score_a)"
)


@pytest.fixture
def plugin_connection():
    plugin = BasePlugin.create("duckrate.plugin", credentials=DuckDBCredentials(path=":memory:"))
    con = duckdb.connect()
    plugin.configure_connection(con)
    yield plugin, con
    con.close()


def test_every_cursor_finds_the_macros_and_they_equal_the_temp_ones(plugin_connection):
    plugin, con = plugin_connection
    con.execute(MATCHES)
    cursors = [con.cursor() for _ in range(3)]
    for cursor in cursors:
        plugin.configure_cursor(cursor)
        plugin.configure_cursor(cursor)  # twice: the path names the catalog once
    results = [cursor.sql("SELECT * FROM elo_replay('few') ORDER BY seq").fetchall() for cursor in cursors]
    assert results[0] == results[1] == results[2] and len(results[0]) == 3
    own = duckrate.register(duckdb.connect())
    own.execute(MATCHES)
    assert own.sql("SELECT * FROM elo_replay('few') ORDER BY seq").fetchall() == results[0]
    path = cursors[0].execute("SELECT current_setting('search_path')").fetchall()[0][0]
    assert path.count(SHARED_CATALOG) == 1 and path.endswith(f"{SHARED_CATALOG}.main")
    # the macros are no TEMP objects of any cursor, and nothing of the user's lands in their catalog
    assert (
        not cursors[0].execute("SELECT count(*) FROM duckdb_functions() WHERE database_name = 'temp'").fetchall()[0][0]
    )
    cursors[0].execute("CREATE TABLE made AS SELECT 1 AS x")
    assert cursors[1].execute(
        "SELECT database_name, schema_name FROM duckdb_tables() WHERE table_name = 'made'"
    ).fetchall() == [("memory", "main")]


def test_a_search_path_from_the_profile_is_kept_first(plugin_connection):
    plugin, con = plugin_connection
    con.execute("CREATE SCHEMA staging")
    con.execute("CREATE TABLE staging.few AS SELECT 1 AS x")
    cursor = con.cursor()
    cursor.execute("SET search_path = 'staging,main'")  # what dbt-duckdb does with a profile's settings
    plugin.configure_cursor(cursor)
    assert (
        cursor.execute("SELECT current_setting('search_path')").fetchall()[0][0]
        == f"staging,main,{SHARED_CATALOG}.main"
    )
    assert cursor.execute("SELECT x FROM few").fetchall() == [(1,)]
    assert cursor.execute("SELECT count(*) FROM duckrate_no_priors").fetchall()[0][0] == 0


def test_a_connection_configured_twice_keeps_one_catalog(plugin_connection):
    plugin, con = plugin_connection
    plugin.configure_connection(con)
    catalogs = [row[0] for row in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()]
    assert catalogs.count(SHARED_CATALOG) == 1
