"""The Arrow UDF and TEMP table macro behind each ``<system>_replay`` SQL function.

Pattern (see shared/DUCKDB-NOTES.md): the macro packs the whole input table into one unordered
``LIST(STRUCT)``, the UDF computes the system's columns for every element *in the list's own order*,
and the macro unnests the input list and the output list side by side. The input columns therefore
come back with their own types (integer or text ``match_id``, any ``played_at``) and player names are
never converted back from Python, which is the costly direction.
"""

from __future__ import annotations

import pyarrow as pa

from ..systems._replay import OUTPUT_COLUMNS, SD_COLUMNS, ReplaySystem, computed_arrow_type, computed_struct

MATCH_FIELDS = ("match_id", "played_at", "score_a", "weight", "period")
KEYED_FIELDS = ("player_a", "player_b", "league")  # packed as 64-bit hash keys; names travel once each
PRIOR_FIELDS = ("player", "rating", "sd", "volatility", "league")

# Typed empty relations: UNION ALL BY NAME with them supplies optional columns the user's table lacks.
OPTIONAL_MATCH_COLUMNS = "SELECT NULL::VARCHAR AS league, NULL::DOUBLE AS weight, NULL::BIGINT AS period WHERE false"
EMPTY_PRIORS_VIEW = "duckrate_no_priors"
EMPTY_PRIORS_SQL = (
    f"CREATE OR REPLACE TEMP VIEW {EMPTY_PRIORS_VIEW} AS SELECT NULL::VARCHAR AS player, NULL::DOUBLE AS rating, "
    "NULL::DOUBLE AS sd, NULL::DOUBLE AS volatility, NULL::VARCHAR AS league WHERE false"
)


def udf_name(system: ReplaySystem) -> str:
    return f"duckrate_{system.name}_udf"


def return_type(system: ReplaySystem) -> str:
    sql_types = {pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.string(): "VARCHAR"}
    fields = ", ".join(f"{f.name} {sql_types[f.type]}" for f in computed_arrow_type(system.has_sd))
    return f"STRUCT({fields})[]"


def make_udf(system: ReplaySystem):
    """The vectorised UDF ``(matches, player names, league names, priors, table name, parameters...)``."""
    names = [p.name for p in system.parameters]

    def replay_udf(matches, player_names, league_names, priors, table_name, *parameters):
        matches, player_names, league_names = _whole(matches), _whole(player_names), _whole(league_names)
        priors, table_name = _whole(priors), _whole(table_name)
        parameters = [_whole(column) for column in parameters]
        outputs, offsets = [], [0]
        for row in range(len(matches)):
            element = _list_values(matches, row)
            if element is None or len(element) == 0:
                offsets.append(offsets[-1])
                continue
            columns = _struct_columns(element)
            columns["player_names"] = _list_values(player_names, row)
            columns["league_names"] = _list_values(league_names, row)
            if columns["league_names"] is None:
                del columns["league_names"]
            prior_element = _list_values(priors, row)
            values = {name: column[row].as_py() for name, column in zip(names, parameters)}
            prepared, computed = system.compute(
                columns,
                _struct_columns(prior_element) if prior_element is not None and len(prior_element) else None,
                values,
                table=f"table {table_name[row].as_py()!r}",
            )
            outputs.append(computed_struct(prepared, computed, system.has_sd))
            offsets.append(offsets[-1] + len(element))
        if not outputs:
            flat = pa.array([], computed_arrow_type(system.has_sd))
        else:
            flat = outputs[0] if len(outputs) == 1 else pa.concat_arrays(outputs)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32() if offsets[-1] < 2**31 else pa.int64()), flat)

    replay_udf.__name__ = udf_name(system)
    return replay_udf


def _whole(column):
    """One contiguous array (no copy when DuckDB handed over a single chunk)."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def _list_values(lists: pa.Array, row: int) -> pa.Array | None:
    """The elements of the ``row``-th list, zero-copy (None for a NULL list)."""
    if pa.types.is_null(lists.type) or not lists.is_valid()[row].as_py():
        return None
    start, stop = lists.offsets[row].as_py(), lists.offsets[row + 1].as_py()
    return lists.values.slice(start, stop - start)


def _struct_columns(array: pa.Array) -> dict[str, pa.Array]:
    return {array.type.field(i).name: array.field(i) for i in range(array.type.num_fields)}


def macro_sql(system: ReplaySystem) -> str:
    """``CREATE TEMP MACRO <system>_replay(tbl, <params>, priors := NULL) AS TABLE ...``."""
    params = ", ".join(f"{p.name} := {'NULL' if p.default is None else repr(p.default)}" for p in system.parameters)
    args = ", ".join(p.name for p in system.parameters)
    fields = ", ".join(
        [f"{name} := m.{name}" for name in MATCH_FIELDS]
        + [f"{name} := if(m.{name} IS NULL, NULL, hash(m.{name}))" for name in KEYED_FIELDS]
    )
    prior_fields = ", ".join(f"{name} := p.{name}" for name in PRIOR_FIELDS)
    renamed = {"league": "z.league_name AS league", "player_a": "z.player_a_name AS player_a",
               "player_b": "z.player_b_name AS player_b", "score_a": "z.score_a::DOUBLE AS score_a"}
    if not system.has_sd:
        renamed.update({name: f"NULL::DOUBLE AS {name}" for name in SD_COLUMNS})
    outputs = ", ".join(renamed.get(name, f"z.{name}") for name in OUTPUT_COLUMNS)
    # The table is scanned by each consumer rather than through a shared CTE, which DuckDB materialises.
    source = f"(({OPTIONAL_MATCH_COLUMNS}) UNION ALL BY NAME (SELECT * FROM query_table(tbl)))"
    # Every column is qualified: a macro parameter (e.g. ``volatility``) shadows a bare column name.
    return f"""
CREATE OR REPLACE TEMP MACRO {system.name}_replay(tbl, {params}, priors := '{EMPTY_PRIORS_VIEW}') AS TABLE
WITH packed AS (
    SELECT list(struct_pack({fields})) AS match_list FROM {source} AS m
), player_names AS (
    SELECT list(struct_pack(key := hash(n.name), name := n.name::VARCHAR)) AS names
    FROM (SELECT DISTINCT s.name FROM (SELECT m.player_a AS name FROM {source} AS m
                                       UNION ALL SELECT m.player_b FROM {source} AS m) AS s
          WHERE s.name IS NOT NULL) AS n
), league_names AS (
    SELECT list(struct_pack(key := hash(n.league), name := n.league::VARCHAR)) AS names
    FROM (SELECT DISTINCT m.league FROM {source} AS m WHERE m.league IS NOT NULL) AS n
), packed_priors AS (
    SELECT list(struct_pack({prior_fields})) AS prior_list
    FROM ((FROM {EMPTY_PRIORS_VIEW}) UNION ALL BY NAME (SELECT * FROM query_table(priors))) AS p
), zipped AS (
    SELECT unnest(packed.match_list, recursive := true),
           unnest({udf_name(system)}(packed.match_list, (SELECT pn.names FROM player_names AS pn),
                  (SELECT ln.names FROM league_names AS ln), (SELECT pp.prior_list FROM packed_priors AS pp),
                  tbl, {args}), recursive := true)
    FROM packed
)
SELECT {outputs}
FROM zipped AS z
"""
