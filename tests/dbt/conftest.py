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
        capture_output=True, text=True, cwd=project,
        env={**os.environ, "DUCKRATE_WAREHOUSE": str(project / "warehouse.duckdb")},
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    return completed


@pytest.fixture(scope="module")
def build_project(tmp_path_factory):
    """``build_project(source_dir)``: copy a dbt project, install the package by path, ``dbt build`` it;
    returns the warehouse file."""

    def build(source: Path) -> Path:
        project = tmp_path_factory.mktemp(source.name)
        shutil.copytree(source, project, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*", "package-lock.yml"))
        (project / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
        run_dbt(project, "deps")
        build_log = run_dbt(project, "build", "--threads", "2")
        assert "Completed successfully" in build_log.stdout, build_log.stdout[-4000:]
        return project / "warehouse.duckdb"

    return build
