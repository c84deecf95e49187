"""The incremental replay models (materialization ``duckrate_replay``) on a real ``dbt run``.

A warehouse receives matches in batches: each build must continue every replay from its saved state
and leave exactly the tables one full replay of all the matches gives (rows and state, bit for bit);
a late match, a changed match or --full-refresh must replay the whole history instead, never give a
wrong answer.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from helpers.dbt_projects import REPO, run_dbt
from helpers.systems import incremental_preset, two_player_systems
from polars.testing import assert_frame_equal

from duckrate.systems.two_player import replay_with_state

SYSTEMS = [system.name for system in two_player_systems()]
BY_NAME = {system.name: system for system in two_player_systems()}
# each system's preset for an incremental build (on the registry entry)
PARAMS = {system.name: dict(incremental_preset(system).params) for system in two_player_systems()}
# the whole-history replays: every build with new matches replays in full, in one chunk
WHOLE = {system.name for system in two_player_systems() if system.whole_history}

PROJECT = """
name: incremental_tests
version: "0.1.0"
config-version: 2
profile: incremental_tests
vars:
  duckrate_matches_table: raw_matches
  duckrate_systems: {systems}
  duckrate_params: {params}
"""
PROFILE = """
incremental_tests:
  target: test
  outputs:
    test:
      type: duckdb
      path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"
      threads: 4
      plugins:
        - module: duckrate.plugin
"""


def all_matches(n: int = 900, seed: int = 11) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 40, n)
    b = (a + rng.integers(1, 40, n)) % 40
    hours = np.sort(rng.integers(0, 24 * 8, n))
    return pl.DataFrame(
        {
            "match_id": np.arange(n, dtype=np.int64) + 1,
            "played_at": pl.Series(hours * 3_600_000_000, dtype=pl.Int64).cast(pl.Datetime("us")),
            "player_a": [f"p{x}" for x in a],
            "player_b": [f"p{x}" for x in b],
            "score_a": rng.choice([0.0, 1.0], n).astype(np.float64),
            "league": rng.choice(["east", "west"], n).tolist(),
        }
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("incremental")
    (root / "dbt_project.yml").write_text(PROJECT.format(systems=SYSTEMS, params=PARAMS))
    (root / "profiles.yml").write_text(PROFILE)
    (root / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(root, "deps")
    return root


def load(project: Path, matches: pl.DataFrame) -> None:
    with duckdb.connect(str(project / "warehouse.duckdb")) as con:
        con.register("incoming", matches)
        con.execute("CREATE OR REPLACE TABLE raw_matches AS SELECT * FROM incoming")


LOGS: list[str] = []  # what each build printed


def build(project: Path, *extra: str) -> dict[str, tuple[str, str | None]]:
    models = " ".join(f"+replay_{name}" for name in SYSTEMS)
    LOGS.append(run_dbt(project, "run", "--select", *models.split(), *extra).stdout)
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        return {name: con.sql(f"SELECT mode, reason FROM replay_{name}__build").fetchall()[0] for name in SYSTEMS}


def check_equals_full_replay(project: Path) -> None:
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        staged = con.sql("SELECT match_id, played_at, player_a, player_b, score_a, league FROM stg_matches").pl()
        for name in SYSTEMS:
            expected, expected_state = replay_with_state(BY_NAME[name], staged, **PARAMS[name])
            actual = con.sql(f"SELECT * FROM replay_{name}").pl().sort("league", "seq")
            assert_frame_equal(actual, expected.sort("league", "seq"), check_exact=True, check_dtypes=False)
            state = con.sql(f"SELECT * FROM replay_{name}__state").pl()
            order = ["kind", "league", "player", "opponent"]
            assert_frame_equal(
                state.sort(order, nulls_last=True), expected_state.sort(order, nulls_last=True), check_exact=True
            )


def continued(modes: dict[str, tuple[str, str | None]]) -> None:
    """Every system continued its saved state, but the whole-history ones, which replayed in full saying why."""
    assert {name: mode for name, mode in modes.items() if name not in WHOLE} == {
        name: ("incremental", None) for name in SYSTEMS if name not in WHOLE
    }
    for name in WHOLE:
        mode, reason = modes[name]
        assert mode == "full" and "whole-history replay forecasts each match" in reason, (name, mode, reason)


def test_batches_late_and_changed_matches(project):
    matches = all_matches()
    load(project, matches[:400])
    assert set(build(project).values()) == {("full", "first build")}
    check_equals_full_replay(project)

    load(project, matches[:700])  # a day's new matches
    continued(build(project))
    check_equals_full_replay(project)

    load(project, matches[:700])  # nothing new: still the same tables
    assert set(build(project).values()) == {("incremental", None)}
    check_equals_full_replay(project)

    late = matches[700:].with_columns(
        pl.when(pl.col("match_id") == 800)
        .then(matches["played_at"][10])
        .otherwise(pl.col("played_at"))
        .alias("played_at")
    )
    load(project, pl.concat([matches[:700], late]))  # one of the new matches is older than the state
    modes = build(project)
    assert {mode for mode, _ in modes.values()} == {"full"}
    assert all("arrived late" in reason for _, reason in modes.values()), modes
    check_equals_full_replay(project)

    changed = pl.concat([matches[:700], late]).with_columns(
        pl.when(pl.col("match_id") == 5).then(1.0 - pl.col("score_a")).otherwise(pl.col("score_a")).alias("score_a")
    )
    load(project, changed)  # a replayed result corrected upstream
    assert set(build(project).values()) == {("full", "matches already replayed have changed or been removed")}
    check_equals_full_replay(project)

    assert set(build(project, "--full-refresh").values()) == {("full", "a full refresh was requested")}
    check_equals_full_replay(project)


def chunks(log: str) -> dict[str, int]:
    """How many chunks each replay model of a build ran in, from dbt's log."""
    return {
        name: int(count) for name, count in re.findall(r"duckrate: replay_(\w+) replays \d+ rows in (\d+) chunk", log)
    }


def test_chunked_builds_equal_one_replay(project):
    """With ``duckrate_chunk_size`` far below the input, a full build and an incremental one replay in many
    chunks (open rating periods re-rated across chunk ends) and still leave one replay's rows and state."""
    matches = all_matches(seed=5)
    chunked = ("--vars", "{duckrate_chunk_size: 97}")
    load(project, matches[:500])
    assert set(build(project, "--full-refresh", *chunked).values()) == {("full", "a full refresh was requested")}
    # 500 rows, 97 at most per chunk; a whole-history replay in one
    assert chunks(LOGS[-1]) == {name: 1 if name in WHOLE else 6 for name in SYSTEMS}
    for name in set(SYSTEMS) - WHOLE:  # progress in dbt's log after each chunk: rows done, rate, time left
        progress = re.findall(
            rf"duckrate: replay_{name} chunk (\d)/6: about ([\d,]+) of 500 rows, [\d,]+ rows/s, about", LOGS[-1]
        )
        assert [int(done) for done, _ in progress] == [1, 2, 3, 4, 5, 6], name
        assert progress[-1][1] == "500"
    check_equals_full_replay(project)
    load(project, matches)
    continued(build(project, *chunked))
    counts = chunks(LOGS[-1])
    assert all(count >= 5 for name, count in counts.items() if name not in WHOLE), LOGS[-1][-3000:]  # 400 new rows
    assert all(counts[name] == 1 for name in WHOLE)
    check_equals_full_replay(project)
