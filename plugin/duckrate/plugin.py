"""dbt-duckdb plugin: ``plugins: [{module: duckrate.plugin}]`` in the profile.

``configure_connection`` registers the UDFs on the parent connection (shared by dbt's per-thread
cursors); ``configure_cursor`` adds the TEMP macros to each cursor, since TEMP objects are per cursor.
"""

from __future__ import annotations

from dbt.adapters.duckdb.plugins import BasePlugin

from duckrate.sql.registry import register_macros, register_udfs


class Plugin(BasePlugin):
    def configure_connection(self, conn) -> None:
        register_udfs(conn)
        register_macros(conn)

    def configure_cursor(self, cursor) -> None:
        register_macros(cursor)
