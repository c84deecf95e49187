"""Build a dbt project in a temporary directory with the duckrate package installed from this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_dbt(project: Path, *args: str) -> subprocess.CompletedProcess:
    executable = Path(sys.executable).with_name("dbt")
    completed = subprocess.run(
        [str(executable), *args, "--project-dir", str(project), "--profiles-dir", str(project)],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "DUCKRATE_WAREHOUSE": str(project / "warehouse.duckdb")},
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    return completed


def copy_project(tmp_path_factory, source: Path) -> Path:
    """A copy of the dbt project ``source`` in a temporary directory, with the package installed by path."""
    project = tmp_path_factory.mktemp(source.name)
    shutil.copytree(
        source,
        project,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*", "package-lock.yml"),
    )
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(project, "deps")
    return project


@pytest.fixture(scope="session")
def copy_dbt_project(tmp_path_factory):
    """``copy_dbt_project(source_dir)``: :func:`copy_project` as a fixture (``dbt deps`` done, not built)."""
    return lambda source: copy_project(tmp_path_factory, source)


@pytest.fixture(scope="session")
def build_project(tmp_path_factory):
    """``build_project(source_dir, threads=2)``: copy a dbt project, install the package by path, ``dbt build``
    it; returns the warehouse file. Session-scoped and cached per (project, threads), so test modules share
    one build (only ever read it: open it ``read_only``)."""
    built: dict[tuple[Path, int], Path] = {}

    def build(source: Path, threads: int = 2) -> Path:
        if (source, threads) not in built:
            project = copy_project(tmp_path_factory, source)
            build_log = run_dbt(project, "build", "--threads", str(threads))
            assert "Completed successfully" in build_log.stdout, build_log.stdout[-4000:]
            built[source, threads] = project / "warehouse.duckdb"
        return built[source, threads]

    return build
