"""``duckrate`` command line: ``duckrate demo`` builds the demo warehouse; ``duckrate synth`` makes data."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

DEMO_PROJECT = Path(__file__).resolve().parents[2] / "demo"


def run_dbt(args: list[str]) -> None:
    """Run one dbt command in a child process (dbt keeps the warehouse open in its own process)."""
    dbt = Path(sys.executable).with_name("dbt")
    command = [str(dbt)] if dbt.exists() else [sys.executable, "-c", "from dbt.cli.main import cli; cli()"]
    completed = subprocess.run([*command, *args], check=False)
    if completed.returncode != 0:
        raise SystemExit(f"dbt {args[0]} failed (exit {completed.returncode}): see the log above")


def build_demo(warehouse: Path, threads: int) -> None:
    """``dbt deps`` and ``dbt build`` of the demo project into ``warehouse``."""
    if not (DEMO_PROJECT / "dbt_project.yml").exists():
        raise SystemExit(f"the demo project is not at {DEMO_PROJECT}: run this from a checkout of duckrate")
    os.environ["DUCKRATE_WAREHOUSE"] = str(warehouse.resolve())
    common = ["--project-dir", str(DEMO_PROJECT), "--profiles-dir", str(DEMO_PROJECT)]
    run_dbt(["deps", *common])
    run_dbt(["build", *common, "--threads", str(threads)])


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
            con.sql("SELECT league, system, round(pair_inversion, 4) AS pair_inversion, "
                    "round(rank_deviation, 4) AS rank_deviation, n FROM contest_metrics ORDER BY league, system").show()
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
    synth = commands.add_parser("synth", help="generate synthetic matches or contests (see duckrate.synthetic)")
    synth.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "demo":
        build_demo(args.warehouse, args.threads)
        show_demo(args.warehouse, args.top)
        return 0
    from . import synthetic

    return synthetic.main(args.rest)


if __name__ == "__main__":
    sys.exit(main())
