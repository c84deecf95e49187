"""Shared pieces of duckrate's benchmarks: machine description, cached data, child processes, memory.

Every benchmark script under ``bench/`` measures each case in a *fresh child process* (the script
re-runs itself with a hidden ``--child`` flag) so that the child's peak memory belongs to that case
alone. The parent stays light on purpose (standard library only; it never imports numpy, polars,
duckdb or duckrate) because on Linux a child started from a big parent can inherit the parent's
high-water mark in ``ru_maxrss`` (``execve`` folds the old address space's peak into it). Children
therefore report both ``ru_maxrss`` and ``VmHWM`` from ``/proc/self/status``, which is per address
space and starts afresh at ``execve``.

Generated data is cached as DuckDB database files under ``bench/.data/`` (git-ignored by
``bench/.gitignore``), and generated in a child process too. Run this module directly to
(re)generate one file by hand::

    .venv/bin/python bench/_common.py generate-matches --n-matches 1000000 --out bench/.data/elo_1000000.duckdb
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
#: Where DuckDB may spill in benchmark children (its default, ``.tmp``, is relative to the cwd).
DUCKDB_TEMP_DIR = DATA_DIR / "duckdb_tmp"

#: Bump when the layout of the cached match files changes; older files are regenerated.
MATCHES_FORMAT = 1

_RESULT_PREFIX = "@@bench-result "
GB = 1e9  # benchmarks report decimal gigabytes (10^9 bytes)


# --------------------------------------------------------------------------------------------
# Machine description
# --------------------------------------------------------------------------------------------


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def total_ram_bytes() -> int | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except ImportError:
        return None


def _cgroup_limits() -> str | None:
    """CPU and memory limits of the cgroup (v2) we run in, when any are set."""
    parts = []
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            parts.append(f"cpu {int(quota) / int(period):g} cores")
    except (OSError, ValueError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            parts.append(f"memory {int(limit) / GB:.1f} GB")
    except (OSError, ValueError):
        pass
    return ", ".join(parts) or None


def package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_lines(
    packages: tuple[str, ...] = ("duckrate", "duckdb", "polars", "numba", "numpy", "pyarrow"),
) -> list[str]:
    """Lines describing the machine, the software and the date, ready to paste into BENCHMARKS.md."""
    ram = total_ram_bytes()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    lines = [
        f"date:     {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"machine:  {os.cpu_count()} CPUs ({usable} usable), {_cpu_model()}"
        + (f", {ram / GB:.1f} GB RAM" if ram else ""),
    ]
    limits = _cgroup_limits()
    if limits:
        lines.append(f"cgroup:   {limits}")
    lines.append(f"os:       {platform.platform()}")
    versions = ", ".join(f"{name} {package_version(name)}" for name in packages)
    lines.append(f"software: python {platform.python_version()}, {versions}")
    return lines


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


def _status_bytes(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="utf-8") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss_bytes() -> int:
    """Current resident set size of this process."""
    value = _status_bytes("VmRSS")
    if value is not None:
        return value
    import psutil

    return int(psutil.Process().memory_info().rss)


def maxrss_bytes() -> int:
    """``getrusage(RUSAGE_SELF).ru_maxrss`` in bytes (kilobytes on Linux, bytes on macOS)."""
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return value if sys.platform == "darwin" else value * 1024


def hwm_bytes() -> int | None:
    """Peak RSS of this address space (``VmHWM``), or None where /proc is missing."""
    return _status_bytes("VmHWM")


def reset_hwm() -> bool:
    """Reset ``VmHWM`` to the current RSS (Linux >= 4.0); False if not possible. ``ru_maxrss`` is untouched."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


class TreeMemory:
    """Samples, in a background thread, the summed RSS of a process and all its descendants (``samples``:
    (time, bytes)) and the largest RSS of one descendant whose command line contains one of ``watch``
    (``peak_watched``, e.g. Spark's Python workers). A context manager; psutil is imported here, so a
    parent that never samples stays on the standard library."""

    def __init__(self, pid: int | None = None, interval: float = 0.25, watch: tuple[str, ...] = ()):
        import psutil

        self._psutil = psutil
        self.root, self.interval, self.watch = psutil.Process(pid), interval, watch
        self.samples: list[tuple[float, int]] = []
        self.peak_watched = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> bool:
        try:
            processes = [self.root, *self.root.children(recursive=True)]
        except self._psutil.Error:
            return False
        total = 0
        for process in processes:
            try:
                rss = process.memory_info().rss
                if self.watch and any(mark in " ".join(process.cmdline()) for mark in self.watch):
                    self.peak_watched = max(self.peak_watched, rss)
            except self._psutil.Error:
                continue
            total += rss
        self.samples.append((time.time(), total))
        return True

    def _run(self) -> None:
        while not self._stop.is_set() and self._sample():
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()

    def peak(self, start: float | None = None, end: float | None = None) -> int:
        """The largest summed RSS sampled (between ``start`` and ``end``, epoch seconds, when given)."""
        values = [rss for t, rss in self.samples if (start is None or t >= start) and (end is None or t <= end)]
        return max(values, default=0)


# --------------------------------------------------------------------------------------------
# Child processes
# --------------------------------------------------------------------------------------------


class ChildFailed(RuntimeError):
    pass


def emit_result(result: dict) -> None:
    """Called in a child: hand ``result`` (JSON-serialisable) back to the parent."""
    sys.stdout.write(_RESULT_PREFIX + json.dumps(result) + "\n")
    sys.stdout.flush()


def run_child(argv: list[str], timeout: float | None = None) -> dict:
    """Run ``python <argv...>`` in a fresh process and return what it passed to :func:`emit_result`.

    The child's stderr goes straight to ours; its other stdout lines are echoed to our stderr.
    Raises :class:`ChildFailed` if the child exits non-zero or emits nothing.
    """
    completed = subprocess.run(
        [sys.executable, *argv], stdout=subprocess.PIPE, stderr=None, text=True, timeout=timeout, cwd=REPO_ROOT
    )
    result = None
    for line in completed.stdout.splitlines():
        if line.startswith(_RESULT_PREFIX):
            result = json.loads(line[len(_RESULT_PREFIX) :])
        elif line.strip():
            print(line, file=sys.stderr)
    if completed.returncode != 0:
        raise ChildFailed(f"child {' '.join(argv)} exited with code {completed.returncode}")
    if result is None:
        raise ChildFailed(f"child {' '.join(argv)} returned no result")
    return result


# --------------------------------------------------------------------------------------------
# Cached data
# --------------------------------------------------------------------------------------------


def _matches_meta(n_matches: int, n_players: int, n_leagues: int, seed: int) -> dict:
    return {
        "format": MATCHES_FORMAT,
        "n_matches": n_matches,
        "n_players": n_players,
        "n_leagues": n_leagues,
        "seed": seed,
        "duckrate": package_version("duckrate"),
    }


def _read_meta(path: Path) -> dict | None:
    """The ``meta`` row of a cached file (in a child, so the parent never imports duckdb)."""
    code = (
        "import duckdb, json, sys\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "meta = json.loads(con.execute('SELECT meta FROM meta').fetchone()[0])\n"
        "meta['rows'] = con.execute('SELECT count(*) FROM matches').fetchone()[0]\n"
        "print(json.dumps(meta))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=REPO_ROOT)
    if completed.returncode != 0:
        return None
    try:
        return json.loads(completed.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def matches_file(name: str, n_matches: int, n_players: int, n_leagues: int = 1, seed: int = 0, log=None) -> Path:
    """Path of ``bench/.data/<name>.duckdb`` holding ``generate_matches(...)`` as table ``matches``.

    The file is (re)generated, in a child process, when missing or when its recorded parameters
    (or duckrate's version, which may change the generator) differ. Returns the path.
    """
    path = DATA_DIR / f"{name}.duckdb"
    wanted = _matches_meta(n_matches, n_players, n_leagues, seed)
    if path.exists():
        meta = _read_meta(path)
        if meta is not None and meta.pop("rows", None) == n_matches and meta == wanted:
            return path
    if log:
        log(f"generating {n_matches:,} matches ({n_players:,} players, seed {seed}) -> {path.relative_to(REPO_ROOT)}")
    started = time.perf_counter()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "generate-matches",
            "--n-matches",
            str(n_matches),
            "--n-players",
            str(n_players),
            "--n-leagues",
            str(n_leagues),
            "--seed",
            str(seed),
            "--out",
            str(path),
        ],
        cwd=REPO_ROOT,
    )
    if completed.returncode != 0:
        raise ChildFailed(f"generating {path} failed (exit code {completed.returncode})")
    if log:
        log(f"  done in {time.perf_counter() - started:.1f} s")
    return path


def _generate_matches(n_matches: int, n_players: int, n_leagues: int, seed: int, out: Path) -> None:
    import duckdb

    from duckrate.synthetic import generate_matches

    frame = generate_matches(n_matches, n_players, n_leagues=n_leagues, seed=seed)
    table = frame.to_arrow()
    del frame
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f"{out.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    try:
        con.register("generated", table)
        con.execute("CREATE TABLE matches AS SELECT * FROM generated")
        con.unregister("generated")
        meta = _matches_meta(n_matches, n_players, n_leagues, seed)
        con.execute("CREATE TABLE meta AS SELECT ?::VARCHAR AS meta", [json.dumps(meta)])
        con.execute("CHECKPOINT")
    finally:
        con.close()
    Path(str(partial) + ".wal").unlink(missing_ok=True)
    os.replace(partial, out)


# --------------------------------------------------------------------------------------------
# Small helpers
# --------------------------------------------------------------------------------------------


def benchmark_connection(data: Path, database: Path | None = None):
    """A DuckDB connection (in memory, or a fresh ``database`` file) with duckrate registered and the cached
    file ``data`` ATTACHed read-only as ``src`` (spilling, if any, to bench/.data/duckdb_tmp)."""
    import duckdb

    import duckrate

    DUCKDB_TEMP_DIR.mkdir(parents=True, exist_ok=True)
    if database is not None:
        for stale in (database, database.with_name(database.name + ".wal")):
            stale.unlink(missing_ok=True)
    con = duckdb.connect(str(database) if database is not None else ":memory:")
    con.execute(f"SET temp_directory = '{DUCKDB_TEMP_DIR}'")
    con.execute(f"ATTACH '{data}' AS src (READ_ONLY)")
    duckrate.register(con)
    return con


def time_replay(con, replay_call: str, repeats: int, expected_rows: int) -> list[float]:
    """Seconds of ``CREATE OR REPLACE TABLE r AS SELECT * FROM <replay_call>``, ``repeats`` times; checks
    the row count (untimed) and drops ``r`` after each run."""
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TABLE r AS SELECT * FROM {replay_call}")
        seconds.append(time.perf_counter() - started)
        written = con.execute("SELECT count(*) FROM r").fetchone()[0]
        if written != expected_rows:
            raise SystemExit(f"{replay_call} wrote {written} rows for {expected_rows} matches")
        con.execute("DROP TABLE r")
    return seconds


def median(values: list[float]) -> float:
    return statistics.median(values)


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    """A Markdown table with columns padded to equal width (pastes into BENCHMARKS.md as is)."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        return "| " + " | ".join(str(cell).rjust(width) for cell, width in zip(cells, widths)) + " |"

    separator = "|" + "|".join("-" * (width + 1) + ":" for width in widths) + "|"
    return "\n".join([line(headers), separator, *(line(row) for row in rows)])


def human_count(n: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n:,}"


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/_common.py", description="Benchmark data helpers.")
    commands = parser.add_subparsers(dest="command", required=True)
    generate = commands.add_parser("generate-matches", help="write generate_matches(...) to a DuckDB file")
    generate.add_argument("--n-matches", type=int, required=True)
    generate.add_argument("--n-players", type=int, required=True)
    generate.add_argument("--n-leagues", type=int, default=1)
    generate.add_argument("--seed", type=int, default=0)
    generate.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    _generate_matches(args.n_matches, args.n_players, args.n_leagues, args.seed, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
