"""Bit-for-bit determinism of every SQL table macro: across runs, ``SET threads`` and input row order.

Every macro (the seven replays, ``elo_mmr_replay``, ``bt_fit``, ``bt_lr_test`` and the marts) runs on the same
few thousand generated rows three ways: under ``SET threads = 1``, under ``SET threads = 4``, and over a copy of
the input inserted in a shuffled row order. The outputs, sorted by every column, must be identical byte for
byte: floats are compared by their IEEE-754 bit pattern (so ``-0.0 != 0.0`` and a NaN equals only the same NaN),
NULLs by position.

The tables live in a file database attached with ``ROW_GROUP_SIZE 2048``, so a table of this size spans several
row groups and DuckDB really scans it in parallel under 4 threads: on an idle machine the packed ``list()``
order of the input then changes from run to run (measured: 5 orders in 10 runs of a 20k-row table), so the
threads runs are not a no-op. (Not asserted: on a busy machine one thread may do the whole scan.)
"""

from __future__ import annotations

import math
import struct

import polars as pl
import pytest
from helpers.systems import contest_systems, preset_cases, sql_arguments, team_systems, two_player_systems

import duckrate
from duckrate.synthetic import generate_contests, generate_matches, generate_team_matches

N_MATCHES = 10_240  # 5 row groups of 2048 rows

# every preset of every registered system (those without a priors table or a period column); unweighted
# systems over the matches without their weights ('{u}')
REPLAYS = {
    name: f"{system.name}_replay('{{{'t' if system.weighted else 'u'}}}'{sql_arguments(preset.params)})"
    for name, system, preset in preset_cases(two_player_systems(), with_priors=False, with_periods=False)
}
CONTEST_REPLAYS = {
    name: f"{system.name}_replay('{{c}}'{sql_arguments(preset.params)})"
    for name, system, preset in preset_cases(contest_systems(), with_priors=False, with_periods=False)
}
TEAM_REPLAYS = {
    name: f"{system.name}_replay('{{tm}}'{sql_arguments(preset.params)})"
    for name, system, preset in preset_cases(team_systems(), with_priors=False, with_periods=False)
}
MACROS = {
    **{f"replay_{name}": f"SELECT * FROM {call}" for name, call in REPLAYS.items()},
    **{f"replay_{name}": f"SELECT * FROM {call}" for name, call in CONTEST_REPLAYS.items()},
    **{f"replay_{name}": f"SELECT * FROM {call}" for name, call in TEAM_REPLAYS.items()},
    "bt_fit_hessian": "SELECT * FROM bt_fit('{t}')",
    "bt_fit_map_home": "SELECT * FROM bt_fit('{t}', prior_sd := 200, home_advantage := true)",
    "bt_fit_bootstrap": "SELECT * FROM bt_fit('{t}', prior_sd := 200, uncertainty := 'bootstrap', resamples := 20, seed := 4)",
    "bt_fit_mm": "SELECT * FROM bt_fit('{t}', method := 'mm', prior_sd := 300)",
    "bt_lr_test": "SELECT * FROM bt_lr_test('{t}', seed := 2, permutations := 19)",
    "leaderboard": "SELECT * FROM leaderboard('{r}')",
    "calibration_bins": "SELECT * FROM calibration_bins('{r}', bins := 7)",
    "calibration_summary": "SELECT * FROM calibration_summary('{r}', min_games := 5, max_sd := 150, warmup := 0.1)",
    "loss_curve": "SELECT * FROM loss_curve('{r}', points := 50)",
    "contest_leaderboard": "SELECT * FROM contest_leaderboard('{cr}')",
    "contest_metrics": "SELECT * FROM contest_metrics('{cr}', min_history := 2)",
    "contest_metrics_top": "SELECT * FROM contest_metrics('{cr}', min_history := 0, top := 10)",
    "contest_metrics_all_contests": "SELECT * FROM contest_metrics('{cr}', definition := 'all_contests', min_contests := 2)",
    "team_leaderboard": "SELECT * FROM team_leaderboard('{tr}')",
    "team_match_forecasts": "SELECT * FROM team_match_forecasts('{tr}')",
}
# the marts read replays: each system's first preset (with and without sd) unioned into one replays table
MART_REPLAYS = tuple(name for name in REPLAYS if name.endswith("-0"))


def _matches() -> pl.DataFrame:
    """Three leagues (one NULL), ties in played_at (truncated to the minute), string match ids, a weight."""
    games = generate_matches(N_MATCHES, 300, n_leagues=3, seed=11)
    return games.with_columns(
        match_id=pl.format("g{}", pl.col("match_id")),  # 'g10' < 'g9' as text
        league=pl.when(pl.col("league") == "league_3").then(None).otherwise(pl.col("league")),
        weight=(pl.col("match_id") % 5 + 1).cast(pl.Float64) / 2,
    )


def _shuffled(frame: pl.DataFrame, seed: int) -> pl.DataFrame:
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
    assert not shuffled.equals(frame)
    return shuffled


def _bits(value) -> bytes:
    """A value's exact bytes: floats by their bit pattern, NULL distinct from every value."""
    if value is None:
        return b"\x00"
    if isinstance(value, float):
        return b"f" + struct.pack("<d", value)
    if isinstance(value, dict):
        return b"{" + b"".join(key.encode() + _bits(item) for key, item in value.items()) + b"}"
    if isinstance(value, (list, tuple)):
        return b"[" + b"".join(_bits(item) for item in value) + b"]"
    return type(value).__name__.encode() + b":" + repr(value).encode()


def _rows(con, sql: str) -> list[bytes]:
    """The output's rows as exact bytes, in a canonical order (every column, NULLs last)."""
    rows = con.sql(f"SELECT * FROM ({sql}) ORDER BY ALL NULLS LAST").fetchall()
    return [b"|".join(_bits(value) for value in row) for row in rows]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """One connection with the inputs and their shuffled copies in a small-row-group file database."""
    path = tmp_path_factory.mktemp("determinism") / "small_row_groups.duckdb"
    con = duckrate.register(__import__("duckdb").connect())
    con.execute(f"ATTACH '{path}' AS d (ROW_GROUP_SIZE 2048)")
    con.execute("USE d")
    matches = _matches()
    contests = generate_contests(60, 40, 300, seed=5, n_leagues=2, tie_rate=0.05)
    # several waves of more than 64 matches each: the team replays run them on several threads
    teams = generate_team_matches(
        1_500, 400, seed=6, n_leagues=2, teams_per_match=(2, 4), team_size=(1, 4), partial_play_rate=0.2, scores=True
    )
    for name, frame in (
        ("team_results", teams),
        ("team_results_shuffled", _shuffled(teams, 5)),
        ("matches", matches),
        ("matches_shuffled", _shuffled(matches, 1)),
        ("contests", contests),
        ("contests_shuffled", _shuffled(contests, 2)),
    ):
        con.register("frame", frame)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        con.unregister("frame")
    for suffix in ("", "_shuffled"):
        con.execute(f"CREATE VIEW matches_unweighted{suffix} AS SELECT * EXCLUDE (weight) FROM matches{suffix}")
    # the marts' input: replays of a few systems, unioned, and a shuffled copy
    con.execute("SET threads = 1")
    union = " UNION ALL BY NAME ".join(
        f"(SELECT '{name.split('-')[0]}' AS system, * FROM {REPLAYS[name].format(t='matches', u='matches_unweighted')})"
        for name in MART_REPLAYS
    )
    replays = con.sql(union).pl()
    contest_replays = con.sql(
        " UNION ALL BY NAME ".join(
            f"(SELECT '{name.split('-')[0]}' AS system, * FROM {CONTEST_REPLAYS[name].format(c='contests')})"
            for name in CONTEST_REPLAYS
            if name.endswith("-0")
        )
    ).pl()
    team_replays = con.sql(
        " UNION ALL BY NAME ".join(
            f"(SELECT '{name.split('-')[0]}' AS system, * FROM {TEAM_REPLAYS[name].format(tm='team_results')})"
            for name in TEAM_REPLAYS
            if name.endswith("-0")
        )
    ).pl()
    for name, frame in (
        ("team_replays", team_replays),
        ("team_replays_shuffled", _shuffled(team_replays, 6)),
        ("replays", replays),
        ("replays_shuffled", _shuffled(replays, 3)),
        ("contest_replays", contest_replays),
        ("contest_replays_shuffled", _shuffled(contest_replays, 4)),
    ):
        con.register("frame", frame)
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        con.unregister("frame")
    con.execute("CHECKPOINT d")
    assert con.sql("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('matches')").fetchall()[0][0] >= 5
    yield con
    con.close()


def _run(con, name: str, threads: int, shuffled: bool) -> list[bytes]:
    suffix = "_shuffled" if shuffled else ""
    tables = {
        "t": f"matches{suffix}",
        "u": f"matches_unweighted{suffix}",
        "c": f"contests{suffix}",
        "r": f"replays{suffix}",
        "cr": f"contest_replays{suffix}",
        "tm": f"team_results{suffix}",
        "tr": f"team_replays{suffix}",
    }
    con.execute(f"SET threads = {threads}")
    return _rows(con, MACROS[name].format(**tables))


@pytest.mark.parametrize("name", MACROS)
def test_macro_is_bit_identical_across_threads_and_row_order(db, name):
    first = _run(db, name, threads=1, shuffled=False)
    assert first, name
    for threads, shuffled in ((4, False), (1, True), (4, True)):
        again = _run(db, name, threads, shuffled)
        assert len(again) == len(first), (name, threads, shuffled)
        mismatch = next((i for i, (x, y) in enumerate(zip(first, again)) if x != y), None)
        assert mismatch is None, (name, threads, shuffled, first[mismatch][:400], again[mismatch][:400])


def test_outputs_cover_every_input_row(db):
    """The compared outputs are the full results (one row per match / contest entry), not empty or partial."""
    db.execute("SET threads = 4")
    for name in REPLAYS:
        assert len(_run(db, f"replay_{name}", 4, True)) == N_MATCHES, name
    contest_rows = db.sql("SELECT count(*) FROM contests").fetchall()[0][0]
    for name in CONTEST_REPLAYS:
        assert len(_run(db, f"replay_{name}", 4, True)) == contest_rows, name
    team_rows = db.sql("SELECT count(*) FROM team_results").fetchall()[0][0]
    for name in TEAM_REPLAYS:
        assert len(_run(db, f"replay_{name}", 4, True)) == team_rows, name
    assert not math.isnan(float(db.sql("SELECT sum(rating) FROM bt_fit('matches')").fetchall()[0][0]))
