"""duckrate.core.crash_points: a named point kills (or stops) its process group only when asked, at the chosen
passage; an unknown point is refused. The kills themselves: tests/dbt/test_crash_safety.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from duckrate.core import crash_points

PROGRAM = """
import sys
from duckrate.core import crash_points
for passage in range(1, 4):
    print(passage, flush=True)
    crash_points.reached(sys.argv[1])
"""


def run(point: str, wanted: str | None, variable: str = crash_points.ENVIRONMENT) -> subprocess.CompletedProcess:
    env = {} if wanted is None else {variable: wanted}
    return subprocess.run(
        [sys.executable, "-c", PROGRAM, point],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        start_new_session=True,  # its own process group: the kill must not reach pytest
        timeout=60,
    )


def test_nothing_happens_unless_the_point_is_named():
    assert run("replay.fetch", None).returncode == 0
    assert run("replay.fetch", "replay.compute").returncode == 0


def test_the_named_passage_kills_the_process_group():
    killed = run("replay.fetch", "replay.fetch:2")
    assert killed.returncode == -signal.SIGKILL and killed.stdout.split() == ["1", "2"]
    assert run("build.built", "build.built").stdout.split() == ["1"]


def test_an_unknown_point_is_refused(monkeypatch):
    monkeypatch.setenv(crash_points.ENVIRONMENT, "replay.fetch")
    with pytest.raises(ValueError, match="unknown crash point 'replay.fetchh'"):
        crash_points.reached("replay.fetchh")
    monkeypatch.delenv(crash_points.ENVIRONMENT)
    crash_points.reached("replay.fetchh")  # without the variable nothing is even checked
