"""The system protocol end to end: a toy system defined in the tests (:mod:`helpers.toy_system`) and
registered at run time gets, with no other edit, its SQL macros, saved state and continuation,
``win_probability``, the marts and ``tune``, like the built-in systems (its Spark replay:
tests/spark/test_spark.py)."""

from __future__ import annotations

import dataclasses
import types
import typing

import duckdb
import polars as pl
import pytest
from helpers.systems import two_player_systems
from helpers.toy_system import NAME, TOY, naive_replay

import duckrate
from duckrate.core.protocol import System
from duckrate.core.registry import FITS, SYSTEMS, TESTS
from duckrate.synthetic import generate_matches


@pytest.fixture(scope="module")
def registered():
    SYSTEMS.add(TOY)
    try:
        yield TOY
    finally:
        SYSTEMS.remove(NAME)


@pytest.fixture(scope="module")
def matches():
    return generate_matches(400, 30, seed=5).drop("league", strict=False)


@pytest.fixture(scope="module")
def con(registered, matches):
    con = duckrate.register(duckdb.connect())
    con.register("matches_frame", matches)
    con.execute("CREATE TABLE m AS SELECT * FROM matches_frame")
    con.execute("CREATE TABLE first_part AS SELECT * FROM m ORDER BY played_at, match_id LIMIT 250")
    con.execute("CREATE TABLE rest AS SELECT * FROM m ANTI JOIN first_part USING (match_id)")
    yield con
    con.close()


def test_a_system_is_a_protocol_entry(registered):
    assert isinstance(registered, System)
    assert SYSTEMS.get(NAME) is registered
    with pytest.raises(ValueError, match="registered already"):
        SYSTEMS.add(TOY)


def test_its_python_replay_is_the_naive_loop(registered, matches):
    rows = registered.frame(matches, step=25.0)
    assert rows["expected_a"].to_list() == pytest.approx(naive_replay(matches, step=25.0), abs=1e-12)


def test_its_macro_equals_its_python_replay(con, registered, matches):
    sql = con.sql(f"SELECT * FROM {NAME}_replay('m', step := 25.0)").pl()
    assert sql.equals(registered.frame(matches, step=25.0))


def test_its_state_continues_as_one_replay(con):
    con.execute(f"CREATE TABLE saved AS SELECT * FROM {NAME}_state('first_part')")
    rest = con.sql(f"SELECT * FROM {NAME}_replay('rest', state := 'saved')").pl()
    whole = con.sql(f"SELECT * FROM {NAME}_replay('m')").pl()
    assert rest.equals(whole.filter(pl.col("seq") > 250))
    assert con.execute(f"SELECT reason FROM {NAME}_resume_check('rest', state := 'saved')").fetchall() == [(None,)]


def test_its_forecast_serves_win_probability(con, registered, matches):
    con.execute(f"CREATE TABLE r AS SELECT '{NAME}' AS system, * FROM {NAME}_replay('m')")
    board = con.execute("SELECT player, rating FROM leaderboard('r') ORDER BY rank LIMIT 2").fetchall()
    (a, rating_a), (b, rating_b) = board
    got = con.execute(f"SELECT p_win_a FROM win_probability('r', '{a}', '{b}', spread := 300.0)").fetchall()[0][0]
    assert got == pytest.approx(1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / 300.0)), abs=1e-15)
    replay = registered.frame(matches).with_columns(system=pl.lit(NAME))
    python = duckrate.win_probability(replay, a, b, spread=300.0)
    assert python["p_win_a"][0] == got
    assert con.execute("SELECT count(*) FROM win_matrix('r', top := 4)").fetchall()[0][0] == 12


def test_the_marts_read_its_rows(con, registered, matches):
    con.execute(f"CREATE OR REPLACE TABLE r AS SELECT '{NAME}' AS system, * FROM {NAME}_replay('m')")
    for mart in ("leaderboard", "calibration_bins", "calibration_summary", "loss_curve", "loss_by_gap"):
        sql = con.sql(f"SELECT * FROM {mart}('r')").pl()
        assert sql.height > 0, mart
        assert set(sql["system"].unique().to_list()) == {NAME}, mart
    python = duckrate.calibration_summary(registered.frame(matches).with_columns(system=pl.lit(NAME)))
    sql = con.sql("SELECT * FROM calibration_summary('r')").pl()
    assert python["log_loss"][0] == pytest.approx(sql["log_loss"][0], rel=1e-12)


def test_tune_uses_its_default_grid(con, matches):
    tuned = con.sql(f"SELECT * FROM tune('{NAME}', 'm')").pl()
    assert sorted(tuned["params"].to_list()) == sorted(['{"step": 10.0}', '{"step": 30.0}'])
    assert tuned.equals(duckrate.tune(matches, NAME))


def test_its_presets_run(registered, matches):
    for preset in registered.presets:
        assert registered.frame(matches, **preset.kwargs()).height == matches.height


@pytest.mark.parametrize("system", two_player_systems(), ids=lambda system: system.name)
def test_weighted_says_whether_match_weights_are_taken(system, matches):
    weighted = matches.head(40).with_columns(weight=pl.lit(0.5))
    kwargs = system.presets[0].kwargs()
    if system.weighted:
        assert system.frame(weighted, **kwargs).height == 40
    else:
        with pytest.raises(duckrate.DuckrateInputError, match="column 'weight' has 0.5"):
            system.frame(weighted, **kwargs)


def _holds(kind, value) -> bool:
    """Whether ``value`` is of the annotation ``kind`` (a class, ``X | None``, ``tuple[str, ...]`` or
    ``tuple[float, float]``)."""
    if value is None:
        return True
    if isinstance(kind, types.UnionType):
        return any(_holds(member, value) for member in typing.get_args(kind) if member is not type(None))
    if typing.get_origin(kind) is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is not Ellipsis:  # a fixed pair, e.g. tuple[float, float]
            return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, args[0]) for v in value)
        return isinstance(value, tuple) and all(isinstance(item, str) for item in value)
    return isinstance(value, kind)


@pytest.mark.parametrize("entry", [*SYSTEMS, *FITS, *TESTS], ids=lambda entry: entry.name)
def test_parameters_as_a_typed_frozen_object(entry):
    """Each entry's parameters as a frozen dataclass derived from its Parameter list: one typed field per
    parameter with its default, holding what resolve() gives."""
    kind = entry.params_type
    fields = dataclasses.fields(kind)
    assert [f.name for f in fields] == [p.name for p in entry.parameters]
    typed = entry.typed()
    assert dataclasses.asdict(typed) == {
        name: tuple(value) if isinstance(value, list) else value for name, value in entry.resolve({}).items()
    }
    for f, parameter in zip(fields, entry.parameters):
        assert f.type == parameter.python_type
        value = getattr(typed, f.name)
        assert _holds(f.type, value), (f.name, value)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(typed, fields[0].name, None)


def test_typed_checks_the_values():
    assert duckrate.systems.ELO.typed(k=24).k == 24.0
    with pytest.raises(duckrate.DuckrateInputError, match="parameter k = -1"):
        duckrate.systems.ELO.typed(k=-1)
