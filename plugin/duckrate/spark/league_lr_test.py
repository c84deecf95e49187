"""One league's likelihood-ratio tests of Bradley-Terry, as Spark runs them in a Python worker (a grouped
``applyInArrow`` function).

It receives every match of the league as one Arrow table and calls :func:`duckrate.bt_lr_test`, the Python
API (the DuckDB macro runs the same :func:`~duckrate.fits.bt_lr_test.lr_test_columns`): the tests draw
their randomness from the seed and the league's name only, so a league's rows are those of the whole
table. It returns the league's test rows, or one error row.
"""

from __future__ import annotations

from typing import cast

import polars as pl
import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.fits.bt_lr_test import OUTPUT_SCHEMA
from duckrate.fits.bt_lr_test import bt_lr_test as python_bt_lr_test
from duckrate.spark.arrow_tables import frame_part
from duckrate.spark.task_errors import league_error


class LeagueLrTest:
    """The task of :func:`duckrate.spark.bt_lr_test`: ``(key, matches) -> test rows``."""

    def __init__(self, params: dict, schema: pa.Schema):
        self.params = params  # as the caller gave them: the Python API resolves them in each task
        self.schema = schema  # the task's schema (see duckrate.spark.lr_test.lr_test_type)

    def function(self):
        """The plain function Spark calls (it tells a key-taking function by its number of arguments)."""

        def test_league(key, matches):
            return self(key, matches)

        return test_league

    def __call__(self, key: tuple, matches: pa.Table) -> pa.Table:
        try:
            rows = python_bt_lr_test(cast(pl.DataFrame, pl.from_arrow(matches)), **self.params)
        except DuckrateInputError as error:
            return league_error(self.schema, key, error)
        return frame_part(self.schema, "row", rows, tuple(OUTPUT_SCHEMA))
