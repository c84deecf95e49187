"""One ``duckrate build`` per warehouse at a time: an advisory lock on ``<warehouse>.lock`` that names its holder.

The lock is an ``flock`` on the lock file, which the kernel drops when its holder exits, however it exits (a
build killed with ``kill -9`` leaves no lock behind; the next build takes it at once). The holder writes who it
is into the file (process id, host, start time, command line), so that a second build is refused with a message
naming the running one, or waits for it when asked (``duckrate build --wait``). ``dbt build`` run on the
warehouse itself takes the same lock through the package's dbt plugin (:mod:`duckrate.plugin`), so neither
can write the warehouse while the other runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO


def staging_path(warehouse: Path) -> Path:
    """Where ``duckrate build`` builds before the swap: ``.<name>.building`` beside the warehouse (same
    directory, hence same file system, so the final rename is atomic)."""
    return warehouse.with_name(f".{warehouse.name}.building")


def is_staging(path: Path) -> bool:
    """Whether ``path`` is a warehouse's staging copy (:func:`staging_path`), whose build holds the lock."""
    return path.name.startswith(".") and path.name.endswith(".building")


#: The warehouses whose build lock this process holds for as long as it runs (:func:`hold_for_process`).
_HELD: dict[Path, IO[str]] = {}


def hold_for_process(warehouse: Path) -> None:
    """Take ``warehouse``'s build lock for the rest of this process (once per warehouse), unless it is a
    staging copy: what the dbt plugin does for ``dbt build`` run on a warehouse itself."""
    warehouse = warehouse.resolve()
    if is_staging(warehouse) or warehouse in _HELD:
        return
    _HELD[warehouse] = hold(warehouse)


def lock_path(warehouse: Path) -> Path:
    """The lock file of ``warehouse``: ``<warehouse>.lock`` beside it."""
    return warehouse.with_name(warehouse.name + ".lock")


def _holder(lock: IO[str]) -> str:
    """Who holds the lock, as its holder wrote it into the file, in words."""
    lock.seek(0)
    try:
        holder = json.loads(lock.read() or "{}")
    except json.JSONDecodeError:
        holder = {}
    if not holder:
        return "another duckrate build"
    return (
        f"duckrate build (process {holder.get('pid')} on {holder.get('host')}, started {holder.get('started')}: "
        f"{holder.get('command')})"
    )


def hold(warehouse: Path, wait: bool = False) -> IO[str]:
    """Take ``warehouse``'s build lock and note this process as its holder; the lock is held while the returned
    file stays open. Taken by another process: with ``wait``, block until it is free (saying so on stderr),
    else ``SystemExit`` naming the holder."""
    # "a+": never truncate the holder's note before holding the lock; the file stays open while the lock is held
    lock = open(lock_path(warehouse), "a+")  # noqa: SIM115
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(lock)
        if not wait:
            lock.close()
            raise SystemExit(
                f"{holder} is building {warehouse}; refused, so that two builds never write it at once. Try "
                "again when it is done, or pass --wait to duckrate build to wait for it."
            ) from None
        print(f"duckrate build: waiting for {holder} to finish with {warehouse}", file=sys.stderr, flush=True)
        fcntl.flock(lock, fcntl.LOCK_EX)
    lock.seek(0)
    lock.truncate()
    note = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "command": " ".join(sys.argv),
    }
    lock.write(json.dumps(note))
    lock.flush()
    return lock


@contextmanager
def build_lock(warehouse: Path, wait: bool = False) -> Iterator[None]:
    """Hold ``warehouse``'s build lock (:func:`hold`) for the ``with`` block."""
    with hold(warehouse, wait):
        yield
