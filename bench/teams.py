"""Benchmark: the team systems through SQL, against openskill 6.2.0 and trueskill 0.4.5.

Targets (issue "Team games"):

* 1M matches of 5v5 among 100k players: every Weng-Lin model at least 50x openskill's matches per second and
  TrueSkill for teams at least 50x trueskill's. The peers are timed on the first ``--peer-sample`` matches
  (20k) in replay order, one ``rate`` call per match in a Python loop (rows fetched and grouped into lists
  before timing, so only the peer's rating loop is timed), and their rate is extrapolated to the 1M matches
  (their speed per match does not depend on the history's length). duckrate is timed three ways over the
  same 1M matches: its rating loop alone over the validated matches (the work the peer's loop does, plus
  each match's forecast: the like-for-like comparison), the Python function from a Polars frame to the
  replay frame (validation and output included), and the SQL macro from the table to a new table;
* 10M such matches through SQL in bounded memory, at most 4 GB peak RSS: the history replayed in chunks of
  whole matches (200k matches, the dbt default of 2M rows), each chunk's ``<system>_replay_and_state`` continuing the state the chunk
  before left, as the dbt materialization does (``--large``).

Each case runs in a fresh child process (its peak RSS is its own). Data from
``duckrate.synthetic.generate_team_matches`` (equally active players, ties 10%), cached under ``bench/.data``.
Usage (from the repository root)::

    .venv/bin/python bench/teams.py                 # the 1M-match comparison
    .venv/bin/python bench/teams.py --large         # and the 10M-match run
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as common

SYSTEMS = (
    "plackett_luce",
    "bradley_terry_full",
    "bradley_terry_part",
    "thurstone_mosteller_full",
    "thurstone_mosteller_part",
    "trueskill_teams",
)
PEERS = {
    "plackett_luce": "PlackettLuce",
    "bradley_terry_full": "BradleyTerryFull",
    "bradley_terry_part": "BradleyTerryPart",
    "thurstone_mosteller_full": "ThurstoneMostellerFull",
    "thurstone_mosteller_part": "ThurstoneMostellerPart",
}
TARGET_RATIO = 50.0
LARGE_TARGET_GB = 4.0
SEED = 2_026


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def data_file(n_matches: int, n_players: int) -> Path:
    """``bench/.data/teams_<n>_<players>.duckdb`` with the table ``team_results`` (generated in blocks of 1M
    matches, so 10M matches never sit in memory at once)."""
    path = common.DATA_DIR / f"teams_{n_matches}_{n_players}.duckdb"
    if path.exists():
        return path
    common.DATA_DIR.mkdir(parents=True, exist_ok=True)
    _log(f"generating {n_matches:,} team matches ({n_players:,} players) -> {path.relative_to(common.REPO_ROOT)}")
    common.run_child([str(Path(__file__).resolve()), "--generate", str(n_matches), str(n_players), str(path)])
    return path


def generate(n_matches: int, n_players: int, path: Path) -> None:
    import duckdb
    import polars as pl

    from duckrate.synthetic import generate_team_matches

    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    con = duckdb.connect(str(partial))
    block = 1_000_000
    for first in range(0, n_matches, block):
        frame = generate_team_matches(
            min(block, n_matches - first), n_players, seed=SEED + first, activity_sd=0.0, matches_per_day=5_000.0
        )
        # blocks follow each other in time and in match ids
        frame = frame.with_columns(
            pl.col("match_id") + first,
            pl.col("played_at") + pl.duration(days=first // 5_000),
        )
        con.register("frame", frame)
        if first == 0:
            con.execute("CREATE TABLE team_results AS SELECT * FROM frame")
        else:
            con.execute("INSERT INTO team_results SELECT * FROM frame")
        con.unregister("frame")
    con.close()
    partial.rename(path)
    common.emit_result({"path": str(path)})


def _peer_rows(con, sample: int) -> list:
    """The first ``sample`` matches in replay order as (teams, ranks) with the replay's team order."""
    rows = con.execute(
        f"""SELECT match_id, list(player ORDER BY player) AS players, min(rank) AS rank, team
        FROM (SELECT * FROM team_results WHERE match_id <= {sample})
        GROUP BY match_id, team ORDER BY match_id, rank, team"""
    ).fetchall()
    matches: list = []
    current = None
    for match_id, players, rank, _team in rows:
        if match_id != current:
            matches.append(([], []))
            current = match_id
        matches[-1][0].append(players)
        matches[-1][1].append(rank)
    return matches


def time_openskill(name: str, matches: list) -> tuple[float, float]:
    from openskill import models

    model = getattr(models, PEERS[name])()
    ratings: dict = {}
    started = time.perf_counter()
    for teams, ranks in matches:
        rated = model.rate([[ratings.get(p) or model.rating() for p in team] for team in teams], ranks=ranks)
        for team, new in zip(teams, rated):
            for player, rating in zip(team, new):
                ratings[player] = rating
    seconds = time.perf_counter() - started
    return seconds, len(matches) / seconds


def time_trueskill(matches: list) -> tuple[float, float]:
    import trueskill

    env = trueskill.TrueSkill()
    ratings: dict = {}
    fresh = env.create_rating()
    started = time.perf_counter()
    for teams, ranks in matches:
        rated = env.rate([tuple(ratings.get(p, fresh) for p in team) for team in teams], ranks=ranks)
        for team, new in zip(teams, rated):
            for player, rating in zip(team, new):
                ratings[player] = rating
    seconds = time.perf_counter() - started
    return seconds, len(matches) / seconds


def compare_child(args) -> None:
    """Each system over the whole table through SQL, and its peer over the sample."""
    import duckdb

    import duckrate

    con = duckdb.connect()
    duckrate.register(con)
    con.execute(f"ATTACH '{args.data}' AS src (READ_ONLY)")
    con.execute("CREATE TABLE team_results AS SELECT * FROM src.team_results")
    n_matches = con.execute("SELECT count(DISTINCT match_id) FROM team_results").fetchone()[0]
    n_rows = con.execute("SELECT count(*) FROM team_results").fetchone()[0]
    con.execute("CREATE TABLE warm AS SELECT * FROM team_results WHERE match_id <= 2000")
    matches = _peer_rows(con, args.peer_sample)
    frame = con.sql("SELECT * FROM team_results").pl()
    columns = {name: frame[name].to_arrow() for name in frame.columns}
    prepare_seconds, prepared = _time_prepare(columns, args.repeats)
    results = []
    for system in SYSTEMS:
        con.execute(f"SELECT count(*) FROM {system}_replay('warm')").fetchall()  # load the kernels
        seconds = common.median(common.time_replay(con, f"{system}_replay('team_results')", args.repeats, n_rows))
        api_seconds = _time_api(system, frame, args.repeats)
        loop_seconds = _time_rating_loop(system, prepared, args.repeats)
        peer_seconds, peer_rate = time_openskill(system, matches) if system in PEERS else time_trueskill(matches)
        results.append(
            {
                "system": system,
                "seconds": seconds,
                "rate": n_matches / seconds,
                "api_seconds": api_seconds,
                "loop_seconds": loop_seconds,
                "loop_rate": n_matches / loop_seconds,
                "peer": "openskill" if system in PEERS else "trueskill",
                "peer_seconds": peer_seconds,
                "peer_rate": peer_rate,
                "ratio": (n_matches / seconds) / peer_rate,
                "api_ratio": (n_matches / api_seconds) / peer_rate,
                "loop_ratio": (n_matches / loop_seconds) / peer_rate,
            }
        )
        _log(
            f"{system}: SQL {seconds:.2f} s, Python {api_seconds:.2f} s, rating loop {loop_seconds:.2f} s; "
            f"peer {peer_rate:,.0f} matches/s"
        )
    common.emit_result(
        {
            "results": results,
            "matches": n_matches,
            "rows": n_rows,
            "prepare_seconds": prepare_seconds,
            "peak_bytes": common.maxrss_bytes(),
        }
    )


def _time_prepare(columns: dict, repeats: int):
    """Seconds (median) of validating and encoding the table (``prepare_team_results``), and its result."""
    from duckrate.core.teams import prepare_team_results

    prepare_team_results({name: values[:1000] for name, values in columns.items()})  # load the kernels
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        prepared = prepare_team_results(columns)
        seconds.append(time.perf_counter() - started)
    return common.median(seconds), prepared


def _time_api(system: str, frame, repeats: int) -> float:
    """Seconds (median) of the Python function over the whole frame in one chunk: validation, rating and the
    output frame, no SQL."""
    import duckrate

    function = getattr(duckrate, system)
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        function(frame, chunk_size=frame.height)
        seconds.append(time.perf_counter() - started)
    return common.median(seconds)


def _time_rating_loop(system: str, prepared, repeats: int) -> float:
    """Seconds (median) of the rating loop alone over the validated matches, the work a peer's loop does
    (here with each match's forecast too): the system's ``run`` from a fresh start."""
    from duckrate.systems import SYSTEMS
    from duckrate.systems.event_state import fresh_start

    entry = SYSTEMS.get(system)
    params = entry.resolve({})
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        entry.run(prepared, None, params, fresh_start(prepared))
        seconds.append(time.perf_counter() - started)
    return common.median(seconds)


def large_child(args) -> None:
    """plackett_luce over the 10M matches in chunks through the saved state, as the dbt materialization runs."""
    import duckdb

    import duckrate

    common.DUCKDB_TEMP_DIR.mkdir(parents=True, exist_ok=True)
    database = common.DATA_DIR / "teams_large_replay.duckdb"  # the replay is written to a file, as dbt writes it
    for stale in (database, database.with_name(database.name + ".wal")):
        stale.unlink(missing_ok=True)
    con = duckdb.connect(str(database))
    con.execute(f"SET temp_directory = '{common.DUCKDB_TEMP_DIR}'")
    con.execute(f"SET memory_limit = '{args.memory_limit}'")
    duckrate.register(con)
    con.execute(f"ATTACH '{args.data}' AS src (READ_ONLY)")
    n_matches = con.execute("SELECT max(match_id) FROM src.team_results").fetchone()[0]
    con.execute("CREATE TEMP VIEW first_match AS SELECT * FROM src.team_results WHERE match_id = 1")
    con.execute("CREATE TABLE replay AS SELECT * FROM plackett_luce_replay('first_match') LIMIT 0")
    con.execute("CREATE TABLE state AS SELECT * FROM plackett_luce_state('first_match') LIMIT 0")
    started = time.perf_counter()
    chunk = args.chunk_matches
    for first in range(0, n_matches, chunk):
        con.execute(
            "CREATE OR REPLACE TEMP VIEW part AS SELECT * FROM src.team_results "
            f"WHERE match_id > {first} AND match_id <= {first + chunk}"
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE step AS SELECT * FROM plackett_luce_replay_and_state('part', state := 'state')"
        )
        con.execute("INSERT INTO replay SELECT * EXCLUDE (duckrate_state) FROM step WHERE duckrate_state IS NULL")
        con.execute(
            "CREATE OR REPLACE TABLE state AS SELECT unnest(duckrate_state) FROM step WHERE duckrate_state IS NOT NULL"
        )
        _log(
            f"  {min(first + chunk, n_matches):,} matches, {time.perf_counter() - started:.0f} s, RSS {common.rss_bytes() / common.GB:.2f} GB"
        )
    seconds = time.perf_counter() - started
    rows = con.execute("SELECT count(*) FROM replay").fetchone()[0]
    common.emit_result(
        {
            "seconds": seconds,
            "matches": n_matches,
            "rows": rows,
            "peak_bytes": common.maxrss_bytes(),
            "hwm": common.hwm_bytes(),
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=100_000)
    parser.add_argument("--peer-sample", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--large", action="store_true", help="also replay 10M matches in chunks through SQL")
    parser.add_argument("--skip-compare", action="store_true", help="only the 10M run (with --large)")
    parser.add_argument("--large-matches", type=int, default=10_000_000)
    parser.add_argument("--chunk-matches", type=int, default=200_000)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--child", choices=("compare", "large"))
    parser.add_argument("--data", type=Path)
    parser.add_argument("--generate", nargs=3)
    args = parser.parse_args()
    if args.generate:
        generate(int(args.generate[0]), int(args.generate[1]), Path(args.generate[2]))
        return 0
    if args.child == "compare":
        compare_child(args)
        return 0
    if args.child == "large":
        large_child(args)
        return 0

    print("\n".join(common.machine_lines(("duckrate", "duckdb", "numba", "openskill", "trueskill"))))
    me = str(Path(__file__).resolve())
    if not args.skip_compare:
        compare_table(me, args)
    if args.large:
        large_run(me, args)
    return 0


def compare_table(me: str, args) -> None:
    data = data_file(args.matches, args.players)
    compare = common.run_child(
        [
            me,
            "--child",
            "compare",
            "--data",
            str(data),
            "--peer-sample",
            str(args.peer_sample),
            "--repeats",
            str(args.repeats),
        ]
    )
    print(f"\n{compare['matches']:,} matches of 5v5 ({compare['rows']:,} rows) among {args.players:,} players.")
    print(
        f"Peers timed on the first {args.peer_sample:,} matches (their rating loop over lists built beforehand), "
        f"extrapolated. Validating and encoding the table (part of the SQL and Python columns): "
        f"{compare['prepare_seconds']:.2f} s. Peak RSS {compare['peak_bytes'] / common.GB:.2f} GB.\n"
    )
    rows = []
    for r in compare["results"]:
        extrapolated = compare["matches"] / r["peer_rate"]
        rows.append(
            [
                r["system"],
                f"{r['seconds']:.2f}",
                f"{r['ratio']:.0f}x",
                f"{r['api_seconds']:.2f}",
                f"{r['api_ratio']:.0f}x",
                f"{r['loop_seconds']:.2f}",
                f"{r['loop_rate']:,.0f}",
                f"{r['loop_ratio']:.0f}x",
                r["peer"],
                f"{r['peer_rate']:,.0f}",
                f"{extrapolated:,.0f}",
                "yes" if r["loop_ratio"] >= TARGET_RATIO else "NO",
            ]
        )
    print(
        common.format_table(
            [
                "system",
                "SQL s",
                "SQL ratio",
                "Python s",
                "Python ratio",
                "rating loop s",
                "loop matches/s",
                "loop ratio",
                "peer",
                "peer matches/s",
                "peer s (extrapolated)",
                f"loop >= {TARGET_RATIO:.0f}x",
            ],
            rows,
        )
    )


def large_run(me: str, args) -> None:
    large = data_file(args.large_matches, args.players)
    result = common.run_child(
        [
            me,
            "--child",
            "large",
            "--data",
            str(large),
            "--chunk-matches",
            str(args.chunk_matches),
            "--memory-limit",
            args.memory_limit,
        ]
    )
    peak = max(result["peak_bytes"], result.get("hwm") or 0) / common.GB
    print(
        f"\n{result['matches']:,} matches ({result['rows']:,} rows) through plackett_luce_replay_and_state in chunks of "
        f"{args.chunk_matches:,} matches (memory_limit {args.memory_limit}): {result['seconds']:.0f} s, "
        f"{result['matches'] / result['seconds']:,.0f} matches/s, peak RSS {peak:.2f} GB "
        f"({'within' if peak <= LARGE_TARGET_GB else 'OVER'} {LARGE_TARGET_GB:.0f} GB)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
