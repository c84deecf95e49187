"""``duckrate build`` of the demo killed with SIGKILL at every crash point (:mod:`duckrate.core.crash_points`),
during a full build and during an incremental build after new matches arrive; and two builds at once.

Each kill takes down the build and the dbt process it runs together, at a named point: the staging copy made,
dbt connected, a replay's first chunk, between chunks, within a chunk (rows being handed over), a fit, a
computed mart, the copy checkpointed, the warehouse replaced. After every kill the published
warehouse is the previous complete one, table for table and bit for bit (a digest of every row), and the next
build starts (the lock died with the killed build). Each chain ends with an uninterrupted build: in the full
phase it must leave the warehouse the build killed just after its swap published; in the incremental phase it
must equal a reference build made from the same starting warehouse without any kill.

The builds are the demo project restricted to what the points need (its matches staged from a raw table in the
warehouse, Elo and Glicko-2 replayed in chunks of 10,000 (27,000 matches: 3 chunks each), the marts over them,
bt_ratings and Elo-MMR's contest metrics).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from helpers.dbt_projects import duckrate_build_command

from duckrate.core.build_lock import lock_path, staging_path
from duckrate.core.crash_points import ENVIRONMENT, PAUSE_ENVIRONMENT

REPO = Path(__file__).resolve().parents[2]
SELECT = ["+leaderboard", "+calibration_summary", "+bt_ratings", "+contest_metrics"]
REPLAYS_ONLY = ["+leaderboard"]  # two builds at once: 3,000 matches, too few for a maximum-likelihood bt_ratings
BASE_VARS = {
    "duckrate_matches_model": None,
    "duckrate_matches_table": "raw_matches",
    "duckrate_systems": ["elo", "glicko2"],
    "duckrate_contest_systems": ["elo_mmr"],
    "duckrate_chunk_size": 10000,
}
FIRST = {**BASE_VARS, "duckrate_params": {"elo": {"k": 20}, "glicko2": {"period_length": 0.25}}}
SECOND = {**BASE_VARS, "duckrate_params": {"elo": {"k": 32}, "glicko2": {"period_length": 0.25}}}
# the n-th passage of a point in the build process or its dbt process (two dbt threads: a chunk of either replay;
# the 4th computation is a second or third chunk)
FULL_BUILD_POINTS = (
    "build.copied",
    "dbt.connected",
    "replay.compute:1",
    "replay.compute:4",
    "replay.fetch:7",
    "fit.compute:1",
    "mart.compute:1",
    "build.checkpointed",
)
INCREMENTAL_POINTS = ("replay.compute:1", "build.checkpointed")


def _command(warehouse: Path, project: Path, variables: dict, wait: bool = False, select=SELECT) -> list[str]:
    dbt_args = ("build", "--select", *select, "--exclude-resource-type", "test", "--vars", json.dumps(variables))
    return duckrate_build_command(warehouse, project, *dbt_args, wait=wait)


def _start(
    warehouse: Path, project: Path, variables: dict, environment: dict | None = None, wait: bool = False, select=SELECT
):
    """The build in a process group of its own (a crash point kills or stops the group, never pytest)."""
    return subprocess.Popen(
        _command(warehouse, project, variables, wait, select),
        cwd=project,
        env={**os.environ, **(environment or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _build(warehouse: Path, project: Path, variables: dict, kill_at: str | None = None) -> str:
    """A build to the end (``kill_at`` None: it must succeed) or until it is killed at ``kill_at``."""
    process = _start(warehouse, project, variables, {ENVIRONMENT: kill_at} if kill_at else None)
    output, _ = process.communicate(timeout=600)
    if kill_at is None:
        assert process.returncode == 0, output[-4000:]
    else:
        assert process.returncode == -signal.SIGKILL, (kill_at, process.returncode, output[-4000:])
    return output


def digest(warehouse: Path) -> dict[str, tuple]:
    """Every table's row count and the sum of its rows' hashes (wall-clock ``seconds`` and the build records'
    ``mode`` and ``reason`` left out)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = [
            name
            for (name,) in con.sql(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY ALL"
            ).fetchall()
        ]
        out = {}
        for table in tables:
            columns = [row[0] for row in con.sql(f'DESCRIBE "{table}"').fetchall()]
            # how a build went (a model's __build: full or incremental, why, how long) is no result
            skipped = [c for c in columns if c == "seconds" or (table.endswith("__build") and c in ("mode", "reason"))]
            select = f"* EXCLUDE ({', '.join(skipped)})" if skipped else "*"
            out[table] = con.sql(
                f'SELECT count(*), sum(hash(r)::HUGEINT)::VARCHAR FROM (SELECT {select} FROM "{table}") AS r'
            ).fetchall()[0]
    return out


def _raw_matches(warehouse: Path, rows: str) -> None:
    """Write the demo's matches (``rows``: a WHERE clause on game_id) into the warehouse's raw_matches."""
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "CREATE TABLE IF NOT EXISTS raw_matches AS SELECT * FROM read_csv(?, all_varchar = true) WHERE false",
            [str(REPO / "seeds" / "demo_matches.csv")],
        )
        con.execute(
            f"INSERT INTO raw_matches SELECT * FROM read_csv(?, all_varchar = true) WHERE {rows}",
            [str(REPO / "seeds" / "demo_matches.csv")],
        )


def _reference(warehouse: Path, project: Path, variables: dict, name: str) -> dict:
    """The digest of an uninterrupted build from a copy of ``warehouse``."""
    copy = warehouse.with_name(name)
    shutil.copyfile(warehouse, copy)
    _build(copy, project, variables)
    return digest(copy)


def _leftovers(warehouse: Path) -> list[str]:
    return sorted(p.name for p in warehouse.parent.iterdir() if p.name.startswith(f".{warehouse.name}"))


@pytest.fixture(scope="module")
def project(copy_dbt_project) -> Path:
    return copy_dbt_project(REPO / "demo")


def test_a_killed_build_leaves_the_previous_warehouse_and_the_next_build_completes(project):
    warehouse = project / "crash.duckdb"
    _raw_matches(warehouse, "game_id::BIGINT <= 27000")
    _build(warehouse, project, FIRST)
    first = digest(warehouse)
    assert {"raw_matches", "replay_elo", "replay_glicko2", "leaderboard", "bt_ratings", "contest_metrics"} <= set(first)
    for point in FULL_BUILD_POINTS:
        _build(warehouse, project, SECOND, kill_at=point)
        assert digest(warehouse) == first, point  # the previous complete warehouse, bit for bit
    # killed right after the swap: the new warehouse is complete (other parameters: other ratings), and the
    # next build, with nothing new, leaves it as it is
    _build(warehouse, project, SECOND, kill_at="build.published")
    second = digest(warehouse)
    assert second["replay_elo"] != first["replay_elo"] and second["raw_matches"] == first["raw_matches"]
    _build(warehouse, project, SECOND)
    assert digest(warehouse) == second
    assert _leftovers(warehouse) == []

    # 3,000 new matches arrive; an incremental build continues the saved replays from their state (one chunk each)
    _raw_matches(warehouse, "game_id::BIGINT > 27000")
    before = digest(warehouse)
    after = _reference(warehouse, project, SECOND, "incremental.duckdb")
    assert after["replay_elo"][0] > before["replay_elo"][0]
    for point in INCREMENTAL_POINTS:
        _build(warehouse, project, SECOND, kill_at=point)
        assert digest(warehouse) == before, point
    _build(warehouse, project, SECOND)
    assert digest(warehouse) == after
    assert _leftovers(warehouse) == []


def test_a_second_build_is_refused_naming_the_first_or_waits(project):
    warehouse = project / "busy.duckdb"
    _raw_matches(warehouse, "game_id::BIGINT <= 3000")
    first = _start(warehouse, project, FIRST, {PAUSE_ENVIRONMENT: "replay.compute:1"}, select=REPLAYS_ONLY)
    builds = [first]
    try:
        deadline = time.monotonic() + 300
        while not (lock_path(warehouse).exists() and staging_path(warehouse).exists() and _stopped(first.pid)):
            assert first.poll() is None and time.monotonic() < deadline, "the first build did not reach its pause"
            time.sleep(0.1)
        # a second duckrate build: refused at once, naming the first
        started = time.monotonic()
        second = subprocess.run(
            _command(warehouse, project, FIRST, select=REPLAYS_ONLY), cwd=project, capture_output=True, text=True
        )
        assert second.returncode != 0 and time.monotonic() - started < 60
        assert f"process {first.pid}" in second.stderr and f"build --warehouse {warehouse}" in second.stderr, (
            second.stderr
        )
        # dbt through the package on the warehouse itself: refused too, by the plugin
        plain = subprocess.run(
            [
                str(Path(sys.executable).with_name("dbt")),
                "run",
                "--select",
                "stg_matches",
                "--vars",
                json.dumps(FIRST),
                "--project-dir",
                str(project),
                "--profiles-dir",
                str(project),
            ],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "DUCKRATE_WAREHOUSE": str(warehouse)},
        )
        assert plain.returncode != 0 and f"process {first.pid}" in plain.stdout + plain.stderr
        # a reader keeps reading the published warehouse meanwhile
        with duckdb.connect(str(warehouse), read_only=True) as reader:
            assert reader.sql("SELECT count(*) FROM raw_matches").fetchall() == [(3000,)]
        # with --wait, a second build waits for the first, then runs
        waiting = _start(warehouse, project, SECOND, wait=True, select=REPLAYS_ONLY)
        builds.append(waiting)
        time.sleep(3)
        assert waiting.poll() is None
        os.killpg(first.pid, signal.SIGCONT)
        output, _ = first.communicate(timeout=600)
        assert first.returncode == 0, output[-4000:]
        output, _ = waiting.communicate(timeout=600)
        assert waiting.returncode == 0, output[-4000:]
    finally:
        for process in builds:  # a failed assertion leaves no build running (nor stopped)
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.sql("SELECT count(*) FROM replay_elo").fetchall() == [(3000,)]


def _stopped(pid: int) -> bool:
    """Whether every process of the group ``pid`` is stopped (state T in /proc)."""
    states = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pid:  # the process group
                states.append(fields[0])
    return bool(states) and all(state == "T" for state in states)
