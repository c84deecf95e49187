"""Arrow plumbing shared by duckrate's list-in/list-out UDFs.

DuckDB hands a vectorised UDF one Arrow array per argument, one element per row of the calling query;
each of duckrate's table macros calls with one row holding a whole table packed as a list. These helpers
take those lists apart without copying and build the list-of-structs result.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa


def whole(column):
    """One contiguous array (no copy when DuckDB handed over a single chunk)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def struct_rows(table: pa.Table) -> pa.StructArray:
    """A table's rows as one struct array (``to_struct_array`` of a table without rows fails in pyarrow
    before 18: it finds no batches)."""
    if table.num_rows == 0:
        return pa.array([], pa.struct(list(table.schema)))
    return table.to_struct_array().combine_chunks()


def list_values(lists: pa.Array, row: int) -> pa.Array | None:
    """The elements of the ``row``-th list, zero-copy (None for a NULL list)."""
    if pa.types.is_null(lists.type) or not lists.is_valid()[row].as_py():
        return None
    start, stop = lists.offsets[row].as_py(), lists.offsets[row + 1].as_py()
    return lists.values.slice(start, stop - start)


def struct_columns(array: pa.Array) -> dict[str, pa.Array]:
    """A struct array's fields by name."""
    return {array.type.field(i).name: array.field(i) for i in range(array.type.num_fields)}


def map_list_rows(
    lists: pa.Array, compute_row: Callable[[int, pa.Array], pa.StructArray], element_type: pa.DataType
) -> pa.ListArray:
    """One output list per input list: ``compute_row(row, elements)`` for each non-empty list, an empty
    list for a NULL or empty one."""
    outputs, offsets = [], [0]
    for row in range(len(lists)):
        elements = list_values(lists, row)
        if elements is None or len(elements) == 0:
            offsets.append(offsets[-1])
            continue
        result = compute_row(row, elements)
        outputs.append(result)
        offsets.append(offsets[-1] + len(result))
    if not outputs:
        flat = pa.array([], element_type)
    else:
        flat = outputs[0] if len(outputs) == 1 else pa.concat_arrays(outputs)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32() if offsets[-1] < 2**31 else pa.int64()), flat)


def lists_of(parts: list, offsets: list[int], element_type: pa.DataType) -> pa.ListArray:
    """One list per query row from the concatenated ``parts`` and the rows' ``offsets`` into them."""
    flat = pa.concat_arrays(parts) if parts else pa.array([], element_type)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32() if offsets[-1] < 2**31 else pa.int64()), flat)


def list_per_row(per_row: list, element_type: pa.DataType) -> pa.ListArray:
    """One list per query row from each row's array of elements (None: an empty list)."""
    parts = [part for part in per_row if part is not None]
    offsets = [0]
    for part in per_row:
        offsets.append(offsets[-1] + (len(part) if part is not None else 0))
    return lists_of(parts, offsets, element_type)
