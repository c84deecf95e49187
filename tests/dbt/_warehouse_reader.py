"""A second process reading a warehouse while it is rebuilt (run by test_determinism_dbt.py).

``python _warehouse_reader.py poll <warehouse> <stop file> <log file>``: until the stop file exists (then once
more), open the warehouse read-only with a fresh connection, record which tables it has and their row counts,
and close it again: one JSON line per poll (``{"absent": true}`` while the file does not exist, ``{"error":
...}`` if opening or reading fails).

``python _warehouse_reader.py hold ...``: open one connection at the start and keep it until the stop file
exists, then read it again (``{"held_before": ..., "held": ...}``): a dashboard that keeps its connection open.
This must be its own process: within one process DuckDB reuses an open database instance for a new
``duckdb.connect`` to the same path, so fresh connections there would keep seeing the file the held one opened.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import duckdb

FINGERPRINT = (
    "SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = current_database() "
    "ORDER BY table_name"
)


def fingerprint(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    tables = [name for name, _ in con.sql(FINGERPRINT).fetchall()]
    return {name: con.sql(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] for name in tables}


def _write(out, record: dict) -> None:
    out.write(json.dumps(record) + "\n")
    out.flush()


def poll(warehouse: Path, stop: Path, out) -> None:
    _write(out, {"ready": True})
    last = False
    while not last:
        last = stop.exists()
        try:
            if not warehouse.exists():
                record = {"absent": True}
            else:
                with duckdb.connect(str(warehouse), read_only=True) as con:
                    record = {"tables": fingerprint(con)}
        except Exception as error:  # recorded, the test fails on it
            record = {"error": f"{type(error).__name__}: {error}"}
        _write(out, record)
        time.sleep(0.2)


def hold(warehouse: Path, stop: Path, out) -> None:
    with duckdb.connect(str(warehouse), read_only=True) as held:
        before = fingerprint(held)
        _write(out, {"ready": True})
        while not stop.exists():
            time.sleep(0.2)
        _write(out, {"held_before": before, "held": fingerprint(held)})


if __name__ == "__main__":
    mode, warehouse, stop, log = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    with log.open("w") as out:
        (hold if mode == "hold" else poll)(warehouse, stop, out)
