"""The file readers: TEMP table macros that turn real export formats into duckrate's canonical tables.

- ``read_pgn(path)``: the tag pairs of each game of a PGN file (``.pgn`` or compressed, e.g. ``.pgn.zst``);
- ``read_arena_battles(path)``: Chatbot Arena battle logs (a JSON array or JSON lines);
- ``read_contest_json(glob)``: the Elo-MMR reference's contest files;
- ``read_team_json(glob)``: team matches, one JSON object per match (JSON lines or an array).

Pure DuckDB SQL, so a file of several GB streams through in bounded memory: the PGN is read line by line
by ``read_csv`` (one VARCHAR column, a delimiter byte that PGN never holds, no quoting); each line's game
is the running count of tag sections begun so far (a section begins at a tag line that follows a
non-tag line), computed by DuckDB's *streaming* window operators (``lag(...) OVER ()`` and a running
``sum(...) OVER (ROWS UNBOUNDED PRECEDING)``, neither partitioned nor ordered), which see the lines in file
order without holding them. Only the tag lines (about 17 a game) reach the one ``GROUP BY game``, DuckDB's
hash aggregate, which spills to disk under ``memory_limit``. The JSON readers use ``read_json_objects``
(one JSON value per record, in file order) and never aggregate.

Every record comes out as one row: rows that cannot become a match or a result carry a
``rejected_reason`` (NULL for good rows) and the columns that could be read; nothing is dropped.
Files that cannot be parsed at all (a JSON syntax error, invalid UTF-8) fail with DuckDB's error, which
names the file and the position. See docs/sql.md, "Reading real formats".
"""

from __future__ import annotations

#: The PGN tags read_pgn keeps, each with its column name; a second occurrence of any of them in one game
#: rejects the game (``duplicate_tag``: usually two games run together).
PGN_TAGS = (
    ("Event", "event"),
    ("Site", "site"),
    ("Date", "date"),
    ("UTCDate", "utc_date"),
    ("UTCTime", "utc_time"),
    ("White", "white"),
    ("Black", "black"),
    ("Result", "result"),
    ("WhiteElo", "white_elo"),
    ("BlackElo", "black_elo"),
    ("TimeControl", "time_control"),
)
PGN_REASONS = (
    "text_before_first_game",
    "malformed_tag_line",
    "duplicate_tag",
    "movetext_without_tags",
    "missing_white",
    "missing_black",
    "self_match",
    "missing_result",
    "unfinished",
    "invalid_result",
    "missing_date",
    "incomplete_date",
    "invalid_date",
)
ARENA_REASONS = (
    "not_an_object",
    "missing_model_a",
    "missing_model_b",
    "self_match",
    "missing_winner",
    "unknown_winner",
    "missing_or_invalid_tstamp",
)
CONTEST_REASONS = (
    "not_an_object",
    "missing_standings",
    "missing_or_invalid_time_seconds",
    "invalid_weight",
    "malformed_standing",
    "missing_player",
    "invalid_place",
)
TEAM_REASONS = (
    "not_an_object",
    "missing_or_invalid_played_at",
    "missing_teams",
    "fewer_than_two_teams",
    "malformed_team",
    "missing_player",
    "missing_rank_and_score",
    "invalid_rank",
    "invalid_score",
    "invalid_weight",
)
MACROS = ("read_pgn", "read_arena_battles", "read_contest_json", "read_team_json")

# Ids are the file's name and the record's 1-based ordinal, zero-padded so that text order is file order
# (the replays order ties of played_at by match_id).
_ORDINAL_DIGITS = 10
# Insertion order is what lets the streaming windows see lines and records in file order.
_ORDER_GUARD = (
    "CASE WHEN current_setting('preserve_insertion_order') THEN {value} ELSE error('{macro}: needs SET "
    "preserve_insertion_order = true (the default): records are numbered, and PGN lines grouped into games, "
    "in file order') END"
)
# One contest is one JSON object, at most this many bytes (DuckDB's default, 16 MiB: about 500k standings).
# DuckDB reads JSON in buffers of twice this size per thread, so a larger default would cost memory on every
# call; a bigger contest fails with DuckDB's error naming the size, and the macro's parameter raises it.
_MAX_JSON_OBJECT = 1 << 24


def _row_id(file: str, ordinal: str) -> str:
    return f"parse_filename({file}) || '#' || lpad({ordinal}::VARCHAR, {_ORDINAL_DIGITS}, '0')"


def _blank(value: str) -> str:
    return f"({value} IS NULL OR trim({value}) = '')"


def _timestamp_from_seconds(seconds: str) -> str:
    """A TIMESTAMP (UTC, no time zone) from unix seconds, or NULL when not finite or out of range."""
    return (
        f"CASE WHEN isfinite({seconds}) AND abs({seconds}) < 9.0e12 "
        f"THEN make_timestamp(CAST(round({seconds} * 1e6) AS BIGINT)) END"
    )


def read_pgn_sql() -> str:
    """``read_pgn(path, league := NULL, encoding := 'utf-8')``: one row per game.

    ``league`` names a tag whose value becomes the ``league`` column (e.g. ``'Event'``: lichess's
    "Rated Blitz game" / "Rated Bullet game"); NULL gives no league."""
    tag_columns = ",\n    ".join(
        f"min(value) FILTER (WHERE tag = '{tag}') AS {column}, count_if(tag = '{tag}') AS n_{column}"
        for tag, column in PGN_TAGS
    )
    most_repeated = "greatest(" + ", ".join(f"n_{column}" for _, column in PGN_TAGS) + ")"
    guarded_line = _ORDER_GUARD.format(value="line", macro="read_pgn")
    return f"""
CREATE OR REPLACE TEMP MACRO read_pgn(path, league := NULL, encoding := 'utf-8') AS TABLE
WITH duckrate_pgn_lines AS (
    -- everything up to the running count runs on one thread, in file order: keep it to cheap tests
    SELECT filename AS file, {guarded_line} AS line
    FROM read_csv(path, columns := {{'line': 'VARCHAR'}}, delim := chr(1), quote := '', escape := '',
                  header := false, auto_detect := false, compression := 'auto', filename := true,
                  encoding := encoding)
), duckrate_pgn_kinds AS (
    -- 0 blank, 1 tag line (also after a byte order mark), 2 movetext, 3 escape line ('%': ignored by PGN)
    SELECT file, line,
           CASE WHEN line IS NULL THEN 0 WHEN prefix(line, '[') THEN 1 WHEN prefix(line, '%') THEN 3
                WHEN trim(line) = '' THEN 0 WHEN prefix(line, chr(65279) || '[') THEN 1 ELSE 2 END AS kind
    FROM duckrate_pgn_lines
), duckrate_pgn_marked AS (
    SELECT file, line, kind, lag(kind, 1, 0) OVER () AS previous_kind FROM duckrate_pgn_kinds
), duckrate_pgn_numbered AS (
    SELECT file, line, kind, previous_kind,
           CAST(sum(CASE WHEN kind = 1 AND previous_kind <> 1 THEN 1 ELSE 0 END)
                OVER (ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT) AS game_ordinal
    FROM duckrate_pgn_marked
), duckrate_pgn_kept AS (
    -- tag lines (trailing blanks and a byte order mark removed), the first line of each movetext block,
    -- and any text before the first game
    SELECT file, game_ordinal, kind,
           CASE WHEN kind <> 1 OR (suffix(line, ']') AND prefix(line, '[')) THEN line
                ELSE rtrim(ltrim(line, chr(65279)), ' ' || chr(9)) END AS line
    FROM duckrate_pgn_numbered
    WHERE kind = 1 OR (kind = 2 AND previous_kind <> 2) OR (game_ordinal = 0 AND kind <> 0)
), duckrate_pgn_split AS (
    SELECT file, game_ordinal, kind, line, strpos(line, ' "') AS opening,
           CASE WHEN kind = 1 THEN line[2:strpos(line, ' "') - 1] END AS name
    FROM duckrate_pgn_kept
), duckrate_pgn_tags AS (
    -- '[Tag "value"]' split without a regular expression; tag '' marks a malformed tag line
    SELECT file, game_ordinal, kind,
           CASE WHEN kind = 1 AND opening > 2 AND suffix(line, '"]') AND length(line) >= opening + 3
                     AND NOT contains(name, ' ') AND NOT contains(name, '"') AND NOT contains(name, ']')
                THEN name ELSE '' END AS tag,
           CASE WHEN kind <> 1 THEN NULL
                WHEN contains(line, '\\') THEN replace(replace(line[opening + 2:-3], '\\"', '"'), '\\\\', '\\')
                ELSE line[opening + 2:-3] END AS value
    FROM duckrate_pgn_split
), duckrate_pgn_games AS (
    SELECT game_ordinal, min(file) AS file,
    count_if(kind = 1 AND tag = '') AS n_malformed, count_if(kind = 2) AS n_movetext,
    {tag_columns},
    min(value) FILTER (WHERE tag = league) AS league_value
    FROM duckrate_pgn_tags
    GROUP BY game_ordinal
), duckrate_pgn_dated AS (
    SELECT *,
           CASE WHEN utc_date IS NOT NULL THEN utc_date || ' ' || coalesce(utc_time, '00:00:00')
                ELSE date END AS played_at_text,
           CASE WHEN utc_date IS NOT NULL
                THEN try_strptime(utc_date || ' ' || coalesce(utc_time, '00:00:00'), '%Y.%m.%d %H:%M:%S')
                ELSE try_strptime(date, '%Y.%m.%d') END AS played_at,
           CAST(CASE result WHEN '1-0' THEN 1.0 WHEN '0-1' THEN 0.0 WHEN '1/2-1/2' THEN 0.5 END AS DOUBLE) AS score_a
    FROM duckrate_pgn_games
)
SELECT {_row_id("file", "game_ordinal")} AS match_id,
       played_at,
       white AS player_a,
       black AS player_b,
       score_a,
       league_value AS league,
       CASE WHEN game_ordinal = 0 THEN 'text_before_first_game'
            WHEN n_malformed > 0 THEN 'malformed_tag_line'
            WHEN {most_repeated} > 1 THEN 'duplicate_tag'
            WHEN n_movetext > 1 THEN 'movetext_without_tags'
            WHEN {_blank("white")} OR trim(white) = '?' THEN 'missing_white'
            WHEN {_blank("black")} OR trim(black) = '?' THEN 'missing_black'
            WHEN white = black THEN 'self_match'
            WHEN {_blank("result")} THEN 'missing_result'
            WHEN trim(result) = '*' THEN 'unfinished'
            WHEN score_a IS NULL THEN 'invalid_result'
            WHEN played_at_text IS NULL THEN 'missing_date'
            WHEN contains(played_at_text, '?') THEN 'incomplete_date'
            WHEN played_at IS NULL THEN 'invalid_date'
       END AS rejected_reason,
       game_ordinal,
       event,
       site,
       date,
       utc_date,
       utc_time,
       result,
       TRY_CAST(white_elo AS INTEGER) AS white_elo,
       TRY_CAST(black_elo AS INTEGER) AS black_elo,
       time_control,
       file
FROM duckrate_pgn_dated
"""


_ARENA_FIELDS = ("model_a", "model_b", "winner", "tstamp", "question_id", "judge", "language", "turn", "anony")


def read_arena_battles_sql() -> str:
    """``read_arena_battles(path, league := NULL)``: one row per battle record.

    ``league`` names a field of the records (e.g. ``'language'``) whose text becomes the ``league`` column;
    NULL gives no league."""
    paths = "[" + ", ".join(f"'$.{name}'" for name in _ARENA_FIELDS) + "]"
    fields = ",\n           ".join(f"v[{i + 1}] AS {name}" for i, name in enumerate(_ARENA_FIELDS))
    guarded_json = _ORDER_GUARD.format(value="json", macro="read_arena_battles")
    return f"""
CREATE OR REPLACE TEMP MACRO read_arena_battles(path, league := NULL) AS TABLE
WITH duckrate_arena_records AS (
    SELECT filename AS file, {guarded_json} AS record, row_number() OVER () AS record_ordinal
    FROM read_json_objects(path, format := 'auto', filename := true)
), duckrate_arena_fields AS (
    SELECT file, record_ordinal, json_type(record) AS record_type,
           CASE WHEN league IS NOT NULL AND json_type(record) = 'OBJECT'
                THEN json_extract_string(record, '$."' || league || '"') END AS league_value,
           {fields}
    FROM (SELECT file, record_ordinal, record,
                 CASE WHEN json_type(record) = 'OBJECT' THEN json_extract_string(record, {paths}) END AS v
          FROM duckrate_arena_records)
), duckrate_arena_scored AS (
    SELECT *,
           CAST(CASE winner WHEN 'model_a' THEN 1.0 WHEN 'model_b' THEN 0.0 WHEN 'tie' THEN 0.5
                            WHEN 'tie (bothbad)' THEN 0.5 END AS DOUBLE) AS score_a,
           TRY_CAST(tstamp AS DOUBLE) AS tstamp_seconds
    FROM duckrate_arena_fields
)
SELECT coalesce(question_id, {_row_id("file", "record_ordinal")}) AS match_id,
       {_timestamp_from_seconds("tstamp_seconds")} AS played_at,
       model_a AS player_a,
       model_b AS player_b,
       score_a,
       league_value AS league,
       CASE WHEN record_type IS DISTINCT FROM 'OBJECT' THEN 'not_an_object'
            WHEN {_blank("model_a")} THEN 'missing_model_a'
            WHEN {_blank("model_b")} THEN 'missing_model_b'
            WHEN model_a = model_b THEN 'self_match'
            WHEN winner IS NULL THEN 'missing_winner'
            WHEN score_a IS NULL THEN 'unknown_winner'
            WHEN {_timestamp_from_seconds("tstamp_seconds")} IS NULL THEN 'missing_or_invalid_tstamp'
       END AS rejected_reason,
       record_ordinal,
       question_id,
       winner,
       judge,
       language,
       TRY_CAST(turn AS BIGINT) AS turn,
       TRY_CAST(anony AS BOOLEAN) AS anony,
       tstamp_seconds AS tstamp,
       file
FROM duckrate_arena_scored
"""


def read_contest_json_sql() -> str:
    """``read_contest_json(path, maximum_object_size := 16 MiB)``: one row per standing of each contest object
    (a glob reads many files)."""
    guarded_json = _ORDER_GUARD.format(value="json", macro="read_contest_json")
    integer_types = "('UBIGINT', 'BIGINT')"
    return f"""
CREATE OR REPLACE TEMP MACRO read_contest_json(path, maximum_object_size := {_MAX_JSON_OBJECT}) AS TABLE
WITH duckrate_contest_objects AS (
    SELECT filename AS file, {guarded_json} AS contest, row_number() OVER () AS contest_ordinal
    FROM read_json_objects(path, format := 'auto', filename := true,
                           maximum_object_size := maximum_object_size)
), duckrate_contest_fields AS (
    SELECT file, contest_ordinal, json_type(contest) = 'OBJECT' AS is_object,
           CASE WHEN json_type(contest) = 'OBJECT' THEN contest ->> '$.name' END AS contest_name,
           CASE WHEN json_type(contest, '$.time_seconds') IN ('UBIGINT', 'BIGINT', 'DOUBLE')
                THEN CAST(contest ->> '$.time_seconds' AS DOUBLE) END AS time_seconds,
           CASE WHEN json_type(contest) = 'OBJECT' THEN json_type(contest, '$.weight') END AS weight_type,
           CASE WHEN json_type(contest, '$.weight') IN ('UBIGINT', 'BIGINT', 'DOUBLE')
                THEN CAST(contest ->> '$.weight' AS DOUBLE) END AS weight,
           CASE WHEN json_type(contest, '$.standings') = 'ARRAY'
                THEN CAST(contest -> '$.standings' AS JSON[]) END AS standings
    FROM duckrate_contest_objects
), duckrate_contest_standings AS (
    SELECT file, contest_ordinal, is_object, contest_name, time_seconds, weight_type, weight,
           unnest(CASE WHEN len(standings) > 0 THEN standings ELSE [NULL::JSON] END) AS standing,
           unnest(CASE WHEN len(standings) > 0 THEN range(1, len(standings) + 1) ELSE [NULL] END)
               AS standing_ordinal
    FROM duckrate_contest_fields
), duckrate_contest_places AS (
    SELECT *,
           json_type(standing) = 'ARRAY' AND json_array_length(standing) = 3 AS is_triple,
           CASE WHEN json_type(standing, '$[0]') = 'VARCHAR' THEN standing ->> '$[0]' END AS player,
           CASE WHEN json_type(standing, '$[1]') IN {integer_types}
                THEN TRY_CAST(standing ->> '$[1]' AS BIGINT) END AS place_lo,
           CASE WHEN json_type(standing, '$[2]') IN {integer_types}
                THEN TRY_CAST(standing ->> '$[2]' AS BIGINT) END AS place_hi
    FROM duckrate_contest_standings
)
SELECT coalesce(contest_name, parse_filename(file, true)) AS contest_id,
       {_timestamp_from_seconds("time_seconds")} AS played_at,
       player,
       place_lo + 1 AS rank,
       weight,
       CASE WHEN NOT is_object THEN 'not_an_object'
            WHEN standing_ordinal IS NULL THEN 'missing_standings'
            WHEN {_timestamp_from_seconds("time_seconds")} IS NULL THEN 'missing_or_invalid_time_seconds'
            WHEN weight_type IS NOT NULL AND weight_type <> 'NULL'
                 AND (weight IS NULL OR NOT isfinite(weight) OR weight <= 0) THEN 'invalid_weight'
            WHEN NOT is_triple THEN 'malformed_standing'
            WHEN {_blank("player")} THEN 'missing_player'
            WHEN place_lo IS NULL OR place_hi IS NULL OR place_lo < 0 OR place_hi < place_lo THEN 'invalid_place'
       END AS rejected_reason,
       contest_name,
       time_seconds,
       place_lo,
       place_hi,
       contest_ordinal,
       standing_ordinal,
       file
FROM duckrate_contest_places
"""


def read_team_json_sql() -> str:
    """``read_team_json(path, maximum_object_size := 16 MiB)``: one row per player of each team of each match
    object (a glob reads many files). A match is ``{"match_id": ..., "played_at": ISO text or unix seconds,
    "league": optional, "teams": [{"team": optional name, "rank": 1 or "score": 3.5, "players": ["ann",
    {"player": "bob", "weight": 0.5}, ...]}, ...]}`` (docs/sql.md, "Reading real formats")."""
    guarded_json = _ORDER_GUARD.format(value="json", macro="read_team_json")
    numbers = "('UBIGINT', 'BIGINT', 'DOUBLE')"
    integers = "('UBIGINT', 'BIGINT')"
    return f"""
CREATE OR REPLACE TEMP MACRO read_team_json(path, maximum_object_size := {_MAX_JSON_OBJECT}) AS TABLE
WITH duckrate_team_objects AS (
    SELECT filename AS file, {guarded_json} AS game, row_number() OVER () AS match_ordinal
    FROM read_json_objects(path, format := 'auto', filename := true,
                           maximum_object_size := maximum_object_size)
), duckrate_team_matches AS (
    SELECT file, match_ordinal, json_type(game) = 'OBJECT' AS is_object,
           CASE WHEN json_type(game) = 'OBJECT' AND json_type(game, '$.match_id') NOT IN ('NULL', 'OBJECT', 'ARRAY')
                THEN game ->> '$.match_id' END AS given_id,
           CASE WHEN json_type(game, '$.played_at') IN {numbers}
                THEN {_timestamp_from_seconds("CAST(game ->> '$.played_at' AS DOUBLE)")}
                WHEN json_type(game, '$.played_at') = 'VARCHAR' THEN TRY_CAST(game ->> '$.played_at' AS TIMESTAMP)
           END AS played_at,
           CASE WHEN json_type(game, '$.league') NOT IN ('NULL', 'OBJECT', 'ARRAY') THEN game ->> '$.league' END AS league,
           CASE WHEN json_type(game, '$.teams') = 'ARRAY' THEN CAST(game -> '$.teams' AS JSON[]) END AS teams
    FROM duckrate_team_objects
), duckrate_team_teams AS (
    SELECT *, len(teams) AS n_teams,
           unnest(CASE WHEN len(teams) > 0 THEN teams ELSE [NULL::JSON] END) AS team_json,
           unnest(CASE WHEN len(teams) > 0 THEN range(1, len(teams) + 1) ELSE [NULL] END) AS team_ordinal
    FROM duckrate_team_matches
), duckrate_team_fields AS (
    SELECT *,
           json_type(team_json) = 'OBJECT' AND json_type(team_json, '$.players') = 'ARRAY'
               AND json_array_length(team_json, '$.players') > 0 AS is_team,
           CASE WHEN json_type(team_json, '$.team') NOT IN ('NULL', 'OBJECT', 'ARRAY') THEN team_json ->> '$.team' END AS team_name,
           json_type(team_json, '$.rank') AS rank_type,
           CASE WHEN json_type(team_json, '$.rank') IN {integers} THEN TRY_CAST(team_json ->> '$.rank' AS BIGINT) END AS rank,
           json_type(team_json, '$.score') AS score_type,
           CASE WHEN json_type(team_json, '$.score') IN {numbers} THEN CAST(team_json ->> '$.score' AS DOUBLE) END AS score,
           CASE WHEN json_type(team_json, '$.players') = 'ARRAY' THEN CAST(team_json -> '$.players' AS JSON[]) END AS players
    FROM duckrate_team_teams
), duckrate_team_players AS (
    SELECT *,
           unnest(CASE WHEN len(players) > 0 THEN players ELSE [NULL::JSON] END) AS player_json,
           unnest(CASE WHEN len(players) > 0 THEN range(1, len(players) + 1) ELSE [NULL] END) AS player_ordinal
    FROM duckrate_team_fields
), duckrate_team_rows AS (
    SELECT *,
           CASE WHEN json_type(player_json) = 'VARCHAR' THEN player_json ->> '$'
                WHEN json_type(player_json, '$.player') = 'VARCHAR' THEN player_json ->> '$.player' END AS player,
           CASE WHEN json_type(player_json) = 'OBJECT' THEN json_type(player_json, '$.weight') END AS weight_type,
           CASE WHEN json_type(player_json, '$.weight') IN {numbers} THEN CAST(player_json ->> '$.weight' AS DOUBLE) END AS weight
    FROM duckrate_team_players
)
SELECT coalesce(given_id, {_row_id("file", "match_ordinal")}) AS match_id,
       played_at,
       league,
       coalesce(team_name, CAST(team_ordinal AS VARCHAR)) AS team,
       player,
       rank,
       score,
       weight,
       CASE WHEN NOT is_object THEN 'not_an_object'
            WHEN played_at IS NULL THEN 'missing_or_invalid_played_at'
            WHEN team_ordinal IS NULL THEN 'missing_teams'
            WHEN n_teams < 2 THEN 'fewer_than_two_teams'
            WHEN NOT is_team THEN 'malformed_team'
            WHEN {_blank("player")} THEN 'missing_player'
            WHEN coalesce(rank_type, 'NULL') = 'NULL' AND coalesce(score_type, 'NULL') = 'NULL' THEN 'missing_rank_and_score'
            WHEN coalesce(rank_type, 'NULL') <> 'NULL' AND (rank IS NULL OR rank < 1) THEN 'invalid_rank'
            WHEN coalesce(score_type, 'NULL') <> 'NULL' AND (score IS NULL OR NOT isfinite(score)) THEN 'invalid_score'
            WHEN weight_type IS NOT NULL AND weight_type <> 'NULL'
                 AND (weight IS NULL OR NOT isfinite(weight) OR weight <= 0 OR weight > 1) THEN 'invalid_weight'
       END AS rejected_reason,
       match_ordinal,
       team_ordinal,
       player_ordinal,
       file
FROM duckrate_team_rows
"""


def macro_sqls() -> tuple[str, ...]:
    """The ``CREATE OR REPLACE TEMP MACRO`` statements of every reader."""
    return (read_pgn_sql(), read_arena_battles_sql(), read_contest_json_sql(), read_team_json_sql())
