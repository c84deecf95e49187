"""The compute UDFs and TEMP table macros of every registered system over events with one row per player
(ranked contests, team matches): ``<system>_replay``, ``<system>_replay_and_state``, ``<system>_state`` and
``<system>_resume_check``, with saved state as for the two-player replays, generated from its
:class:`~duckrate.systems.event_replay.EventSystem` (the contest marts ``contest_leaderboard`` and
``contest_metrics`` are :mod:`duckrate.marts`).

Same bridge as :mod:`.replay_udf` (see :mod:`.bridge`): the macro packs the input rows into one
``LIST(STRUCT)`` with each row's key ``hash(league, <event key>, player)``, the compute UDF replays and keeps
the computed columns under a token, and the macro scans the table again, fetching each row's computed
columns while the scan supplies the passthrough columns (``league``, the event key, ``played_at``,
``player``, ...) in their own types. Everything per family (its input columns, its fetch UDF and the type it
returns) is read from the system's class (:func:`family`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

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
from duckrate.systems.event_replay import EventSystem

# Optional columns with a fixed SQL type when the table lacks them; any other column the table lacks arrives
# as untyped NULL (see replay_udf.MISSING_MATCH_COLUMNS), which the validation reports as missing.
TYPED_WHEN_ABSENT = {"league": "VARCHAR", "weight": "DOUBLE"}


@dataclass(frozen=True)
class Family:
    """What the SQL layer needs of a family of event systems: the input fields packed per row, the row key,
    the source that completes a user's table with absent columns, the fetch UDF and its struct type."""

    input_name: str
    fields: tuple[str, ...]
    key: str
    computed: tuple[str, ...]
    passthrough: tuple[str, ...]
    output: tuple[str, ...]
    fetch_udf: str
    fetch_type: pa.StructType

    @property
    def row_key(self) -> str:
        """A row's key in the packed list and in the fetch."""
        return f"hash(s.league, s.{self.key}, s.player)"

    @property
    def source(self) -> str:
        """The user's table ``tbl`` with every input column, NULL where the table lacks it."""
        absent = ", ".join(
            f"NULL::{TYPED_WHEN_ABSENT[name]} AS {name}" if name in TYPED_WHEN_ABSENT else f"NULL AS {name}"
            for name in self.fields
        )
        return f"((SELECT {absent} WHERE false) UNION ALL BY NAME (SELECT * FROM query_table(tbl)))"


@cache
def family(kind: type[EventSystem]) -> Family:
    """The SQL shape of the family ``kind`` (a subclass of :class:`EventSystem`)."""
    shape = kind.input
    fetch_type = pa.struct(
        [(name, pa.int64() if name in kind.integer_columns else pa.float64()) for name in kind.computed_columns]
    )
    return Family(
        shape.name,
        shape.columns,
        shape.key,
        kind.computed_columns,
        kind.passthrough_columns(),
        kind.output_columns,
        f"duckrate_fetch_{shape.name}",
        fetch_type,
    )


class _EventCall:
    """The arguments of one event compute or check call, ``(token, n_input, n_state, n_priors, table name,
    want, parameters...)``, each a one-element-per-query-row array (see :class:`.replay_udf._Call`)."""

    def __init__(self, system: EventSystem, token, n_input, n_state, n_priors, table_name, want, parameters):
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


def make_compute_udf(system: EventSystem):
    """``(token, n_input, n_state, n_priors, table name, want, parameters...) -> token`` (see
    :func:`.replay_udf.compute_tokens`)."""

    def event_compute_udf(token, n_input, n_state, n_priors, table_name, want, *parameters):
        call = _EventCall(system, token, n_input, n_state, n_priors, table_name, want, parameters)

        def run(row: int, columns, state, priors, want_state: bool):
            _, computed, after = system.replay(
                columns, priors, call.values(row), table=call.table(row), state=state, want_state=want_state
            )
            return computed, after

        return compute_tokens(call, run, system.computed_columns, f"{system.input.name} row")

    event_compute_udf.__name__ = udf_name(system, "compute")
    return event_compute_udf


def make_check_udf(system: EventSystem):
    """The UDF behind ``<system>_resume_check``: why the saved state cannot be continued with these
    events (NULL when it can), without replaying them."""

    def event_check_udf(token, n_input, n_state, n_priors, table_name, want, *parameters):
        call = _EventCall(system, token, n_input, n_state, n_priors, table_name, want, parameters)
        return resume_reasons(
            call,
            lambda row, columns, state: system.resume_problem(columns, call.values(row), state, table=call.table(row)),
        )

    event_check_udf.__name__ = udf_name(system, "check")
    return event_check_udf


def _macro(system: EventSystem, name: str, extra: str = "") -> tuple[str, str]:
    """``CREATE ... MACRO name(tbl, <params>, priors, state[, extra]) AS TABLE WITH <collected results,
    state and priors>`` and the compute UDF's arguments (``{want}`` left to fill in)."""
    params = sql_parameter_list(system.parameters)
    args = ", ".join(p.name for p in system.parameters)
    shape = family(type(system))
    fields = ", ".join(f"s.{name}" for name in shape.fields)
    parts = {
        "input": f"(SELECT {fields}, {shape.row_key} AS {KEY_FIELD} FROM {shape.source} AS s)",
        "state": STATE_SOURCE,
        "priors": PRIORS_SOURCE,
    }
    head = f"""
CREATE OR REPLACE TEMP MACRO {name}(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}', state := '{EMPTY_STATE_VIEW}'{extra}) AS TABLE
WITH {collected_ctes(parts)}"""
    udf_args = f"k.t, c.n_input, c.n_state, c.n_priors, tbl, {{want}}, {args}"
    return head, udf_args


def _computed_cte(system: EventSystem, udf_args: str, want: str) -> str:
    return f"""duckrate_computed AS MATERIALIZED (
    SELECT {udf_name(system, "compute")}({udf_args.format(want=want)}) AS token FROM duckrate_token AS k, duckrate_collected AS c
)"""


def rows_select(shape: Family, tokens: str) -> str:
    """The replay rows of the input rows of ``tbl`` from the token in ``tokens`` (see
    :func:`.replay_udf.rows_select`)."""
    outputs = ", ".join(f"z.{name}" if name in shape.passthrough else f"z.f.{name} AS {name}" for name in shape.output)
    return f"""SELECT {outputs}
FROM (SELECT {", ".join(f"s.{name}" for name in shape.passthrough)}, {shape.fetch_udf}(t.token, {shape.row_key}) AS f
      FROM {shape.source} AS s CROSS JOIN {tokens} AS t) AS z"""


def replay_macro_sql(system: EventSystem, with_state: bool = False) -> str:
    """``CREATE TEMP MACRO <system>_replay(tbl, <params>, priors := ..., state := ...) AS TABLE ...``; with
    ``with_state``, ``<system>_replay_and_state`` (the rows plus ``duckrate_state``, see
    :func:`.replay_udf.macro_sql`)."""
    head, udf_args = _macro(system, f"{system.name}_replay" + ("_and_state" if with_state else ""))
    rows = rows_select(family(type(system)), "duckrate_computed")
    if not with_state:
        computed = _computed_cte(system, udf_args, "'rows'")
        return f"{head}, {computed}\n{rows}\n"
    return f"""{head}, {_computed_cte(system, udf_args, "'rows_and_state'")}
({rows})
UNION ALL BY NAME
(SELECT unnest({TAKE_STATE_UDF}(c.token)) AS duckrate_state FROM duckrate_computed AS c)
"""


def token_macro_sql(system: EventSystem) -> str:
    """``duckrate_<system>_token(tbl, <params>, priors, state, want := 'rows_and_state')`` (see
    :func:`.replay_udf.token_macro_sql`)."""
    head, udf_args = _macro(system, f"duckrate_{system.name}_token", extra=", want := 'rows_and_state'")
    return f"""{head}
SELECT {udf_name(system, "compute")}({udf_args.format(want="want")}) AS token FROM duckrate_token AS k, duckrate_collected AS c
"""


def rows_macro_sql(system: EventSystem) -> str:
    """``duckrate_<system>_rows(tbl, tokens)``: the replay rows of ``tbl`` from the token in ``tokens``."""
    return f"""
CREATE OR REPLACE TEMP MACRO duckrate_{system.name}_rows(tbl, tokens) AS TABLE
{rows_select(family(type(system)), "query_table(tokens)")}
"""


def state_macro_sql(system: EventSystem) -> str:
    """``<system>_state(tbl, <params>, priors, state)``: the state table after the events of ``tbl``,
    continuing ``state`` when given."""
    head, udf_args = _macro(system, f"{system.name}_state")
    return f"""{head}, {_computed_cte(system, udf_args, "'state'")}
SELECT unnest({TAKE_STATE_UDF}(c.token), recursive := true) FROM duckrate_computed AS c
"""


def check_macro_sql(system: EventSystem) -> str:
    """``<system>_resume_check(tbl, <params>, priors, state)``: one row, ``reason`` why ``state`` cannot be
    continued with the events of ``tbl`` (NULL when it can)."""
    head, udf_args = _macro(system, f"{system.name}_resume_check")
    return f"""{head}
SELECT {udf_name(system, "check")}({udf_args.format(want="'rows'")}) AS reason FROM duckrate_token AS k, duckrate_collected AS c
"""
