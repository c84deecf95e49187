"""``duckrate`` command line: ``duckrate demo`` builds the demo warehouse (and writes its report);
``duckrate report`` writes the HTML report of a warehouse; ``duckrate build`` runs ``dbt build``
into a copy of a warehouse and publishes it atomically; ``duckrate synth`` makes data.

Why publish by swap: a DuckDB file opened read-write is locked exclusively by that process, so a dashboard
cannot open the warehouse while ``dbt build`` writes it (and a dashboard holding it open makes the build fail
to lock it). ``duckrate build`` therefore builds into ``.<name>.building`` next to the warehouse, starting
from a copy of the current warehouse (incremental models keep their state), and on success renames it over
the warehouse with :func:`os.replace` (atomic on POSIX). A reader that opened the old file keeps reading the
old tables until it reconnects; a reader that opens the path after the swap sees the complete new build;
no reader ever sees a half-built warehouse, and readers never block the build.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from duckrate.core import crash_points
from duckrate.core.build_lock import build_lock, staging_path

DEMO_PROJECT = Path(__file__).resolve().parents[2] / "demo"
WAREHOUSE_ENV = "DUCKRATE_WAREHOUSE"  # the profile's path: "{{ env_var('DUCKRATE_WAREHOUSE', ...) }}"


def run_dbt(args: list[str], env: dict[str, str] | None = None) -> None:
    """Run one dbt command in a child process (dbt keeps the warehouse open in its own process)."""
    dbt = Path(sys.executable).with_name("dbt")
    command = [str(dbt)] if dbt.exists() else [sys.executable, "-c", "from dbt.cli.main import cli; cli()"]
    completed = subprocess.run([*command, *args], check=False, env=env)
    if completed.returncode != 0:
        raise SystemExit(f"dbt {args[0]} failed (exit {completed.returncode}): see the log above")


def _sidecars(path: Path) -> list[Path]:
    """The database file and its write-ahead log."""
    return [path, path.with_name(path.name + ".wal")]


def build_and_publish(warehouse: Path, dbt_args: list[str], wait: bool = False) -> None:
    """Run ``dbt <dbt_args>`` against a copy of ``warehouse`` and, if it succeeds, atomically replace
    ``warehouse`` with the result.

    The dbt profile must take its DuckDB path from the ``DUCKRATE_WAREHOUSE`` environment variable
    (``path: "{{ env_var('DUCKRATE_WAREHOUSE') }}"``); it is set to the staging copy for the run. A failed
    build leaves the published warehouse untouched. Two builds of one warehouse never run at once
    (:func:`duckrate.core.build_lock.build_lock`): a second one is refused with a message naming the first,
    or, with ``wait``, waits for it.
    """
    warehouse = warehouse.resolve()
    warehouse.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(warehouse)
    with build_lock(warehouse, wait):
        for stale in _sidecars(staging):
            stale.unlink(missing_ok=True)
        # Start from the current warehouse: incremental models continue from the state saved in it.
        # Published files are only ever replaced, never written in place, so this copy is consistent.
        for source, target in zip(_sidecars(warehouse), _sidecars(staging)):
            if source.exists():
                shutil.copyfile(source, target)
        copied = staging.stat().st_mtime_ns if staging.exists() else None
        crash_points.reached("build.copied")
        try:
            run_dbt(dbt_args, env={**os.environ, WAREHOUSE_ENV: str(staging)})
            crash_points.reached("build.built")
            if not staging.exists() or staging.stat().st_mtime_ns == copied:
                raise SystemExit(
                    f"dbt did not write {staging}: the profile's path must be \"{{{{ env_var('{WAREHOUSE_ENV}') }}}}\""
                )
            _checkpoint(staging)
            with open(staging, "rb") as built:
                os.fsync(built.fileno())
            crash_points.reached("build.checkpointed")
            os.replace(staging, warehouse)  # the atomic publish
            crash_points.reached("build.published")
            warehouse.with_name(warehouse.name + ".wal").unlink(missing_ok=True)  # _checkpoint left none
            directory = os.open(warehouse.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
        finally:
            for leftover in _sidecars(staging):
                leftover.unlink(missing_ok=True)


def _checkpoint(database: Path) -> None:
    """Fold a write-ahead log left next to ``database`` into the file, so the file alone is the warehouse."""
    if database.with_name(database.name + ".wal").exists():
        import duckdb

        with duckdb.connect(str(database)) as con:
            con.execute("CHECKPOINT")


def build_demo(warehouse: Path, threads: int) -> None:
    """``dbt deps`` and ``dbt build`` of the demo project, published into ``warehouse`` by swap."""
    if not (DEMO_PROJECT / "dbt_project.yml").exists():
        raise SystemExit(f"the demo project is not at {DEMO_PROJECT}: run this from a checkout of duckrate")
    common = ["--project-dir", str(DEMO_PROJECT), "--profiles-dir", str(DEMO_PROJECT)]
    run_dbt(["deps", *common])
    build_and_publish(warehouse, ["build", *common, "--threads", str(threads)])


def show_demo(warehouse: Path, top: int) -> None:
    """Print the top of the leaderboard and the calibration summary, read as plain tables."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        print(f"\nTop {top} of the leaderboard per league (table main.leaderboard in {warehouse}):")
        con.sql(
            f"SELECT league, system, rank, player, round(rating, 1) AS rating, round(sd, 1) AS sd, "
            f"round(lower, 1) AS lower, round(upper, 1) AS upper, games, last_played_at "
            f"FROM leaderboard WHERE rank <= {int(top)} ORDER BY league, system, rank"
        ).show(max_rows=1000)
        print("Calibration summary (table main.calibration_summary):")
        con.sql(
            "SELECT league, system, n, round(log_loss, 4) AS log_loss, round(brier, 4) AS brier, "
            "round(accuracy, 4) AS accuracy, n_established, round(log_loss_established, 4) AS log_loss_established "
            "FROM calibration_summary ORDER BY league, system"
        ).show()
        tables = {row[0] for row in con.sql("SELECT table_name FROM information_schema.tables").fetchall()}
        if "contest_leaderboard" in tables:
            print(f"Top {top} of the contest leaderboard (Elo-MMR, table main.contest_leaderboard):")
            con.sql(
                f"SELECT league, rank, player, round(rating, 1) AS rating, round(sd, 1) AS sd, contests, last_played_at "
                f"FROM contest_leaderboard WHERE rank <= {int(top)} ORDER BY league, system, rank"
            ).show()
            print("Contest metrics (table main.contest_metrics, Ebtekar & Liu Section 6.2):")
            con.sql(
                "SELECT league, system, round(pair_inversion, 4) AS pair_inversion, "
                "round(rank_deviation, 4) AS rank_deviation, n FROM contest_metrics ORDER BY league, system"
            ).show()
        rejected = con.sql("SELECT reason, count(*) AS rows FROM rejected_matches GROUP BY reason ORDER BY reason")
        print("Rows rejected by staging (table main.rejected_matches):")
        rejected.show()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="duckrate", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="build the demo warehouse with dbt and print its leaderboard")
    demo.add_argument("--warehouse", type=Path, default=DEMO_PROJECT / "warehouse.duckdb")
    demo.add_argument("--threads", type=int, default=2)
    demo.add_argument("--top", type=int, default=5)
    demo.add_argument(
        "--report",
        type=Path,
        default=DEMO_PROJECT / "report.html",
        help="where to write the HTML report (docs/report.md)",
    )
    report = commands.add_parser(
        "report", help="write one self-contained HTML report of a warehouse's marts (docs/report.md)"
    )
    report.add_argument("--warehouse", type=Path, required=True)
    report.add_argument("--out", type=Path, required=True)
    build = commands.add_parser(
        "build",
        help="dbt build into a copy of the warehouse, then publish it atomically (readers never block it)",
        description="Run `dbt build` (or any dbt command given after --) against a copy of --warehouse and "
        "atomically replace the warehouse with it on success. The profile's path must be "
        "\"{{ env_var('DUCKRATE_WAREHOUSE') }}\".",
    )
    build.add_argument("--warehouse", type=Path, required=True)
    build.add_argument(
        "--wait",
        action="store_true",
        help="if another duckrate build of this warehouse is running, wait for it to finish (default: refuse)",
    )
    build.add_argument(
        "dbt_args",
        nargs=argparse.REMAINDER,
        help="dbt arguments (default: build); e.g. -- build --project-dir . --threads 4",
    )
    warm_parser = commands.add_parser(
        "warm", help="compile every kernel into numba's cache now, so later processes start fast"
    )
    warm_parser.add_argument(
        "--fresh", action="store_true", help="delete the cached kernels first (after an upgrade or a source edit)"
    )
    warm_parser.add_argument("--jobs", type=int, default=None, help="processes (default: 2 with two cores or more)")
    warm_parser.add_argument("--part", choices=("matches", "groups"), help=argparse.SUPPRESS)
    generate = commands.add_parser(
        "generate", help="write the files generated from the registries (docs/reference.md, the dbt system lists)"
    )
    generate.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    synth = commands.add_parser(
        "synth", help="generate synthetic matches, contests, team matches or battles (see duckrate.synthetic)"
    )
    synth.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "demo":
        build_demo(args.warehouse, args.threads)
        show_demo(args.warehouse, args.top)
        from duckrate.report import write_report

        print(f"Report: {write_report(args.warehouse, args.report)}")
        return 0
    if args.command == "report":
        from duckrate.report import write_report

        print(f"Report: {write_report(args.warehouse, args.out)}")
        return 0
    if args.command == "warm":
        from duckrate.tools.warm import warm, warm_part

        if args.part is not None:  # one half of a warm-up another process runs
            warm_part(args.part)
        else:
            warm(fresh=args.fresh, jobs=args.jobs)
        return 0
    if args.command == "generate":
        from duckrate.tools.generate import generated_files

        for path, text in generated_files().items():
            (args.root / path).write_text(text)
        return 0
    if args.command == "build":
        dbt_args = args.dbt_args[1:] if args.dbt_args[:1] == ["--"] else args.dbt_args
        build_and_publish(args.warehouse, dbt_args or ["build"], wait=args.wait)
        return 0
    from duckrate import synthetic

    return synthetic.main(args.rest)


if __name__ == "__main__":
    sys.exit(main())
