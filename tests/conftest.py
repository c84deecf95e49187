"""Shared fixtures: a fresh in-memory DuckDB connection with duckrate registered."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest
from hypothesis import settings

import duckrate  # noqa: F401  (registers the systems)
from duckrate.sql.registry import register_shared_macros, register_udfs, use_shared_macros

# Every property test draws the same examples on every run: CI cannot turn red on a draw no one has seen.
# A run exploring new examples: pytest --hypothesis-profile explore
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")


# pytest-xdist (make test: --dist loadfile --no-loadscope-reorder) hands the test modules out in collection
# order, one at a time to whichever worker is free: the longest go first, so that no worker starts one of them
# near the end while the other idles (without --no-loadscope-reorder xdist would put the modules with the most
# tests first, and these, with few long tests, last). test_determinism_dbt builds the demo with 4 threads while test_demo_build makes the shared
# threads-1 build; the arena-rank tests build their venv from PyPI on a clean checkout.
LONGEST_FIRST = (
    "spark/test_spark.py",
    "dbt/test_determinism_dbt.py",
    "dbt/test_crash_safety.py",
    "dbt/test_incremental_dbt.py",
    "unit/test_bt_arena_rank.py",
    "dbt/test_incremental_contests_dbt.py",
    "unit/test_whr.py",
    "unit/test_trueskill_teams.py",
    "dbt/test_demo_build.py",
    "dbt/test_team_dbt.py",
    "spark/test_marts.py",
    "unit/test_weng_lin.py",
    "sql/test_determinism_sql.py",
    "sql/test_hostile_input_sql.py",
    "unit/test_team_openskill.py",
    "sql/test_uncertainty_replays_sql.py",
)
TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    def rank(item) -> int:
        module = item.path.relative_to(TESTS).as_posix() if TESTS in item.path.parents else ""
        return LONGEST_FIRST.index(module) if module in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other module, and the tests within each, keep their order


#: DuckDB settings that hold for the whole instance, not one connection: reset after each test.
INSTANCE_SETTINGS = ("threads", "memory_limit", "temp_directory", "preserve_insertion_order")


@pytest.fixture(scope="session")
def _instance():
    """One in-memory DuckDB per test process with duckrate's UDFs and its macros in the shared catalog, as the
    dbt plugin sets them up (creating the TEMP macros costs 0.4 s a connection)."""
    connection = duckdb.connect()
    register_udfs(connection)
    register_shared_macros(connection)
    yield connection
    connection.close()


@pytest.fixture
def con(_instance, request):
    """A fresh, empty in-memory database for the test, on a connection (a cursor of the process's instance) that
    finds duckrate's functions; detached afterwards, and the instance-wide settings a test may change reset."""
    name = "test_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:16]
    cursor = _instance.cursor()
    cursor.execute(f"ATTACH ':memory:' AS {name}")
    cursor.execute(f"USE {name}")
    use_shared_macros(cursor)
    yield cursor
    cursor.close()
    for setting in INSTANCE_SETTINGS:
        _instance.execute(f"RESET {setting}")
    _instance.execute(f"DETACH DATABASE IF EXISTS {name}")
