"""Bad raw rows through the dbt staging path (issue 8): a real ``dbt seed`` + ``dbt run`` of the staging
models and two replays over text seeds full of NaN/inf scores, NULLs, unparseable times, fractional
periods and ranks, duplicates and conflicts. Every raw row lands either in ``stg_*`` or in ``rejected_*``
with its reason: counted, queryable, never silently dropped."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from helpers.dbt_projects import REPO, run_dbt

PROJECT = Path(__file__).parent / "bad_input_project"
MODELS = (
    "stg_matches_checked",
    "stg_matches",
    "rejected_matches",
    "replay_elo",
    "stg_contest_results_checked",
    "stg_contest_results",
    "rejected_contest_results",
    "replay_elo_mmr",
)

MATCH_REASONS = {  # match_id (as text, NULL as None) -> reason; None: staged
    "1": None,
    "20": None,
    "23": None,
    "3": "score_out_of_range",
    "4": "score_out_of_range",
    "5": "score_out_of_range",
    "6": "missing_or_invalid_played_at",
    "7": "missing_or_invalid_played_at",
    "8": "missing_or_invalid_played_at",
    "21": "missing_or_invalid_played_at",
    None: "missing_match_id",
    "9": "missing_player_a",
    "10": "missing_player_b",
    "11": "self_match",
    "12": "missing_or_invalid_score",
    "13": "missing_or_invalid_score",
    "14": "invalid_weight",
    "15": "invalid_weight",
    "16": "invalid_weight",
    "17": "invalid_weight",
    "18": "invalid_period",
    "19": "invalid_period",
}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    project = tmp_path_factory.mktemp("bad_input_project")
    shutil.copytree(PROJECT, project, dirs_exist_ok=True)
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(project, "deps")
    run_dbt(project, "seed")
    run_dbt(project, "run", "--select", *MODELS)
    con = duckdb.connect(str(project / "warehouse.duckdb"), read_only=True)
    yield con
    con.close()


def reasons(con, table, key):
    return con.execute(f"SELECT {key}, reason FROM {table} ORDER BY source_row").fetchall()


def test_every_bad_match_row_is_rejected_with_its_reason(warehouse):
    rows = reasons(warehouse, "stg_matches_checked", "raw_row.match_id")
    by_id = {}
    for match_id, reason in rows:
        by_id.setdefault(match_id, []).append(reason)
    assert by_id.pop("22") == ["conflicting_match_id"] * 2  # same id, different score: neither kept
    assert sorted(by_id.pop("2"), key=str) == [None, "duplicate_row"]  # an exact copy: one kept
    assert {key: reasons_[0] for key, reasons_ in by_id.items()} == MATCH_REASONS


def test_nothing_is_silently_dropped(warehouse):
    count = lambda table: warehouse.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    assert count("bad_matches") == count("stg_matches") + count("rejected_matches") == 26
    assert count("bad_contests") == count("stg_contest_results") + count("rejected_contest_results") == 17
    # rejected rows keep the raw columns as they came, beside source_row and reason
    assert warehouse.execute("SELECT score_a FROM rejected_matches WHERE match_id = '3'").fetchall() == [("nan",)]
    # the staged rows replay: one output row per staged row
    assert count("replay_elo") == count("stg_matches") == 4
    assert count("replay_elo_mmr") == count("stg_contest_results")


def test_unicode_and_case_distinct_names_survive_staging(warehouse):
    players = warehouse.execute(
        "SELECT player_a, player_b FROM stg_matches WHERE match_id IN ('20', '23') ORDER BY match_id"
    ).fetchall()
    assert players == [("😀", "ann"), ("ANN", "ann")]


def test_every_bad_contest_row_is_rejected_with_its_reason(warehouse):
    rows = warehouse.execute(
        "SELECT raw_row.contest_id, raw_row.player, raw_row.rank, reason FROM stg_contest_results_checked ORDER BY source_row"
    ).fetchall()
    got = sorted(((c, p, r, reason) for c, p, r, reason in rows), key=repr)
    expected = [
        ("1", "ann", "1", None),
        ("1", "bob", "2", None),
        ("1", "cid", "1.5", "missing_or_invalid_rank"),
        ("1", "dan", "0", "rank_not_positive"),
        ("1", "eve", "x", "missing_or_invalid_rank"),
        ("1", None, "3", "missing_player"),
        (None, "fay", "3", "missing_contest_id"),
        ("2", "ann", "1", "missing_or_invalid_played_at"),
        ("3", "ann", "1", "invalid_weight"),
        ("3", "bob", "2", "invalid_weight"),
        ("4", "ann", "1", "conflicting_played_at"),
        ("4", "bob", "2", "conflicting_played_at"),
        ("5", "ann", "1", "player_twice_in_contest"),
        ("5", "ann", "2", "player_twice_in_contest"),
        ("6", "ann", "1", None),
        ("6", "ann", "1", "duplicate_row"),
        ("6", "bob", "2", None),
    ]
    assert got == sorted(expected, key=repr)
