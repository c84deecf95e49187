"""The Arrow UDFs and TEMP table macros over contest results: ``elo_mmr_replay``, ``elo_mmr_state`` and
``elo_mmr_resume_check`` (saved state, as for the two-player replays), and the contest marts
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
from ..systems.elo_mmr import COMPUTED_COLUMNS, ELO_MMR, OUTPUT_COLUMNS, elo_mmr_resume_problem, replay_elo_mmr
from ._lists import map_list_rows, struct_columns, whole
from .evaluation_udf import Mart, _count, _number
from .replay_udf import (
    EMPTY_PRIORS_VIEW, EMPTY_STATE_VIEW, PRIOR_FIELDS, packed_columns, packed_state_cte, resume_reasons, rows_and_state,
    state_lists, zipped_with_state,
)

REPLAY_UDF = "duckrate_elo_mmr_udf"
STATE_UDF = "duckrate_elo_mmr_state_udf"
CHECK_UDF = "duckrate_elo_mmr_check_udf"
REPLAY_AND_STATE_UDF = "duckrate_elo_mmr_replay_and_state_udf"
RESULT_FIELDS = ("contest_id", "played_at", "player", "rank", "league", "weight")
OPTIONAL_RESULT_COLUMNS = "SELECT NULL::VARCHAR AS league, NULL::DOUBLE AS weight WHERE false"
# A required column the table lacks arrives untyped NULL (see replay_udf.MISSING_MATCH_COLUMNS): reported as missing.
MISSING_RESULT_COLUMNS = "SELECT NULL AS contest_id, NULL AS played_at, NULL AS player, NULL AS rank WHERE false"
_COMPUTED_TYPE = pa.struct([(name, pa.int64() if name in ("n_players", "seq") else pa.float64()) for name in COMPUTED_COLUMNS])


def replay_return_type() -> str:
    return "STRUCT(" + ", ".join(f"{f.name} {'BIGINT' if f.type == pa.int64() else 'DOUBLE'}" for f in _COMPUTED_TYPE) + ")[]"


class _ContestCall:
    """The arguments of one contest UDF call, ``(results, priors, state, table name, parameters...)``,
    each a one-element-per-query-row Arrow array."""

    def __init__(self, results, priors, state, table_name, parameters):
        self.results, self.priors, self.state, self.table_name = whole(results), whole(priors), whole(state), whole(table_name)
        self.parameters = [whole(column) for column in parameters]

    def columns(self, elements: pa.Array) -> dict[str, pa.Array]:
        columns = struct_columns(elements)
        if columns["league"].null_count == len(elements):
            del columns["league"]
        return columns

    def values(self, row: int) -> dict:
        return {p.name: column[row].as_py() for p, column in zip(ELO_MMR.parameters, self.parameters)}

    def table(self, row: int) -> str:
        return f"table {self.table_name[row].as_py()!r}"

    def run(self, row: int, elements: pa.Array, want_state: bool):
        return replay_elo_mmr(self.columns(elements), packed_columns(self.priors, row), self.values(row),
                              table=self.table(row), state=packed_columns(self.state, row), want_state=want_state)


def _computed_struct(computed: dict) -> pa.StructArray:
    return pa.StructArray.from_arrays([pa.array(computed[name]) for name in COMPUTED_COLUMNS], names=list(COMPUTED_COLUMNS))


def make_replay_udf():
    """``(packed results, packed priors, packed state, table name, parameters...) -> list of computed rows``."""

    def elo_mmr_udf(results, priors, state, table_name, *parameters):
        call = _ContestCall(results, priors, state, table_name, parameters)
        return map_list_rows(call.results, lambda row, elements: _computed_struct(call.run(row, elements, want_state=False)[1]),
                             _COMPUTED_TYPE)

    elo_mmr_udf.__name__ = REPLAY_UDF
    return elo_mmr_udf


def make_replay_and_state_udf():
    """The UDF behind ``elo_mmr_replay_and_state``: the rows and the state after them, from one run."""

    def elo_mmr_replay_and_state_udf(results, priors, state, table_name, *parameters):
        call = _ContestCall(results, priors, state, table_name, parameters)

        def both(row: int, elements: pa.Array):
            _, computed, after = call.run(row, elements, want_state=True)
            return _computed_struct(computed), after

        return rows_and_state(call.results, call.state, both, _COMPUTED_TYPE)

    elo_mmr_replay_and_state_udf.__name__ = REPLAY_AND_STATE_UDF
    return elo_mmr_replay_and_state_udf


def make_state_udf():
    """The UDF behind ``elo_mmr_state``: the state table after the contests (the saved state unchanged
    when there are none)."""

    def elo_mmr_state_udf(results, priors, state, table_name, *parameters):
        call = _ContestCall(results, priors, state, table_name, parameters)
        return state_lists(call.results, call.state, lambda row, elements: call.run(row, elements, want_state=True)[2])

    elo_mmr_state_udf.__name__ = STATE_UDF
    return elo_mmr_state_udf


def make_check_udf():
    """The UDF behind ``elo_mmr_resume_check``: why the saved state cannot be continued with these
    contests (NULL when it can), without replaying them."""

    def elo_mmr_check_udf(results, priors, state, table_name, *parameters):
        call = _ContestCall(results, priors, state, table_name, parameters)
        return resume_reasons(call.results, call.state, lambda row, elements, saved: elo_mmr_resume_problem(
            call.columns(elements), call.values(row), saved, table=call.table(row)))

    elo_mmr_check_udf.__name__ = CHECK_UDF
    return elo_mmr_check_udf


def _macro_head(name: str) -> tuple[str, str]:
    """``CREATE ... MACRO name(tbl, <params>, priors, state) AS TABLE WITH packed, packed_priors,
    packed_state`` and the UDF arguments (the common part of the three Elo-MMR macros)."""
    params = ", ".join(f"{p.name} := {'NULL' if p.default is None else repr(p.default)}" for p in ELO_MMR.parameters)
    args = ", ".join(p.name for p in ELO_MMR.parameters)
    fields = ", ".join(f"{name} := r.{name}" for name in RESULT_FIELDS)
    prior_fields = ", ".join(f"{name} := p.{name}" for name in PRIOR_FIELDS)
    head = f"""
CREATE OR REPLACE TEMP MACRO {name}(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}', state := '{EMPTY_STATE_VIEW}') AS TABLE
WITH packed AS (
    SELECT list(struct_pack({fields})) AS results
    FROM (({OPTIONAL_RESULT_COLUMNS}) UNION ALL BY NAME ({MISSING_RESULT_COLUMNS})
          UNION ALL BY NAME (SELECT * FROM query_table(tbl))) AS r
), packed_priors AS (
    SELECT list(struct_pack({prior_fields})) AS prior_list
    FROM ((FROM {EMPTY_PRIORS_VIEW}) UNION ALL BY NAME (SELECT * FROM query_table(priors))) AS p
), {packed_state_cte()}"""
    udf_args = f"""packed.results, (SELECT pp.prior_list FROM packed_priors AS pp),
                  (SELECT ps.state_list FROM packed_state AS ps), tbl, {args}"""
    return head, udf_args


def replay_macro_sql(with_state: bool = False) -> str:
    """``CREATE TEMP MACRO elo_mmr_replay(tbl, <params>, priors := ..., state := ...) AS TABLE ...``; with
    ``with_state``, ``elo_mmr_replay_and_state`` (the rows plus ``duckrate_state``, see
    :func:`.replay_udf.macro_sql`)."""
    outputs = ", ".join(f"z.{name}" for name in OUTPUT_COLUMNS)
    head, udf_args = _macro_head("elo_mmr_replay" + ("_and_state" if with_state else ""))
    if with_state:
        return f"""{head}, zipped AS ({zipped_with_state('packed.results', REPLAY_AND_STATE_UDF, udf_args)})
SELECT {outputs}, z.duckrate_state
FROM zipped AS z
"""
    return f"""{head}, zipped AS (
    SELECT unnest(packed.results, recursive := true),
           unnest({REPLAY_UDF}({udf_args}), recursive := true)
    FROM packed
)
SELECT {outputs}
FROM zipped AS z
"""


def state_macro_sql() -> str:
    """``elo_mmr_state(tbl, <params>, priors, state)``: the state table after the contests of ``tbl``,
    continuing ``state`` when given (see systems/_contest_state.py)."""
    head, udf_args = _macro_head("elo_mmr_state")
    return f"""{head}
SELECT unnest({STATE_UDF}({udf_args}), recursive := true)
FROM packed
"""


def check_macro_sql() -> str:
    """``elo_mmr_resume_check(tbl, <params>, priors, state)``: one row, ``reason`` why ``state`` cannot be
    continued with the contests of ``tbl`` (NULL when it can)."""
    head, udf_args = _macro_head("elo_mmr_resume_check")
    return f"""{head}
SELECT {CHECK_UDF}({udf_args}) AS reason
FROM packed
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
