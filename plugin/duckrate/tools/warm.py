"""Fill numba's on-disk cache ahead of use: ``duckrate warm`` (``make``'s install step runs it).

duckrate's kernels compile on first use and are cached beside the package (see :mod:`duckrate.core.jit`), so only the
first process after an install pays for compiling them (several seconds per macro). :func:`warm` calls every
SQL macro once over a few thousand generated rows, in two processes at once (most systems over matches and
the fits in one; contests, team matches and Whole-History Rating in the other), so that a fresh install's first real call loads
compiled code instead. Running it again costs a few seconds and changes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from duckrate.core.contests import CONTEST_RESULTS
from duckrate.core.matches import MATCHES
from duckrate.core.registry import FITS, SYSTEMS
from duckrate.core.teams import TEAM_RESULTS


def _arguments(system) -> str:
    """The named arguments of the system's first preset (``, p_draw := 0.1``): parameters its default run
    over generated matches needs (e.g. a draw model for their draws)."""
    preset = system.presets[0] if system.presets else None
    params = dict(preset.params) if preset is not None else {}
    return "".join(f", {name} := {value!r}" for name, value in params.items())


def _replay_calls(systems, table: str) -> tuple[str, ...]:
    """A replay, its state and both at once, for every system, over ``table``."""
    kinds = ("replay", "state", "replay_and_state")
    return tuple(
        f"SELECT count(*) FROM {system.name}_{kind}('{table}'{_arguments(system)})"
        for system in systems
        for kind in kinds
    )


def _replays_union(systems, table: str) -> str:
    """Every system's replay of ``table``, tagged with its system: what the marts read."""
    return " UNION ALL BY NAME ".join(
        f"(SELECT '{system.name}' AS system, * FROM {system.name}_replay('{table}'{_arguments(system)}))"
        for system in systems
    )


#: One call per code path a user reaches from SQL: every replay and contest system (a replay, its state and
#: both), each Bradley-Terry solver and uncertainty kind, the tests and the marts.
FIT_CALLS = (
    "SELECT count(*) FROM bt_fit('m')",
    "SELECT count(*) FROM bt_fit('m', prior_sd := 200, home_advantage := true, uncertainty := 'sparse', anchor_player := 'p000001')",
    "SELECT count(*) FROM bt_fit('m', prior_sd := 200, uncertainty := 'bootstrap', resamples := 3)",
    "SELECT count(*) FROM bt_fit('m', method := 'mm', prior_sd := 300)",
    "SELECT count(*) FROM ttt_fit('m', p_draw := 0.1, iterations := 3)",
    "SELECT count(*) FROM ttt_team_fit('t', p_draw := 0.1, iterations := 3)",
    "SELECT count(*) FROM bt_lr_test('m', permutations := 3, lowrank_epochs := 3)",
)
#: whr_fit's two methods: warmed in the groups part, after whr's replay (:func:`_dealt_to_groups`), whose
#: kernels they share.
WHR_CALLS = (
    "SELECT count(*) FROM whr_fit('m')",
    "SELECT count(*) FROM whr_fit('m', method := 'sweeps', max_iterations := 3)",
)
#: The marts over the replays of matches (``r``), of contests (``cr``) and of team matches (``tr``).
MATCH_MART_CALLS = (
    "SELECT count(*) FROM leaderboard('r')",
    "SELECT count(*) FROM calibration_bins('r')",
    "SELECT count(*) FROM calibration_summary('r')",
    "SELECT count(*) FROM loss_curve('r')",
    "SELECT count(*) FROM loss_by_gap('r')",
)
GROUP_MART_CALLS = (
    "SELECT count(*) FROM contest_leaderboard('cr')",
    "SELECT count(*) FROM contest_metrics('cr')",
    "SELECT count(*) FROM contest_metrics('cr', definition := 'all_contests')",
    "SELECT count(*) FROM team_leaderboard('tr')",
    "SELECT count(*) FROM team_match_forecasts('tr')",
    "SELECT count(*) FROM team_metrics('tr')",
)
#: Each input shape's table of generated rows and its ``tune`` macro.
SHAPE_TABLES = (
    (MATCHES, "m", "tune"),
    (CONTEST_RESULTS, "c", "tune_contests"),
    (TEAM_RESULTS, "t", "tune_teams"),
)


def _dealt_to_groups() -> tuple:
    """The systems over matches whose replay the groups part warms: every other whole-history system, from the
    first (:attr:`~duckrate.core.protocol.System.whole_history`: a fit per forecast, the slowest kernels to
    compile; whr's and ttt's take about 25 s and 70 s on one core, of about 240 s in all). Dealt alternately
    they balance the two processes: ``duckrate warm`` from an empty cache took 121 s on 2 cores, against 143 s
    with both among the matches (whose part then took 140 s on one core, the other 92 s)."""
    return tuple(system for system in SYSTEMS.of(MATCHES) if system.whole_history)[::2]


def match_calls() -> tuple[str, ...]:
    """Every system over matches but those :func:`_dealt_to_groups` (its replay, state and both, over ``m``),
    and the fits and tests."""
    dealt = _dealt_to_groups()
    return _replay_calls([s for s in SYSTEMS.of(MATCHES) if s not in dealt], "m") + FIT_CALLS


def group_calls() -> tuple[str, ...]:
    """The replays over ``m`` :func:`_dealt_to_groups` (first, so their kernels are cached before the matches
    part replays every system for its marts), every contest system over ``c`` and team system over ``t``: its
    replay, state and both; and whr_fit."""
    return (
        _replay_calls(_dealt_to_groups(), "m")
        + _replay_calls(SYSTEMS.of(CONTEST_RESULTS), "c")
        + _replay_calls(SYSTEMS.of(TEAM_RESULTS), "t")
        + WHR_CALLS
    )


def tune_calls(shapes=(MATCHES, CONTEST_RESULTS, TEAM_RESULTS)) -> tuple[str, ...]:
    """``tune`` once per family of ``shapes``, with a two-value grid of each first system's first grid
    parameter."""
    calls = []
    for shape, table, macro in SHAPE_TABLES:
        system = next((system for system in SYSTEMS.of(shape) if system.grid), None)
        if shape in shapes and system is not None:
            name, values = next(iter(system.grid.items()))
            calls.append(
                f"SELECT count(*) FROM {macro}('{system.name}', '{table}', grid := {{'{name}': {list(values)[:2]}}})"
            )
    return tuple(calls)


#: The team forecasts, called for each team system from its saved state (``ts_<system>``).
TEAM_FORECASTS = ("predict_win", "predict_rank", "predict_draw", "match_quality")


def match_forecast_calls() -> tuple[str, ...]:
    """The forecasts (win_probability, win_matrix): each system's over the replays (table ``r``) or over its
    saved state (tables ``s_<system>``, made by :func:`warm`), and each fit's (table ``fit_<name>``)."""
    calls = []
    for system in SYSTEMS.of(MATCHES):
        if system.forecast is None:
            continue
        table = f"s_{system.name}" if system.forecast.from_state else "r"
        chosen = "" if system.forecast.from_state else f", system := '{system.name}'"
        calls.append(f"SELECT count(*) FROM win_matrix('{table}', top := 5{chosen})")
    first = next((s for s in SYSTEMS.of(MATCHES) if s.forecast is not None and not s.forecast.from_state), None)
    if first is not None:
        calls.append(f"SELECT count(*) FROM win_probability('r', 'p000001', 'p000002', system := '{first.name}')")
    return tuple(calls) + tuple(
        f"SELECT count(*) FROM win_matrix('fit_{fit.name}', top := 5)" for fit in FITS if fit.forecast
    )


def team_forecast_calls() -> tuple[str, ...]:
    """Each team system's forecasts and team balancing, from its saved state (table ``ts_<system>``)."""
    teams = "[['p000001', 'p000002'], ['p000003', 'p000004'], ['p000005']]"
    players = "['p000001', 'p000002', 'p000003', 'p000004']"
    calls = []
    for system in SYSTEMS.of(TEAM_RESULTS):
        table = f"ts_{system.name}"
        calls += [f"SELECT count(*) FROM {macro}('{table}', {teams})" for macro in TEAM_FORECASTS]
        calls.append(f"SELECT count(*) FROM balance_teams('{table}', {players})")
    return tuple(calls)


def every_call() -> tuple[str, ...]:
    """Every call :func:`warm` makes, over the tables ``m``, ``c``, ``t`` and those made from them
    (:func:`match_tables`, :func:`group_tables`)."""
    return (
        match_calls()
        + group_calls()
        + MATCH_MART_CALLS
        + GROUP_MART_CALLS
        + tune_calls()
        + match_forecast_calls()
        + team_forecast_calls()
    )


def called_macros() -> set[str]:
    """Names of the table macros :func:`warm` calls."""
    import re

    return {name for sql in every_call() for name in re.findall(r"FROM (\w+)\(", sql)}


def _matches():
    """The generated matches (table ``m``)."""
    from duckrate.synthetic import generate_matches

    return generate_matches(3_000, 60, seed=1)


def _tables(con) -> None:
    """The generated inputs: matches ``m``, contest results ``c`` (two leagues) and team results ``t``."""
    from duckrate.synthetic import generate_contests, generate_team_matches

    con.execute("SET enable_progress_bar = false")
    con.register("matches_frame", _matches())
    con.register("contests_frame", generate_contests(8, 20, 60, seed=1, n_leagues=2))
    teams = generate_team_matches(300, 60, seed=1, teams_per_match=(2, 4), team_size=(1, 3), scores=True)
    con.register("teams_frame", teams)
    con.execute("CREATE TABLE t AS SELECT * FROM teams_frame")
    con.execute("CREATE TABLE m AS SELECT * FROM matches_frame")
    con.execute("CREATE TABLE c AS SELECT * FROM contests_frame")


def _warm_matches(con) -> None:
    """Every path over matches: the replays, the fits and tests, the marts, tune and the forecasts."""
    for sql in match_calls():
        con.execute(sql).fetchall()
    match_tables(con)
    for sql in MATCH_MART_CALLS + tune_calls((MATCHES,)) + match_forecast_calls():
        con.execute(sql).fetchall()


def match_tables(con) -> None:
    """What the marts and forecasts over matches read, made from ``m``: the replays of every system (``r``),
    the saved states the forecasts start from (``s_<system>``) and the fits' tables (``fit_<name>``)."""
    con.execute("CREATE TABLE r AS " + _replays_union(SYSTEMS.of(MATCHES), "m"))
    for system in SYSTEMS.of(MATCHES):
        if system.forecast is not None and system.forecast.from_state:
            con.execute(f"CREATE TABLE s_{system.name} AS SELECT * FROM {system.name}_state('m'{_arguments(system)})")
    for fit in FITS:
        if fit.forecast is not None:
            con.execute(f"CREATE TABLE fit_{fit.name} AS SELECT * FROM {fit.name}('m')")


def _warm_groups(con) -> None:
    """Every path over contests and team matches: the replays, the marts, tune and the team forecasts; and
    whr_fit."""
    from duckrate.fits.whole_history.fit import compile_helpers

    for sql in group_calls():
        con.execute(sql).fetchall()
    compile_helpers(_matches())  # whr_fit's helper threads, which only a large league gets
    group_tables(con)
    for sql in GROUP_MART_CALLS + tune_calls((CONTEST_RESULTS, TEAM_RESULTS)) + team_forecast_calls():
        con.execute(sql).fetchall()


def group_tables(con) -> None:
    """What the marts and forecasts over contests and team matches read, made from ``c`` and ``t``: the
    replays (``cr``, ``tr``) and each team system's saved state (``ts_<system>``)."""
    con.execute("CREATE TABLE cr AS " + _replays_union(SYSTEMS.of(CONTEST_RESULTS), "c"))
    con.execute("CREATE TABLE tr AS " + _replays_union(SYSTEMS.of(TEAM_RESULTS), "t"))
    for system in SYSTEMS.of(TEAM_RESULTS):
        con.execute(f"CREATE TABLE ts_{system.name} AS SELECT * FROM {system.name}_state('t')")


#: The two halves of the warm-up, each about half the compile time: ``duckrate warm`` runs them in two
#: processes at once on a machine with two cores or more.
PARTS = {"matches": _warm_matches, "groups": _warm_groups}


def warm_part(part: str) -> None:
    """Run one of :data:`PARTS` over the generated tables in a fresh in-memory connection."""
    import duckdb

    from duckrate import register

    con = register(duckdb.connect())
    _tables(con)
    PARTS[part](con)
    con.close()


def warm(log=print, fresh: bool = False, jobs: int | None = None) -> float:
    """Run every macro once over small generated tables; returns the seconds it took. ``fresh``: delete
    the cached kernels first (:func:`duckrate.core.jit.clear_cache`), so that all compile from the same
    sources in this run. ``jobs``: processes (default: 2 on a machine with two cores or more, else 1); with
    2, the ``groups`` part runs in a child process (``duckrate warm --part groups``) beside this one's
    ``matches`` part (numba writes each cache file whole, so two processes may fill one cache)."""
    if fresh:
        from duckrate.core.jit import clear_cache

        log(f"duckrate: {clear_cache()} cached kernel files removed")
    jobs = min(2, os.cpu_count() or 1) if jobs is None else jobs
    started = time.perf_counter()
    child = None
    if jobs > 1:
        child = subprocess.Popen([sys.executable, "-m", "duckrate.cli", "warm", "--part", "groups"])
    try:
        warm_part("matches")
        if child is None:
            warm_part("groups")
    finally:
        code = None if child is None else child.wait()
    if code:
        raise RuntimeError(f"duckrate warm: the process warming contests and team matches exited with {code}")
    seconds = time.perf_counter() - started
    log(f"duckrate: kernels compiled and cached in {seconds:.1f} s")
    return seconds
