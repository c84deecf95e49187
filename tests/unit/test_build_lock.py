"""One build per warehouse: ``duckrate build`` and a dbt run through the package's plugin take the warehouse's build
lock; a second is refused naming the first, or waits with ``--wait``; a killed holder leaves no lock behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest
from dbt.adapters.duckdb.credentials import DuckDBCredentials
from dbt.adapters.duckdb.plugins import BasePlugin

from duckrate.core import build_lock
from duckrate.core.build_lock import hold, lock_path, staging_path

HOLDER = """
import sys
from pathlib import Path
from duckrate.core.build_lock import hold
lock = hold(Path(sys.argv[1]))
print("held", flush=True)
sys.stdin.readline()  # until told to let go (or killed)
lock.close()
print("released", flush=True)
"""


@pytest.fixture
def holder(tmp_path):
    """A child process holding the build lock of ``tmp_path / 'w.duckdb'``; yields (warehouse, child)."""
    warehouse = tmp_path / "w.duckdb"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(warehouse)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "held"
    yield warehouse, child
    if child.poll() is None:
        child.kill()
    child.wait()


def test_a_second_build_is_refused_naming_the_first(holder):
    warehouse, child = holder
    with pytest.raises(SystemExit) as refused:
        hold(warehouse)
    message = str(refused.value)
    assert f"process {child.pid} on " in message and str(warehouse) in message and "--wait" in message
    assert json.loads(lock_path(warehouse).read_text())["pid"] == child.pid  # the holder's note survives


def test_a_killed_build_leaves_no_lock(holder):
    warehouse, child = holder
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    lock = hold(warehouse)  # at once: the kernel dropped the dead holder's lock
    assert json.loads(lock_path(warehouse).read_text())["pid"] == os.getpid()
    lock.close()


def test_wait_takes_the_lock_when_the_first_build_is_done(holder):
    warehouse, child = holder
    taken = []
    waiter = threading.Thread(target=lambda: taken.append(hold(warehouse, wait=True)))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive() and not taken  # the child still holds it: waiting
    child.stdin.write("\n")
    child.stdin.flush()
    waiter.join(30)
    assert child.stdout.readline().strip() == "released"
    assert len(taken) == 1 and json.loads(lock_path(warehouse).read_text())["pid"] == os.getpid()
    taken[0].close()


def test_the_dbt_plugin_takes_the_lock_of_a_warehouse_not_of_a_staging_copy(holder, monkeypatch):
    """A dbt run on the warehouse (the package's plugin configuring its connection) is refused while a build
    holds it; on the build's staging copy it is not (the build holds the warehouse's lock)."""
    warehouse, child = holder
    monkeypatch.setattr(build_lock, "_HELD", {})

    def configure(path: Path) -> None:
        plugin = BasePlugin.create("duckrate.plugin", credentials=DuckDBCredentials(path=str(path)))
        with duckdb.connect(str(path)) as con:
            plugin.configure_connection(con)

    with pytest.raises(SystemExit, match=rf"process {child.pid} on .* is building"):
        configure(warehouse)
    configure(staging_path(warehouse))  # no error
    assert not build_lock._HELD


def test_the_dbt_plugin_holds_the_lock_for_its_process(tmp_path, monkeypatch):
    warehouse = tmp_path / "w.duckdb"
    monkeypatch.setattr(build_lock, "_HELD", {})
    for _ in range(2):  # dbt may configure several connections: one lock per process and warehouse
        plugin = BasePlugin.create("duckrate.plugin", credentials=DuckDBCredentials(path=str(warehouse)))
        with duckdb.connect(str(warehouse)) as con:
            plugin.configure_connection(con)
    assert list(build_lock._HELD) == [warehouse.resolve()]
    assert json.loads(lock_path(warehouse).read_text())["pid"] == os.getpid()
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from duckrate.core.build_lock import hold; hold(Path(sys.argv[1]))",
            str(warehouse),
        ],
        capture_output=True,
        text=True,
    )
    assert probe.returncode != 0 and f"process {os.getpid()} on " in probe.stderr
