"""The Weng-Lin team systems against openskill 6.2.0 (a test-only dependency), match by match over random
histories: every player's mu and sigma before and after each match, and the forecasts made before it
(``p_team_win`` = predict_win, ``p_draw`` = predict_draw, ``predicted_rank`` = predict_rank), within 1e-9;
also through a saved state and in chunks."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.team_histories import matches_in_replay_order, random_team_history, team_lists
from openskill.models import (
    BradleyTerryFull,
    BradleyTerryPart,
    PlackettLuce,
    ThurstoneMostellerFull,
    ThurstoneMostellerPart,
)

import duckrate
from duckrate.registry import SYSTEMS

PEERS = {
    "plackett_luce": PlackettLuce,
    "bradley_terry_full": BradleyTerryFull,
    "bradley_terry_part": BradleyTerryPart,
    "thurstone_mosteller_full": ThurstoneMostellerFull,
    "thurstone_mosteller_part": ThurstoneMostellerPart,
}
TOLERANCE = 1e-9
OPTION_SETS = {
    "defaults": ({}, False),
    "dynamics": ({"tau": 0.3, "limit_sigma": True, "balance": True, "beta": 3.0}, False),
    "margin": ({"margin": 2.0, "kappa": 0.001}, True),
    "raw-weights": ({"weight_min": None, "weight_max": None, "mu": 20.0, "sigma": 6.0}, False),
    "own-options": ({"epsilon": 0.3, "window_size": 2, "tau": 0.0}, True),
}


def _peer(name: str, params: dict):
    options = dict(params)
    low, high = options.pop("weight_min", 1.0), options.pop("weight_max", 2.0)
    system = SYSTEMS.get(name)
    own = {p.name for p in system.parameters}
    options = {key: value for key, value in options.items() if key in own}
    if low is not None:
        return PEERS[name](weight_bounds=(low, high), **options)
    model = PEERS[name](**options)  # openskill's compiled constructor takes no None; its attribute does
    model.weight_bounds = None
    return model


def _check_against_peer(name: str, params: dict, history, replay) -> None:
    """Replay the peer match by match from its own ratings and compare every forecast and rating with ours
    (collected, then compared at once: pytest.approx per number cost more than the peer itself)."""
    model = _peer(name, params)
    ratings: dict = {}
    scores = None
    if "score" in history.columns:
        scores = {(m, t): v for m, t, v in history.select("match_id", "team", "score").unique().iter_rows()}
    ours: list[float] = []
    theirs: list[float] = []
    where: list[tuple] = []
    for match in matches_in_replay_order(replay):
        players = team_lists(match, "player")
        teams = [[ratings.get(p) or model.rating() for p in team] for team in players]
        wins = model.predict_win(teams)
        draw = model.predict_draw(teams)
        ranks = [rank for rank, _ in model.predict_rank(teams)]
        match_id = match["match_id"][0][0]
        kwargs: dict = {}
        if scores is not None:
            kwargs["scores"] = [scores[(match_id, team[0])] for team in team_lists(match, "team")]
        else:
            kwargs["ranks"] = [team[0] for team in team_lists(match, "rank")]
        weights = team_lists(match, "weight")
        if any(w != 1.0 for team in weights for w in team):
            kwargs["weights"] = weights
        before = [[(r.mu, r.sigma) for r in team] for team in teams]
        rated = model.rate(teams, **kwargs)
        for t, team in enumerate(players):
            assert match["predicted_rank"][t][0] == ranks[t], (name, match_id, t)
            ours += [match["p_team_win"][t][0], match["p_draw"][t][0]]
            theirs += [wins[t], draw]
            where += [(match_id, t, "p_team_win"), (match_id, t, "p_draw")]
            for i, player in enumerate(team):
                ours += [match[column][t][i] for column in ("rating_before", "sd_before", "rating_after", "sd_after")]
                theirs += [before[t][i][0], before[t][i][1], rated[t][i].mu, rated[t][i].sigma]
                where += [
                    (match_id, player, column) for column in ("rating_before", "sd_before", "rating_after", "sd_after")
                ]
                ratings[player] = rated[t][i]
    difference = np.abs(np.array(ours, dtype=np.float64) - np.array(theirs, dtype=np.float64))
    bad = np.flatnonzero(~(difference <= TOLERANCE))  # NaN anywhere fails too
    assert bad.size == 0, (name, where[bad[0]], ours[bad[0]], theirs[bad[0]], f"{bad.size} values off")


def _own(name: str, params: dict) -> dict:
    system = SYSTEMS.get(name)
    return {key: value for key, value in params.items() if key in {p.name for p in system.parameters}}


@pytest.mark.parametrize("options", list(OPTION_SETS))
@pytest.mark.parametrize("name", list(PEERS))
def test_equal_to_openskill_match_by_match(name, options):
    params, scores = OPTION_SETS[options]
    history = random_team_history(150, seed=len(name) + len(options), scores=scores)
    replay = getattr(duckrate, name)(history, **_own(name, params))
    _check_against_peer(name, params, history, replay)


@pytest.mark.parametrize("name", list(PEERS))
def test_continuation_and_chunks_equal_one_run(name):
    history = random_team_history(200, seed=7, scores=True)
    system = SYSTEMS.get(name)
    params = _own(name, {"margin": 1.5, "tau": 0.2, "window_size": 3})
    whole, whole_state = system.with_state(history, **params)
    first, state = system.with_state(history.filter(history["match_id"] <= 120), **params)
    second, final_state = system.with_state(history.filter(history["match_id"] > 120), state=state, **params)

    assert pl.concat([first, second]).sort(system.row_order).equals(whole)
    assert final_state.equals(whole_state)
    chunked = system.frame(history, chunk_size=97, **params)
    assert chunked.equals(whole)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PEERS))
def test_equal_to_openskill_over_10000_matches(name):
    """The issue's agreement: a 10,000-match history (2-8 teams of 1-8 players, ties, scores with a margin,
    partial play), continued from a saved state halfway."""
    history = random_team_history(10_000, seed=11, n_players=400, scores=True, partial_rate=0.2)
    params = _own(name, {"margin": 2.0, "tau": 0.1, "limit_sigma": True})
    system = SYSTEMS.get(name)
    first, state = system.with_state(history.filter(history["match_id"] <= 5_000), **params)
    second, _ = system.with_state(history.filter(history["match_id"] > 5_000), state=state, **params)

    _check_against_peer(name, params, history, pl.concat([first, second]))
