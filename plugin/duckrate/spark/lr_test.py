"""``duckrate.spark.bt_lr_test``: the likelihood-ratio tests of Bradley-Terry over a Spark DataFrame, one
task per league.

The tests need every game of a league in one place (a random split, features per test game, online Elo
over the games in order), so each league is one task (:class:`.LeagueLrTest`) that runs the Python API on
the league's rows; nothing of the tests is computed in Spark itself. On the driver: the Python API's own
checks of the parameters and of the columns' names and types (on an empty frame of the same schema), then
one Spark job, checkpointed so that the rows and the errors are read from one run; a league's input error
is raised on the driver as the Python API raises it, and a ``match_id`` repeated across leagues is found
by one more aggregation.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from duckrate.fits.bt_lr_test import OUTPUT_SCHEMA
from duckrate.fits.bt_lr_test import bt_lr_test as python_bt_lr_test
from duckrate.spark.arrow_tables import arrow_schema, empty_frame, spark_fields
from duckrate.spark.canonical import canonical_columns
from duckrate.spark.league_lr_test import LeagueLrTest
from duckrate.spark.task_errors import ERROR_FIELDS, raise_first_error
from duckrate.spark.unique_keys import check_unique_match_ids


def lr_test_type() -> T.StructType:
    """The schema every league's task returns: ``duckrate_part`` ('row' or 'error'), the columns of
    :data:`~duckrate.fits.bt_lr_test.OUTPUT_SCHEMA`, and the error's class and message."""
    return T.StructType(
        [
            T.StructField("duckrate_part", T.StringType()),
            *spark_fields(OUTPUT_SCHEMA),
            *(T.StructField(name, T.StringType()) for name, _ in ERROR_FIELDS),
        ]
    )


def bt_lr_test(matches: DataFrame, **params) -> DataFrame:
    """The tests of :func:`duckrate.bt_lr_test` (Tang, Wang & Jin) over a Spark DataFrame of canonical
    matches: one row per (league, test), with its columns and types (``league``, ``test`` strings;
    ``n_players``, ``n_games``, ``seed`` longs; the rest doubles), equal to the Python API's rows bit for
    bit. ``params`` are the Python API's (``seed``, ``ridge``, ``test_ridge``, ``permutations``,
    ``permutation_eta``, ``lowrank_epochs``; the same defaults), checked by it.

    Runs the Spark job at once (bad input raises here, as :class:`~duckrate.DuckrateInputError` with the
    Python API's message) and returns a DataFrame over its checkpointed result, in no particular order.
    """
    frame = canonical_columns(matches)
    python_bt_lr_test(empty_frame(frame), **params)  # parameters, columns and types, as the Python API checks them
    schema = lr_test_type()
    task = LeagueLrTest(params, arrow_schema(schema, frame))
    combined = frame.groupBy("league").applyInArrow(task.function(), schema).localCheckpoint(eager=True)
    raise_first_error(combined, "league")
    check_unique_match_ids(frame)
    return combined.filter(F.col("duckrate_part") == "row").select(*OUTPUT_SCHEMA)


__all__ = ["bt_lr_test", "lr_test_type"]
