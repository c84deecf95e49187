"""Real dbt projects in temporary directories, with the duckrate package installed from this checkout by path.

The tests in tests/dbt import these from here (``from helpers.dbt_projects import ...``) rather than from
tests/dbt/conftest.py: a conftest is not a module a test can rely on importing by name (every directory's
conftest is called ``conftest``).

:func:`shared_build` builds a project once per test session, even across pytest-xdist workers: the build
lives in the session's directory that every worker shares (the parent of each worker's ``basetemp``), and a
file lock makes the other workers wait for the first one's build and then read it. The builds are real
``dbt deps`` + ``dbt build`` runs; only their results are shared, never a fake of them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IGNORED = shutil.ignore_patterns("target", "logs", "dbt_packages", "*.duckdb*", "package-lock.yml")


def run_dbt(project: Path, *args: str) -> subprocess.CompletedProcess:
    """``dbt <args>`` on ``project`` (its own profiles.yml, the warehouse ``project/warehouse.duckdb``) in a
    child process; fails the test with dbt's output when dbt fails."""
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


def duckrate_build_command(warehouse: Path, project: Path, *dbt_args: str, wait: bool = False) -> list[str]:
    """``python -m duckrate.cli build --warehouse <warehouse> [--wait] -- <dbt args>`` on ``project`` (its own
    profiles.yml)."""
    return [
        sys.executable,
        "-m",
        "duckrate.cli",
        "build",
        "--warehouse",
        str(warehouse),
        *(["--wait"] if wait else []),
        "--",
        *dbt_args,
        "--project-dir",
        str(project),
        "--profiles-dir",
        str(project),
    ]


def install_package(project: Path) -> None:
    """Point ``project``'s packages.yml at this checkout and run ``dbt deps``."""
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO}\n")
    run_dbt(project, "deps")


def copy_project(tmp_path_factory, source: Path) -> Path:
    """A copy of the dbt project ``source`` in a temporary directory, with the package installed by path."""
    project = tmp_path_factory.mktemp(source.name)
    shutil.copytree(source, project, dirs_exist_ok=True, ignore=IGNORED)
    install_package(project)
    return project


def session_directory(tmp_path_factory) -> Path:
    """The directory of this test session that every pytest-xdist worker sees: the parent of the workers'
    own ``basetemp`` directories (``popen-gw0``, ...), or ``basetemp`` itself without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created if missing), held across processes until the block ends."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_build(tmp_path_factory, source: Path, threads: int = 2) -> Path:
    """``dbt build --threads <threads>`` of a copy of the project ``source``, once per test session however
    many workers ask; returns the warehouse file (only ever read it: open it ``read_only``). A failed build
    fails the test that asked, and the next one to ask builds again from scratch."""
    builds = session_directory(tmp_path_factory) / "dbt-builds"
    builds.mkdir(exist_ok=True)
    name = f"{source.name}-{hashlib.sha1(str(source.resolve()).encode()).hexdigest()[:8]}-threads{threads}"
    project, done = builds / name, builds / f"{name}.built"
    with file_lock(builds / f"{name}.lock"):
        if not done.exists():
            shutil.rmtree(project, ignore_errors=True)
            shutil.copytree(source, project, ignore=IGNORED)
            install_package(project)
            build_log = run_dbt(project, "build", "--threads", str(threads))
            assert "Completed successfully" in build_log.stdout, build_log.stdout[-4000:]
            done.touch()
    return project / "warehouse.duckdb"
