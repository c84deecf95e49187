"""Saved state: a replay continued batch by batch equals one replay over the whole history, bit for bit.

For every two-player system: random histories (several leagues, ties in ``played_at``, weights where the
system takes them) cut into batches at random points, each batch replayed from the state the previous
one saved, exactly as the incremental dbt model does (for the periodic systems the open period's matches
are passed again and their rows replaced). The rows and the final state must equal the full replay's.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from helpers.state_cases import CASES, history, replay_in_batches
from helpers.systems import two_player_systems
from polars.testing import assert_frame_equal

from duckrate.core.errors import DuckrateInputError
from duckrate.systems.saved_state import STATE_COLUMNS, RebuildRequired
from duckrate.systems.two_player import replay_with_state

BY_NAME = {system.name: system for system in two_player_systems()}


@pytest.mark.parametrize("name, params, weights, periods", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("seed", [1, 2])
def test_batches_equal_one_replay(name, params, weights, periods, seed):
    system = BY_NAME[name]

    matches = history(600, 40, seed, weights, periods)
    full, full_state = replay_with_state(system, matches, **params)
    rng = np.random.default_rng(seed + 100)
    cuts = sorted(set(rng.integers(1, matches.height - 1, 4).tolist()) | {1, matches.height - 1})
    rows, state = replay_in_batches(system, matches, cuts, params)
    assert rows.height == matches.height
    assert_frame_equal(rows, full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)


def test_state_table_layout_and_seq():
    matches = history(300, 30, 3, True, False)
    out, state = replay_with_state(BY_NAME["elo"], matches)
    assert tuple(state.columns) == STATE_COLUMNS
    leagues = state.filter(pl.col("kind") == "league").sort("league", nulls_last=True)
    counts = out.group_by("league").agg(
        pl.len(), pl.col("player_a").append(pl.col("player_b")).n_unique().alias("players")
    )
    joined = leagues.join(counts, on="league", nulls_equal=True)
    assert (joined["seq"] == joined["len"]).all() and (joined["n_players"] == joined["players"]).all()
    assert leagues["system"].to_list() == ["elo"] * 3
    # one player row per league and player, holding the final rating
    last = (
        pl.concat(
            [
                out.select("league", "seq", player="player_a", rating="rating_a_after"),
                out.select("league", "seq", player="player_b", rating="rating_b_after"),
            ]
        )
        .sort("seq")
        .group_by("league", "player")
        .last()
    )
    players = state.filter(pl.col("kind") == "player").with_columns(pl.col("value").list.first().alias("rating"))
    check = players.join(last, on=["league", "player"], nulls_equal=True, suffix="_replay")
    assert check.height == players.height == last.height
    assert (check["rating"] == check["rating_replay"]).all()


def test_late_match_refused():
    matches = history(200, 20, 4, False, False).sort("played_at", "match_id")
    _, state = replay_with_state(BY_NAME["elo"], matches[:150])
    late = matches[100:101]
    with pytest.raises(RebuildRequired, match="arrived late"):
        replay_with_state(BY_NAME["elo"], pl.concat([matches[150:], late]), state=state)


def test_same_played_at_later_match_id_continues():
    matches = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [5, 5, 5, 6],
            "player_a": ["a", "b", "a", "c"],
            "player_b": ["b", "c", "c", "a"],
            "score_a": [1.0, 0.0, 0.5, 1.0],
        }
    )
    full = replay_with_state(BY_NAME["elo"], matches)[0]
    first, state = replay_with_state(BY_NAME["elo"], matches[:2])
    rest, _ = replay_with_state(BY_NAME["elo"], matches[2:], state=state)
    assert_frame_equal(pl.concat([first, rest]), full, check_exact=True)
    with pytest.raises(RebuildRequired, match="match_id 1 arrived late"):
        replay_with_state(
            BY_NAME["elo"],
            matches[:1]
            .with_columns(pl.lit(9).alias("match_id"))
            .with_columns(pl.lit(5).alias("played_at"))
            .with_columns(pl.lit(0).alias("match_id").cast(pl.Int64) + 1),
            state=state,
        )


def test_other_parameters_refused():
    matches = history(100, 10, 5, False, False).sort("played_at", "match_id")
    _, state = replay_with_state(BY_NAME["elo"], matches[:50], k=24)
    with pytest.raises(RebuildRequired, match="parameters"):
        replay_with_state(BY_NAME["elo"], matches[50:], state=state, k=32)
    with pytest.raises(RebuildRequired, match="expected a glicko state"):
        replay_with_state(BY_NAME["glicko"], matches[50:], state=state)


def test_schedule_with_new_players_refused_without_them_continues():
    matches = pl.DataFrame(
        {
            "match_id": list(range(8)),
            "played_at": list(range(8)),
            "player_a": ["a", "b", "c", "a", "b", "c", "a", "d"],
            "player_b": ["b", "c", "a", "c", "a", "b", "b", "a"],
            "score_a": [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 0.5, 1.0],
        }
    )
    params = {"a": 1.0, "b": 10.0}
    full = replay_with_state(BY_NAME["elo"], matches[:7], **params)[0]
    first, state = replay_with_state(BY_NAME["elo"], matches[:4], **params)
    rest, state = replay_with_state(BY_NAME["elo"], matches[4:7], state=state, **params)
    assert_frame_equal(pl.concat([first, rest]), full, check_exact=True)
    with pytest.raises(RebuildRequired, match="now has 4 players, not 3"):
        replay_with_state(BY_NAME["elo"], matches[7:], state=state, **params)


def test_missing_state_columns():
    matches = history(20, 5, 6, False, False)
    with pytest.raises(DuckrateInputError, match="missing column"):
        replay_with_state(BY_NAME["elo"], matches, state=pl.DataFrame({"league": ["x"]}))


# --------------------------------------------------------------------------------------------------
# chance, elo2k, pairwise: their own state and refusals


def test_chance_priors_for_newcomers_and_fractional_results_continue():
    """Priors set the start of players first seen in a later batch (and are ignored for players with
    saved state); with algorithm 'naive' fractional results continue bit for bit too."""
    matches = history(300, 20, 8, False, False).with_columns(
        pl.when(pl.col("match_id") % 7 == 0).then(0.25).otherwise(pl.col("score_a")).alias("score_a")
    )
    priors = pl.DataFrame(
        {"player": ["p3", "p11", "p17"], "rating": [1700.0, 1350.0, 1550.0], "sd": [80.0, None, 150.0]}
    )
    params = {"grid_points": 41, "algorithm": "naive"}
    full, full_state = replay_with_state(BY_NAME["chance"], matches, priors=priors, **params)
    ordered, state, rows = matches.sort("played_at", "match_id"), None, []
    for start, stop in [(0, 40), (40, 170), (170, 300)]:
        out, state = replay_with_state(BY_NAME["chance"], ordered[start:stop], priors=priors, state=state, **params)
        rows.append(out)
    assert_frame_equal(pl.concat(rows).sort("league", "seq", nulls_last=True), full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)
    players = state.filter(pl.col("kind") == "player")
    assert (players["value"].list.len() == 2 + 41).all()  # mean, sd, the grid posterior
    assert np.allclose(players["value"].list.slice(2).list.sum().to_numpy(), 1.0, rtol=0, atol=1e-12)


def test_chance_fast_refuses_other_fractional_results():
    matches = history(120, 10, 9, False, False).sort("played_at", "match_id")
    _, state = replay_with_state(BY_NAME["chance"], matches[:60], grid_points=31)
    rest = matches[60:].with_columns(
        pl.when(pl.col("match_id") % 5 == 0).then(0.75).otherwise(pl.col("score_a")).alias("score_a")
    )
    with pytest.raises(RebuildRequired, match="0.75.*factorised"):
        replay_with_state(BY_NAME["chance"], rest, state=state, grid_points=31)
    replay_with_state(BY_NAME["chance"], matches[60:], state=state, grid_points=31)  # 0, ½ and 1 continue


def test_elo2k_field_is_causal_and_saved():
    """The league's field sums and size are state: rating_a_before of a newcomer's first match uses the
    field seen so far, whichever batch brought the other players."""
    matches = pl.DataFrame(
        {
            "match_id": [1, 2, 3],
            "played_at": [1, 2, 3],
            "player_a": ["a", "c", "a"],
            "player_b": ["b", "a", "d"],
            "score_a": [1.0, 0.0, 0.5],
        }
    )
    out, state = replay_with_state(BY_NAME["elo2k"], matches, dim=2)
    league = state.filter(pl.col("kind") == "league").row(0, named=True)
    assert league["value"][0] == 4.0 and len(league["value"]) == 1 + 2 * 2  # players, ΣU, ΣV
    vectors = np.array(state.filter(pl.col("kind") == "player")["value"].to_list())
    assert league["value"][1:] == pytest.approx(vectors.sum(axis=0).tolist(), abs=1e-15)
    first = replay_with_state(BY_NAME["elo2k"], matches[:1], dim=2)[0]
    assert first["rating_a_before"][0] == out.sort("seq")["rating_a_before"][0]  # d and c not yet in the field


def test_elo2k_schedule_with_new_players_refused_without_them_continues():
    matches = pl.DataFrame(
        {
            "match_id": list(range(8)),
            "played_at": list(range(8)),
            "player_a": ["a", "b", "c", "a", "b", "c", "a", "d"],
            "player_b": ["b", "c", "a", "c", "a", "b", "b", "a"],
            "score_a": [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 0.5, 1.0],
        }
    )
    params = {"a": 1.0, "b": 10.0, "dim": 3}
    full = replay_with_state(BY_NAME["elo2k"], matches[:7], **params)[0]
    first, state = replay_with_state(BY_NAME["elo2k"], matches[:4], **params)
    rest, state = replay_with_state(BY_NAME["elo2k"], matches[4:7], state=state, **params)
    assert_frame_equal(pl.concat([first, rest]), full, check_exact=True)
    with pytest.raises(RebuildRequired, match="now has 4 players, not 3"):
        replay_with_state(BY_NAME["elo2k"], matches[7:], state=state, **params)


def test_pairwise_pair_rows_name_ordered_counts():
    matches = pl.DataFrame(
        {
            "match_id": [1, 2, 3, 4],
            "played_at": [1, 2, 3, 4],
            "player_a": ["b", "a", "b", "c"],
            "player_b": ["a", "b", "c", "a"],
            "score_a": [1.0, 0.5, 0.0, 1.0],
            "weight": [1.0, 2.0, 1.0, 0.5],
        }
    )
    _, state = replay_with_state(BY_NAME["pairwise"], matches)
    pairs = {
        (r["player"], r["opponent"]): r["value"] for r in state.filter(pl.col("kind") == "pair").iter_rows(named=True)
    }
    # [wins of player, wins of opponent, games]; a draw is half a win each way, weights count as games
    assert pairs == {("a", "b"): [1.0, 2.0, 3.0], ("b", "c"): [0.0, 1.0, 1.0], ("a", "c"): [0.0, 0.5, 0.5]}
    assert state.filter(pl.col("kind") == "league")["value"].to_list() == [[3.0]]
    # a pair split across batches (b-c saved, then met again) continues from its saved counts
    more = pl.DataFrame(
        {"match_id": [5], "played_at": [5], "player_a": ["c"], "player_b": ["b"], "score_a": [1.0], "weight": [1.0]}
    )
    _, state = replay_with_state(BY_NAME["pairwise"], more, state=state)
    pairs = {
        (r["player"], r["opponent"]): r["value"] for r in state.filter(pl.col("kind") == "pair").iter_rows(named=True)
    }
    assert pairs[("b", "c")] == [0.0, 2.0, 2.0] and pairs[("a", "b")] == [1.0, 2.0, 3.0]
