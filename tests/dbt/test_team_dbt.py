"""Team results through dbt: a real project whose raw table holds good matches and one bad row (or match) per
rejection reason. ``dbt build`` stages the good rows, rejects every bad one with its reason, and builds the
replay of every registered team system (``replay_<system>``, materialization ``duckrate_replay`` keyed by
``match_id``), each equal to its SQL macro over the staged rows, bit for bit, and ttt_team_ratings, the
``ttt_team_fit`` macro over them. New matches continue the replays
from their saved state and leave exactly what a full replay gives (rows and state); a late match rebuilds. The
builds after the first replay in chunks of whole matches.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers.dbt_projects import REPO, run_dbt
from helpers.systems import incremental_preset, team_systems
from helpers.team_histories import random_team_history
from polars.testing import assert_frame_equal

from duckrate.sql.registry import register
from duckrate.systems.event_state import STATE_ORDER

SYSTEMS = [system.name for system in team_systems()]
PARAMS = {system.name: incremental_preset(system).kwargs() for system in team_systems()}
ROW_KEY = ["league", "match_id", "player"]
CHUNK = 60
PROJECT = """
name: team_results_tests
version: "0.1.0"
config-version: 2
profile: team_results_tests
vars:
  duckrate_matches_table: raw_matches
  duckrate_teams_table: raw_teams
  duckrate_systems: []
  duckrate_params: {params}
"""
PROFILE = """
team_results_tests:
  target: test
  outputs:
    test:
      type: duckdb
      path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"
      threads: 4
      plugins:
        - module: duckrate.plugin
"""
RAW_SCHEMA = {  # as warehouses often receive it: text that staging parses and rejects; the team an integer key
    "match_id": pl.Int64,
    "played_at": pl.Utf8,
    "team": pl.Int64,
    "player": pl.Utf8,
    "rank": pl.Utf8,
    "score": pl.Utf8,
    "weight": pl.Utf8,
    "league": pl.Utf8,
}


def at(hours: int) -> str:
    return f"2024-01-{1 + hours // 24:02d} {hours % 24:02d}:00:00"


def good_history(n_matches: int) -> pl.DataFrame:
    """Random matches of 2-5 teams with scores and the ranks they give, in three leagues (one NULL), some
    partial play; played_at one hour apart, in match_id order."""
    history = random_team_history(n_matches, 7, n_players=40, teams=(2, 5), size=(1, 4), scores=True)
    return history.select(
        "match_id",
        pl.col("played_at").map_elements(at, return_dtype=pl.Utf8),
        "team",
        "player",
        pl.col("score").rank("dense", descending=True).over("match_id").cast(pl.Int64).cast(pl.Utf8).alias("rank"),
        pl.col("score").cast(pl.Utf8),
        pl.col("weight").cast(pl.Utf8),
        pl.col("match_id").map_elements(lambda m: [None, "east", "west"][m % 3], return_dtype=pl.Utf8).alias("league"),
    )


def row(match_id, played_at, team, player, rank, score, weight=None) -> dict:
    return dict(zip(RAW_SCHEMA, (match_id, played_at, team, player, rank, score, weight, None)))


def bad_rows(good: pl.DataFrame) -> tuple[pl.DataFrame, list[tuple]]:
    """One bad row or match per reason, and the rejected rows expected: (match_id, player, reason)."""
    first = good.filter(pl.col("match_id") == 3).row(0, named=True)  # a good match (league NULL) gets bad rows
    m, t = first["match_id"], first["played_at"]
    rows = [
        (row(None, t, 9, "nobody", "1", "1.0"), "missing_match_id"),
        (row(m, t, None, "teamless", "1", "1.0"), "missing_team"),
        (row(m, t, 9, "   ", "1", "1.0"), "missing_player"),
        (row(m, "not a date", 9, "timeless", "1", "1.0"), "missing_or_invalid_played_at"),
        (row(m, t, 9, "half_rank", "1.5", None), "missing_or_invalid_rank"),
        (row(m, t, 9, "zero_rank", "0", None), "missing_or_invalid_rank"),
        (row(m, t, 9, "nan_score", None, "nan"), "invalid_score"),
        (row(m, t, 9, "no_outcome", None, None), "missing_rank_and_score"),
        (row(m, t, 9, "too_much", "1", "1.0", "1.5"), "invalid_weight"),
        (row(m, t, 9, "no_share", "1", "1.0", "0"), "invalid_weight"),
        (good.filter(pl.col("match_id") == 4).row(0, named=True), "duplicate_row"),
        # whole matches
        *(
            (row(9001, at(1), team, p, r, s), "player_twice_in_match")
            for team, p, r, s in [
                (1, "ann", "1", "9"),
                (1, "bob", "1", "9"),
                (2, "ann", "2", "3"),
                (2, "cid", "2", "3"),
            ]
        ),
        *(
            (row(9002, at(2) if p != "bob" else at(3), team, p, r, None), "conflicting_played_at")
            for team, p, r in [(1, "ann", "1"), (2, "bob", "2")]
        ),
        *(
            (row(9003, at(3), team, p, r, None), "conflicting_team_rank")
            for team, p, r in [(1, "ann", "1"), (1, "bob", "2"), (2, "cid", "3")]
        ),
        *(
            (row(9004, at(4), team, p, r, s), "mixed_rank_and_score")
            for team, p, r, s in [(1, "ann", "1", None), (2, "bob", None, "5.0")]
        ),
        *(
            (row(9005, at(5), team, p, r, s), "rank_score_disagree")
            for team, p, r, s in [(1, "ann", "1", "1.0"), (2, "bob", "2", "5.0")]
        ),
        *((row(9006, at(6), 1, p, "1", "1.0"), "single_team_match") for p in ["ann", "bob"]),
        # one team left after its other team's row is rejected
        (row(9007, at(7), 1, "solo", "1", "2.0"), "single_team_match"),
        (row(9007, at(7), 2, "unshared", "2", "1.0", "-1"), "invalid_weight"),
    ]
    frame = pl.DataFrame([r for r, _ in rows], schema=RAW_SCHEMA, orient="row")
    return frame, [(r["match_id"], r["player"], reason) for r, reason in rows]


def sql_literal(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def call(system: str, kind: str, table: str) -> str:
    arguments = "".join(f", {name} := {sql_literal(value)}" for name, value in PARAMS[system].items())
    return f"{system}_{kind}('{table}'{arguments})"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("team_results")
    (root / "dbt_project.yml").write_text(PROJECT.format(params=json.dumps(PARAMS)))
    (root / "profiles.yml").write_text(PROFILE)
    (root / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(root, "deps")
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:  # the matches models parse against it
        con.execute(
            "CREATE TABLE raw_matches AS SELECT 1 AS match_id, 1 AS played_at, 'a' AS player_a, "
            "'b' AS player_b, 1.0 AS score_a"
        )
    return root


def load(project: Path, raw: pl.DataFrame) -> None:
    with duckdb.connect(str(project / "warehouse.duckdb")) as con:
        con.register("incoming", raw)
        con.execute("CREATE OR REPLACE TABLE raw_teams AS SELECT * FROM incoming")


LOGS: list[str] = []  # what each build printed


def builds(project: Path, command: str, systems: list[str] = SYSTEMS) -> dict[str, tuple]:
    """``dbt <command>`` of the team models (staging and the replays of ``systems``); each replay's (mode,
    reason). Builds but the first replay in chunks of at most ``CHUNK`` rows."""
    selected = ["stg_team_results_checked+"] if systems == SYSTEMS else [f"+replay_{name}" for name in systems]
    chunked = [] if command == "build" else ["--vars", f"{{duckrate_chunk_size: {CHUNK}}}"]
    log = run_dbt(project, command, "--select", *selected, *chunked).stdout
    assert "Completed successfully" in log, log[-4000:]
    LOGS.append(log)
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        return {name: con.sql(f"SELECT mode, reason FROM replay_{name}__build").fetchall()[0] for name in systems}


def check_equals_full_replay(project: Path, systems: list[str] = SYSTEMS) -> None:
    """Each replay table and its saved state are the system's SQL macros over the staged rows."""
    con = duckdb.connect()
    register(con)
    con.execute(f"ATTACH '{project / 'warehouse.duckdb'}' AS warehouse (READ_ONLY)")
    staged = con.sql("SELECT * FROM warehouse.main.stg_team_results").pl()
    con.register("staged_frame", staged)
    con.execute("CREATE TABLE staged AS SELECT * FROM staged_frame")
    for name in systems:
        actual = con.sql(f"SELECT * FROM warehouse.main.replay_{name}").pl().sort(ROW_KEY, nulls_last=True)
        expected = con.sql(f"SELECT * FROM {call(name, 'replay', 'staged')}").pl().sort(ROW_KEY, nulls_last=True)
        assert actual.height == con.sql("SELECT count(*) FROM staged").fetchall()[0][0]
        assert_frame_equal(actual, expected, check_exact=True)
        state = con.sql(f"SELECT * FROM warehouse.main.replay_{name}__state").pl().sort(STATE_ORDER, nulls_last=True)
        expected_state = con.sql(f"SELECT * FROM {call(name, 'state', 'staged')}").pl()
        assert_frame_equal(state, expected_state.sort(STATE_ORDER, nulls_last=True), check_exact=True)
    con.close()


def check_ttt_team_ratings(project: Path) -> None:
    """ttt_team_ratings is the ttt_team_fit macro over the staged rows, with p_draw the share of matches in
    which two teams share a place (what the model's parameters default to)."""
    con = duckdb.connect()
    register(con)
    con.execute(f"ATTACH '{project / 'warehouse.duckdb'}' AS warehouse (READ_ONLY)")
    con.execute("CREATE TABLE staged AS SELECT * FROM warehouse.main.stg_team_results")
    share = con.sql(
        "SELECT avg((teams > places)::int) FROM (SELECT match_id, count(DISTINCT team) AS teams, "
        "count(DISTINCT coalesce(rank::double, -score::double)) AS places FROM staged GROUP BY match_id)"
    ).fetchall()[0][0]
    assert 0.0 < share < 0.99  # the history has ties
    order = ["league", "player", "step"]
    expected = con.sql(f"SELECT * FROM ttt_team_fit('staged', p_draw := {share!r})").pl().sort(order, nulls_last=True)
    actual = con.sql("SELECT * FROM warehouse.main.ttt_team_ratings").pl().sort(order, nulls_last=True)
    assert actual.height > 0
    assert_frame_equal(actual, expected, check_exact=True)
    con.close()


def test_staging_rejections_and_incremental_replays(project):
    good = good_history(40)
    bad, expected_rejections = bad_rows(good)
    first = good.filter(pl.col("match_id") <= 25)
    load(project, pl.concat([first, bad]))
    assert builds(project, "build") == dict.fromkeys(SYSTEMS, ("full", "first build"))

    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        rejected = con.sql("SELECT match_id, player, reason FROM rejected_team_results").fetchall()
        assert sorted(rejected, key=repr) == sorted(expected_rejections, key=repr)
        staged = con.sql("SELECT count(*) FROM stg_team_results").fetchall()[0][0]
        assert staged + len(rejected) == first.height + bad.height
        assert staged == first.height  # every good row staged (the duplicate's original among them)
        types = dict(con.sql("SELECT column_name, column_type FROM (DESCRIBE stg_team_results)").fetchall())
        assert (types["played_at"], types["team"], types["rank"], types["score"]) == (
            "TIMESTAMP",
            "BIGINT",
            "BIGINT",
            "DOUBLE",
        )
    check_equals_full_replay(project)
    check_ttt_team_ratings(project)

    load(project, pl.concat([good, bad]))  # new matches, after the saved state: only they are replayed
    assert builds(project, "run") == dict.fromkeys(SYSTEMS, ("incremental", None))
    check_equals_full_replay(project)
    check_ttt_team_ratings(project)  # refitted over every staged match

    late = good.filter(pl.col("match_id") == 40).with_columns(
        match_id=pl.lit(41, dtype=pl.Int64), played_at=pl.lit(at(2))
    )
    load(project, pl.concat([good, late, bad]))  # a new match dated before the saved state
    for mode, reason in builds(project, "run").values():
        assert mode == "full" and "match_id 41 arrived late" in reason, reason
    chunks = re.findall(r"duckrate: replay_\w+ replays \d+ rows in (\d+) chunk", LOGS[-1])
    assert len(chunks) == len(SYSTEMS) and min(map(int, chunks)) >= 3  # the whole history, in chunks of matches
    check_equals_full_replay(project)

    # a new match given by ranks only, another by scores only: each is rated as given, incrementally
    by_rank = good.filter(pl.col("match_id") == 39).with_columns(
        match_id=pl.lit(42, pl.Int64), score=pl.lit(None, pl.Utf8)
    )
    by_score = good.filter(pl.col("match_id") == 38).with_columns(
        match_id=pl.lit(43, pl.Int64), rank=pl.lit(None, pl.Utf8)
    )
    new = pl.concat([by_rank, by_score]).with_columns(played_at=pl.lit(at(60)))
    load(project, pl.concat([good, late, new, bad]))
    assert builds(project, "run", SYSTEMS[:1]) == {SYSTEMS[0]: ("incremental", None)}
    check_equals_full_replay(project, systems=SYSTEMS[:1])
