"""The state macros on real DuckDB: ``<system>_state``, ``<system>_replay(..., state := ...)`` and
``<system>_resume_check`` give what the Python API gives, and a continuation equals a full replay."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest
from helpers.replay_cases import assert_rows_and_state_equal
from helpers.state_cases import CASES, history
from helpers.systems import two_player_systems
from polars.testing import assert_frame_equal

import duckrate

BY_NAME = {system.name: system for system in two_player_systems()}
ORDER = ["kind", "league", "player", "opponent"]


def sql_args(con, params: dict) -> str:
    """Named macro arguments; a priors frame becomes a table passed by name."""
    args = []
    for name, value in params.items():
        if isinstance(value, pl.DataFrame):
            con.register("priors_df", value)
            con.execute("CREATE OR REPLACE TABLE case_priors AS SELECT * FROM priors_df")
            value = "case_priors"
        args.append(f", {name} := {value!r}")
    return "".join(args)


@pytest.fixture()
def con():
    connection = duckrate.register(duckdb.connect())
    yield connection
    connection.close()


@pytest.mark.parametrize("name, params, weights, periods", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_sql_continuation_equals_full_replay(con, name, params, weights, periods):
    weights = weights and name not in ("trueskill", "chance")
    matches = history(2500, 60, 9, weights, periods).sort("played_at", "match_id")
    con.register("all_df", matches)
    con.execute("CREATE TABLE all_matches AS SELECT * FROM all_df")
    con.execute("CREATE TABLE first_part AS SELECT * FROM all_matches ORDER BY played_at, match_id LIMIT 1500")
    args = sql_args(con, params)
    con.execute(f"CREATE TABLE saved AS SELECT * FROM {name}_state('first_part'{args})")
    pending = con.sql("SELECT unnest(pending_ids) FROM saved WHERE kind = 'league'").fetchall()
    con.execute(
        "CREATE TABLE rest AS SELECT * FROM all_matches WHERE match_id NOT IN (SELECT match_id FROM first_part) "
        "OR match_id::VARCHAR IN (SELECT unnest(pending_ids) FROM saved WHERE kind = 'league')"
    )
    assert con.sql(f"SELECT reason FROM {name}_resume_check('rest'{args}, state := 'saved')").fetchall() == [(None,)]
    first = con.sql(f"SELECT * FROM {name}_replay('first_part'{args})").pl()
    rest = con.sql(f"SELECT * FROM {name}_replay('rest'{args}, state := 'saved')").pl()
    rows = pl.concat([first.filter(~pl.col("match_id").is_in(rest["match_id"].implode())), rest]).sort(
        "league", "seq", nulls_last=True
    )
    full = con.sql(f"SELECT * FROM {name}_replay('all_matches'{args})").pl().sort("league", "seq", nulls_last=True)
    assert_frame_equal(rows, full, check_exact=True)
    continued = con.sql(f"SELECT * FROM {name}_state('rest'{args}, state := 'saved')").pl().sort(ORDER, nulls_last=True)
    whole = con.sql(f"SELECT * FROM {name}_state('all_matches'{args})").pl().sort(ORDER, nulls_last=True)
    assert_frame_equal(continued, whole, check_exact=True)
    python_state = duckrate.replay_state(name, matches, **params).sort(ORDER, nulls_last=True)
    assert_frame_equal(whole, python_state, check_exact=True)
    assert bool(pending) == bool(periods or "period_length" in params)  # only rating periods stay open
    assert_rows_and_state_equal(
        con, f"{name}_replay_and_state('rest'{args}, state := 'saved')", rest, continued, ["league", "seq"], ORDER
    )


def test_resume_check_names_the_late_match(con):
    matches = history(300, 20, 3, False, False).sort("played_at", "match_id")
    con.register("m", matches)
    con.execute("CREATE TABLE first_part AS SELECT * FROM m ORDER BY played_at, match_id LIMIT 200")
    con.execute("CREATE TABLE saved AS SELECT * FROM elo_state('first_part')")
    con.execute("CREATE TABLE late AS SELECT * FROM m ORDER BY played_at, match_id LIMIT 1 OFFSET 100")
    con.execute("UPDATE late SET match_id = 99999")
    (reason,) = con.sql("SELECT reason FROM elo_resume_check('late', state := 'saved')").fetchall()[0]
    assert "match_id 99999 arrived late" in reason
    with pytest.raises(duckdb.Error, match="arrived late"):
        con.sql("SELECT * FROM elo_replay('late', state := 'saved')").fetchall()
    # no new matches: the state is unchanged
    con.execute("CREATE TABLE nothing AS SELECT * FROM m WHERE false")
    same = con.sql("SELECT * FROM elo_state('nothing', state := 'saved')").pl().sort(ORDER, nulls_last=True)
    assert_frame_equal(same, con.sql("SELECT * FROM saved").pl().sort(ORDER, nulls_last=True), check_exact=True)
