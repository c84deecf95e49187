"""dbt-duckdb plugin: ``plugins: [{module: duckrate.plugin}]`` in the profile.

``configure_connection`` registers the UDFs on the parent connection (shared by dbt's per-thread
cursors) and creates the macros once, in an attached in-memory catalog every cursor sees
(:func:`duckrate.sql.registry.register_shared_macros`); ``configure_cursor`` puts that catalog on each new
cursor's search path. (TEMP macros live per cursor, and dbt-duckdb opens a cursor for every node: creating
them all again took about 0.35 s a node.)

A dbt run on a warehouse file takes its build lock for the run (:func:`duckrate.core.build_lock.hold_for_process`),
as ``duckrate build`` does: while one writes the warehouse, the other is refused with a message naming it. Not
for ``duckrate build``'s own staging copy (the build holds the warehouse's lock) or an in-memory database.
"""

from __future__ import annotations

from pathlib import Path

from dbt.adapters.duckdb.plugins import BasePlugin

from duckrate.core import crash_points
from duckrate.core.build_lock import hold_for_process
from duckrate.sql.registry import register_shared_macros, register_udfs, use_shared_macros


class Plugin(BasePlugin):
    def configure_connection(self, conn) -> None:
        path = getattr(self.creds, "path", None) or ":memory:"
        if path != ":memory:" and "://" not in path and not path.startswith("md:"):
            hold_for_process(Path(path))
        register_udfs(conn)
        register_shared_macros(conn)
        use_shared_macros(conn)
        crash_points.reached("dbt.connected")

    def configure_cursor(self, cursor) -> None:
        use_shared_macros(cursor)
