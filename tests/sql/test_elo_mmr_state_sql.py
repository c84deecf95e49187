"""Elo-MMR's state macros on real DuckDB: ``elo_mmr_state``, ``elo_mmr_replay(..., state := ...)`` and
``elo_mmr_resume_check`` give what the Python API gives, and a continuation equals a full replay."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from helpers.contest_cases import KEY, contest_history, contest_order
from helpers.replay_cases import assert_rows_and_state_equal
from polars.testing import assert_frame_equal

import duckrate
from duckrate.systems.event_state import STATE_ORDER


def load(con, name: str, frame: pl.DataFrame) -> None:
    con.register("frame", frame)
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM frame")
    con.unregister("frame")


def split(con, results: pl.DataFrame, at: int) -> None:
    """Tables all_results, first_part (the first ``at`` contests in replay order) and rest."""
    contests = contest_order(results)
    load(con, "all_results", results)
    load(con, "first_ids", contests[:at])
    con.execute(
        "CREATE OR REPLACE TABLE first_part AS SELECT r.* FROM all_results AS r SEMI JOIN first_ids AS f "
        "ON r.league IS NOT DISTINCT FROM f.league AND r.contest_id = f.contest_id"
    )
    con.execute(
        "CREATE OR REPLACE TABLE rest AS SELECT r.* FROM all_results AS r ANTI JOIN first_ids AS f "
        "ON r.league IS NOT DISTINCT FROM f.league AND r.contest_id = f.contest_id"
    )


@pytest.mark.parametrize(
    "params", [{}, {"max_history": 2, "drift_per_day": 4.0, "algorithm": "exact"}, {"variant": "gaussian"}]
)
def test_sql_continuation_equals_full_replay(con, params):
    results = contest_history(40, 21, string_ids=not params)
    split(con, results, 23)
    args = "".join(f", {name} := {value!r}" for name, value in params.items())
    con.execute(f"CREATE TABLE saved AS SELECT * FROM elo_mmr_state('first_part'{args})")
    assert con.sql(f"SELECT reason FROM elo_mmr_resume_check('rest'{args}, state := 'saved')").fetchall() == [(None,)]
    first = con.sql(f"SELECT * FROM elo_mmr_replay('first_part'{args})").pl()
    rest = con.sql(f"SELECT * FROM elo_mmr_replay('rest'{args}, state := 'saved')").pl()
    full = con.sql(f"SELECT * FROM elo_mmr_replay('all_results'{args})").pl().sort(KEY, nulls_last=True)
    assert_frame_equal(pl.concat([first, rest]).sort(KEY, nulls_last=True), full, check_exact=True)
    continued = (
        con.sql(f"SELECT * FROM elo_mmr_state('rest'{args}, state := 'saved')").pl().sort(STATE_ORDER, nulls_last=True)
    )
    whole = con.sql(f"SELECT * FROM elo_mmr_state('all_results'{args})").pl().sort(STATE_ORDER, nulls_last=True)
    assert_frame_equal(continued, whole, check_exact=True)
    python_rows, python_state = duckrate.replay_with_state("elo_mmr", results, **params)
    assert_frame_equal(whole, python_state, check_exact=True)
    assert_frame_equal(full, python_rows, check_exact=True)
    assert_rows_and_state_equal(
        con, f"elo_mmr_replay_and_state('rest'{args}, state := 'saved')", rest, continued, KEY, STATE_ORDER
    )
    assert_rows_and_state_equal(con, f"elo_mmr_replay_and_state('all_results'{args})", full, whole, KEY, STATE_ORDER)


def test_resume_check_and_refusals(con):
    results = contest_history(20, 22, weights=False)
    split(con, results, 12)
    con.execute("CREATE TABLE saved AS SELECT * FROM elo_mmr_state('first_part')")
    # a contest already replayed, passed again with a later played_at
    con.execute(
        "CREATE TABLE again AS SELECT * REPLACE ((SELECT max(played_at) FROM rest) AS played_at) FROM first_part "
        "WHERE contest_id = (SELECT min(contest_id) FROM first_part)"
    )
    (reason,) = con.sql("SELECT reason FROM elo_mmr_resume_check('again', state := 'saved')").fetchall()[0]
    assert "was already replayed" in reason
    with pytest.raises(duckdb.Error, match="was already replayed"):
        con.sql("SELECT * FROM elo_mmr_replay('again', state := 'saved')").fetchall()
    # a new contest older than its league's last saved one
    con.execute(
        "CREATE TABLE late AS SELECT * REPLACE (99999 AS contest_id) FROM first_part WHERE contest_id = ("
        "SELECT f.contest_id FROM first_part AS f WHERE f.played_at < (SELECT max(g.played_at) FROM first_part AS g "
        "WHERE g.league IS NOT DISTINCT FROM f.league) ORDER BY f.played_at, f.contest_id LIMIT 1)"
    )
    (reason,) = con.sql("SELECT reason FROM elo_mmr_resume_check('late', state := 'saved')").fetchall()[0]
    assert "contest_id 99999 arrived late" in reason
    (reason,) = con.sql("SELECT reason FROM elo_mmr_resume_check('rest', beta := 100.0, state := 'saved')").fetchall()[
        0
    ]
    assert "parameters" in reason
    # no new contests: the state is unchanged; without a state: NULL
    con.execute("CREATE TABLE nothing AS SELECT * FROM rest WHERE false")
    same = con.sql("SELECT * FROM elo_mmr_state('nothing', state := 'saved')").pl().sort(STATE_ORDER, nulls_last=True)
    assert_frame_equal(same, con.sql("SELECT * FROM saved").pl().sort(STATE_ORDER, nulls_last=True), check_exact=True)
    assert con.sql("SELECT reason FROM elo_mmr_resume_check('rest')").fetchall() == [(None,)]
