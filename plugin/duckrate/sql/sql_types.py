"""The DuckDB type of each column type duckrate's UDFs return, from its Arrow or Polars type: one map, and
one spelling of a ``STRUCT(...)``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import polars as pl
import pyarrow as pa

_ARROW_SQL = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
    pa.timestamp("us"): "TIMESTAMP",
}
_POLARS_ARROW = {
    pl.String: pa.string(),
    pl.Int64: pa.int64(),
    pl.Float64: pa.float64(),
    pl.Boolean: pa.bool_(),
    pl.Datetime("us"): pa.timestamp("us"),
}


def arrow_type(kind) -> pa.DataType:
    """The Arrow type of a Polars or Arrow column type (lists of them too)."""
    if isinstance(kind, pa.DataType):
        return kind
    if isinstance(kind, pl.List):
        return pa.list_(arrow_type(kind.inner))
    if kind not in _POLARS_ARROW:
        raise TypeError(f"duckrate: no SQL type for the column type {kind!r}; please report this")
    return _POLARS_ARROW[kind]


def arrow_struct(columns: Mapping) -> pa.StructType:
    """The Arrow struct of a mapping of names to column types."""
    return pa.struct([(name, arrow_type(kind)) for name, kind in columns.items()])


def sql_type(kind) -> str:
    """The DuckDB type name of a Polars or Arrow column type: ``VARCHAR``, ``BIGINT``, ``DOUBLE``, ``BOOLEAN``,
    ``TIMESTAMP``, or a list of one (``DOUBLE[]``)."""
    kind = arrow_type(kind)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return sql_type(kind.value_type) + "[]"
    if kind not in _ARROW_SQL:
        raise TypeError(f"duckrate: no SQL type for the column type {kind!r}; please report this")
    return _ARROW_SQL[kind]


def struct_sql(columns: Mapping | Iterable[pa.Field]) -> str:
    """``STRUCT(name type, ...)`` of a mapping of names to column types, or of Arrow fields (a schema or a
    struct type)."""
    pairs = columns.items() if isinstance(columns, Mapping) else ((field.name, field.type) for field in columns)
    return "STRUCT(" + ", ".join(f"{name} {sql_type(kind)}" for name, kind in pairs) + ")"
