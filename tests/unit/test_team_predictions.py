"""predict_win, predict_draw, predict_rank, match_quality and balance_teams: against openskill 6.2.0 and the
trueskill package (test-only dependencies), from each kind of table (replay, leaderboard, saved state), in SQL
as in Python, and balance_teams against a brute force kept here."""

from __future__ import annotations

import itertools

import duckdb
import numpy as np
import polars as pl
import pytest
import trueskill
from helpers.team_histories import random_team_history
from openskill.models import PlackettLuce, ThurstoneMostellerPart

import duckrate
from duckrate.core.errors import DuckrateInputError
from duckrate.registry import SYSTEMS

TEAMS = [["p001", "p002", "p003"], ["p004", "p005"], ["p006", "nobody"]]


@pytest.fixture(scope="module")
def history():
    return random_team_history(200, seed=21, n_players=30)


def _latest(replay: pl.DataFrame) -> dict:
    last = replay.sort("seq").group_by("player").last()
    return {p: (m, s) for p, m, s in last.select("player", "rating_after", "sd_after").iter_rows()}


@pytest.mark.parametrize(
    ("name", "peer"), [("plackett_luce", PlackettLuce), ("thurstone_mosteller_part", ThurstoneMostellerPart)]
)
def test_predictions_equal_openskill_from_every_kind_of_table(history, name, peer):
    system = SYSTEMS.get(name)
    replay, state = system.with_state(history, beta=3.0, balance=True)
    latest = _latest(replay)
    model = peer(beta=3.0, balance=True)
    teams = [[model.rating(*latest[p]) if p in latest else model.rating() for p in team] for team in TEAMS]
    wins, draw, ranks = model.predict_win(teams), model.predict_draw(teams), model.predict_rank(teams)
    leaderboard = duckrate.team_leaderboard(replay.with_columns(pl.lit(name).alias("system")))
    for table, options in (
        (replay, {"system": name, "beta": 3.0, "balance": True}),
        (leaderboard, {"beta": 3.0, "balance": True}),
        (state, {}),
    ):
        got = duckrate.predict_win(table, TEAMS, **options)
        assert got["p_win"].to_list() == pytest.approx(wins, abs=1e-9)
        assert got["predicted_rank"].to_list() == [rank for rank, _ in ranks]
        assert duckrate.predict_draw(table, TEAMS, **options) == pytest.approx(draw, abs=1e-9)
        ranked = duckrate.predict_rank(table, TEAMS, **options)
        assert ranked["predicted_rank"].is_sorted()


def test_quality_equals_trueskill(history):
    replay = duckrate.trueskill_teams(history)
    latest = _latest(replay)
    env = trueskill.TrueSkill(backend="scipy")
    groups = [[env.create_rating(*latest[p]) if p in latest else env.create_rating() for p in team] for team in TEAMS]
    expected = env.quality(groups)
    got = duckrate.match_quality(replay, TEAMS, system="trueskill_teams")
    assert got == pytest.approx(expected, abs=1e-9)


def test_sql_equals_python(history):
    replay, state = SYSTEMS.get("trueskill_teams").with_state(history)
    con = duckrate.register(duckdb.connect())
    con.register("st", state)
    teams_sql = "[" + ", ".join("[" + ", ".join(f"'{p}'" for p in team) + "]" for team in TEAMS) + "]"
    rows = con.execute(
        f"SELECT team, p_win, predicted_rank FROM predict_win('st', {teams_sql}) ORDER BY team"
    ).fetchall()
    python = duckrate.predict_win(state, TEAMS)
    assert [r[1] for r in rows] == python["p_win"].to_list()
    assert [r[2] for r in rows] == python["predicted_rank"].to_list()
    draw = con.execute(f"SELECT p_draw FROM predict_draw('st', {teams_sql})").fetchall()[0][0]
    assert draw == duckrate.predict_draw(state, TEAMS)
    quality = con.execute(f"SELECT quality FROM match_quality('st', {teams_sql})").fetchall()[0][0]
    assert quality == duckrate.match_quality(state, TEAMS)
    players = [f"p{i:03d}" for i in range(8)]
    balanced = con.execute(
        f"SELECT team, player, exact FROM balance_teams('st', {players}) ORDER BY team, player"
    ).fetchall()
    assert balanced == duckrate.balance_teams(state, players).select("team", "player", "exact").rows()


def _brute_force_spread(predict, players: list[str], n_teams: int) -> float:
    """The smallest spread over every assignment of players to teams of balanced sizes (all orders)."""
    sizes = [len(players) // n_teams + (1 if t < len(players) % n_teams else 0) for t in range(n_teams)]
    best = np.inf
    for order in itertools.permutations(players):
        teams, start = [], 0
        for size in sizes:
            teams.append(list(order[start : start + size]))
            start += size
        best = min(best, predict(teams))
    return best


def test_balance_teams_is_the_best_split(history):
    system = SYSTEMS.get("plackett_luce")
    replay, state = system.with_state(history)
    players = ["p001", "p002", "p003", "p007", "p011", "p020", "p025"]
    rated = _latest(replay)
    params = system.resolve({})

    def spread(teams):  # the system's own forecast, called directly: 5,040 orders
        flat = [p for team in teams for p in team]
        mu = np.array([rated[p][0] for p in flat])
        sigma = np.array([rated[p][1] for p in flat])
        bounds = np.cumsum([0, *(len(team) for team in teams)]).astype(np.int64)
        wins = system.predict(params, mu, sigma, bounds, np.ones(len(flat)))[0]
        return wins.max() - wins.min()

    for n_teams in (2, 3):
        result = duckrate.balance_teams(state, players, n_teams=n_teams)
        assert result["exact"].all()
        assert sorted(result["player"].to_list()) == sorted(players)
        assert result["spread"][0] == pytest.approx(_brute_force_spread(spread, players, n_teams), abs=1e-12)
        sizes = result.group_by("team").len()["len"].to_list()
        assert max(sizes) - min(sizes) <= 1


def test_balance_teams_heuristic_gap_is_small(history):
    """Above 12 players the heuristic (snake draft and swaps) runs; on 12 players its spread is measured
    against the exact one: never below it, and close to it."""
    replay, state = SYSTEMS.get("plackett_luce").with_state(history)
    rng = np.random.default_rng(4)
    gaps = []
    for _ in range(5):
        players = [f"p{i:03d}" for i in sorted(rng.choice(30, 12, replace=False))]
        exact = duckrate.balance_teams(state, players, exact=True)["spread"][0]
        heuristic = duckrate.balance_teams(state, players, exact=False)
        assert not heuristic["exact"].any()
        gaps.append(heuristic["spread"][0] - exact)
    assert min(gaps) >= -1e-12
    assert max(gaps) < 0.05


def test_bad_teams_are_errors(history):
    replay = duckrate.plackett_luce(history)
    with pytest.raises(DuckrateInputError, match="in two teams"):
        duckrate.predict_win(replay, [["p001"], ["p001"]], system="plackett_luce")
    with pytest.raises(DuckrateInputError, match="at least two teams"):
        duckrate.predict_win(replay, [["p001"]], system="plackett_luce")
    with pytest.raises(DuckrateInputError, match="choose one with system"):
        duckrate.predict_win(replay, TEAMS)
    with pytest.raises(DuckrateInputError, match="n_teams"):
        duckrate.balance_teams(replay, ["p001", "p002"], n_teams=3, system="plackett_luce")
