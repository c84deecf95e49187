"""Shared fixtures: a fresh in-memory DuckDB connection with duckrate registered."""

from __future__ import annotations

import duckdb
import pytest

import duckrate


@pytest.fixture
def con():
    connection = duckdb.connect()
    duckrate.register(connection)
    yield connection
    connection.close()
