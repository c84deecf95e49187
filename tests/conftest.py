"""Shared fixtures: a fresh in-memory DuckDB connection with duckrate registered."""

from __future__ import annotations

import duckdb
import pytest
from hypothesis import settings

import duckrate

# Every property test draws the same examples on every run: CI cannot turn red on a draw no one has seen.
# A run exploring new examples: pytest --hypothesis-profile explore
settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile("ci")


@pytest.fixture
def con():
    connection = duckdb.connect()
    duckrate.register(connection)
    yield connection
    connection.close()
