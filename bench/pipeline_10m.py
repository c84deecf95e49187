"""The full demo pipeline over 10M generated matches: every model the demo builds, through a real dbt build.

    .venv/bin/python bench/pipeline_10m.py [--n-matches 10000000] [--n-players 100000] [--threads 2]

Generates (and caches under ``bench/.data/``) ``generate_matches(n, players, n_leagues=2)`` and
``generate_contests(...)``, loads them into a fresh warehouse as ``raw_matches`` / ``raw_contests``, writes a
dbt project with the demo's vars pointing at them (``bench/.data/pipeline_project/``), and runs
``duckrate build`` (dbt build into a copy of the warehouse, then ``os.replace``) on it. Prints dbt's own
per-model wall time (``target/run_results.json``), the total wall time, and the peak resident memory of the
whole process tree (dbt and its DuckDB), sampled every 0.25 s with psutil, also at the moment each model
was running. The parent imports only the standard library, psutil and yaml; dbt runs in a child process.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from datetime import UTC
from pathlib import Path

from _common import DATA_DIR, GB, REPO_ROOT, TreeMemory, format_table, machine_lines, matches_file

DBT = Path(sys.executable).with_name("dbt")

#: The figures this benchmark is measured against (10M matches / 100k players, 2026-11-22, DuckDB's default
#: memory limit; BENCHMARKS.md history): dbt seconds per model, and the whole build.
PREVIOUS_SECONDS = {
    "replay_chance": 988.9,
    "bt_ratings": 677.4,
    "bt_tests": 299.7,
    "replay_pairwise": 182.7,
    "calibration_summary": 110.3,
    "calibration_bins": 76.9,
    "replay_glicko2": 73.4,
    "leaderboard": 69.0,
    "replay_glicko": 61.7,
    "loss_curve": 47.4,
    "replay_trueskill": 42.0,
    "replay_elo2k": 38.9,
    "stg_matches_checked": 37.7,
    "replay_elo": 28.1,
    "replay_elo_mmr": 14.8,
}
PREVIOUS_TOTAL_SECONDS, PREVIOUS_PEAK_GB = 1496.0, 24.35

PROJECT_YML = """\
# Written by bench/pipeline_10m.py: the demo's pipeline over the generated raw tables.
name: duckrate_pipeline_bench
version: "0.1.0"
config-version: 2
profile: duckrate_pipeline_bench
vars:
  duckrate_matches_table: raw_matches          # canonical columns already
  duckrate_contests_table: raw_contests
  duckrate_params: {params}                    # the demo's (demo/dbt_project.yml)
"""


def demo_params() -> dict:
    """The systems' parameters the demo project sets (``vars.duckrate_params`` of demo/dbt_project.yml)."""
    import yaml

    return yaml.safe_load((REPO_ROOT / "demo" / "dbt_project.yml").read_text())["vars"]["duckrate_params"]


PROFILES_YML = """\
duckrate_pipeline_bench:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"
      threads: 2
      plugins:
        - module: duckrate.plugin
      config_options:
        storage_compatibility_version: v1.5.0
"""

LOAD = """
import duckdb, sys
warehouse, matches, contests = sys.argv[1:4]
con = duckdb.connect(warehouse, config={"storage_compatibility_version": "v1.5.0"})
con.execute("SET enable_progress_bar = false")
con.execute(f"ATTACH '{matches}' AS src (READ_ONLY)")
con.execute("CREATE TABLE raw_matches AS SELECT * FROM src.matches")
con.execute(f"CREATE TABLE raw_contests AS SELECT * FROM read_parquet('{contests}')")
print(con.sql("SELECT (SELECT count(*) FROM raw_matches), (SELECT count(*) FROM raw_contests)").fetchall()[0])
con.close()
"""


def log(message: str) -> None:
    print(message, flush=True)


def contests_file(n_contests: int, per_contest: int, pool: int) -> Path:
    path = DATA_DIR / f"pipeline_contests_{n_contests}x{per_contest}_{pool}.parquet"
    if not path.exists():
        log(f"generating {n_contests:,} contests x {per_contest} players (pool {pool:,}) -> {path}")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "duckrate.synthetic",
                "contests",
                "--n-contests",
                str(n_contests),
                "--players-per-contest",
                str(per_contest),
                "--pool-size",
                str(pool),
                "--n-leagues",
                "2",
                "--out",
                str(path),
            ],
            check=True,
            cwd=REPO_ROOT,
        )
    return path


def _epoch(timestamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).replace(tzinfo=UTC).timestamp()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-matches", type=int, default=10_000_000)
    parser.add_argument("--n-players", type=int, default=100_000)
    parser.add_argument("--n-contests", type=int, default=1_000)
    parser.add_argument("--players-per-contest", type=int, default=500)
    parser.add_argument("--contest-pool", type=int, default=50_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--select", default=None, help="dbt --select (default: every model)")
    parser.add_argument(
        "--memory-limit",
        default=None,
        help="DuckDB memory_limit in the profile, e.g. 8GB (default: DuckDB's, 80%% of RAM)",
    )
    args = parser.parse_args(argv)

    for line in machine_lines(("duckrate", "duckdb", "dbt-core", "dbt-duckdb", "polars", "numba", "pyarrow")):
        log(line)
    matches = matches_file(
        f"pipeline_matches_{args.n_matches}_{args.n_players}",
        args.n_matches,
        args.n_players,
        n_leagues=2,
        seed=0,
        log=log,
    )
    contests = contests_file(args.n_contests, args.players_per_contest, args.contest_pool)

    project = DATA_DIR / "pipeline_project"
    shutil.rmtree(project, ignore_errors=True)
    project.mkdir(parents=True)
    (project / "dbt_project.yml").write_text(PROJECT_YML.format(params=json.dumps(demo_params())))
    profile = PROFILES_YML + (
        f"      settings:\n        memory_limit: {args.memory_limit}\n" if args.memory_limit else ""
    )
    (project / "profiles.yml").write_text(profile)
    log(f"DuckDB memory_limit: {args.memory_limit or 'default (80% of RAM)'}")
    (project / "packages.yml").write_text(f"packages:\n  - local: {REPO_ROOT}\n")
    dbt_dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    subprocess.run([str(DBT), "deps", *dbt_dirs], check=True, capture_output=True, cwd=project)
    warehouse = project / "warehouse.duckdb"
    started = time.perf_counter()
    loaded = subprocess.run(
        [sys.executable, "-c", LOAD, str(warehouse), str(matches), str(contests)],
        check=True,
        capture_output=True,
        text=True,
    )
    log(f"loaded raw tables {loaded.stdout.strip()} in {time.perf_counter() - started:.1f} s")

    command = [
        sys.executable,
        "-m",
        "duckrate.cli",
        "build",
        "--warehouse",
        str(warehouse),
        "--",
        "build",
        *dbt_dirs,
        "--threads",
        str(args.threads),
    ] + (["--select", args.select] if args.select else [])
    log(f"running: {' '.join(command[2:])}")
    started = time.perf_counter()
    with open(project / "build.log", "w") as build_log:
        child = subprocess.Popen(command, cwd=project, stdout=build_log, stderr=subprocess.STDOUT)
        with TreeMemory(child.pid) as memory:
            returncode = child.wait()
    wall = time.perf_counter() - started
    tail = (project / "build.log").read_text().splitlines()[-15:]
    log("\n".join(tail))

    results = json.loads((project / "target" / "run_results.json").read_text())
    rows = []
    for result in sorted(results["results"], key=lambda r: -r["execution_time"]):
        if not result["unique_id"].startswith("model."):
            continue
        timing = {t["name"]: t for t in result.get("timing", [])}
        window = timing.get("execute")
        peak = (
            memory.peak(_epoch(window["started_at"]), _epoch(window["completed_at"]))
            if window and window.get("started_at")
            else 0
        )
        name = result["unique_id"].split(".")[-1]
        before = PREVIOUS_SECONDS.get(name)
        rows.append(
            [
                name,
                result["status"],
                f"{result['execution_time']:.1f}",
                "-"
                if before is None or result["status"] != "success"
                else f"{before:.1f} ({before / max(result['execution_time'], 1e-9):.1f}x)",
                f"{peak / GB:.1f}",
                (result.get("message") or "")[:60],
            ]
        )
    log(
        format_table(
            ["model", "status", "seconds", "before (speed-up)", "peak tree RSS while it ran (GB)", "message"], rows
        )
    )
    tests = [r for r in results["results"] if r["unique_id"].startswith("test.")]
    log(
        f"data tests: {len(tests)}, {sum(r['execution_time'] for r in tests):.1f} s in total, "
        f"statuses {sorted({r['status'] for r in tests})}"
    )
    log(
        f"dbt elapsed {results['elapsed_time']:.1f} s (before: {PREVIOUS_TOTAL_SECONDS:.0f} s, "
        f"{PREVIOUS_TOTAL_SECONDS / results['elapsed_time']:.1f}x); duckrate build wall (copy + dbt + publish) {wall:.1f} s; "
        f"peak RSS of the process tree {memory.peak() / GB:.2f} GB (before: {PREVIOUS_PEAK_GB} GB); exit code {returncode}"
    )
    log(f"warehouse {warehouse.stat().st_size / GB:.2f} GB" if warehouse.exists() else "no warehouse published")
    return returncode


if __name__ == "__main__":
    raise SystemExit(main())
