"""The Arrow UDFs and TEMP table macros over contest results: ``elo_mmr_replay`` and the contest marts
``contest_leaderboard`` and ``contest_metrics``.

Same pattern as :mod:`.replay_udf` and :mod:`.evaluation_udf` (shared/DUCKDB-NOTES.md): the macro packs
the table into one ``LIST(STRUCT)``, the UDF computes, and the macro unnests the UDF's list beside the
packed one, so ``contest_id``, ``played_at``, ``player`` and ``league`` come back with their own types
while only the computed columns travel back from Python. The UDF checks nothing about order: it returns
its rows in the packed list's own order.
"""

from __future__ import annotations

import pyarrow as pa

from ..evaluation import contests as contest_evaluation
from ..systems.elo_mmr import COMPUTED_COLUMNS, ELO_MMR, OUTPUT_COLUMNS, compute_elo_mmr
from ._lists import list_values, map_list_rows, struct_columns, whole
from .evaluation_udf import Mart, _count, _number
from .replay_udf import EMPTY_PRIORS_VIEW, PRIOR_FIELDS

REPLAY_UDF = "duckrate_elo_mmr_udf"
RESULT_FIELDS = ("contest_id", "played_at", "player", "rank", "league", "weight")
OPTIONAL_RESULT_COLUMNS = "SELECT NULL::VARCHAR AS league, NULL::DOUBLE AS weight WHERE false"
# A required column the table lacks arrives untyped NULL (see replay_udf.MISSING_MATCH_COLUMNS): reported as missing.
MISSING_RESULT_COLUMNS = "SELECT NULL AS contest_id, NULL AS played_at, NULL AS player, NULL AS rank WHERE false"
_COMPUTED_TYPE = pa.struct([(name, pa.int64() if name in ("n_players", "seq") else pa.float64()) for name in COMPUTED_COLUMNS])


def replay_return_type() -> str:
    return "STRUCT(" + ", ".join(f"{f.name} {'BIGINT' if f.type == pa.int64() else 'DOUBLE'}" for f in _COMPUTED_TYPE) + ")[]"


def make_replay_udf():
    """``(packed results, packed priors, table name, parameters...) -> list of computed rows``."""
    names = [p.name for p in ELO_MMR.parameters]

    def elo_mmr_udf(results, priors, table_name, *parameters):
        results, priors, table_name = whole(results), whole(priors), whole(table_name)
        parameters = [whole(column) for column in parameters]

        def replay_row(row: int, elements: pa.Array) -> pa.StructArray:
            columns = struct_columns(elements)
            if columns["league"].null_count == len(elements):
                del columns["league"]
            prior_elements = list_values(priors, row)
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            _, computed = compute_elo_mmr(
                columns,
                struct_columns(prior_elements) if prior_elements is not None and len(prior_elements) else None,
                values,
                table=f"table {table_name[row].as_py()!r}",
            )
            return pa.StructArray.from_arrays([pa.array(computed[name]) for name in COMPUTED_COLUMNS],
                                              names=list(COMPUTED_COLUMNS))

        return map_list_rows(results, replay_row, _COMPUTED_TYPE)

    elo_mmr_udf.__name__ = REPLAY_UDF
    return elo_mmr_udf


def replay_macro_sql() -> str:
    """``CREATE TEMP MACRO elo_mmr_replay(tbl, <params>, priors := ...) AS TABLE ...``."""
    params = ", ".join(f"{p.name} := {'NULL' if p.default is None else repr(p.default)}" for p in ELO_MMR.parameters)
    args = ", ".join(p.name for p in ELO_MMR.parameters)
    fields = ", ".join(f"{name} := r.{name}" for name in RESULT_FIELDS)
    prior_fields = ", ".join(f"{name} := p.{name}" for name in PRIOR_FIELDS)
    outputs = ", ".join(f"z.{name}" for name in OUTPUT_COLUMNS)
    return f"""
CREATE OR REPLACE TEMP MACRO elo_mmr_replay(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}') AS TABLE
WITH packed AS (
    SELECT list(struct_pack({fields})) AS results
    FROM (({OPTIONAL_RESULT_COLUMNS}) UNION ALL BY NAME ({MISSING_RESULT_COLUMNS})
          UNION ALL BY NAME (SELECT * FROM query_table(tbl))) AS r
), packed_priors AS (
    SELECT list(struct_pack({prior_fields})) AS prior_list
    FROM ((FROM {EMPTY_PRIORS_VIEW}) UNION ALL BY NAME (SELECT * FROM query_table(priors))) AS p
), zipped AS (
    SELECT unnest(packed.results, recursive := true),
           unnest({REPLAY_UDF}(packed.results, (SELECT pp.prior_list FROM packed_priors AS pp), tbl, {args}),
                  recursive := true)
    FROM packed
)
SELECT {outputs}
FROM zipped AS z
"""


def _leaderboard(replay):
    # played_at := seq, so last_played_at is the seq of the last contest; the macro joins its time back.
    import polars as pl

    board = contest_evaluation.contest_leaderboard(replay.with_columns(played_at=pl.col("seq")))
    return board.rename({"last_played_at": "last_seq"})


MARTS = (
    Mart(
        name="contest_leaderboard",
        fields=("system", "league", "seq", "player", "rating_after", "sd_after"),
        parameters=(),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("player", "VARCHAR"), ("rank", "BIGINT"),
                 ("rating", "DOUBLE"), ("sd", "DOUBLE"), ("lower", "DOUBLE"), ("upper", "DOUBLE"),
                 ("contests", "BIGINT"), ("last_seq", "BIGINT")),
        compute=lambda replay: _leaderboard(replay.with_columns(replay["player"].cast(str))),
    ),
    Mart(
        name="contest_metrics",
        fields=("system", "league", "seq", "player", "rank", "rating_before"),
        parameters=(("min_contests", "5"), ("warmup", "0.1")),
        returns=(("league", "VARCHAR"), ("system", "VARCHAR"), ("pair_inversion", "DOUBLE"),
                 ("rank_deviation", "DOUBLE"), ("n", "BIGINT")),
        compute=lambda replay, min_contests, warmup: contest_evaluation.contest_metrics(
            replay, min_contests=_count("contest_metrics", "min_contests", min_contests, 0),
            warmup=_number("contest_metrics", "warmup", warmup),
        ),
    ),
)
