"""A Python mart's rows (``contest_metrics``) over replay rows handed over as Arrow: the rows of the whole
table packed by the DuckDB macro, or one (league, system)'s rows in a Spark task."""

from __future__ import annotations

from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.marts.parameters import check_column_types
from duckrate.marts.registry import Mart

_ARROW_TYPES = {"VARCHAR": pa.string(), "BIGINT": pa.int64(), "DOUBLE": pa.float64()}


def returns_schema(mart: Mart) -> pa.Schema:
    """A Python mart's output columns (:attr:`Mart.returns`) as an Arrow schema."""
    return pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in mart.returns])


def _replay_frame(mart: Mart, elements: pa.StructArray) -> pl.DataFrame:
    """The replay rows as a frame; a column the table lacks (an untyped NULL from the macro's marker
    relation) is left out, so the mart's own check names it; a column of the wrong type is an error."""
    table = pa.Table.from_struct_array(elements)
    check_column_types(mart.name, table.schema)
    present = [
        name
        for name in table.column_names
        if not pa.types.is_null(table.schema.field(name).type) or name in ("system", "league")
    ]
    missing = [name for name in mart.fields if name not in present]
    if missing:
        raise DuckrateInputError(
            f"{mart.name}: the table is missing column(s) {', '.join(map(repr, missing))}; expected a replay table "
            f"(the output of a *_replay macro) with columns {', '.join(mart.fields)}"
        )
    frame = cast(pl.DataFrame, pl.from_arrow(table.select(present)))
    return frame.with_columns(pl.col(name).cast(pl.Utf8) for name in ("system", "league") if name in frame.columns)


def mart_table(mart: Mart, elements: pa.StructArray, values: list) -> pa.Table:
    """A Python mart's rows over the replay rows ``elements`` (one struct per row) with the parameter
    ``values`` (in :attr:`Mart.parameters` order): its computation, typed as :attr:`Mart.returns`."""
    assert mart.compute is not None  # a Python mart
    frame = _replay_frame(mart, elements)
    result = mart.compute(frame, *values).select([name for name, _ in mart.returns])
    return result.to_arrow().cast(returns_schema(mart))
