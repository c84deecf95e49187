"""An older DuckDB release beside the test venv, to show that a warehouse duckrate builds opens in it.

``duckdb==<version>`` is installed with ``pip install --target`` into ``<repo>/.duckdb-<version>`` (git-ignored)
on first use; a marker file records the version and a file lock (``<dir>.lock``) keeps two pytest-xdist
workers from installing it at once. :func:`read_tables` runs a subprocess with only that directory on its
``PYTHONPATH`` and no site-packages (no duckrate, no newer duckdb) which opens the file read-only and counts each table's rows.
This module imports only the standard library.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
MARKER_NAME = "duckrate-older-duckdb.json"

_READ_SCRIPT = """
import json, sys
import duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
tables = [row[0] for row in con.execute(
    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
).fetchall()]
counts = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}
print(json.dumps({"version": duckdb.__version__, "counts": counts}))
"""


def storage_version(profiles: Path) -> str:
    """The ``storage_compatibility_version`` a dbt profile sets (e.g. ``v1.5.0``)."""
    found = re.search(r"storage_compatibility_version:\s*(v[0-9.]+)", profiles.read_text())
    if found is None:
        raise ValueError(f"{profiles} sets no storage_compatibility_version")
    return found.group(1)


def oldest_release(storage: str) -> str:
    """The oldest DuckDB release that reads files written with ``storage`` (``v1.5.0`` -> ``1.5.0``: a
    storage version is named after the release that introduced it)."""
    return storage.removeprefix("v")


def duckdb_dir(version: str) -> Path:
    """``duckdb==version`` installed in its own directory (see the module docstring)."""
    target = REPO_ROOT / f".duckdb-{version}"
    marker = target / MARKER_NAME
    with open(f"{target}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and json.loads(marker.read_text()).get("version") == version:
            return target
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(target)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--target",
                str(target),
                f"duckdb=={version}",
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"pip could not install duckdb=={version}:\n{done.stdout}\n{done.stderr}")
        marker.write_text(json.dumps({"version": version}))
    return target


def read_tables(version: str, database: Path) -> dict:
    """``{"version": ..., "counts": {table: rows}}``: ``database`` opened read-only by ``duckdb==version``."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    environment["PYTHONPATH"] = str(duckdb_dir(version))
    done = subprocess.run(
        [sys.executable, "-S", "-c", _READ_SCRIPT, str(database)],  # -S: not the venv's site-packages
        capture_output=True,
        text=True,
        env=environment,
        cwd=database.parent,
    )
    if done.returncode:
        raise RuntimeError(f"duckdb {version} could not read {database}:\n{done.stderr}")
    return json.loads(done.stdout)
