"""Benchmark: the file readers on large generated files, time and peak memory (resident set size).

Writes into a temporary directory (deleted at the end): a lichess-like PGN (17 tags, a blank line, one
movetext line with clock comments per game; ``--games`` games, 1.7M by default, about 1.8 GB) and its
``.pgn.zst`` (when the ``zstd`` command is there), ``--battles`` Chatbot Arena records as JSON lines (3M,
about 1.1 GB), and ``--contests`` Elo-MMR contest files of 6000 standings each (1000, about 150 MB). Each
case runs in a fresh child process under ``SET memory_limit`` (``--memory-limit``, 500MB by default),
counting the reader's rows; the child prints its own peak resident memory (including about 0.2 GB for
Python with duckrate imported, printed as the ``baseline`` case). Nothing is asserted about timings.

Usage (from the repository root)::

    .venv/bin/python bench/readers.py
    .venv/bin/python bench/readers.py --games 200000 --battles 300000 --contests 100 --memory-limit 250MB
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys, time, duckdb, duckrate
con = duckrate.register(duckdb.connect())
con.execute("SET enable_progress_bar = false")
con.execute(f"SET memory_limit = '{sys.argv[2]}'")
con.execute(f"SET temp_directory = '{sys.argv[3]}'")
started = time.perf_counter()
result = con.sql(sys.argv[1]).fetchall() if sys.argv[1] else None
seconds = time.perf_counter() - started
print(result, round(seconds, 1), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6)
"""


def write_pgn(path: Path, games: int) -> None:
    moves = " ".join(f"{i}. e4 {{ [%clk 0:02:5{i % 10}] }} e5 {{ [%clk 0:02:5{i % 10}] }}" for i in range(1, 15))
    results = ("1-0", "0-1", "1/2-1/2")
    with path.open("w", buffering=1 << 22) as out:
        for g in range(games):
            result, white, black = results[g % 3], g % 50_000, (g * 7 + 1) % 50_000
            out.write(
                f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/{g:08x}"]\n[Date "2024.01.01"]\n'
                f'[Round "-"]\n[White "player{white}"]\n[Black "player{black}"]\n[Result "{result}"]\n'
                f'[UTCDate "2024.01.01"]\n[UTCTime "{(g // 3600) % 24:02d}:{(g // 60) % 60:02d}:{g % 60:02d}"]\n'
                f'[WhiteElo "{1500 + g % 700}"]\n[BlackElo "{1500 + g % 500}"]\n[WhiteRatingDiff "+5"]\n'
                f'[BlackRatingDiff "-5"]\n[ECO "C20"]\n[Opening "King\'s Pawn Game"]\n[TimeControl "180+0"]\n'
                f'[Termination "Normal"]\n\n{moves} {result}\n\n'
            )


def write_battles(path: Path, battles: int) -> None:
    winners = ("model_a", "model_b", "tie", "tie (bothbad)")
    with path.open("w", buffering=1 << 22) as out:
        for i in range(battles):
            record = {
                "question_id": f"q{i:09d}",
                "model_a": f"model-{i % 60}",
                "model_b": f"model-{(i * 7 + 1) % 60}",
                "winner": winners[i % 4],
                "judge": f"arena_user_{i % 1000}",
                "turn": 1,
                "anony": True,
                "language": "English",
                "tstamp": 1.7e9 + i * 0.5,
                "conv_metadata": {"sum_user_tokens": 10, "pad": "x" * 120},
            }
            out.write(json.dumps(record) + "\n")


def write_contests(folder: Path, contests: int) -> None:
    folder.mkdir()
    for c in range(contests):
        standings = [[f"user{(c * 31 + i) % 200_000}", i - i % 3, i - i % 3 + 2] for i in range(6000)]
        contest = {"name": f"Round {c}", "time_seconds": 1_266_580_800 + c * 86_400, "standings": standings}
        (folder / f"{c}.json").write_text(json.dumps(contest))


def run(label: str, sql: str, memory_limit: str, spill: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, sql, memory_limit, str(spill)], capture_output=True, text=True, check=True
    )
    print(f"| {label} | {out.stdout.strip()} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1_700_000)
    parser.add_argument("--battles", type=int, default=3_000_000)
    parser.add_argument("--contests", type=int, default=1000)
    parser.add_argument("--memory-limit", default="500MB")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="duckrate_readers_"))
    try:
        spill = folder / "spill"
        print("| case | rows, rejected; seconds; peak RSS GB |\n| --- | --- |")
        run("baseline (python, duckrate, no query)", "", args.memory_limit, spill)
        pgn = folder / "games.pgn"
        write_pgn(pgn, args.games)
        size = pgn.stat().st_size / 1e9
        query = "SELECT count(*), count(rejected_reason) FROM {}('{}')"
        run(f"read_pgn, {args.games} games, {size:.2f} GB", query.format("read_pgn", pgn), args.memory_limit, spill)
        if shutil.which("zstd"):
            subprocess.run(["zstd", "-q", "-T0", str(pgn), "-o", f"{pgn}.zst"], check=True)
            run("read_pgn, the same as .pgn.zst", query.format("read_pgn", f"{pgn}.zst"), args.memory_limit, spill)
            Path(f"{pgn}.zst").unlink()
        pgn.unlink()
        battles = folder / "battles.jsonl"
        write_battles(battles, args.battles)
        size = battles.stat().st_size / 1e9
        run(
            f"read_arena_battles, {args.battles} records, {size:.2f} GB",
            query.format("read_arena_battles", battles),
            args.memory_limit,
            spill,
        )
        battles.unlink()
        write_contests(folder / "contests", args.contests)
        run(
            f"read_contest_json, {args.contests} files x 6000 standings",
            query.format("read_contest_json", folder / "contests" / "*.json"),
            args.memory_limit,
            spill,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
