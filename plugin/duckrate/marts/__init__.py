"""The marts, each defined once for every engine: their registry (:data:`MARTS`), parameters and queries.

A SQL mart (``leaderboard``, ``calibration_bins``, ``calibration_summary``, ``loss_curve``, ``loss_by_gap``,
``contest_leaderboard``) is one query (:mod:`.queries`) in the SQL DuckDB and Spark share, with the few
spellings they do not share asked of a :class:`~duckrate.marts.dialect.Dialect`; DuckDB runs it in the
mart's table macro (:mod:`duckrate.sql.mart_sql`, and the Python API ``duckrate.leaderboard(df)`` etc.
through the macro, :mod:`duckrate.sql.mart_functions`), Spark as Spark SQL (:mod:`duckrate.spark.marts`).
``contest_metrics`` and the leaderboards' interval ranks are Python computations
(:mod:`duckrate.evaluation.contest_marts`, :mod:`duckrate.core.ranks`) both engines call per
(league, system). Nothing here imports an engine.
"""

from duckrate.marts.registry import MARTS, Input, Mart, mart_named, required_columns

__all__ = ["MARTS", "Input", "Mart", "mart_named", "required_columns"]
