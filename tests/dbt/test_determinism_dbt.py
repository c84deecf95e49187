"""``dbt build --threads 1`` and ``--threads 4`` (its nodes, not its data tests) of the demo give bit-identical
tables; a second process reading the warehouse while ``duckrate build`` rebuilds it sees the old or the new
tables, never a half-built warehouse, and never blocks the build.

Builds: the threads-1 build is the one ``test_demo_build`` reads (session-scoped ``build_project``); this
module adds one threads-4 build, published by ``duckrate build`` (a copy of the warehouse, ``os.replace``d
over it), and one small partial rebuild (``--select loss_curve`` with other vars) to watch an old -> new swap.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from _warehouse_reader import fingerprint  # tests/dbt is on sys.path (pytest's default rootdir import)
from helpers.dbt_projects import duckrate_build_command

REPO = Path(__file__).resolve().parents[2]
READER = Path(__file__).with_name("_warehouse_reader.py")


def _bits(value) -> bytes:
    """A value's exact bytes: floats by their bit pattern, NULL distinct from every value."""
    if value is None:
        return b"\x00"
    if isinstance(value, float):
        return b"f" + struct.pack("<d", value)
    return type(value).__name__.encode() + b":" + repr(value).encode()


def _tables(con) -> list[str]:
    """Every table and view of the warehouse."""
    return [
        name
        for (name,) in con.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() ORDER BY ALL"
        ).fetchall()
    ]


def _duckrate_build(project: Path, warehouse: Path, *dbt_args: str) -> subprocess.CompletedProcess:
    """``python -m duckrate.cli build --warehouse <warehouse> -- <dbt args>`` in a child process."""
    completed = subprocess.run(
        duckrate_build_command(warehouse, project, *dbt_args),
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    assert "Completed successfully" in completed.stdout, completed.stdout[-4000:]
    return completed


def _while_reading(warehouse: Path, work, hold: bool = False) -> dict[str, list[dict]]:
    """Run ``work()`` while a second process polls ``warehouse`` read-only with fresh connections (and, with
    ``hold``, a third keeps one connection open throughout); returns each reader's records."""
    stop = warehouse.with_name("reader.stop")
    stop.unlink(missing_ok=True)
    readers = {}
    for mode in ("poll", "hold") if hold else ("poll",):
        log = warehouse.with_name(f"reader.{mode}.log")
        log.unlink(missing_ok=True)
        readers[mode] = (
            subprocess.Popen([sys.executable, str(READER), mode, str(warehouse), str(stop), str(log)]),
            log,
        )
    try:
        deadline = time.monotonic() + 60
        for process, log in readers.values():
            while not (log.exists() and log.read_text().startswith('{"ready"')):
                assert process.poll() is None and time.monotonic() < deadline, "a reader did not start"
                time.sleep(0.05)
        work()
    finally:
        stop.touch()
        for process, _ in readers.values():
            process.wait(timeout=120)
    assert all(process.returncode == 0 for process, _ in readers.values())
    return {mode: [json.loads(line) for line in log.read_text().splitlines()[1:]] for mode, (_, log) in readers.items()}


@pytest.fixture(scope="module")
def published(copy_dbt_project):
    """The demo built with 4 threads and published by ``duckrate build``, watched by a second process;
    then a partial rebuild of that warehouse, watched too. Returns the paths and the reader's records."""
    project = copy_dbt_project(REPO / "demo")
    warehouse = project / "published.duckdb"
    # the data tests already ran in the threads-1 build: this one builds the nodes alone
    first = _while_reading(
        warehouse,
        lambda: _duckrate_build(project, warehouse, "build", "--threads", "4", "--exclude-resource-type", "test"),
    )["poll"]
    threads_4 = project / "threads_4.duckdb"
    shutil.copyfile(warehouse, threads_4)
    second = _while_reading(
        warehouse,
        lambda: _duckrate_build(
            project,
            warehouse,
            "build",
            "--threads",
            "4",
            "--select",
            "loss_curve",
            "--vars",
            '{"duckrate_loss_curve_points": 50}',
        ),
        hold=True,
    )
    return {"project": project, "warehouse": warehouse, "threads_4": threads_4, "first": first, "second": second}


@pytest.fixture(scope="module")
def threads_1(build_project) -> Path:
    return build_project(REPO / "demo", threads=1)


def test_threads_1_and_4_builds_are_bit_identical(published, threads_1):
    with (
        duckdb.connect(str(threads_1), read_only=True) as one,
        duckdb.connect(str(published["threads_4"]), read_only=True) as four,
    ):
        tables = _tables(one)
        assert tables == _tables(four)
        assert {"replays", "leaderboard", "bt_ratings", "bt_tests", "contest_metrics"} <= set(tables)
        assert not [t for t in tables if "__dbt" in t]
        empty = 0
        for table in tables:
            columns = [row[0] for row in one.sql(f'DESCRIBE "{table}"').fetchall()]
            # wall-clock build times (replay_<system>__build, contest_system_comparison) are not results
            select = "* EXCLUDE (seconds)" if "seconds" in columns else "*"
            query = f'SELECT {select} FROM "{table}" ORDER BY ALL NULLS LAST'
            rows_one, rows_four = one.sql(query).fetchall(), four.sql(query).fetchall()
            empty += not rows_one
            assert len(rows_one) == len(rows_four), table
            for row_one, row_four in zip(rows_one, rows_four):
                assert [_bits(v) for v in row_one] == [_bits(v) for v in row_four], (table, row_one, row_four)
    assert empty == 1  # rejected_contest_results: the contest seed has no bad rows


def test_publish_leaves_only_the_warehouse(published):
    names = {p.name for p in published["project"].iterdir() if "published" in p.name}
    assert names == {"published.duckdb", "published.duckdb.lock"}  # no staging copy, no WAL


def test_a_reader_during_the_first_build_sees_nothing_or_everything(published, threads_1):
    with duckdb.connect(str(threads_1), read_only=True) as con:
        complete = fingerprint(con)
    records = published["first"]
    assert not [r for r in records if "error" in r]
    assert {json.dumps(r, sort_keys=True) for r in records} <= {
        json.dumps({"absent": True}),
        json.dumps({"tables": complete}, sort_keys=True),
    }
    assert records[0] == {"absent": True} and records[-1] == {"tables": complete}


def test_a_reader_during_a_rebuild_sees_the_old_or_the_new_tables(published):
    polls, (held,) = published["second"]["poll"], published["second"]["hold"]
    assert not [r for r in polls if "error" in r], [r for r in polls if "error" in r][:3]
    old, new = polls[0]["tables"], polls[-1]["tables"]
    assert old["loss_curve"] != new["loss_curve"]  # 200 -> 50 loss-curve points per (league, system)
    assert {k: v for k, v in old.items() if k != "loss_curve"} == {k: v for k, v in new.items() if k != "loss_curve"}
    assert all(poll["tables"] in (old, new) for poll in polls)
    switch = next(i for i, poll in enumerate(polls) if poll["tables"] == new)
    assert all(poll["tables"] == new for poll in polls[switch:])  # once published, never back
    assert switch >= 1  # the reader ran during the build
    # the connection opened before the build kept reading the old warehouse, and did not block the build
    assert held["held"] == held["held_before"] == old


def test_a_failed_build_leaves_the_published_warehouse_untouched(published, tmp_path):
    project, warehouse = published["project"], published["warehouse"]
    before = warehouse.stat()
    completed = subprocess.run(
        duckrate_build_command(
            warehouse, project, "build", "--select", "loss_curve", "--vars", '{"duckrate_loss_curve_points": 0}'
        ),
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert completed.returncode != 0
    after = warehouse.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    assert not (project / ".published.duckdb.building").exists()


def test_a_plain_writer_locks_readers_out(tmp_path):
    """Why ``duckrate build`` publishes by swap: while one process has a DuckDB file open read-write
    (as plain ``dbt build`` does), another process cannot open it, not even read-only."""
    path = tmp_path / "locked.duckdb"
    writer = duckdb.connect(str(path))
    try:
        writer.execute("CREATE TABLE t AS SELECT 1 AS x")
        probe = subprocess.run(
            [sys.executable, "-c", f"import duckdb; duckdb.connect({str(path)!r}, read_only=True)"],
            capture_output=True,
            text=True,
        )
        assert probe.returncode != 0 and "lock" in probe.stderr.lower(), probe.stderr[-2000:]
    finally:
        writer.close()
    assert os.path.exists(path)
