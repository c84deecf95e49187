"""``duckrate.spark.bt_fit``: Bradley-Terry fits with the games summed in Spark and solved on the driver.

The data-heavy part runs distributed: every batch of games is checked and summed into ordered pairs
(:mod:`.pair_sums`), and Spark adds the sums per (league, side A, side B). Pairs are far fewer than games:
the driver collects them and fits every league with the Python path's own code
(:func:`~duckrate.fits.bradley_terry.fit.fit_prepared`), the pairs laid out as that code meets them. The
weighted sums are exact (each game's weighted score rounded once to 1e-20, then ``DECIMAL(38, 20)``
integer arithmetic, in the batches and in Spark), so they do not depend on how Spark partitions or orders
the games; one machine adds the same values as doubles in replay order, so results agree with
:func:`duckrate.bt_fit` to rounding (1e-9), and bit for bit when the games carry no weights (sums of halves
are exact either way).

Options that need every game's row on the solver are refused (see :data:`ROW_OPTIONS`): covariates,
clusters, the sandwich and the bootstrap (which resample or weigh single games). The reweighting
(``reweight := 'inverse_pair_frequency'``) applies: a game's factor depends only on its unordered pair's
count, which the sums hold, so each pair's sums are scaled by it.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import prepare_matches
from duckrate.fits.bradley_terry.fit import BT_FIT, fit_prepared, resolve_parameters
from duckrate.fits.bradley_terry.fit import bt_fit as python_bt_fit
from duckrate.fits.bradley_terry.league import LeagueData
from duckrate.fits.bradley_terry.pairs import pairs_from_sums
from duckrate.fits.bradley_terry.reweight import inverse_pair_frequency
from duckrate.fits.league_games import league_rows
from duckrate.marts.parameters import EXACT_DIGITS
from duckrate.spark.arrow_tables import arrow_schema, empty_frame
from duckrate.spark.canonical import canonical_columns
from duckrate.spark.pair_sums import BatchPairSums
from duckrate.spark.task_errors import ERROR_FIELDS, raise_error
from duckrate.spark.unique_keys import check_unique_match_ids

#: What each option the Spark path refuses would need, and the Spark path does not have.
ROW_OPTIONS = {
    "covariates": "each game's covariates",
    "cluster": "each game's cluster",
    "uncertainty := 'sandwich'": "each game's score contribution",
    "uncertainty := 'bootstrap'": "games to resample",
}


def _refused(params: dict) -> str | None:
    if params["covariates"]:
        return "covariates"
    if params["cluster"] is not None:
        return "cluster"
    if params["uncertainty"] in ("sandwich", "bootstrap"):
        return f"uncertainty := {params['uncertainty']!r}"
    return None


def pair_sums_type(matches: T.StructType) -> T.StructType:
    """What :class:`.pair_sums.BatchPairSums` returns: one row per ordered pair of a batch, or an error."""
    return T.StructType(
        [
            T.StructField("duckrate_part", T.StringType()),
            T.StructField("league", T.StringType()),
            T.StructField("player_a", T.StringType()),
            T.StructField("player_b", T.StringType()),
            T.StructField("wins", T.DecimalType(*EXACT_DIGITS)),
            T.StructField("losses", T.DecimalType(*EXACT_DIGITS)),
            T.StructField("games", T.LongType()),
            T.StructField("first_time", T.LongType()),
            T.StructField("first_id", matches["match_id"].dataType),
            *(T.StructField(name, T.StringType()) for name, _ in ERROR_FIELDS),
        ]
    )


def collected_pairs(frame: DataFrame) -> pl.DataFrame:
    """Every league's ordered pairs with their sums (Spark adds the batches'), in the order of each pair's
    first game; raises the first input error a batch met."""
    schema = pair_sums_type(frame.schema)
    sums = (
        frame.mapInArrow(BatchPairSums(arrow_schema(schema, frame)).function(), schema)
        .groupBy("league", "player_a", "player_b", *(name for name, _ in ERROR_FIELDS))
        .agg(
            F.try_sum("wins").cast("double").alias("wins"),  # exact sums, then one rounding: order-free
            F.try_sum("losses").cast("double").alias("losses"),  # NULL past DECIMAL(38, 20)
            F.sum("games").alias("games"),
            F.min(F.struct("first_time", "first_id")).alias("first"),
        )
    )
    collected = cast(pl.DataFrame, pl.from_arrow(sums.toArrow()))
    errors = collected.filter(pl.col("duckrate_error").is_not_null()).sort(
        "league", "duckrate_message", nulls_last=True
    )
    if errors.height:
        raise_error(errors["duckrate_error"][0], errors["duckrate_message"][0])
    overflow = collected.filter(
        pl.col("duckrate_error").is_null() & (pl.col("wins").is_null() | pl.col("losses").is_null())
    )
    if overflow.height:
        pair = overflow.sort("league", "player_a", "player_b", nulls_last=True).row(0, named=True)
        raise DuckrateInputError(
            f"bt_fit on Spark: the weighted scores of league {pair['league']!r}, {pair['player_a']!r} against "
            f"{pair['player_b']!r} add up past what DECIMAL{EXACT_DIGITS} holds: expected smaller weights"
        )
    check_unique_match_ids(frame)
    return collected.unnest("first").sort("first_time", "first_id")


def fit_pairs(pairs: pl.DataFrame, priors, params: dict) -> pa.Table:
    """:func:`~duckrate.fits.bradley_terry.fit.fit_prepared` over collected pairs: the pairs, one row each
    in the order of their first games, are encoded as the Python path encodes games."""
    n = pairs.height
    prepared = prepare_matches(
        {
            "match_id": pa.array(np.arange(n, dtype=np.int64)),
            "played_at": pa.array(np.zeros(n, dtype=np.int64)),
            "player_a": pairs["player_a"].to_arrow(),
            "player_b": pairs["player_b"].to_arrow(),
            "score_a": pa.array(np.zeros(n)),
            "league": pairs["league"].to_arrow(),
        },
        "matches",
    )
    wins, losses, games = (pairs[name].to_numpy() for name in ("wins", "losses", "games"))

    def league_data_of():
        rows = league_rows(prepared)

        def league_data(league, slots, local, precision_all, mu_all):
            at = rows[league]
            code_a, code_b = local[prepared.state_a[at]], local[prepared.state_b[at]]
            factor = 1.0
            if params["reweight"] == "inverse_pair_frequency":
                factor = inverse_pair_frequency(code_a, code_b, slots.size, params["min_pair_count"], games[at])
            summed = pairs_from_sums(code_a, code_b, wins[at] * factor, losses[at] * factor, games[at], slots.size)
            return LeagueData(summed, precision_all[slots], mu_all[slots], None, None)

        return league_data

    return fit_prepared(prepared, priors, params, league_data_of)


def bt_fit(matches: DataFrame, priors=None, **params) -> DataFrame:
    """Bradley-Terry fit of every league of a Spark DataFrame of canonical matches: the rows and columns of
    :func:`duckrate.bt_fit` (same parameters; ``priors`` a Spark or Polars ``player_priors`` frame, collected
    to the driver), equal to it within 1e-9. Refuses, with the reason, the options that need every game's
    row (:data:`ROW_OPTIONS`)."""
    frame = canonical_columns(matches)
    if isinstance(priors, DataFrame):
        priors = pl.from_arrow(priors.toArrow())
    covariates = params.get("covariates")
    covariates = [covariates] if isinstance(covariates, str) else list(covariates or [])
    named = [name for name in (*covariates, params.get("cluster")) if isinstance(name, str)]
    checked = canonical_columns(matches, named=named)  # with the columns the Python path checks too
    python_bt_fit(empty_frame(checked), priors=priors, **params)  # parameters, columns, types, priors
    resolved = resolve_parameters(params)
    refused = _refused(resolved)
    if refused is not None:
        raise DuckrateInputError(
            f"duckrate.spark.bt_fit: {refused} is not supported on Spark: it needs {ROW_OPTIONS[refused]}, "
            "and the Spark path hands the solver per-pair sums; fit such data with duckrate.bt_fit"
        )
    table = fit_pairs(collected_pairs(frame), priors, resolved)
    return matches.sparkSession.createDataFrame(table)


__all__ = ["BT_FIT", "ROW_OPTIONS", "bt_fit"]
