"""The compute UDFs and TEMP table macros of every registered contest system (``<system>_replay``,
``<system>_replay_and_state``, ``<system>_state`` and ``<system>_resume_check``, with saved state as for the
two-player replays), generated from its :class:`~duckrate.systems.contest.ContestSystem` (the contest
marts ``contest_leaderboard`` and ``contest_metrics`` are :mod:`duckrate.marts`).

Same bridge as :mod:`.replay_udf` (see :mod:`.bridge`): the macro packs the results into one
``LIST(STRUCT)`` with each row's key ``hash(league, contest_id, player)``, the compute UDF replays and keeps
the computed columns under a token, and the macro scans the table again, fetching each row's computed
columns while the scan supplies ``league``, ``contest_id``, ``played_at``, ``player`` and ``rank`` in their
own types.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from duckrate.core.parameters import sql_parameter_list
from duckrate.sql._lists import whole
from duckrate.sql.bridge import KEY_FIELD, collected_ctes
from duckrate.sql.replay_udf import (
    EMPTY_PRIORS_VIEW,
    EMPTY_STATE_VIEW,
    PRIORS_SOURCE,
    STATE_SOURCE,
    TAKE_STATE_UDF,
    collected_columns,
    compute_tokens,
    resume_reasons,
    udf_name,
)
from duckrate.systems.contest import COMPUTED_COLUMNS, OUTPUT_COLUMNS, PASSTHROUGH_COLUMNS, ContestSystem

FETCH_UDF = "duckrate_fetch_contest"  # shared: every contest system computes the same columns
RESULT_FIELDS = ("contest_id", "played_at", "player", "rank", "league", "weight")
ROW_KEY = "hash(s.league, s.contest_id, s.player)"  # a result's key in the packed list and in the fetch
OPTIONAL_RESULT_COLUMNS = "SELECT NULL::VARCHAR AS league, NULL::DOUBLE AS weight WHERE false"
# A required column the table lacks arrives untyped NULL (see replay_udf.MISSING_MATCH_COLUMNS): reported as missing.
MISSING_RESULT_COLUMNS = "SELECT NULL AS contest_id, NULL AS played_at, NULL AS player, NULL AS rank WHERE false"
RESULT_SOURCE = (
    f"(({OPTIONAL_RESULT_COLUMNS}) UNION ALL BY NAME ({MISSING_RESULT_COLUMNS}) "
    "UNION ALL BY NAME (SELECT * FROM query_table(tbl)))"
)
FETCH_TYPE = pa.struct(
    [(name, pa.int64() if name in ("n_players", "seq") else pa.float64()) for name in COMPUTED_COLUMNS]
)


class _ContestCall:
    """The arguments of one contest compute or check call, ``(token, n_input, n_state, n_priors, table name,
    want, parameters...)``, each a one-element-per-query-row array (see :class:`.replay_udf._Call`)."""

    def __init__(self, system: ContestSystem, token, n_input, n_state, n_priors, table_name, want, parameters):
        self.system = system
        self.token, self.n_input, self.n_state, self.n_priors = (
            np.asarray(whole(a).fill_null(0), dtype=np.int64) for a in (token, n_input, n_state, n_priors)
        )
        self.table_name, self.want = whole(table_name), whole(want)
        self.parameters = [whole(column) for column in parameters]

    def __len__(self) -> int:
        return len(self.token)

    def inputs(self, row: int):
        token = int(self.token[row])
        columns, starts = collected_columns(token, "input", int(self.n_input[row]))
        state, _ = collected_columns(token, "state", int(self.n_state[row]))
        priors, _ = collected_columns(token, "priors", int(self.n_priors[row]))
        if columns is not None and columns["league"].null_count == len(columns["league"]):
            del columns["league"]
        return columns, starts, state, priors

    def values(self, row: int) -> dict:
        return {p.name: column[row].as_py() for p, column in zip(self.system.parameters, self.parameters)}

    def table(self, row: int) -> str:
        return f"table {self.table_name[row].as_py()!r}"


def make_compute_udf(system: ContestSystem):
    """``(token, n_input, n_state, n_priors, table name, want, parameters...) -> token`` (see
    :func:`.replay_udf.compute_tokens`)."""

    def contest_compute_udf(token, n_input, n_state, n_priors, table_name, want, *parameters):
        call = _ContestCall(system, token, n_input, n_state, n_priors, table_name, want, parameters)

        def run(row: int, columns, state, priors, want_state: bool):
            _, computed, after = system.replay(
                columns, priors, call.values(row), table=call.table(row), state=state, want_state=want_state
            )
            return computed, after

        return compute_tokens(call, run, COMPUTED_COLUMNS, "contest result")

    contest_compute_udf.__name__ = udf_name(system, "compute")
    return contest_compute_udf


def make_check_udf(system: ContestSystem):
    """The UDF behind ``<system>_resume_check``: why the saved state cannot be continued with these
    contests (NULL when it can), without replaying them."""

    def contest_check_udf(token, n_input, n_state, n_priors, table_name, want, *parameters):
        call = _ContestCall(system, token, n_input, n_state, n_priors, table_name, want, parameters)
        return resume_reasons(
            call,
            lambda row, columns, state: system.resume_problem(columns, call.values(row), state, table=call.table(row)),
        )

    contest_check_udf.__name__ = udf_name(system, "check")
    return contest_check_udf


def _macro(system: ContestSystem, name: str, extra: str = "") -> tuple[str, str]:
    """``CREATE ... MACRO name(tbl, <params>, priors, state[, extra]) AS TABLE WITH <collected results,
    state and priors>`` and the compute UDF's arguments (``{want}`` left to fill in)."""
    params = sql_parameter_list(system.parameters)
    args = ", ".join(p.name for p in system.parameters)
    fields = ", ".join(f"s.{name}" for name in RESULT_FIELDS)
    parts = {
        "input": f"(SELECT {fields}, {ROW_KEY} AS {KEY_FIELD} FROM {RESULT_SOURCE} AS s)",
        "state": STATE_SOURCE,
        "priors": PRIORS_SOURCE,
    }
    head = f"""
CREATE OR REPLACE TEMP MACRO {name}(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}', state := '{EMPTY_STATE_VIEW}'{extra}) AS TABLE
WITH {collected_ctes(parts)}"""
    udf_args = f"k.t, c.n_input, c.n_state, c.n_priors, tbl, {{want}}, {args}"
    return head, udf_args


def _computed_cte(system: ContestSystem, udf_args: str, want: str) -> str:
    return f"""duckrate_computed AS MATERIALIZED (
    SELECT {udf_name(system, "compute")}({udf_args.format(want=want)}) AS token FROM duckrate_token AS k, duckrate_collected AS c
)"""


def rows_select(source: str, tokens: str) -> str:
    """The replay rows of the results in ``source`` from the token in ``tokens`` (see
    :func:`.replay_udf.rows_select`)."""
    outputs = ", ".join(
        f"z.{name}" if name in PASSTHROUGH_COLUMNS else f"z.f.{name} AS {name}" for name in OUTPUT_COLUMNS
    )
    return f"""SELECT {outputs}
FROM (SELECT {", ".join(f"s.{name}" for name in PASSTHROUGH_COLUMNS)}, {FETCH_UDF}(t.token, {ROW_KEY}) AS f
      FROM {source} AS s CROSS JOIN {tokens} AS t) AS z"""


def replay_macro_sql(system: ContestSystem, with_state: bool = False) -> str:
    """``CREATE TEMP MACRO <system>_replay(tbl, <params>, priors := ..., state := ...) AS TABLE ...``; with
    ``with_state``, ``<system>_replay_and_state`` (the rows plus ``duckrate_state``, see
    :func:`.replay_udf.macro_sql`)."""
    head, udf_args = _macro(system, f"{system.name}_replay" + ("_and_state" if with_state else ""))
    rows = rows_select(RESULT_SOURCE, "duckrate_computed")
    if not with_state:
        computed = _computed_cte(system, udf_args, "'rows'")
        return f"{head}, {computed}\n{rows}\n"
    return f"""{head}, {_computed_cte(system, udf_args, "'rows_and_state'")}
({rows})
UNION ALL BY NAME
(SELECT unnest({TAKE_STATE_UDF}(c.token)) AS duckrate_state FROM duckrate_computed AS c)
"""


def token_macro_sql(system: ContestSystem) -> str:
    """``duckrate_<system>_token(tbl, <params>, priors, state, want := 'rows_and_state')`` (see
    :func:`.replay_udf.token_macro_sql`)."""
    head, udf_args = _macro(system, f"duckrate_{system.name}_token", extra=", want := 'rows_and_state'")
    return f"""{head}
SELECT {udf_name(system, "compute")}({udf_args.format(want="want")}) AS token FROM duckrate_token AS k, duckrate_collected AS c
"""


def rows_macro_sql(system: ContestSystem) -> str:
    """``duckrate_<system>_rows(tbl, tokens)``: the replay rows of ``tbl`` from the token in ``tokens``."""
    return f"""
CREATE OR REPLACE TEMP MACRO duckrate_{system.name}_rows(tbl, tokens) AS TABLE
{rows_select(RESULT_SOURCE, "query_table(tokens)")}
"""


def state_macro_sql(system: ContestSystem) -> str:
    """``<system>_state(tbl, <params>, priors, state)``: the state table after the contests of ``tbl``,
    continuing ``state`` when given."""
    head, udf_args = _macro(system, f"{system.name}_state")
    return f"""{head}, {_computed_cte(system, udf_args, "'state'")}
SELECT unnest({TAKE_STATE_UDF}(c.token), recursive := true) FROM duckrate_computed AS c
"""


def check_macro_sql(system: ContestSystem) -> str:
    """``<system>_resume_check(tbl, <params>, priors, state)``: one row, ``reason`` why ``state`` cannot be
    continued with the contests of ``tbl`` (NULL when it can)."""
    head, udf_args = _macro(system, f"{system.name}_resume_check")
    return f"""{head}
SELECT {udf_name(system, "check")}({udf_args.format(want="'rows'")}) AS reason FROM duckrate_token AS k, duckrate_collected AS c
"""
