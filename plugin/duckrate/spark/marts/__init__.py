"""The marts over a Spark DataFrame of replay rows, equal to the DuckDB macros of the same names.

Each takes the replay rows (the output of :func:`duckrate.spark.replay`, or any table with the columns of a
``<system>_replay`` macro), the macro's parameters with its defaults, and ``system`` for rows without one,
and returns a Spark DataFrame of the macro's rows and columns, in its column order and types. The rows come
in no particular order, as any Spark result's (the macro sorts them by league, NULL first, system, then
rank, bin, t or gap_bin): a global sort would cost a pass of its own. The SQL marts are Spark SQL (groupBy,
window functions, exact DECIMAL sums); the interval ranks of the leaderboards and ``contest_metrics`` run
duckrate's Python functions in one task per (league, system), as the macros run them in a UDF. Columns,
types and parameters are checked on the driver at the call (:mod:`.source`); values (a NULL or
out-of-range forecast) when Spark computes the result, as DuckDB checks them while it runs.
"""

from __future__ import annotations

from duckrate.spark.marts.calibration_bins import calibration_bins
from duckrate.spark.marts.calibration_summary import calibration_summary
from duckrate.spark.marts.contest_metrics import contest_metrics
from duckrate.spark.marts.leaderboards import contest_leaderboard, leaderboard
from duckrate.spark.marts.loss_by_gap import loss_by_gap
from duckrate.spark.marts.loss_curve import loss_curve

__all__ = [
    "calibration_bins",
    "calibration_summary",
    "contest_leaderboard",
    "contest_metrics",
    "leaderboard",
    "loss_by_gap",
    "loss_curve",
]
