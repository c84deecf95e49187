"""The SQL marts on Spark: each mart's one query (:mod:`duckrate.marts.queries`, the query the DuckDB macros
run) in Spark's spelling (:class:`SparkDialect`), run as Spark SQL over the replay rows' DataFrame.

The call's parameters are checked on the driver and enter the query as literals; the replay's columns are
typed as the macros type them, and a NULL ``seq`` or a NULL, NaN or out-of-range forecast fails the job
(Spark's ``raise_error``, as the macros' ``error()``) with the macro's message when Spark computes the
result. Sums of forecasts, scores and log losses run in ``DECIMAL(38, 20)`` as in DuckDB, so they do not
depend on the partitioning; Spark casts a double to a decimal from its shortest decimal text, DuckDB from
the double's scaled value (the two may round a value apart by 1e-20), and Spark's logarithm (Java's
``StrictMath.log``) and DuckDB's (the C library's) can differ in the last bit: those means agree with
DuckDB's to the last bit or two, not always bit for bit. The leaderboards only pick and rank rows: bit for
bit.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql import DataFrame

from duckrate.marts import Input, Mart
from duckrate.marts.dialect import Dialect
from duckrate.spark.marts.interval_ranks import with_interval_ranks

_REPLAY = "duckrate_replay_rows"  # where the query reads the replay's DataFrame
#: From 2**52 on, every double is a whole number (its own floor).
_WHOLE_FROM = 2.0**52


class SparkDialect(Dialect):
    """Spark SQL's spellings; ``values`` are the call's checked parameters."""

    def __init__(self, values: dict):
        self.values = values

    def double(self, value: float) -> str:
        return f"{float(value)!r}D"

    def error(self, message: str) -> str:
        return f"raise_error({message})"

    def integer_div(self, numerator: str, denominator: str) -> str:
        return f"(({numerator}) div ({denominator}))"

    def floor_double(self, value: str) -> str:
        # Spark's floor of a double is a BIGINT: whole doubles, infinities, NaN and signed zeros stay as they are
        fractional = f"abs({value}) < {self.double(_WHOLE_FROM)} AND ({value}) <> {self.double(0.0)}"
        return f"(CASE WHEN {fractional} THEN CAST(floor({value}) AS DOUBLE) ELSE ({value}) END)"

    def struct(self, **fields: str) -> str:
        return "named_struct(" + ", ".join(f"{self.string(name)}, {value}" for name, value in fields.items()) + ")"

    def bound_by_system(self, parameter: str, system: str) -> str:
        bound = self.values[parameter]
        if bound is None:
            return "CAST(NULL AS DOUBLE)"
        if not isinstance(bound, Mapping):
            return self.double(bound)
        cases = " ".join(f"WHEN {self.string(name)} THEN {self.double(value)}" for name, value in bound.items())
        return f"(CASE {system} {cases} ELSE CAST(NULL AS DOUBLE) END)" if cases else "CAST(NULL AS DOUBLE)"

    def shown(self, parameter: str) -> str:
        return self.string(repr(self.values[parameter]))

    def literal(self, value) -> str:
        """A scalar parameter's value."""
        if value is None:
            return "CAST(NULL AS DOUBLE)"
        if isinstance(value, int):
            return f"CAST({value} AS BIGINT)"
        return self.double(value)


def _input(d: SparkDialect, mart: Mart, column: Input) -> str:
    """An input column of ``r``, typed and (``seq``, forecasts) checked as the macro checks it."""
    name = column.name
    if column.parameter is not None and d.values.get(column.parameter) is None:
        return f"CAST(NULL AS DOUBLE) AS {name}"
    if column.kind == "seq":
        message = d.string(f"{mart.name}: expected {name} without nulls")
        return f"CASE WHEN {name} IS NULL THEN {d.error(message)} ELSE {name} END AS {name}"
    if column.kind == "text":
        return f"CAST({name} AS STRING) AS {name}"
    if column.kind == "number":
        return f"CAST({name} AS DOUBLE) AS {name}"
    if column.kind == "forecast":
        value = f"CAST({name} AS DOUBLE)"
        missing = d.string(f"{mart.name}: expected {name} without nulls or NaN")
        found = f"{d.string(f'{mart.name}: expected {name} within [0, 1], found ')} || CAST({value} AS STRING)"
        return (
            f"CASE WHEN {value} IS NULL OR isnan({value}) THEN {d.error(missing)} "
            f"WHEN {value} < 0 OR {value} > 1 THEN {d.error(found)} ELSE {value} END AS {name}"
        )
    return name


def run_query(mart: Mart, frame: DataFrame, values: dict) -> DataFrame:
    """The SQL mart ``mart`` over the replay rows ``frame`` (see :func:`.source.replay_rows`) with the checked
    parameter ``values``: its rows, in no particular order, with the interval ranks of a leaderboard."""
    d = SparkDialect(values)
    scalars = [f"{d.literal(values[p.name])} AS {p.name}" for p in mart.parameters if p.name != "max_sd"]
    inputs = ",\n       ".join(_input(d, mart, column) for column in mart.inputs)
    source = f"SELECT league, system,\n       {inputs}\nFROM {_REPLAY}"
    assert mart.query is not None  # an SQL mart
    query = mart.query(d).over(f"SELECT {', '.join(scalars) or 'true AS no_parameters'}", source)
    # spark.sql formats the text (the frame is ``{replay}``): any other brace, in a literal, is doubled
    text = query.sql().replace("{", "{{").replace("}", "}}").replace(_REPLAY, "{replay}")
    result = frame.sparkSession.sql(text, replay=frame)
    return with_interval_ranks(result) if mart.interval_ranks else result
