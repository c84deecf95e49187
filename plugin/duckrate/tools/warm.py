"""Fill numba's on-disk cache ahead of use: ``duckrate warm`` (``make``'s install step runs it).

duckrate's kernels compile on first use and are cached beside the package (see :mod:`._numba`), so only the
first process after an install pays for compiling them (several seconds per macro). :func:`warm` calls every
SQL macro once over a few thousand generated rows, in one process, so that a fresh install's first real
call loads compiled code instead. Running it again costs a few seconds and changes nothing.
"""

from __future__ import annotations

import time

from duckrate.systems import CONTEST_SYSTEMS, REPLAY_SYSTEMS


def _replay_calls(systems, table: str) -> tuple[str, ...]:
    """A replay, its state and both at once, for every system, over ``table``."""
    kinds = ("replay", "state", "replay_and_state")
    return tuple(f"SELECT count(*) FROM {system.name}_{kind}('{table}')" for system in systems for kind in kinds)


def _replays_union(systems, table: str) -> str:
    """Every system's replay of ``table``, tagged with its system: what the marts read."""
    return " UNION ALL BY NAME ".join(
        f"(SELECT '{system.name}' AS system, * FROM {system.name}_replay('{table}'))" for system in systems
    )


#: One call per code path a user reaches from SQL: every replay and contest system (a replay, its state and
#: both), each Bradley-Terry solver and uncertainty kind, the tests and the marts.
TWO_PLAYER_CALLS = _replay_calls(REPLAY_SYSTEMS, "m") + (
    "SELECT count(*) FROM bt_fit('m')",
    "SELECT count(*) FROM bt_fit('m', prior_sd := 200, home_advantage := true, uncertainty := 'sparse', anchor_player := 'p000001')",
    "SELECT count(*) FROM bt_fit('m', prior_sd := 200, uncertainty := 'bootstrap', resamples := 3)",
    "SELECT count(*) FROM bt_fit('m', method := 'mm', prior_sd := 300)",
    "SELECT count(*) FROM bt_lr_test('m', permutations := 3, lowrank_epochs := 3)",
)
CONTEST_CALLS = _replay_calls(CONTEST_SYSTEMS, "c")
MART_CALLS = (
    "SELECT count(*) FROM leaderboard('r')",
    "SELECT count(*) FROM calibration_bins('r')",
    "SELECT count(*) FROM calibration_summary('r')",
    "SELECT count(*) FROM loss_curve('r')",
    "SELECT count(*) FROM loss_by_gap('r')",
    "SELECT count(*) FROM contest_leaderboard('cr')",
    "SELECT count(*) FROM contest_metrics('cr')",
    "SELECT count(*) FROM contest_metrics('cr', definition := 'all_contests')",
    "SELECT count(*) FROM tune('elo', 'm', grid := {'k': [16.0, 32.0]})",
    "SELECT count(*) FROM tune_contests('elo_mmr', 'c', grid := {'beta': [200.0]})",
)


# The forecasts (win_probability, win_matrix): each system's over the replays, the saved states of the systems
# that forecast from them (tables s_<system>, made by warm()) and a Bradley-Terry fit (table bt).
STATE_FORECAST_SYSTEMS = ("chance", "elo2k", "pairwise")
FORECAST_CALLS = (
    "SELECT count(*) FROM win_probability('r', 'p000001', 'p000002', system := 'elo')",
    *(
        f"SELECT count(*) FROM win_matrix('r', top := 5, system := '{name}')"
        for name in ("elo", "glicko", "glicko2", "trueskill")
    ),
    *(f"SELECT count(*) FROM win_matrix('s_{name}', top := 5)" for name in STATE_FORECAST_SYSTEMS),
    "SELECT count(*) FROM win_matrix('bt', top := 5)",
)


def called_macros() -> set[str]:
    """Names of the table macros :func:`warm` calls."""
    import re

    calls = TWO_PLAYER_CALLS + CONTEST_CALLS + MART_CALLS + FORECAST_CALLS
    return {name for sql in calls for name in re.findall(r"FROM (\w+)\(", sql)}


def warm(log=print, fresh: bool = False) -> float:
    """Run every macro once over small generated tables; returns the seconds it took. ``fresh``: delete
    the cached kernels first (:func:`duckrate.core.jit.clear_cache`), so all compile in this one process."""
    import duckdb

    from duckrate import register
    from duckrate.synthetic import generate_contests, generate_matches

    if fresh:
        from duckrate.core.jit import clear_cache

        log(f"duckrate: {clear_cache()} cached kernel files removed")
    started = time.perf_counter()
    con = register(duckdb.connect())
    con.execute("SET enable_progress_bar = false")
    matches = generate_matches(3_000, 60, seed=1)
    contests = generate_contests(8, 20, 60, seed=1, n_leagues=2)
    con.register("matches_frame", matches)
    con.register("contests_frame", contests)
    con.execute("CREATE TABLE m AS SELECT * FROM matches_frame")
    con.execute("CREATE TABLE c AS SELECT * FROM contests_frame")
    for sql in TWO_PLAYER_CALLS + CONTEST_CALLS:
        con.execute(sql).fetchall()
    con.execute("CREATE TABLE r AS " + _replays_union(REPLAY_SYSTEMS, "m"))
    con.execute("CREATE TABLE cr AS " + _replays_union(CONTEST_SYSTEMS, "c"))
    for sql in MART_CALLS:
        con.execute(sql).fetchall()
    for name in STATE_FORECAST_SYSTEMS:
        con.execute(f"CREATE TABLE s_{name} AS SELECT * FROM {name}_state('m')")
    con.execute("CREATE TABLE bt AS SELECT * FROM bt_fit('m')")
    for sql in FORECAST_CALLS:
        con.execute(sql).fetchall()
    con.close()
    seconds = time.perf_counter() - started
    log(f"duckrate: kernels compiled and cached in {seconds:.1f} s")
    return seconds
