"""Build dbt projects in temporary directories with the duckrate package installed from this checkout
(:mod:`helpers.dbt_projects`). Every test in this directory is marked ``dbt``: ``make test-fast`` leaves
them out, ``make test`` runs them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.dbt_projects import copy_project, shared_build

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.dbt)


@pytest.fixture(scope="session")
def copy_dbt_project(tmp_path_factory):
    """``copy_dbt_project(source_dir)``: :func:`copy_project` as a fixture (``dbt deps`` done, not built)."""
    return lambda source: copy_project(tmp_path_factory, source)


@pytest.fixture(scope="session")
def build_project(tmp_path_factory):
    """``build_project(source_dir, threads=2)``: copy a dbt project, install the package by path, ``dbt build``
    it; returns the warehouse file. Built once per (project, threads) for the whole session, across the
    pytest-xdist workers (:func:`helpers.dbt_projects.shared_build`), so test modules share one build (only
    ever read it: open it ``read_only``)."""
    return lambda source, threads=2: shared_build(tmp_path_factory, source, threads)
