"""Named points of a build where the crash-safety tests kill it, as ``kill -9`` would, or stop it.

With ``DUCKRATE_KILL_AT=<point>`` (or ``<point>:<n>``, the n-th time this process reaches it) in the
environment, :func:`reached` sends SIGKILL to the whole process group when the point is reached: ``duckrate
build`` and the dbt process it runs die at once, without cleaning anything up, as if the machine had killed
them there. ``DUCKRATE_PAUSE_AT`` sends SIGSTOP instead (a build held mid-way until SIGCONT: the tests of two
builds at once). Without either variable, :func:`reached` only reads the environment.

The points (:data:`POINTS`) are where a build's state changes: the staging copy made, dbt connected, each
replay computation (a chunk's computation starts; between chunks when n > 1), each fetch of computed rows into
a model's table (within a chunk), each fit and computed mart, dbt done, the staging copy checkpointed, and
the warehouse replaced. Used by tests/dbt/test_crash_safety.py; documented in docs/internals.md.
"""

from __future__ import annotations

import os
import signal
import threading

ENVIRONMENT = "DUCKRATE_KILL_AT"
PAUSE_ENVIRONMENT = "DUCKRATE_PAUSE_AT"
SIGNALS = {ENVIRONMENT: signal.SIGKILL, PAUSE_ENVIRONMENT: signal.SIGSTOP}
POINTS = (
    "build.copied",  # duckrate build: the warehouse copied to the staging file, dbt not started
    "dbt.connected",  # the dbt plugin: connected to the staging copy, nothing built
    "replay.compute",  # a replay's (or one chunk's) computation starts
    "replay.fetch",  # computed rows handed to DuckDB for a model's table
    "fit.compute",  # a batch fit (bt_fit, whr_fit, ...) starts
    "mart.compute",  # a computed mart (contest_metrics, team_metrics) starts
    "build.built",  # dbt finished; the staging copy not yet checkpointed
    "build.checkpointed",  # the staging copy checkpointed and synced; the warehouse not yet replaced
    "build.published",  # the warehouse replaced; its directory not yet synced
)
_passes: dict[str, int] = {}
_lock = threading.Lock()


def reached(point: str) -> None:
    """Kill (or stop) this process group here if ``DUCKRATE_KILL_AT`` (``DUCKRATE_PAUSE_AT``) names ``point``
    and this is its chosen passage."""
    for variable, sent in SIGNALS.items():
        wanted = os.environ.get(variable)
        if not wanted:
            continue
        if point not in POINTS:
            raise ValueError(f"duckrate: unknown crash point {point!r}; expected one of {', '.join(POINTS)}")
        name, _, nth = wanted.partition(":")
        if name != point:
            continue
        with _lock:
            _passes[point] = count = _passes.get(point, 0) + 1
        if count == (int(nth) if nth else 1):
            os.killpg(os.getpgrp(), sent)
