"""The command line of the generators: ``python -m duckrate.synthetic`` (and ``duckrate synth``), :func:`main`.

Each command writes one generator's frame as CSV or Parquet (by the extension of ``--out``), or the demo
seeds::

    python -m duckrate.synthetic matches --n-matches 100000 --n-players 5000 --out m.parquet
    python -m duckrate.synthetic contests --n-contests 50 --players-per-contest 300 \\
        --pool-size 2000 --out c.csv
    python -m duckrate.synthetic battles --n-models 130 --n-battles 1500000 --out b.parquet
    python -m duckrate.synthetic teams --n-matches 1000000 --pool-size 100000 --out t.parquet
    python -m duckrate.synthetic teams --n-matches 50000 --pool-size 5000 --teams-per-match 2-8 \\
        --team-size 1-8 --scores --out t.csv
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path

import polars as pl

from duckrate.synthetic.battles import generate_battles
from duckrate.synthetic.contests import generate_contests
from duckrate.synthetic.demo_seeds import write_demo_seeds
from duckrate.synthetic.matches import generate_matches
from duckrate.synthetic.teams import generate_team_matches
from duckrate.synthetic.win_matrices import KINDS as WIN_MATRIX_KINDS
from duckrate.synthetic.win_matrices import MATCHMAKING, matrix_matches, win_matrix


def _write_frame(frame: pl.DataFrame, out: Path) -> None:
    """Write ``frame`` as CSV or Parquet depending on the extension of ``out``."""
    suffix = out.suffix.lower()
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".csv":
        frame.write_csv(out)
    elif suffix == ".parquet":
        frame.write_parquet(out)
    else:
        raise ValueError(f"unsupported output extension {out.suffix!r}; use .csv or .parquet")


def _size_or_range(text: str) -> int | tuple[int, int]:
    """``"5"`` as 5, ``"2-8"`` as the inclusive range ``(2, 8)``."""
    try:
        low, separator, high = text.partition("-")
        return (int(low), int(high)) if separator else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number or a range like 2-8, got {text!r}") from None


# The teams command's options passed on only when given, so the generator's own defaults apply otherwise.
_TEAM_OPTIONS = (
    "seed",
    "teams_per_match",
    "team_size",
    "n_leagues",
    "skill_sd",
    "perf_sd",
    "drift_sd",
    "tie_rate",
    "partial_play_rate",
    "scores",
    "start",
    "matches_per_day",
    "activity_sd",
)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m duckrate.synthetic",
        description="Generate deterministic synthetic rating data (CSV or Parquet by extension).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    matches = commands.add_parser("matches", help="two-player games with draws")
    matches.add_argument("--n-matches", type=int, required=True)
    matches.add_argument("--n-players", type=int, required=True)
    matches.add_argument("--n-leagues", type=int, default=1)
    matches.add_argument("--seed", type=int, default=0)
    matches.add_argument("--out", type=Path, required=True)

    contests = commands.add_parser("contests", help="ranked multi-player contests")
    contests.add_argument("--n-contests", type=int, required=True)
    contests.add_argument("--players-per-contest", type=int, required=True)
    contests.add_argument("--pool-size", type=int, required=True)
    contests.add_argument("--n-leagues", type=int, default=1)
    contests.add_argument("--seed", type=int, default=0)
    contests.add_argument("--out", type=Path, required=True)

    teams = commands.add_parser("teams", help="team matches: one row per player per match, teams ranked")
    teams.add_argument("--n-matches", type=int, required=True)
    teams.add_argument("--pool-size", type=int, required=True)
    unset = argparse.SUPPRESS
    teams.add_argument("--teams-per-match", type=_size_or_range, default=unset, help="N or LOW-HIGH (default 2)")
    teams.add_argument("--team-size", type=_size_or_range, default=unset, help="N or LOW-HIGH (default 5)")
    teams.add_argument("--n-leagues", type=int, default=unset, help="default 1")
    teams.add_argument("--skill-sd", type=float, default=unset, help="default 25/3")
    teams.add_argument("--perf-sd", type=float, default=unset, help="default 25/6")
    teams.add_argument("--drift-sd", type=float, default=unset, help="per day, default 25/300")
    teams.add_argument("--tie-rate", type=float, default=unset, help="default 0.10")
    teams.add_argument("--partial-play-rate", type=float, default=unset, help="default 0")
    teams.add_argument("--scores", action="store_true", default=unset, help="add a score column")
    teams.add_argument("--start", type=datetime.fromisoformat, default=unset, help="ISO date, default 2024-01-01")
    teams.add_argument("--matches-per-day", type=float, default=unset, help="default 1000")
    teams.add_argument("--activity-sd", type=float, default=unset, help="default 1.0")
    teams.add_argument("--seed", type=int, default=unset, help="default 0")
    teams.add_argument("--out", type=Path, required=True)

    matrix = commands.add_parser("matrix", help="games drawn from a known win matrix (Tang, Wang & Jin, Appendix F)")
    matrix.add_argument("--kind", choices=WIN_MATRIX_KINDS, required=True)
    matrix.add_argument("--final-kind", choices=WIN_MATRIX_KINDS, help="drift linearly towards a second matrix")
    matrix.add_argument("--n-players", type=int, required=True)
    matrix.add_argument("--n-matches", type=int, required=True)
    matrix.add_argument("--matchmaking", choices=MATCHMAKING, default="uniform")
    matrix.add_argument("--seed", type=int, default=0)
    matrix.add_argument("--out", type=Path, required=True)

    battles = commands.add_parser("battles", help="arena-shaped battles with style covariates and users")
    battles.add_argument("--n-models", type=int, default=130)
    battles.add_argument("--n-battles", type=int, default=1_500_000)
    battles.add_argument("--n-covariates", type=int, default=3)
    battles.add_argument("--tie-rate", type=float, default=0.10)
    battles.add_argument("--uniform-pairs", action="store_true", help="pairs by activity only (not adaptive)")
    battles.add_argument("--seed", type=int, default=0)
    battles.add_argument("--out", type=Path, required=True)

    demo = commands.add_parser("demo-seeds", help="write the bundled demo seed CSVs")
    demo.add_argument("--dir", type=Path, required=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "matches":
            frame = generate_matches(args.n_matches, args.n_players, args.n_leagues, args.seed)
            _write_frame(frame, args.out)
        elif args.command == "contests":
            frame = generate_contests(
                args.n_contests,
                args.players_per_contest,
                args.pool_size,
                args.seed,
                n_leagues=args.n_leagues,
            )
            _write_frame(frame, args.out)
        elif args.command == "teams":
            options = {name: getattr(args, name) for name in _TEAM_OPTIONS if hasattr(args, name)}
            frame = generate_team_matches(args.n_matches, args.pool_size, **options)
            _write_frame(frame, args.out)
        elif args.command == "battles":
            frame = generate_battles(
                args.n_models,
                args.n_battles,
                args.seed,
                tie_rate=args.tie_rate,
                n_covariates=args.n_covariates,
                adaptive=not args.uniform_pairs,
            )
            _write_frame(frame, args.out)
        elif args.command == "matrix":
            start = win_matrix(args.kind, args.n_players, args.seed)
            final = None if args.final_kind is None else win_matrix(args.final_kind, args.n_players, args.seed + 1)
            frame = matrix_matches(start, args.n_matches, args.seed, args.matchmaking, final_matrix=final)
            _write_frame(frame, args.out)
        else:
            write_demo_seeds(args.dir)
    except ValueError as error:
        parser.error(str(error))
    return 0
