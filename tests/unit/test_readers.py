"""The file readers in real DuckDB over files the tests write: read_pgn (.pgn and .pgn.zst), read_arena_battles
(JSON lines and a JSON array), read_contest_json (Elo-MMR contest files by a glob), read_team_json (team
matches, JSON lines or an array). Good rows map onto the
canonical columns; every malformed game or record comes out with its rejected_reason (never dropped), or the
query fails with an error naming the file; the good rows feed the replays."""

from __future__ import annotations

import datetime as dt
import json

import duckdb
import pytest

import duckrate
from duckrate.sql.readers import ARENA_REASONS, CONTEST_REASONS, PGN_REASONS, TEAM_REASONS

MATCH_COLUMNS = ["match_id", "played_at", "player_a", "player_b", "score_a", "league", "rejected_reason"]


@pytest.fixture(scope="module")
def con():
    """One registered connection for the module (registering costs half a second); tables the tests create
    are dropped after each."""
    connection = duckrate.register(duckdb.connect())
    yield connection
    connection.close()


@pytest.fixture(autouse=True)
def _drop_tables(con):
    yield
    for (name,) in con.sql("SELECT table_name FROM duckdb_tables() WHERE NOT temporary").fetchall():
        con.execute(f"DROP TABLE {name}")


def pgn_game(
    white="alice", black="bob", result="1-0", date="2024.01.02", utc=("2024.01.02", "10:20:30"), extra=(), moves=None
):
    """One lichess-like game: tag section, blank line, movetext, blank line. A None tag is left out."""
    tags = [("Event", "Rated Blitz game"), ("Site", "https://lichess.org/abcd1234"), ("Date", date)]
    tags += [("White", white), ("Black", black), ("Result", result)]
    if utc is not None:
        tags += [("UTCDate", utc[0]), ("UTCTime", utc[1])]
    tags += [("WhiteElo", "1500"), ("BlackElo", "?"), ("TimeControl", "180+0"), *extra]
    lines = [f'[{tag} "{value}"]' for tag, value in tags if value is not None]
    movetext = moves if moves is not None else f"1. e4 {{ [%clk 0:03:00] }} e5 2. Nf3 {result}"
    return "\n".join(lines) + "\n\n" + movetext + "\n\n"


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return str(path)


def rows(con, sql: str) -> list[dict]:
    relation = con.sql(sql)
    return [dict(zip(relation.columns, row)) for row in relation.fetchall()]


def pgn_rows(con, path) -> list[dict]:
    return rows(con, f"SELECT * FROM read_pgn('{path}') ORDER BY game_ordinal")


# --------------------------------------------------------------------------------------------------- read_pgn


def test_pgn_games_map_onto_the_match_columns(con, tmp_path):
    path = write(
        tmp_path / "lichess.pgn",
        pgn_game()
        + pgn_game("carol", "dave", "0-1", utc=("2024.01.03", "00:00:01"))
        + pgn_game("erin", "frank", "1/2-1/2", date="2023.12.31", utc=None),
    )
    got = pgn_rows(con, path)
    assert [r["rejected_reason"] for r in got] == [None, None, None]
    assert [(r["player_a"], r["player_b"], r["score_a"]) for r in got] == [
        ("alice", "bob", 1.0),
        ("carol", "dave", 0.0),
        ("erin", "frank", 0.5),
    ]
    assert [r["match_id"] for r in got] == [f"lichess.pgn#{i:010d}" for i in (1, 2, 3)]
    # UTCDate + UTCTime when present, else Date at midnight
    assert [r["played_at"] for r in got] == [
        dt.datetime(2024, 1, 2, 10, 20, 30),
        dt.datetime(2024, 1, 3, 0, 0, 1),
        dt.datetime(2023, 12, 31),
    ]
    first = got[0]
    assert first["game_ordinal"] == 1 and first["event"] == "Rated Blitz game"
    assert first["site"] == "https://lichess.org/abcd1234" and first["time_control"] == "180+0"
    assert (first["white_elo"], first["black_elo"]) == (1500, None)  # '?' is an unknown rating, not a rejection
    assert (first["date"], first["utc_date"], first["utc_time"], first["result"]) == (
        "2024.01.02",
        "2024.01.02",
        "10:20:30",
        "1-0",
    )
    assert first["file"] == path and first["league"] is None
    types = {name: kind for name, kind, *_ in con.sql(f"DESCRIBE SELECT * FROM read_pgn('{path}')").fetchall()}
    assert con.sql(f"SELECT * FROM read_pgn('{path}')").columns[:7] == MATCH_COLUMNS
    assert (types["played_at"], types["score_a"], types["game_ordinal"], types["white_elo"]) == (
        "TIMESTAMP",
        "DOUBLE",
        "BIGINT",
        "INTEGER",
    )


def test_pgn_league_from_a_tag(con, tmp_path):
    path = write(tmp_path / "g.pgn", pgn_game() + pgn_game(extra=[("Variant", "Chess960")]))
    got = rows(con, f"SELECT league FROM read_pgn('{path}', league := 'Variant') ORDER BY game_ordinal")
    assert got == [{"league": None}, {"league": "Chess960"}]
    got = rows(con, f"SELECT DISTINCT league FROM read_pgn('{path}', league := 'Event')")
    assert got == [{"league": "Rated Blitz game"}]


def test_pgn_text_quirks_are_read(con, tmp_path):
    """Escaped quotes and backslashes in values, a byte order mark, CRLF line ends, trailing blanks, long
    movetext wrapped over several lines, '%' escape lines and Unicode names."""
    game = pgn_game(white='Ann \\"The Rook\\" Smith', black="Łukasz ☃\\\\x", moves="1. e4 e5\n2. Nf3 Nc6\n3. Bb5 1-0")
    text = "\ufeff" + game.replace('[Event "Rated Blitz game"]', '[Event "Rated Blitz game"]  ')
    text += "% an escape line\n" + pgn_game("carol", "dave")
    path = tmp_path / "quirks.pgn"
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    got = pgn_rows(con, path)
    assert [(r["player_a"], r["player_b"], r["rejected_reason"]) for r in got] == [
        ('Ann "The Rook" Smith', "Łukasz ☃\\x", None),
        ("carol", "dave", None),
    ]
    assert got[0]["event"] == "Rated Blitz game"


def test_pgn_zst_reads_like_the_plain_file(con, tmp_path):
    text = pgn_game() + pgn_game("carol", "dave", "*") + pgn_game("erin", "frank", "1/2-1/2")
    plain = write(tmp_path / "games.pgn", text)
    compressed = str(tmp_path / "games.pgn.zst")
    # DuckDB writes the zstd file: the lines in order, unquoted, one column
    con.execute(
        f"COPY (SELECT line FROM read_csv('{plain}', columns := {{'line': 'VARCHAR'}}, delim := chr(1), quote := '', "
        "escape := '', header := false, auto_detect := false)) "
        f"TO '{compressed}' (FORMAT csv, HEADER false, QUOTE '', DELIMITER chr(1), COMPRESSION zstd)"
    )
    with open(compressed, "rb") as handle:
        assert handle.read(4) == b"\x28\xb5\x2f\xfd"  # the zstd magic number: really compressed
    drop = ["match_id", "file"]
    want = [{k: v for k, v in r.items() if k not in drop} for r in pgn_rows(con, plain)]
    got = pgn_rows(con, compressed)
    assert [{k: v for k, v in r.items() if k not in drop} for r in got] == want
    assert [r["match_id"] for r in got] == [f"games.pgn.zst#{i:010d}" for i in (1, 2, 3)]
    assert [r["rejected_reason"] for r in got] == [None, "unfinished", None]


BAD_GAMES = {
    "unfinished": pgn_game(result="*"),
    "missing_white": pgn_game(white=None),
    "missing_white/question_mark": pgn_game(white="?"),
    "missing_white/blank": pgn_game(white=" "),
    "missing_black": pgn_game(black=None),
    "self_match": pgn_game(black="alice"),
    "missing_result": pgn_game(result=None, moves="1. e4"),
    "invalid_result": pgn_game(result="2-0"),
    "missing_date": pgn_game(date=None, utc=None),
    "incomplete_date": pgn_game(date="2024.??.??", utc=None),
    "incomplete_date/utc": pgn_game(utc=("2024.01.??", "10:00:00")),
    "invalid_date": pgn_game(date="2024.02.30", utc=None),
    "invalid_date/time": pgn_game(utc=("2024.01.02", "25:61:00")),
    "malformed_tag_line": pgn_game().replace('[White "alice"]', '[White "alice]'),
    "malformed_tag_line/no_value": pgn_game().replace('[White "alice"]', "[White]"),
    # a game with no movetext runs into the next one: two games' tags in one section
    "duplicate_tag": pgn_game().split("\n\n")[0] + "\n" + pgn_game("x", "y"),
    # moves after a game's moves, without tags of their own: a game missing its tag section
    "movetext_without_tags": pgn_game() + "1. d4 d5 0-1\n\n",
}


@pytest.mark.parametrize("case", BAD_GAMES)
def test_each_malformed_game_is_rejected_with_its_reason(con, tmp_path, case):
    """Between two good games, each malformed game is one row with its reason; the neighbours are intact."""
    path = write(tmp_path / "bad.pgn", pgn_game("g1", "h1") + BAD_GAMES[case] + pgn_game("g2", "h2"))
    got = pgn_rows(con, path)
    reason = case.split("/")[0]
    assert reason in PGN_REASONS
    good = [(r["player_a"], r["player_b"]) for r in got if r["rejected_reason"] is None]
    assert [r["rejected_reason"] for r in got] == [None, reason, None]
    assert good == [("g1", "h1"), ("g2", "h2")]
    assert [r["game_ordinal"] for r in got] == [1, 2, 3]


def test_text_before_the_first_game_is_a_rejected_row(con, tmp_path):
    path = write(tmp_path / "junk.pgn", "some header text\nmore\n\n" + pgn_game())
    got = pgn_rows(con, path)
    assert [(r["game_ordinal"], r["rejected_reason"]) for r in got] == [(0, "text_before_first_game"), (1, None)]
    # blank lines before the first game are nothing to report
    path = write(tmp_path / "blank.pgn", "\n\n" + pgn_game())
    assert [r["rejected_reason"] for r in pgn_rows(con, path)] == [None]


def test_pgn_glob_numbers_games_across_files_with_unique_ids(con, tmp_path):
    write(tmp_path / "a.pgn", pgn_game() + pgn_game("c", "d"))
    write(tmp_path / "b.pgn", pgn_game("e", "f"))
    got = rows(con, f"SELECT match_id, player_a FROM read_pgn('{tmp_path}/*.pgn') ORDER BY match_id")
    assert got == [
        {"match_id": "a.pgn#0000000001", "player_a": "alice"},
        {"match_id": "a.pgn#0000000002", "player_a": "c"},
        {"match_id": "b.pgn#0000000003", "player_a": "e"},
    ]


def test_readers_refuse_to_run_without_insertion_order(tmp_path):
    """Games and record ordinals come from file order: without it the readers fail instead of guessing."""
    con = duckrate.register(duckdb.connect())
    pgn = write(tmp_path / "g.pgn", pgn_game())
    battles = write(tmp_path / "b.jsonl", json.dumps(battle()) + "\n")
    contests = write(tmp_path / "c.json", json.dumps(contest("x")))
    con.execute("SET preserve_insertion_order = false")
    for sql in (
        f"SELECT * FROM read_pgn('{pgn}')",
        f"SELECT * FROM read_arena_battles('{battles}')",
        f"SELECT * FROM read_contest_json('{contests}')",
    ):
        with pytest.raises(duckdb.Error, match="needs SET preserve_insertion_order = true"):
            con.sql(sql).fetchall()


def test_pgn_that_is_not_text_fails_naming_the_file(con, tmp_path):
    path = tmp_path / "latin1.pgn"
    path.write_bytes(pgn_game(white="Jos\xe9").encode("latin-1"))
    with pytest.raises(duckdb.Error, match="(?i)unicode|utf"):
        con.sql(f"SELECT * FROM read_pgn('{path}')").fetchall()
    # told the encoding, it reads
    got = rows(con, f"SELECT player_a FROM read_pgn('{path}', encoding := 'latin-1')")
    assert got == [{"player_a": "José"}]


def test_pgn_good_games_feed_elo_replay(con, tmp_path):
    games = [pgn_game(f"p{i % 5}", f"p{(i + 1) % 5}", ("1-0", "0-1", "1/2-1/2")[i % 3]) for i in range(30)]
    games[7] = pgn_game(result="*")
    path = write(tmp_path / "games.pgn", "".join(games))
    con.execute(f"CREATE TABLE matches AS SELECT * FROM read_pgn('{path}') WHERE rejected_reason IS NULL")
    replay = rows(con, "SELECT * FROM elo_replay('matches') ORDER BY seq")
    assert len(replay) == 29
    assert {r["match_id"] for r in replay} == {f"games.pgn#{i:010d}" for i in range(1, 31) if i != 8}


# -------------------------------------------------------------------------------------------- read_arena_battles


def battle(model_a="gpt-4", model_b="claude-2", winner="model_a", tstamp=1_700_000_000.5, **extra):
    record = {"model_a": model_a, "model_b": model_b, "winner": winner, "tstamp": tstamp, **extra}
    return {key: value for key, value in record.items() if value is not None}


GOOD_BATTLES = [
    battle(question_id="q-1", judge="arena_user_1", language="English", turn=1, anony=True),
    battle(winner="model_b", tstamp=1_700_000_100, language="German"),
    battle(winner="tie", tstamp=1_700_000_200),
    battle(winner="tie (bothbad)", tstamp=1_700_000_300, language="English"),
]


def write_battles(path, records, array: bool):
    if array:
        return write(path, json.dumps(records, indent=1))
    return write(path, "".join(json.dumps(record) + "\n" for record in records))


@pytest.mark.parametrize("array", [False, True], ids=["jsonl", "json_array"])
def test_arena_battles_map_onto_the_match_columns(con, tmp_path, array):
    path = write_battles(tmp_path / ("b.json" if array else "b.jsonl"), GOOD_BATTLES, array)
    got = rows(con, f"SELECT * FROM read_arena_battles('{path}') ORDER BY record_ordinal")
    assert con.sql(f"SELECT * FROM read_arena_battles('{path}')").columns[:7] == MATCH_COLUMNS
    assert [r["score_a"] for r in got] == [1.0, 0.0, 0.5, 0.5]  # ties and bothbad ties are draws
    assert [r["rejected_reason"] for r in got] == [None] * 4
    name = "b.json" if array else "b.jsonl"
    assert [r["match_id"] for r in got] == ["q-1"] + [f"{name}#{i:010d}" for i in (2, 3, 4)]
    assert got[0]["played_at"] == dt.datetime(2023, 11, 14, 22, 13, 20, 500000)
    assert got[1]["played_at"] == dt.datetime(2023, 11, 14, 22, 15, 0)
    assert (got[0]["player_a"], got[0]["player_b"], got[0]["league"]) == ("gpt-4", "claude-2", None)
    first = got[0]
    assert (first["judge"], first["language"], first["turn"], first["anony"], first["tstamp"]) == (
        "arena_user_1",
        "English",
        1,
        True,
        1_700_000_000.5,
    )
    assert (first["question_id"], first["winner"], first["record_ordinal"], first["file"]) == (
        "q-1",
        "model_a",
        1,
        path,
    )
    leagues = rows(
        con, f"SELECT league FROM read_arena_battles('{path}', league := 'language') ORDER BY record_ordinal"
    )
    assert [r["league"] for r in leagues] == ["English", "German", None, "English"]


BAD_BATTLES = {
    "not_an_object": [1, 2],
    "not_an_object/string": "model_a",
    "missing_model_a": battle(model_a=None),
    "missing_model_a/blank": battle(model_a=""),
    "missing_model_b": battle(model_b=None),
    "self_match": battle(model_b="gpt-4"),
    "missing_winner": battle(winner=None),
    "unknown_winner": battle(winner="draw"),
    "unknown_winner/case": battle(winner="Model_A"),
    "missing_or_invalid_tstamp": battle(tstamp=None),
    "missing_or_invalid_tstamp/text": battle(tstamp="yesterday"),
}


@pytest.mark.parametrize("array", [False, True], ids=["jsonl", "json_array"])
@pytest.mark.parametrize("case", BAD_BATTLES)
def test_each_malformed_battle_is_rejected_with_its_reason(con, tmp_path, case, array):
    records = [battle(model_a="a1"), BAD_BATTLES[case], battle(model_a="a3")]
    path = write_battles(tmp_path / "b.json", records, array)
    got = rows(con, f"SELECT * FROM read_arena_battles('{path}') ORDER BY record_ordinal")
    reason = case.split("/")[0]
    assert reason in ARENA_REASONS
    assert [(r["record_ordinal"], r["rejected_reason"]) for r in got] == [(1, None), (2, reason), (3, None)]
    assert [r["player_a"] for r in got if r["rejected_reason"] is None] == ["a1", "a3"]


def test_arena_syntax_error_fails_naming_the_file(con, tmp_path):
    path = write(tmp_path / "broken.jsonl", json.dumps(battle()) + '\n{"model_a": "x", oops}\n')
    with pytest.raises(duckdb.Error, match="broken.jsonl"):
        con.sql(f"SELECT * FROM read_arena_battles('{path}')").fetchall()


def test_arena_good_battles_feed_elo_replay(con, tmp_path):
    models = ["gpt-4", "claude-2", "llama-2", "vicuna"]
    winners = ["model_a", "model_b", "tie", "tie (bothbad)", "bogus"]
    records = [
        battle(models[i % 4], models[(i + 1) % 4], winners[i % 5], 1_700_000_000 + i, language="English")
        for i in range(40)
    ]
    path = write_battles(tmp_path / "battles.json", records, array=True)
    con.execute(
        f"CREATE TABLE matches AS SELECT * FROM read_arena_battles('{path}', league := 'language') "
        "WHERE rejected_reason IS NULL"
    )
    replay = rows(con, "SELECT * FROM elo_replay('matches') ORDER BY seq")
    assert len(replay) == 32  # every fifth has an unknown winner
    assert {r["league"] for r in replay} == {"English"}
    rejected = rows(con, f"SELECT count(*) AS n FROM read_arena_battles('{path}') WHERE rejected_reason IS NOT NULL")
    assert rejected == [{"n": 8}]


# --------------------------------------------------------------------------------------------- read_contest_json


def contest(name, time_seconds=1_266_580_800, standings=None, **extra):
    record = {"name": name, "time_seconds": time_seconds, "standings": standings, **extra}
    if standings is None:
        record["standings"] = [["tourist", 0, 0], ["petr", 1, 2], ["egor", 1, 2], ["rng_58", 3, 3]]
    return {key: value for key, value in record.items() if value is not None or key == "standings"}


def test_contest_files_map_onto_the_contest_columns(con, tmp_path):
    (tmp_path / "contests").mkdir()
    write(tmp_path / "contests" / "0.json", json.dumps(contest("Round 1")))
    write(tmp_path / "contests" / "1.json", json.dumps(contest(None, 1_266_667_200, [["petr", 0, 1], ["egor", 0, 1]])))
    write(tmp_path / "contests" / "2.json", json.dumps(contest("Round 3", 1_266_753_600, [["a", 0, 0]], weight=0.5)))
    got = rows(con, f"SELECT * FROM read_contest_json('{tmp_path}/contests/*.json') ORDER BY file, standing_ordinal")
    assert con.sql(f"SELECT * FROM read_contest_json('{tmp_path}/contests/*.json')").columns[:6] == [
        "contest_id",
        "played_at",
        "player",
        "rank",
        "weight",
        "rejected_reason",
    ]
    assert [(r["contest_id"], r["player"], r["rank"]) for r in got] == [
        ("Round 1", "tourist", 1),
        ("Round 1", "petr", 2),  # tied places 1..2 (0-based): both rank lo + 1 = 2
        ("Round 1", "egor", 2),
        ("Round 1", "rng_58", 4),
        ("1", "petr", 1),  # no name: the file's name
        ("1", "egor", 1),
        ("Round 3", "a", 1),
    ]
    assert {r["rejected_reason"] for r in got} == {None}
    assert got[0]["played_at"] == dt.datetime(2010, 2, 19, 12, 0)
    assert [r["weight"] for r in got][-2:] == [None, 0.5]
    assert (got[1]["place_lo"], got[1]["place_hi"], got[1]["standing_ordinal"], got[1]["time_seconds"]) == (
        1,
        2,
        2,
        1_266_580_800,
    )
    assert got[1]["contest_name"] == "Round 1" and got[4]["contest_name"] is None


BAD_CONTESTS = {
    "not_an_object": [["a", 0, 0]],
    "missing_standings": {"name": "c", "time_seconds": 1},
    "missing_standings/empty": contest("c", standings=[]),
    "missing_standings/not_a_list": contest("c", standings={"a": 0}),
    "missing_or_invalid_time_seconds": contest("c", time_seconds=None),
    "missing_or_invalid_time_seconds/text": contest("c", time_seconds="monday"),
    "invalid_weight": contest("c", weight=0),
    "invalid_weight/text": contest("c", weight="heavy"),
}
BAD_STANDINGS = {
    "malformed_standing": ["a", 0],
    "malformed_standing/not_a_list": {"handle": "a"},
    "missing_player": [None, 0, 0],
    "missing_player/number": [7, 0, 0],
    "missing_player/blank": ["", 0, 0],
    "invalid_place": ["a", -1, 0],
    "invalid_place/fraction": ["a", 0.5, 1],
    "invalid_place/hi_below_lo": ["a", 2, 1],
    "invalid_place/text": ["a", "0", "0"],
}


@pytest.mark.parametrize("case", BAD_CONTESTS)
def test_each_malformed_contest_is_rejected_with_its_reason(con, tmp_path, case):
    write(tmp_path / "a.json", json.dumps(contest("good")))
    write(tmp_path / "b.json", json.dumps(BAD_CONTESTS[case]))
    got = rows(con, f"SELECT * FROM read_contest_json('{tmp_path}/*.json') ORDER BY file, standing_ordinal")
    reason = case.split("/")[0]
    assert reason in CONTEST_REASONS
    assert [r["rejected_reason"] for r in got if r["file"].endswith("a.json")] == [None] * 4
    bad = [r for r in got if r["file"].endswith("b.json")]
    assert bad and {r["rejected_reason"] for r in bad} == {reason}


@pytest.mark.parametrize("case", BAD_STANDINGS)
def test_each_malformed_standing_is_rejected_with_its_reason(con, tmp_path, case):
    standings = [["tourist", 0, 0], BAD_STANDINGS[case], ["petr", 2, 2]]
    path = write(tmp_path / "c.json", json.dumps(contest("c", standings=standings)))
    got = rows(con, f"SELECT * FROM read_contest_json('{path}') ORDER BY standing_ordinal")
    assert [(r["standing_ordinal"], r["rejected_reason"]) for r in got] == [
        (1, None),
        (2, case.split("/")[0]),
        (3, None),
    ]


def test_contest_syntax_error_fails_naming_the_file(con, tmp_path):
    path = write(tmp_path / "broken.json", '{"name": "x", "standings": [["a", 0, 0],')
    with pytest.raises(duckdb.Error, match="broken.json"):
        con.sql(f"SELECT * FROM read_contest_json('{path}')").fetchall()


def test_contest_results_feed_elo_mmr_replay(con, tmp_path):
    players = [f"p{i}" for i in range(12)]
    for c in range(6):
        order = players[c:] + players[:c]
        standings = [[name, i - i % 2, i - i % 2 + 1] for i, name in enumerate(order)]  # pairs tie
        write(tmp_path / f"{c}.json", json.dumps(contest(f"Round {c}", 1_266_580_800 + 86_400 * c, standings)))
    con.execute(
        f"CREATE TABLE contest_results AS SELECT * FROM read_contest_json('{tmp_path}/*.json') "
        "WHERE rejected_reason IS NULL"
    )
    replay = rows(con, "SELECT * FROM elo_mmr_replay('contest_results')")
    assert len(replay) == 72
    assert {r["contest_id"] for r in replay} == {f"Round {c}" for c in range(6)}


def test_a_contest_bigger_than_maximum_object_size_fails_and_the_parameter_raises_it(con, tmp_path):
    """DuckDB's JSON reader holds one object in a buffer: past 16 MiB (about 500k standings) the reader fails
    naming the file and the size, and maximum_object_size := ... reads it."""
    standings = [[f"player_{i}", i, i] for i in range(600_000)]
    path = write(tmp_path / "huge.json", json.dumps(contest("huge", standings=standings)))
    with pytest.raises(duckdb.Error, match='"maximum_object_size" of 16777216 bytes exceeded .*huge.json'):
        con.sql(f"SELECT count(*) FROM read_contest_json('{path}')").fetchall()
    got = con.sql(f"SELECT count(*) FROM read_contest_json('{path}', maximum_object_size := 64000000)").fetchall()
    assert got == [(600_000,)]


# ------------------------------------------------------------------------------------------------ read_team_json


def team_match(match_id="m1", played_at="2024-05-01T18:00:00", teams=None, **extra):
    if teams is None:
        teams = [
            {"team": "red", "score": 3, "players": ["ann", {"player": "bob", "weight": 0.5}]},
            {"team": "blue", "score": 1, "players": ["cid", {"player": "dan"}]},
        ]
    return {"match_id": match_id, "played_at": played_at, "teams": teams, **extra}


@pytest.mark.parametrize("array", [False, True])
def test_team_matches_map_onto_the_team_columns(con, tmp_path, array):
    records = [
        team_match(league="eu"),
        team_match(7, 1_714_600_000, [{"rank": 1, "players": ["ann"]}, {"rank": 2, "players": ["bob"]}]),
    ]
    text = json.dumps(records) if array else "\n".join(json.dumps(r) for r in records)
    path = write(tmp_path / "teams.json", text)
    relation = con.sql(f"SELECT * FROM read_team_json('{path}')")
    assert relation.columns[:9] == [
        "match_id",
        "played_at",
        "league",
        "team",
        "player",
        "rank",
        "score",
        "weight",
        "rejected_reason",
    ]
    got = rows(con, f"SELECT * FROM read_team_json('{path}') ORDER BY match_ordinal, team_ordinal, player_ordinal")
    assert [(r["match_id"], r["team"], r["player"], r["rank"], r["score"], r["weight"]) for r in got] == [
        ("m1", "red", "ann", None, 3.0, None),
        ("m1", "red", "bob", None, 3.0, 0.5),
        ("m1", "blue", "cid", None, 1.0, None),
        ("m1", "blue", "dan", None, 1.0, None),
        ("7", "1", "ann", 1, None, None),  # no team name: the team's place in the list
        ("7", "2", "bob", 2, None, None),
    ]
    assert {r["rejected_reason"] for r in got} == {None}
    assert got[0]["played_at"] == dt.datetime(2024, 5, 1, 18, 0) and got[0]["league"] == "eu"
    assert got[4]["played_at"] == dt.datetime(2024, 5, 1, 21, 46, 40) and got[4]["league"] is None


BAD_TEAM_MATCHES = {
    "not_an_object": [1, 2],
    "missing_or_invalid_played_at": team_match(played_at="yesterday"),
    "missing_or_invalid_played_at/absent": team_match(played_at=None),
    "missing_teams": team_match(teams=[]),
    "missing_teams/not_a_list": team_match(teams={"red": ["ann"]}),
    "fewer_than_two_teams": team_match(teams=[{"rank": 1, "players": ["ann", "bob"]}]),
}
BAD_TEAMS = {
    "malformed_team": "a team",
    "malformed_team/no_players": {"rank": 2, "players": []},
    "missing_player": {"rank": 2, "players": [""]},
    "missing_player/number": {"rank": 2, "players": [7]},
    "missing_rank_and_score": {"players": ["eve"]},
    "invalid_rank": {"rank": 0, "players": ["eve"]},
    "invalid_rank/fraction": {"rank": 1.5, "players": ["eve"]},
    "invalid_score": {"score": "lots", "players": ["eve"]},
    "invalid_weight": {"rank": 2, "players": [{"player": "eve", "weight": 1.5}]},
    "invalid_weight/zero": {"rank": 2, "players": [{"player": "eve", "weight": 0}]},
}


@pytest.mark.parametrize("case", BAD_TEAM_MATCHES)
def test_each_malformed_team_match_is_rejected_with_its_reason(con, tmp_path, case):
    write(tmp_path / "a.json", json.dumps(team_match()))
    record = dict(BAD_TEAM_MATCHES[case]) if isinstance(BAD_TEAM_MATCHES[case], dict) else BAD_TEAM_MATCHES[case]
    if isinstance(record, dict) and record.get("played_at", "") is None:
        del record["played_at"]
    write(tmp_path / "b.json", json.dumps(record))
    got = rows(con, f"SELECT * FROM read_team_json('{tmp_path}/*.json')")
    reason = case.split("/")[0]
    assert reason in TEAM_REASONS
    assert [r["rejected_reason"] for r in got if r["file"].endswith("a.json")] == [None] * 4
    bad = [r for r in got if r["file"].endswith("b.json")]
    assert bad and {r["rejected_reason"] for r in bad} == {reason}


@pytest.mark.parametrize("case", BAD_TEAMS)
def test_each_malformed_team_is_rejected_with_its_reason(con, tmp_path, case):
    teams = [{"rank": 1, "players": ["ann", "bob"]}, BAD_TEAMS[case]]
    path = write(tmp_path / "c.json", json.dumps(team_match(teams=teams)))
    got = rows(con, f"SELECT * FROM read_team_json('{path}') ORDER BY team_ordinal, player_ordinal")
    assert [r["rejected_reason"] for r in got] == [None, None, case.split("/")[0]]


def test_team_syntax_error_fails_naming_the_file(con, tmp_path):
    path = write(tmp_path / "broken.json", '{"match_id": "x", "teams": [')
    with pytest.raises(duckdb.Error, match="broken.json"):
        con.sql(f"SELECT * FROM read_team_json('{path}')").fetchall()


def test_team_matches_feed_the_team_replays(con, tmp_path):
    players = [f"p{i}" for i in range(8)]
    lines = []
    for m in range(10):
        order = players[m % 8 :] + players[: m % 8]
        teams = [{"team": "a", "score": m % 3, "players": order[:4]}, {"team": "b", "score": 1, "players": order[4:]}]
        lines.append(json.dumps(team_match(f"m{m:02d}", 1_714_600_000 + 3600 * m, teams)))
    path = write(tmp_path / "season.jsonl", "\n".join(lines))
    con.execute(f"CREATE TABLE team_results AS SELECT * FROM read_team_json('{path}') WHERE rejected_reason IS NULL")
    replay = rows(con, "SELECT * FROM plackett_luce_replay('team_results')")
    assert len(replay) == 80
