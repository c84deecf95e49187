"""The incremental Elo-MMR model (``replay_elo_mmr``, materialization ``duckrate_replay`` keyed by
``contest_id``) on a real ``dbt run``.

Contest results arrive in batches: each build continues the replay from its saved state and leaves
exactly the tables one full replay of every contest gives (rows and state, bit for bit); a late
contest, a changed contest or --full-refresh replays the whole history instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers.contest_cases import KEY, contest_history, contest_order
from helpers.dbt_projects import REPO, run_dbt
from polars.testing import assert_frame_equal

import duckrate
from duckrate.systems.event_state import STATE_ORDER

PARAMS = {"max_history": 2, "drift_per_day": 3.0}
PROJECT = """
name: incremental_contests
version: "0.1.0"
config-version: 2
profile: incremental_contests
vars:
  duckrate_matches_table: raw_matches
  duckrate_contests_table: raw_contests
  duckrate_systems: []
  duckrate_params: {{elo_mmr: {params}}}
"""
PROFILE = """
incremental_contests:
  target: test
  outputs:
    test:
      type: duckdb
      path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"
      threads: 2
      plugins:
        - module: duckrate.plugin
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("incremental_contests")
    (root / "dbt_project.yml").write_text(PROJECT.format(params=PARAMS))
    (root / "profiles.yml").write_text(PROFILE)
    (root / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(root, "deps")
    with duckdb.connect(str(root / "warehouse.duckdb")) as con:  # the matches models parse against it
        con.execute(
            "CREATE TABLE raw_matches AS SELECT 1 AS match_id, 1 AS played_at, 'a' AS player_a, "
            "'b' AS player_b, 1.0 AS score_a"
        )
    return root


def load(project: Path, results: pl.DataFrame) -> None:
    with duckdb.connect(str(project / "warehouse.duckdb")) as con:
        con.register("incoming", results)
        con.execute("CREATE OR REPLACE TABLE raw_contests AS SELECT * FROM incoming")


LOGS: list[str] = []  # what each build printed


def build(project: Path, *extra: str) -> tuple[str, str | None]:
    LOGS.append(run_dbt(project, "run", "--select", "+replay_elo_mmr", *extra).stdout)
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        return con.sql("SELECT mode, reason FROM replay_elo_mmr__build").fetchall()[0]


def check_equals_full_replay(project: Path) -> None:
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        staged = con.sql("SELECT contest_id, played_at, player, rank, league, weight FROM stg_contest_results").pl()
        actual = con.sql("SELECT * FROM replay_elo_mmr").pl().sort(KEY, nulls_last=True)
        state = con.sql("SELECT * FROM replay_elo_mmr__state").pl().sort(STATE_ORDER, nulls_last=True)
    expected, expected_state = duckrate.replay_with_state("elo_mmr", staged, **PARAMS)
    assert actual.height == staged.height
    assert_frame_equal(actual, expected, check_exact=True, check_dtypes=False)
    assert_frame_equal(state, expected_state, check_exact=True)


def up_to(results: pl.DataFrame, n_contests: int) -> pl.DataFrame:
    contests = contest_order(results)[:n_contests]
    return results.join(contests, on=["league", "contest_id", "played_at"], how="semi", nulls_equal=True)


def test_batches_late_and_changed_contests(project):
    results = contest_history(45, 31)
    load(project, up_to(results, 15))
    assert build(project) == ("full", "first build")
    check_equals_full_replay(project)

    load(project, up_to(results, 30))  # new contests: only they are replayed
    assert build(project) == ("incremental", None)
    check_equals_full_replay(project)

    assert build(project) == ("incremental", None)  # nothing new: the same tables
    check_equals_full_replay(project)

    contests = contest_order(results)
    late_id = contests["contest_id"][35]
    late = up_to(results, 40).with_columns(  # one new contest dated before the saved state
        pl.when(pl.col("contest_id") == late_id)
        .then(contests["played_at"][2])
        .otherwise(pl.col("played_at"))
        .alias("played_at")
    )
    load(project, late)
    mode, reason = build(project)
    assert mode == "full" and f"contest_id {late_id} arrived late" in reason
    check_equals_full_replay(project)

    changed_id = contests["contest_id"][4]
    changed = late.with_columns(  # a replayed contest's standings corrected upstream
        pl.when(pl.col("contest_id") == changed_id)
        .then(pl.col("rank").max() + 1 - pl.col("rank"))
        .otherwise(pl.col("rank"))
        .alias("rank")
    )
    load(project, changed)
    assert build(project) == ("full", "contests already replayed have changed or been removed")
    check_equals_full_replay(project)

    assert build(project, "--full-refresh") == ("full", "a full refresh was requested")
    check_equals_full_replay(project)


def test_chunked_builds_equal_one_replay(project):
    """With ``duckrate_chunk_size`` far below the input, full and incremental builds replay whole contests in
    many chunks and still leave one replay's rows and state."""
    results = contest_history(45, 8)
    chunked = ("--vars", "{duckrate_chunk_size: 40}")
    load(project, up_to(results, 25))
    assert build(project, "--full-refresh", *chunked) == ("full", "a full refresh was requested")
    assert int(re.search(r"replay_elo_mmr replays \d+ rows in (\d+) chunks", LOGS[-1]).group(1)) >= 3
    check_equals_full_replay(project)
    load(project, results)
    assert build(project, *chunked) == ("incremental", None)
    assert int(re.search(r"replay_elo_mmr replays \d+ rows in (\d+) chunks", LOGS[-1]).group(1)) >= 3
    check_equals_full_replay(project)
