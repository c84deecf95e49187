"""The Arrow UDF and TEMP table macro behind ``bt_lr_test``: the matches packed as one list, the tests
run by :func:`duckrate.fits.bt_lr_test.lr_test_columns`, one row per (league, test) unnested back."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.core.parameters import sql_parameter_list
from duckrate.fits.bt_lr_test import OUTPUT_SCHEMA, PARAMETERS, lr_test_columns
from duckrate.sql._lists import lists_of, struct_rows, whole
from duckrate.sql.bridge import collected_ctes, one_at_a_time
from duckrate.sql.replay_udf import MATCH_SOURCE, collected_columns
from duckrate.sql.sql_types import arrow_struct, struct_sql

UDF_NAME = "duckrate_bt_lr_test_udf"
FIELDS = ("match_id", "played_at", "player_a", "player_b", "score_a", "league", "weight")
RETURN_TYPE = struct_sql(OUTPUT_SCHEMA) + "[]"
_ELEMENT = arrow_struct(OUTPUT_SCHEMA)


def make_udf():
    """``(token, n_input, table name, parameters...) -> list of test rows``: the matches were collected under
    the token (see :mod:`.bridge`)."""
    names = [p.name for p in PARAMETERS]

    def lr_test_udf(token, n_input, table_name, *parameters):
        tokens, n_inputs = (np.asarray(whole(a).fill_null(0), dtype=np.int64) for a in (token, n_input))
        table_name = whole(table_name)
        parameters = [whole(column) for column in parameters]
        results, offsets = [], [0]
        for row in range(len(tokens)):
            columns, _ = collected_columns(int(tokens[row]), "input", int(n_inputs[row]))
            if columns is None:
                offsets.append(offsets[-1])
                continue
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            result = lr_test_columns(columns, values, table=f"table {table_name[row].as_py()!r}")
            results.append(struct_rows(result.to_arrow().cast(pa.schema(_ELEMENT))))
            offsets.append(offsets[-1] + len(results[-1]))
        return lists_of(results, offsets, _ELEMENT)

    lr_test_udf.__name__ = UDF_NAME
    return one_at_a_time(lr_test_udf)


def macro_sql() -> str:
    """``CREATE TEMP MACRO bt_lr_test(tbl, seed := 0, ...) AS TABLE ...``."""
    params = sql_parameter_list(PARAMETERS)
    args = ", ".join(p.name for p in PARAMETERS)
    fields = ", ".join(f"m.{name}" for name in FIELDS)
    parts = {"input": f"(SELECT {fields} FROM {MATCH_SOURCE} AS m)"}
    return f"""
CREATE OR REPLACE TEMP MACRO bt_lr_test(tbl, {params}) AS TABLE
WITH {collected_ctes(parts)}
SELECT unnest({UDF_NAME}(k.t, c.n_input, tbl, {args}), recursive := true) FROM duckrate_token AS k, duckrate_collected AS c
"""
