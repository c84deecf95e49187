"""The SQL marts' expressions (:mod:`duckrate.sql.mart_sql`) as Spark columns: the checked columns, the log
loss and the exact sums.

Sums of forecasts, scores and log losses run in ``DECIMAL(38, 20)`` as in DuckDB: each value rounded once to
1e-20, then exact integer arithmetic, so a sum does not depend on how Spark partitions the rows or in which
order it adds the partial sums. Spark casts a double to a decimal from its shortest decimal text, DuckDB
from the double's scaled value (the two may round a value apart by 1e-20), and Spark's logarithm (Java's
``StrictMath.log``) and DuckDB's (the C library's) can differ in the last bit: the means agree with DuckDB's
to the last bit or two, not always bit for bit.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

from duckrate.evaluation.replay_rows import PROBABILITY_CLIP
from duckrate.sql.evaluation_udf import Mart
from duckrate.sql.mart_sql import EXACT

#: Largest magnitude a double can have with a fraction: from 2**52 on, every double is a whole number.
_WHOLE_FROM = 2.0**52


def text(name: str) -> Column:
    return F.col(name).cast("string")


def number(name: str) -> Column:
    return F.col(name).cast("double")


def checked_seq(mart: Mart) -> Column:
    """``seq``, failing the job (Spark's ``raise_error``, as the macro's ``error()``) where it is NULL."""
    return F.when(F.col("seq").isNull(), F.raise_error(F.lit(f"{mart.name}: expected seq without nulls"))).otherwise(
        F.col("seq")
    )


def forecast(mart: Mart, name: str) -> Column:
    """A forecast or score column as a double, failing the job where it is NULL, NaN or outside [0, 1]."""
    value = number(name)
    found = F.concat(F.lit(f"{mart.name}: expected {name} within [0, 1], found "), value.cast("string"))
    return (
        F.when(
            value.isNull() | F.isnan(value), F.raise_error(F.lit(f"{mart.name}: expected {name} without nulls or NaN"))
        )
        .when((value < 0) | (value > 1), F.raise_error(found))
        .otherwise(value)
    )


def log_loss(p: Column, s: Column) -> Column:
    """Per-match log loss ``-(s ln p + (1 - s) ln(1 - p))``, p clipped to [1e-15, 1 - 1e-15], operation for
    operation as the SQL marts and :func:`duckrate.evaluation.replay_rows.log_loss_expr`."""
    clipped = F.least(F.greatest(p, F.lit(PROBABILITY_CLIP)), F.lit(1.0 - PROBABILITY_CLIP))
    one = F.lit(1.0)
    return -(s * F.log(clipped) + (one - s) * F.log(one - clipped))


def exact_sum(value: Column) -> Column:
    """The sum of ``value`` in ``DECIMAL(38, 20)`` (order-free)."""
    return F.sum(value.cast(EXACT))


def exact_mean(value: Column, rows: Column) -> Column:
    """The exact sum rounded once to a double, over ``rows`` as a double (NULL when there are none)."""
    return exact_sum(value).cast("double") / F.nullif(rows, F.lit(0)).cast("double")


def floor_double(value: Column) -> Column:
    """``floor`` as a double (Spark's ``floor`` of a double is a long): the whole doubles, infinities, NaN
    and signed zeros are their own floor, as in DuckDB."""
    fractional = (F.abs(value) < F.lit(_WHOLE_FROM)) & (value != F.lit(0.0))
    return F.when(fractional, F.floor(value).cast("double")).otherwise(value)


def same(left: str, right: str, *names: str) -> Column:
    """The rows of the frames aliased ``left`` and ``right`` with equal ``names``, NULLs equal (the macros'
    ``IS NOT DISTINCT FROM``)."""
    condition = F.lit(True)
    for name in names:
        condition = condition & F.col(f"{left}.{name}").eqNullSafe(F.col(f"{right}.{name}"))
    return condition
