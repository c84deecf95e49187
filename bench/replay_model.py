"""The dbt replay model against the macro it runs, at 10M matches (issue 15, item 3).

    .venv/bin/python bench/replay_model.py [--n-matches 10000000] [--system elo] [--repeats 2]

Target: ``replay_elo`` in dbt within 1.5x of ``CREATE TABLE ... AS SELECT * FROM elo_replay(...)`` in the
same run. On bench/elo.py's data (50k players, one league), loaded as the raw table of a fresh dbt project
(``duckrate_systems: [<system>]``, staging built first, untimed), this times, each in its own process:

1. the macro: ``CREATE TABLE r AS SELECT * FROM <system>_replay('stg_matches')`` (what the model computes);
2. the model, a full build: ``dbt run --select replay_<system> --full-refresh`` (dbt's own execution time of
   the model: reading the input, replaying in chunks of the default size, writing the rows, the state and
   the build record), also with ``duckrate_chunk_size`` above the input size (one chunk);
3. the model, an incremental build after 1% more matches arrived (same input plus 1% new matches).

Prints seconds, the ratio to the macro, and peak RSS (the dbt process tree, sampled every 0.1 s).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import _common as common
import psutil
from elo import N_PLAYERS, SEED

DBT = Path(sys.executable).with_name("dbt")
TARGET_RATIO = 1.5
PROJECT = """
name: replay_model_bench
version: "0.1.0"
config-version: 2
profile: replay_model_bench
vars:
  duckrate_matches_table: raw_matches
  duckrate_systems: [{system}]
"""
PROFILE = """
replay_model_bench:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"
      threads: 2
      plugins:
        - module: duckrate.plugin
"""
MACRO = """
import duckdb, duckrate, sys, time
con = duckdb.connect(sys.argv[1])
con.execute("SET enable_progress_bar = false")
duckrate.register(con)
con.execute("CREATE TEMP TABLE warm AS SELECT * FROM stg_matches LIMIT 1000")
con.execute(f"SELECT count(*) FROM {sys.argv[2]}_replay('warm')").fetchall()
started = time.perf_counter()
con.execute(f"CREATE OR REPLACE TABLE bench_macro AS SELECT * FROM {sys.argv[2]}_replay('stg_matches')")
print(time.perf_counter() - started)
con.execute("DROP TABLE bench_macro")
con.execute("CHECKPOINT")
"""


def tree_peak(command: list[str], env: dict, cwd: Path) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``command``; returns it and the peak summed RSS of its process tree."""
    child = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak, done = [0], threading.Event()

    def sample():
        root = psutil.Process(child.pid)
        while not done.is_set():
            try:
                total = sum(p.memory_info().rss for p in [root, *root.children(recursive=True)])
                peak[0] = max(peak[0], total)
            except psutil.Error:
                pass
            done.wait(0.1)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    out, _ = child.communicate()
    done.set()
    thread.join()
    return subprocess.CompletedProcess(command, child.returncode, out, ""), peak[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-matches", type=int, default=10_000_000)
    parser.add_argument("--system", default="elo")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    for line in common.machine_lines(("duckrate", "duckdb", "dbt-core", "dbt-duckdb", "polars", "numba")):
        print(line)
    data = common.matches_file(f"elo_{args.n_matches}", args.n_matches, N_PLAYERS, n_leagues=1, seed=SEED, log=print)
    project = common.DATA_DIR / "replay_model_project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "dbt_project.yml").write_text(PROJECT.format(system=args.system))
    (project / "profiles.yml").write_text(PROFILE)
    (project / "packages.yml").write_text(f"packages:\n  - local: {common.REPO_ROOT}\n")
    warehouse = project / "warehouse.duckdb"
    warehouse.unlink(missing_ok=True)
    env = {**os.environ, "DUCKRATE_WAREHOUSE": str(warehouse)}
    dirs = ["--project-dir", str(project), "--profiles-dir", str(project)]
    subprocess.run([str(DBT), "deps", *dirs], check=True, capture_output=True, cwd=project, env=env)
    load = (
        f"import duckdb; c = duckdb.connect({str(warehouse)!r}); c.execute('SET enable_progress_bar = false'); c.execute(\"ATTACH '{data}' AS src (READ_ONLY)\"); "
        "c.execute('CREATE TABLE raw_matches AS SELECT * FROM src.matches')"
    )
    subprocess.run([sys.executable, "-c", load], check=True)
    subprocess.run(
        [str(DBT), "run", "--select", "+stg_matches", "--exclude", f"replay_{args.system}", *dirs],
        check=True,
        capture_output=True,
        cwd=project,
        env=env,
    )

    def model_seconds() -> float:
        results = json.loads((project / "target" / "run_results.json").read_text())
        return next(
            r["execution_time"] for r in results["results"] if r["unique_id"].endswith(f".replay_{args.system}")
        )

    def dbt_run(*extra: str) -> tuple[float, int]:
        completed, peak = tree_peak([str(DBT), "run", "--select", f"replay_{args.system}", *extra, *dirs], env, project)
        if completed.returncode != 0:
            raise SystemExit(completed.stdout[-3000:])
        return model_seconds(), peak

    rows = []
    macro = []
    for _ in range(args.repeats):
        completed, peak = tree_peak([sys.executable, "-c", MACRO, str(warehouse), args.system], env, project)
        if completed.returncode != 0:
            raise SystemExit(completed.stdout[-3000:])
        macro.append((float(completed.stdout.strip().splitlines()[-1]), peak))
    base = common.median([s for s, _ in macro])
    rows.append(
        [
            "macro: CREATE TABLE AS SELECT * FROM replay",
            f"{base:.2f}",
            "1.00x",
            f"{max(p for _, p in macro) / common.GB:.2f}",
        ]
    )
    cases = [
        ("model, full build (default chunks)", ("--full-refresh",)),
        (
            "model, full build (one chunk)",
            ("--full-refresh", "--vars", f"{{duckrate_chunk_size: {2 * args.n_matches}}}"),
        ),
    ]
    for name, extra in cases:
        runs = [dbt_run(*extra) for _ in range(args.repeats)]
        seconds = common.median([s for s, _ in runs])
        rows.append([name, f"{seconds:.2f}", f"{seconds / base:.2f}x", f"{max(p for _, p in runs) / common.GB:.2f}"])
    new = args.n_matches // 100
    grow = (
        f"import duckdb; c = duckdb.connect({str(warehouse)!r}); c.execute('SET enable_progress_bar = false'); "
        f"c.execute('INSERT INTO raw_matches SELECT match_id + {args.n_matches}, played_at + INTERVAL 3650 DAY, league, player_a, "
        f"player_b, score_a FROM raw_matches ORDER BY match_id LIMIT {new}')"
    )
    subprocess.run([sys.executable, "-c", grow], check=True)
    subprocess.run(
        [str(DBT), "run", "--select", "+stg_matches", "--exclude", f"replay_{args.system}", *dirs],
        check=True,
        capture_output=True,
        cwd=project,
        env=env,
    )
    seconds, peak = dbt_run()
    rows.append(
        [
            f"model, incremental build (+{new:,} matches)",
            f"{seconds:.2f}",
            f"{seconds / base:.2f}x",
            f"{peak / common.GB:.2f}",
        ]
    )
    print(f"{args.system}, {args.n_matches:,} matches, {N_PLAYERS:,} players; {args.repeats} runs each (median)")
    print(common.format_table(["what", "s", "x macro", "peak RSS GB (process tree)"], rows))
    print(f"target: the full build within {TARGET_RATIO:g}x the macro")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
