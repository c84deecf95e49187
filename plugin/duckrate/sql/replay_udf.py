"""The compute UDF and TEMP table macros behind each ``<system>_replay`` SQL function and its companions.

Through the bridge of :mod:`.bridge`: the macro packs the columns the replay needs into one unordered
``LIST(STRUCT)`` (players and league as 64-bit hash keys, optional columns only when the table has them,
each row's key ``hash(match_id)``), the compute UDF replays them and keeps the computed columns under a
token, and the macro scans the table again, fetching each row's computed columns by its key while the
scan supplies ``league``, ``match_id``, ``played_at``, the players and the score in their own types.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core import crash_points
from duckrate.core.parameters import Signature, sql_parameter_list
from duckrate.sql._lists import list_values, struct_columns, whole
from duckrate.sql.bridge import COLLECTOR, KEY_FIELD, STORE, collected_ctes, one_at_a_time
from duckrate.sql.sql_types import sql_type, struct_sql
from duckrate.systems.saved_state import STATE_SCHEMA, CarriedState, state_frame
from duckrate.systems.two_player import (
    COMPUTED_COLUMNS,
    DEFAULT_CHUNK_ROWS,
    OUTPUT_COLUMNS,
    SD_COLUMNS,
    ReplaySystem,
    resume_problem,
    run_replay,
)

# Columns packed for the UDF, as they exist in the user's table (absent optional ones are simply left
# out, which keeps the packed list narrow); players and league travel as 64-bit hash keys.
PACKED_NAMES = ("match_id", "played_at", "score_a", "weight", "period")  # passed as they are
KEYED_NAMES = ("player_a", "player_b", "league")  # passed as 64-bit hash keys


def _names_pattern(names) -> str:
    return "'(?i)^(" + "|".join(names) + ")$'"


PACKED_COLUMNS = _names_pattern(PACKED_NAMES)
KEYED_COLUMNS = _names_pattern(KEYED_NAMES)
PRIOR_FIELDS = ("player", "rating", "sd", "volatility", "league")
ROW_KEY = "hash(s.match_id)"  # a match's key in the packed list and in the fetch (s: the source row)

# Typed empty relations: UNION ALL BY NAME with them supplies optional columns the user's table lacks.
OPTIONAL_MATCH_COLUMNS = "SELECT NULL::VARCHAR AS league, NULL::DOUBLE AS weight, NULL::BIGINT AS period WHERE false"
# Untyped empty relations: a required column the user's table lacks arrives as an untyped NULL column (which
# keeps the macro binding) and the UDF reports it as missing, by name, with the columns expected.
MISSING_MATCH_COLUMNS = (
    "SELECT NULL AS match_id, NULL AS played_at, NULL AS player_a, NULL AS player_b, NULL AS score_a WHERE false"
)
MISSING_PASSTHROUGH_COLUMNS = "SELECT NULL AS match_id, NULL AS played_at WHERE false"
# The rows of ``tbl`` with every canonical column (absent ones NULL): what the match macros scan for names
# and for the rows they return (the packed list keeps only the columns ``tbl`` has, so the compute UDF can
# name a missing one).
MATCH_SOURCE = (
    f"(({OPTIONAL_MATCH_COLUMNS}) UNION ALL BY NAME ({MISSING_MATCH_COLUMNS}) "
    "UNION ALL BY NAME (SELECT * FROM query_table(tbl)))"
)
EMPTY_PRIORS_VIEW = "duckrate_no_priors"
EMPTY_PRIORS_SQL = (
    f"CREATE OR REPLACE TEMP VIEW {EMPTY_PRIORS_VIEW} AS SELECT NULL::VARCHAR AS player, NULL::DOUBLE AS rating, "
    "NULL::DOUBLE AS sd, NULL::DOUBLE AS volatility, NULL::VARCHAR AS league WHERE false"
)
# What a compute call keeps: the replay rows, the state after them, or both (the dbt materialization).
WANTS = ("rows", "state", "rows_and_state")


def udf_name(system: Signature, kind: str = "") -> str:
    """The UDF behind ``<system>_replay`` and its companions (two-player or contest): kind 'compute' or 'check'."""
    return f"duckrate_{system.name}_{kind + '_' if kind else ''}udf"


def fetched_fields(has_sd: bool) -> tuple[str, ...]:
    """The computed columns a replay's fetch returns: every one, but the sd columns only where the system has them."""
    return tuple(name for name in COMPUTED_COLUMNS if has_sd or name not in SD_COLUMNS)


def fetch_type(has_sd: bool) -> pa.StructType:
    return pa.struct([(name, pa.int64() if name == "seq" else pa.float64()) for name in fetched_fields(has_sd)])


def fetch_udf_name(has_sd: bool) -> str:
    return "duckrate_fetch_replay" + ("" if has_sd else "_nosd")


STATE_RETURN_TYPE = struct_sql(STATE_SCHEMA) + "[]"
EMPTY_STATE_VIEW = "duckrate_no_state"
EMPTY_STATE_SQL = (
    f"CREATE OR REPLACE TEMP VIEW {EMPTY_STATE_VIEW} AS SELECT "
    + ", ".join(f"NULL::{sql_type(kind)} AS {name}" for name, kind in STATE_SCHEMA.items())
    + " WHERE false"
)
STATE_ARROW = pa.struct(
    [(name, pl.DataFrame(schema={name: kind}).to_arrow().schema.field(0).type) for name, kind in STATE_SCHEMA.items()]
)
TAKE_STATE_UDF = "duckrate_take_state"


def state_struct(frame: pl.DataFrame | CarriedState) -> pa.StructArray:
    """A state table (a frame of ``STATE_SCHEMA``, or the rows of a :class:`CarriedState`) as one array of
    ``STATE_ARROW`` structs."""
    frame = state_frame(frame.frame if isinstance(frame, CarriedState) else frame)
    if not frame.height:
        return pa.array([], STATE_ARROW)
    return pa.StructArray.from_arrays([whole(c) for c in frame.to_arrow().columns], fields=list(STATE_ARROW))


def league_rows_struct(kept: pl.DataFrame | CarriedState) -> pa.StructArray:
    """The league rows of a kept state, as :func:`state_struct` gives them."""
    return state_struct(
        state_frame(kept.frame if isinstance(kept, CarriedState) else kept).filter(pl.col("kind") == "league")
    )


def collected_columns(token: int, part: str, expected: int) -> tuple[dict[str, pa.Array] | None, np.ndarray]:
    """The columns of a collected table (None when it has no rows) and where its chunks start."""
    rows, starts = COLLECTOR.take(token, part, expected)
    return (struct_columns(rows) if rows is not None else None), starts


def match_macro_rows(token, n_input, n_priors, player_names, league_names, table_name):
    """For each query row of a match macro's UDF call (``bt_fit``, ``tune``): ``(row, columns, priors, table)``,
    the collected matches (with the player and league name lists of :func:`names_ctes`; None when the table
    is empty), the collected priors and the table's name as errors quote it."""
    tokens, n_inputs, n_priors = (np.asarray(whole(a).fill_null(0), dtype=np.int64) for a in (token, n_input, n_priors))
    player_names, league_names, table_name = whole(player_names), whole(league_names), whole(table_name)
    for row in range(len(tokens)):
        columns, _ = collected_columns(int(tokens[row]), "input", int(n_inputs[row]))
        priors, _ = collected_columns(int(tokens[row]), "priors", int(n_priors[row]))
        if columns is not None:
            columns["player_names"] = list_values(player_names, row)
            leagues = list_values(league_names, row)
            if leagues is not None:
                columns["league_names"] = leagues
        yield row, columns, priors, f"table {table_name[row].as_py()!r}"


class _Call:
    """The arguments of one compute or check UDF call, taken apart: ``(token, n_input, n_state, n_priors,
    player names, league names, table name, want, carry, parameters...)``, each a one-element-per-query-row
    array; the input, the saved state and the priors were collected under the token (see :mod:`.bridge`);
    ``carry``, when not NULL, is the token of the chunk before, whose state this run continues."""

    def __init__(
        self,
        system: ReplaySystem,
        token,
        n_input,
        n_state,
        n_priors,
        player_names,
        league_names,
        table_name,
        want,
        carry,
        parameters,
    ):
        self.system = system
        self.token, self.n_input, self.n_state, self.n_priors = (
            np.asarray(whole(a).fill_null(0), dtype=np.int64) for a in (token, n_input, n_state, n_priors)
        )
        self.player_names, self.league_names = whole(player_names), whole(league_names)
        self.table_name, self.want, self.carry = whole(table_name), whole(want), whole(carry)
        self.parameters = [whole(column) for column in parameters]

    def __len__(self) -> int:
        return len(self.token)

    def inputs(self, row: int) -> tuple[dict | None, np.ndarray, dict | None, dict | None]:
        """The query row's collected input columns (with the name lists; None when empty), where its chunks
        start, and its saved state and priors columns (None when empty)."""
        token = int(self.token[row])
        columns, starts = collected_columns(token, "input", int(self.n_input[row]))
        state, _ = collected_columns(token, "state", int(self.n_state[row]))
        priors, _ = collected_columns(token, "priors", int(self.n_priors[row]))
        if columns is not None:
            columns["player_names"] = list_values(self.player_names, row)
            leagues = list_values(self.league_names, row)
            if leagues is not None:
                columns["league_names"] = leagues
        return columns, starts, state, priors

    def values(self, row: int) -> dict:
        return {p.name: column[row].as_py() for p, column in zip(self.system.parameters, self.parameters)}

    def table(self, row: int) -> str:
        return f"table {self.table_name[row].as_py()!r}"

    def carried(self, row: int) -> CarriedState | None:
        """The state the chunk before handed on (taken from its token), or None."""
        token = self.carry[row].as_py()
        if token is None:
            return None
        carried = STORE.take_extra(int(token))
        if not isinstance(carried, CarriedState):
            raise TypeError(f"duckrate: token {token} holds no state to continue; please report this")
        return carried


@one_at_a_time
def compute_tokens(
    call, run: Callable, fields: tuple[str, ...], what: str, unchanged: Callable | None = None
) -> pa.Array:
    """Run every query row of ``call`` and keep its results under its token (see :mod:`.bridge`):
    ``run(row, columns, state, priors, want_state)`` returns the computed columns by collected row and the
    state after them; the token keeps the ``fields`` columns with each row's key (unless only the state is
    wanted) and the state (when wanted). An empty input keeps no rows and, as its state, the saved one
    (``unchanged(row, state)`` when given)."""
    crash_points.reached("replay.compute")
    tokens = []
    for row in range(len(call)):
        want = call.want[row].as_py()
        if want not in WANTS:
            raise ValueError(f"duckrate: unknown result kind {want!r}; expected one of {', '.join(WANTS)}")
        columns, starts, state, priors = call.inputs(row)
        token, want_state = int(call.token[row]), want != "rows"
        if columns is None:
            saved = state_frame(state) if state is not None else state_frame(pl.DataFrame(schema=STATE_SCHEMA))
            saved = unchanged(row, saved) if unchanged is not None else saved
            tokens.append(STORE.put(token, None, [], extra=saved if want_state else None, what=what))
            continue
        keys = columns.pop(KEY_FIELD).to_numpy(zero_copy_only=False) if want != "state" else None
        columns.pop(KEY_FIELD, None)
        computed, after = run(row, columns, state, priors, want_state)
        kept = [computed[name] for name in fields] if keys is not None else []
        tokens.append(STORE.put(token, keys, kept, starts, extra=after, what=what))
    return pa.array(tokens, pa.int64())


def make_compute_udf(system: ReplaySystem):
    """The vectorised UDF ``(token, n_input, n_state, n_priors, player names, league names, table name, want,
    parameters...)`` that replays the collected matches and keeps, under the token (:mod:`.bridge`), the
    computed columns (``want`` 'rows'), the state after the matches ('state'), or both ('rows_and_state')."""
    fields = fetched_fields(system.has_sd)

    def compute_udf(
        token, n_input, n_state, n_priors, player_names, league_names, table_name, want, carry, *parameters
    ):
        call = _Call(
            system, token, n_input, n_state, n_priors, player_names, league_names, table_name, want, carry, parameters
        )

        def run(row: int, columns, state, priors, want_state: bool):
            carried = call.carried(row)
            saved = state_frame(state) if state is not None else None
            start = carried.start(saved) if carried is not None else saved
            _, computed, after = run_replay(
                system,
                columns,
                priors,
                call.values(row),
                table=call.table(row),
                state=start,
                want_state=want_state,
                partial_state=True,
            )
            if not want_state:
                return computed, None
            assert after is not None  # asked for: run_replay returned the state
            return computed, CarriedState.after(start, after, carried)

        def unchanged(row: int, saved: pl.DataFrame) -> CarriedState:  # an empty chunk hands on what it was handed
            carried = call.carried(row)
            return (
                CarriedState(carried.start(saved), carried.new_players)
                if carried is not None
                else CarriedState.after(saved, saved, None)
            )

        return compute_tokens(call, run, fields, "match", unchanged)

    compute_udf.__name__ = udf_name(system, "compute")
    return compute_udf


def make_check_udf(system: ReplaySystem):
    """The UDF behind ``<system>_resume_check``: why the saved state cannot be continued with these
    matches (NULL when it can), without running the replay."""

    def check_udf(token, n_input, n_state, n_priors, player_names, league_names, table_name, want, carry, *parameters):
        call = _Call(
            system, token, n_input, n_state, n_priors, player_names, league_names, table_name, want, carry, parameters
        )
        return resume_reasons(
            call,
            lambda row, columns, state: resume_problem(
                system, columns, call.values(row), state, table=call.table(row), partial_state=True
            ),
        )

    check_udf.__name__ = udf_name(system, "check")
    return check_udf


def resume_reasons(call, check: Callable[[int, dict, dict], str | None]) -> pa.Array:
    """Per query row, ``check(row, columns, saved state columns)``: why the state cannot be continued with
    the row's input, or NULL (also when the input is empty or there is no saved state)."""
    reasons = []
    for row in range(len(call)):
        columns, _, state, _ = call.inputs(row)
        if columns is not None:
            columns.pop(KEY_FIELD, None)
        reasons.append(None if columns is None or state is None else check(row, columns, state))
    return pa.array(reasons, pa.string())


#: A column every packed relation can hold, so that a ``COLUMNS`` filter over the user's own column names
#: (``named_columns``) never selects nothing (DuckDB refuses an empty star expression); the UDFs ignore it.
PLACEHOLDER_COLUMN = "duckrate_placeholder"


def packed_matches_sql(key: str | None = ROW_KEY, named_columns: str | None = None) -> str:
    """The rows a match macro collects: the columns the table has among ``PACKED_COLUMNS``, players and
    league as 64-bit hash keys (the names travel once each, in ``player_names`` / ``league_names``), and,
    with ``key``, each row's key for the bridge's fetch as ``duckrate_key``. ``named_columns`` is a SQL list
    of more column names to pass as they are (e.g. a macro's ``covariates`` parameter): those the table has
    and that are not packed already."""
    keyed = f", {key} AS {KEY_FIELD}" if key else ""
    named, placeholder = "", ""
    if named_columns is not None:
        named = (
            f",\n                 COLUMNS(lambda c: c = '{PLACEHOLDER_COLUMN}' OR (list_contains({named_columns}, c)"
            f" AND NOT regexp_matches(c, {_names_pattern(PACKED_NAMES + KEYED_NAMES)})))"
        )
        placeholder = f"(SELECT NULL AS {PLACEHOLDER_COLUMN} WHERE false) UNION ALL BY NAME "
    return f"""(SELECT COLUMNS({PACKED_COLUMNS}),
                 if(COLUMNS({KEYED_COLUMNS}) IS NULL, NULL, hash(COLUMNS({KEYED_COLUMNS}))){keyed}{named}
          FROM ({placeholder}({MISSING_PASSTHROUGH_COLUMNS}) UNION ALL BY NAME (SELECT * FROM query_table(tbl))) AS s)"""


def names_ctes() -> str:
    """The ``player_names`` and ``league_names`` CTEs of a match macro over ``tbl`` (every replay, ``bt_fit``)."""
    return f"""player_names AS (
    SELECT list(struct_pack(key := hash(n.name), name := n.name::VARCHAR)) AS names
    FROM (SELECT DISTINCT s.name FROM (SELECT m.player_a AS name FROM {MATCH_SOURCE} AS m
                                       UNION ALL SELECT m.player_b FROM {MATCH_SOURCE} AS m) AS s
          WHERE s.name IS NOT NULL) AS n
), league_names AS (
    SELECT list(struct_pack(key := hash(n.league), name := n.league::VARCHAR)) AS names
    FROM (SELECT DISTINCT m.league FROM {MATCH_SOURCE} AS m WHERE m.league IS NOT NULL) AS n
)"""


# Every column is qualified: a macro parameter (e.g. ``volatility``) shadows a bare column name.
PRIORS_SOURCE = (
    f"(SELECT {', '.join('p.' + name for name in PRIOR_FIELDS)} FROM ((FROM {EMPTY_PRIORS_VIEW}) "
    "UNION ALL BY NAME (SELECT * FROM query_table(priors))) AS p)"
)
STATE_SOURCE = (
    f"(SELECT {', '.join('s.' + name for name in STATE_SCHEMA)} FROM ((FROM {EMPTY_STATE_VIEW}) "
    "UNION ALL BY NAME (SELECT * FROM query_table(state))) AS s)"
)


def _player_keys(pairs: bool) -> str:
    """The (league, player) of every side of every match in ``tbl`` (with ``pairs``, plus its ``opponent``)."""
    opponent_a, opponent_b = (", m.player_b::VARCHAR AS opponent", ", m.player_a::VARCHAR") if pairs else ("", "")
    return (
        f"(SELECT m.league::VARCHAR AS league, m.player_a::VARCHAR AS player{opponent_a} FROM {MATCH_SOURCE} AS m "
        f"UNION ALL SELECT m.league::VARCHAR, m.player_b::VARCHAR{opponent_b} FROM {MATCH_SOURCE} AS m)"
    )


def state_read_sql(player_keys: str, pair_keys: str | None) -> str:
    """The rows of the saved state (``state``) a run over ``tbl`` reads: every league row, its ``n_players``
    counted over the whole state (as ``with_player_counts``), the player rows of the (league, player) in
    ``player_keys`` and, for a system with per-pair state, the pair rows of the (league, player, opponent)
    in ``pair_keys``. The Python side never holds the rest of a long history's state: the macros merge
    what the run writes back into the whole state (:func:`merged_state_sql`)."""
    pairs = (
        ""
        if pair_keys is None
        else f"""
  UNION ALL
  SELECT st.* FROM {STATE_SOURCE} AS st SEMI JOIN {pair_keys} AS q
    ON st.league IS NOT DISTINCT FROM q.league AND st.player = q.player AND st.opponent = q.opponent
  WHERE st.kind = 'pair'"""
    )
    return f"""(
  SELECT st.* REPLACE (coalesce(pc.n, 0)::BIGINT AS n_players)
  FROM {STATE_SOURCE} AS st
  LEFT JOIN (SELECT sp.league, count(*) AS n FROM {STATE_SOURCE} AS sp WHERE sp.kind = 'player' GROUP BY sp.league) AS pc
    ON pc.league IS NOT DISTINCT FROM st.league
  WHERE st.kind = 'league'
  UNION ALL
  SELECT st.* FROM {STATE_SOURCE} AS st SEMI JOIN {player_keys} AS q
    ON st.league IS NOT DISTINCT FROM q.league AND st.player = q.player
  WHERE st.kind = 'player'{pairs}
)"""


def merged_state_sql(taken: str) -> str:
    """The whole state after a run: the rows it wrote (the relation ``taken``) and every row of the saved
    state (``state``) with another key (kind, league, player, opponent), each league row's ``n_players``
    counted over the result (what the Python API's ``with_player_counts`` gives). Streams: only the
    per-league counts are held, never the merged rows."""
    same_key = " AND ".join(
        f"o.{name} IS NOT DISTINCT FROM n.{name}" for name in ("kind", "league", "player", "opponent")
    )

    def kept(kinds: str) -> str:
        return f"SELECT o.* FROM {STATE_SOURCE} AS o ANTI JOIN {taken} AS n ON {same_key} WHERE o.kind IN ({kinds})"

    return f"""(
  SELECT sm.* REPLACE (CASE WHEN sm.kind = 'league' THEN coalesce(pc.n, 0) END::BIGINT AS n_players)
  FROM (SELECT n.* FROM {taken} AS n UNION ALL {kept("'league', 'player', 'pair'")}) AS sm
  LEFT JOIN (SELECT sp.league, count(*) AS n
             FROM (SELECT n.league FROM {taken} AS n WHERE n.kind = 'player' UNION ALL SELECT k.league FROM ({kept("'player'")}) AS k) AS sp
             GROUP BY sp.league) AS pc
    ON sm.kind = 'league' AND pc.league IS NOT DISTINCT FROM sm.league
)"""


def taken_state_cte(tokens: str) -> str:
    """``duckrate_taken``: the state rows the compute call behind the one token in ``tokens`` wrote (taken once)."""
    return f"duckrate_taken AS MATERIALIZED (SELECT unnest({TAKE_STATE_UDF}(t.token), recursive := true) FROM {tokens} AS t)"


def _macro(system: ReplaySystem, name: str, extra: str = "") -> tuple[str, str]:
    """The ``CREATE ... MACRO name(tbl, <params>, priors, state[, extra]) AS TABLE WITH <collected input,
    state and priors>, <names>`` head, and the compute UDF's arguments (``{want}`` left to fill in)."""
    params = sql_parameter_list(system.parameters)
    args = ", ".join(p.name for p in system.parameters)
    read = state_read_sql(_player_keys(False), _player_keys(True) if system.pair_state else None)
    parts = {"input": packed_matches_sql(), "state": "duckrate_state_read", "priors": PRIORS_SOURCE}
    head = f"""
CREATE OR REPLACE TEMP MACRO {name}(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}', state := '{EMPTY_STATE_VIEW}'{extra}) AS TABLE
WITH duckrate_state_read AS MATERIALIZED {read}, {collected_ctes(parts)}, {names_ctes()}"""
    udf_args = f"""k.t, c.n_input, c.n_state, c.n_priors, (SELECT pn.names FROM player_names AS pn),
                  (SELECT ln.names FROM league_names AS ln), tbl, {{want}}, {{carry}}, {args}"""
    return head, udf_args


def _computed_cte(system: ReplaySystem, udf_args: str, want: str) -> str:
    return f"""duckrate_computed AS MATERIALIZED (
    SELECT {udf_name(system, "compute")}({udf_args.format(want=want, carry="NULL::BIGINT")}) AS token FROM duckrate_token AS k, duckrate_collected AS c
)"""


def rows_select(system: ReplaySystem, source: str, tokens: str) -> str:
    """The replay rows of the matches in ``source`` whose results a compute call kept under the token in
    ``tokens`` (a relation with one ``token`` column): the scan gives the input columns, the fetch the rest."""
    renamed = {
        "league": "z.league::VARCHAR AS league",
        "player_a": "z.player_a::VARCHAR AS player_a",
        "player_b": "z.player_b::VARCHAR AS player_b",
        "score_a": "z.score_a::DOUBLE AS score_a",
        "match_id": "z.match_id",
        "played_at": "z.played_at",
    }
    outputs = ", ".join(
        renamed.get(
            name, f"NULL::DOUBLE AS {name}" if name in SD_COLUMNS and not system.has_sd else f"z.f.{name} AS {name}"
        )
        for name in OUTPUT_COLUMNS
    )
    # Every column is qualified: a macro parameter (e.g. ``volatility``) shadows a bare column name.
    return f"""SELECT {outputs}
FROM (SELECT s.league, s.match_id, s.played_at, s.player_a, s.player_b, s.score_a,
             {fetch_udf_name(system.has_sd)}(t.token, {ROW_KEY}) AS f
      FROM {source} AS s CROSS JOIN {tokens} AS t) AS z"""


def macro_sql(system: ReplaySystem, with_state: bool = False) -> str:
    """``CREATE TEMP MACRO <system>_replay(tbl, <params>, priors := NULL, state := NULL) AS TABLE ...``; with
    ``with_state``, ``<system>_replay_and_state(...)``: the same rows plus a ``duckrate_state`` column, NULL
    on them, and after them one row per row of the state table (``<system>_state``) with the replay columns
    NULL, from one run of the system."""
    head, udf_args = _macro(system, f"{system.name}_replay" + ("_and_state" if with_state else ""))
    rows = rows_select(system, MATCH_SOURCE, "duckrate_computed")
    if not with_state:
        computed = _computed_cte(system, udf_args, "'rows'")
        return f"{head}, {computed}\n{rows}\n"
    return f"""{head}, {_computed_cte(system, udf_args, "'rows_and_state'")}, {taken_state_cte("duckrate_computed")}
({rows})
UNION ALL BY NAME
(SELECT ms AS duckrate_state FROM {merged_state_sql("duckrate_taken")} AS ms)
"""


def token_macro_sql(system: ReplaySystem) -> str:
    """``duckrate_<system>_token(tbl, <params>, priors, state, want := 'rows_and_state', carry := <no token>)``:
    one row, the ``token`` of a compute call (the dbt materialization then writes
    ``duckrate_<system>_rows(tbl, tokens)`` into the replay table and, after the last chunk,
    ``duckrate_next_state(tokens, state)`` into the state table). ``carry``: a table holding the token of
    the chunk before, whose state this chunk continues in memory (``state`` then still names the saved
    state the build continues, from which the chunk reads the rows the carried state lacks)."""
    head, udf_args = _macro(
        system, f"duckrate_{system.name}_token", extra=f", want := 'rows_and_state', carry := '{NO_CARRY_VIEW}'"
    )
    return f"""{head}
SELECT {udf_name(system, "compute")}({udf_args.format(want="want", carry="cc.carry")}) AS token
FROM duckrate_token AS k, duckrate_collected AS c, (SELECT max(ct.token) AS carry FROM query_table(carry) AS ct) AS cc
"""


def rows_macro_sql(system: ReplaySystem) -> str:
    """``duckrate_<system>_rows(tbl, tokens)``: the replay rows of ``tbl`` from the token in the table ``tokens``."""
    return f"""
CREATE OR REPLACE TEMP MACRO duckrate_{system.name}_rows(tbl, tokens) AS TABLE
{rows_select(system, MATCH_SOURCE, "query_table(tokens)")}
"""


def carried_systems_macro_sql(systems) -> str:
    """``duckrate_carried_systems()``: the systems whose state the dbt materialization hands from chunk to
    chunk in memory (``carry``): every one without per-pair state. A pair state grows with the pairs
    played (9.6M rows at 10M matches for Pairwise), and carried as a Polars frame it cost more than merging
    it into a table per chunk (measured 50.5 s / 8.5 GB against 39.9 s / 5.9 GB); a wide player state (the
    grid system: 0.8 GB at 100k players) costs far less carried."""
    names = ", ".join(f"'{system.name}'" for system in systems if not system.pair_state)
    return f"CREATE OR REPLACE TEMP MACRO duckrate_carried_systems() AS [{names}]::VARCHAR[]"


def whole_history_systems_macro_sql(systems) -> str:
    """``duckrate_whole_history_systems()``: the systems the dbt materialization replays in one chunk whatever
    the chunk size (:attr:`~duckrate.core.protocol.System.whole_history`: each forecast needs the fit over
    every earlier match, so the replay cannot continue from a chunk's state)."""
    names = ", ".join(f"'{system.name}'" for system in systems if system.whole_history)
    return f"CREATE OR REPLACE TEMP MACRO duckrate_whole_history_systems() AS [{names}]::VARCHAR[]"


NO_CARRY_VIEW = "duckrate_no_carry"
NO_CARRY_SQL = f"CREATE OR REPLACE TEMP VIEW {NO_CARRY_VIEW} AS SELECT NULL::BIGINT AS token WHERE false"
# reads the league rows of a chunk's kept state (which rows the next chunk re-rates), leaving the state in place
CARRIED_LEAGUES_UDF = "duckrate_fetch_carried_leagues"
CARRIED_LEAGUES_MACRO_SQL = f"""
CREATE OR REPLACE TEMP MACRO duckrate_carried_leagues(tokens) AS TABLE
SELECT unnest({CARRIED_LEAGUES_UDF}(t.token), recursive := true) FROM query_table(tokens) AS t
"""


DEFAULT_CHUNK_MACRO_SQL = f"CREATE OR REPLACE TEMP MACRO duckrate_default_chunk_size() AS {DEFAULT_CHUNK_ROWS}"
NEXT_STATE_MACRO_SQL = f"""
CREATE OR REPLACE TEMP MACRO duckrate_next_state(tokens, state := '{EMPTY_STATE_VIEW}') AS TABLE
WITH {taken_state_cte("query_table(tokens)")}
SELECT * FROM {merged_state_sql("duckrate_taken")} AS ms
"""


def state_macro_sql(system: ReplaySystem) -> str:
    """``<system>_state(tbl, <params>, priors, state)``: the state table after the matches of ``tbl``,
    continuing ``state`` when given (see systems/saved_state.py)."""
    head, udf_args = _macro(system, f"{system.name}_state")
    return f"""{head}, {_computed_cte(system, udf_args, "'state'")}, {taken_state_cte("duckrate_computed")}
SELECT * FROM {merged_state_sql("duckrate_taken")} AS ms
"""


def check_macro_sql(system: ReplaySystem) -> str:
    """``<system>_resume_check(tbl, <params>, priors, state)``: one row, ``reason`` why ``state`` cannot be
    continued with the matches of ``tbl`` (NULL when it can)."""
    head, udf_args = _macro(system, f"{system.name}_resume_check")
    return f"""{head}
SELECT {udf_name(system, "check")}({udf_args.format(want="'rows'", carry="NULL::BIGINT")}) AS reason FROM duckrate_token AS k, duckrate_collected AS c
"""
