"""What a mart's query needs from an engine's SQL: the few spellings DuckDB and Spark SQL do not share.

A mart's query (:mod:`.queries`) is written once, in the SQL both engines read (CTEs, joins, window
functions, ``FILTER``, ``IS NOT DISTINCT FROM``, casts to DOUBLE, BIGINT and ``DECIMAL(38, 20)``); where the
two differ it asks its :class:`Dialect`. Each engine implements one: :class:`duckrate.sql.mart_sql.DuckDBDialect`
and :class:`duckrate.spark.marts.queries.SparkDialect`.
"""

from __future__ import annotations


class Dialect:
    """The engine-specific spellings (abstract)."""

    def double(self, value: float) -> str:
        """A DOUBLE literal of exactly this float."""
        raise NotImplementedError

    def error(self, message: str) -> str:
        """An expression that fails the query with the text ``message`` (a SQL expression)."""
        raise NotImplementedError

    def integer_div(self, numerator: str, denominator: str) -> str:
        """Integer division of two non-negative integers."""
        raise NotImplementedError

    def floor_double(self, value: str) -> str:
        """``floor`` of a DOUBLE, as a DOUBLE (infinities, NaN and signed zeros their own floor)."""
        raise NotImplementedError

    def struct(self, **fields: str) -> str:
        """A struct of named fields."""
        raise NotImplementedError

    def bound_by_system(self, parameter: str, system: str) -> str:
        """The value of ``parameter`` (NULL, a number, or a mapping from system to number) for the system
        ``system`` (a SQL expression), as a DOUBLE (NULL: no bound)."""
        raise NotImplementedError

    def shown(self, parameter: str) -> str:
        """The value of ``parameter`` as text, for an error message."""
        raise NotImplementedError

    def string(self, text: str) -> str:
        """A string literal."""
        return "'" + text.replace("'", "''") + "'"
