"""The team_results input: validation (every bad row an error naming the column, the row key and the value),
team places from ranks or scores, and the replay order, which no input row order changes."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import columns_from_polars, encode_column, encode_runs
from duckrate.core.teams import TEAM_RESULTS, prepare_team_results
from duckrate.synthetic import generate_team_matches


def results(**changes) -> pl.DataFrame:
    """Three matches: a 2v2 by rank (one league), a free-for-all of three teams of one with a tie (by rank), and
    a 2v1 whose rank agrees with its score; ``changes`` replace or add columns."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 1, 1, 1, 2, 2, 2, 3, 3, 3],
            "played_at": [10, 10, 10, 10, 20, 20, 20, 30, 30, 30],
            "team": ["red", "red", "blue", "blue", "a", "b", "c", "x", "x", "y"],
            "player": ["ann", "bob", "cid", "dee", "ann", "cid", "eve", "bob", "dee", "eve"],
            "rank": [2, 2, 1, 1, 1, 2, 1, 1, 1, 2],
            "score": [0.0, 0.0, 3.0, 3.0, 5.0, 1.0, 5.0, 7.0, 7.0, 2.0],
            "weight": [1.0, 0.5, None, 1.0, 1.0, 1.0, 1.0, 0.25, 1.0, 1.0],
        }
    )
    return frame.with_columns(**changes)


def prepared(frame: pl.DataFrame):
    return prepare_team_results(columns_from_polars(frame, "team_results"))


def test_the_shape():
    assert TEAM_RESULTS.key == "match_id"
    assert TEAM_RESULTS.required == ("match_id", "played_at", "team", "player")


def test_matches_teams_and_places_in_replay_order():
    frame = results()
    p = prepared(frame)
    assert (p.n_matches, p.n_teams) == (3, 7)
    assert p.match_teams.tolist() == [0, 2, 5, 7]
    rows = frame.with_row_index("row")
    teams = [
        rows.filter(pl.col("row").is_in(p.order[p.team_start[t] : p.team_start[t + 1]].tolist()))["team"]
        .unique()
        .to_list()
        for t in range(p.n_teams)
    ]
    assert teams == [["blue"], ["red"], ["a"], ["c"], ["b"], ["x"], ["y"]]  # best first, tied teams by key
    assert p.team_rank.tolist() == [1, 2, 1, 1, 2, 1, 2]
    assert p.team_score.tolist() == [3.0, 0.0, 5.0, 5.0, 1.0, 7.0, 2.0]
    assert p.match_seq.tolist() == [1, 2, 3] and p.match_time_key.tolist() == [10, 20, 30]
    assert p.weight.tolist() == [1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.25, 1.0, 1.0]  # NULL = 1
    names = p.players.to_pylist()
    assert [names[p.state[row]] for row in p.order[:4]] == ["cid", "dee", "ann", "bob"]  # players by name


def test_places_from_scores_alone_higher_is_better_and_equal_scores_tie():
    p = prepared(results().drop("rank"))
    assert p.team_rank.tolist() == [1, 2, 1, 1, 2, 1, 2]


def test_two_player_matches_and_individual_contests_are_team_results():
    frame = pl.DataFrame(
        {
            "match_id": [1, 1, 2, 2, 2],
            "played_at": [1, 1, 2, 2, 2],
            "team": [1, 2, 1, 2, 3],
            "player": ["a", "b", "a", "b", "c"],
            "rank": [1, 2, 3, 1, 2],
        }
    )
    p = prepared(frame)
    assert (p.n_matches, p.n_teams) == (2, 5)
    assert p.team_rank.tolist() == [1, 2, 1, 2, 3]


def test_no_input_row_order_changes_the_result():
    frame = results(league=pl.Series(["x", "x", "x", "x", None, None, None, "x", "x", "x"]))
    base = prepared(frame)
    for seed in range(3):
        shuffled = frame.with_row_index("original").sample(fraction=1.0, shuffle=True, seed=seed)
        p = prepared(shuffled.drop("original"))
        original = shuffled["original"].to_numpy()
        assert original[p.order].tolist() == base.order.tolist()
        for name in ("team_start", "match_teams", "team_rank", "team_score", "match_league", "match_seq"):
            assert np.array_equal(getattr(p, name), getattr(base, name)), name


def test_grouped_chunked_and_shuffled_rows_give_the_same_arrays():
    """Rows grouped by match (one run per match), in blocks taken in any order (a match split between blocks, as
    DuckDB chunks come), or shuffled give the same arrays, bit for bit; matches and teams large enough to be
    sorted by merge rather than insertion included."""
    small = generate_team_matches(300, 200, seed=1, teams_per_match=(2, 4), team_size=(1, 5), n_leagues=3, scores=True)
    free_for_all = generate_team_matches(20, 500, seed=2, teams_per_match=(40, 80), team_size=(1, 2), scores=True)
    for frame in (small, free_for_all.drop("rank"), free_for_all.drop("score")):
        frame = frame.with_row_index("original")
        base = prepared(frame.drop("original"))
        blocks = np.array_split(np.arange(frame.height), 37)
        chunked = frame[np.concatenate([blocks[k] for k in np.random.default_rng(0).permutation(len(blocks))])]
        for other in (chunked, frame.sample(fraction=1.0, shuffle=True, seed=3)):
            p = prepared(other.drop("original"))
            original = other["original"].to_numpy()
            assert np.array_equal(original[p.order], base.order)
            for name in ("team_start", "match_teams", "team_rank", "team_score", "match_has_score", "match_seq"):
                mine, theirs = getattr(p, name), getattr(base, name)
                assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes(), name
            assert np.array_equal(p.match_time_key, base.match_time_key)
            # league codes follow the leagues' first rows; their names do not
            leagues, base_leagues = np.array(p.league_names), np.array(base.league_names)
            assert leagues[p.match_league].tolist() == base_leagues[base.match_league].tolist()


@pytest.mark.parametrize(
    "values",
    [
        ["main"] * 9,
        ["b", "b", "a", "a", None, None, "b", "", "", "c", "c", "c"],
        [None] * 5 + ["x"] * 20,
        [f"p{i % 7}" for i in range(40)],  # short runs: encoded whole
        ["only"],
        [],
    ],
)
def test_encode_runs_gives_the_codes_and_dictionary_of_encode_column(values):
    array = pa.array(values, pa.large_string())
    for part in (array, array[1:]):  # a slice too: an offset into the buffers
        codes, dictionary = encode_runs(part)
        expected_codes, expected_dictionary = encode_column(part)
        assert codes.dtype == np.int64 and codes.tolist() == expected_codes.tolist()
        assert dictionary.equals(expected_dictionary)


@pytest.mark.parametrize(
    "frame, fragments",
    [
        (results().drop("rank", "score"), ["missing column(s) 'rank' or 'score'"]),
        (results().drop("team"), ["missing column(s) 'team'"]),
        (results(match_id=pl.Series([1, 1, None, 1, 2, 2, 2, 3, 3, 3])), ["column 'match_id' has None", "non-NULL"]),
        (
            results(team=pl.Series(["red", None, "blue", "blue", "a", "b", "c", "x", "x", "y"])),
            ["column 'team' has None", "player='bob'"],
        ),
        (
            results(player=pl.Series(["ann", "bob", "cid", "dee", "ann", None, "eve", "bob", "dee", "eve"])),
            ["column 'player' has None", "team='b'"],
        ),
        (
            results(played_at=pl.Series([10, 10, 11, 10, 20, 20, 20, 30, 30, 30])),
            ["column 'played_at' has 11", "match_id=1, team='blue', player='cid'", "one played_at per match"],
        ),
        (
            results(player=pl.Series(["ann", "bob", "ann", "dee", "ann", "cid", "eve", "bob", "dee", "eve"])),
            ["column 'player' has 'ann'", "match_id=1, team='blue'", "also in team 'red'"],
        ),
        (
            results(player=pl.Series(["ann", "ann", "cid", "dee", "ann", "cid", "eve", "bob", "dee", "eve"])),
            ["column 'player' has 'ann'", "twice in one team"],
        ),
        (
            results(
                team=pl.Series(["red", "red", "red", "red", "a", "b", "c", "x", "x", "y"]),
                rank=pl.Series([1, 1, 1, 1, 1, 2, 1, 1, 1, 2]),
                score=pl.Series([3.0, 3.0, 3.0, 3.0, 5.0, 1.0, 5.0, 7.0, 7.0, 2.0]),
            ),
            ["column 'team' has 'red'", "at least two teams per match"],
        ),
        (
            results(rank=pl.Series([2, 1, 1, 1, 1, 2, 1, 1, 1, 2])),
            ["column 'rank' has 1", "player='bob'", "one rank per team (the team also has 2)"],
        ),
        (
            results(score=pl.Series([0.0, 0.0, 3.0, 3.0, 5.0, 1.0, 5.0, 1.0, 1.0, 2.0])),
            ["column 'rank' has 1", "match_id=3, team='x'", "order the match's teams as their scores do"],
        ),
        (results(rank=pl.Series([2, 2, 1, 1, 1, 2, 1, 1, 1, 0])), ["column 'rank' has 0", "whole-number rank >= 1"]),
        (results(rank=pl.Series([2.5, 2.5, 1, 1, 1, 2, 1, 1, 1, 2])), ["column 'rank' has 2.5"]),
        (
            results(score=pl.Series([0.0, 0.0, 3.0, 3.0, 5.0, 1.0, None, 7.0, 7.0, 2.0])),
            ["column 'score' has None", "player='eve'"],
        ),
        (
            results(score=pl.Series([0.0, 0.0, 3.0, 3.0, 5.0, 1.0, float("nan"), 7.0, 7.0, 2.0]), rank=None),
            ["column 'score' has nan", "finite score"],
        ),
        (
            results(weight=pl.Series([1.0, 0.0, None, 1.0, 1.0, 1.0, 1.0, 0.25, 1.0, 1.0])),
            ["column 'weight' has 0.0", "player='bob'", "in (0, 1]"],
        ),
        (results(weight=pl.Series([1.0, 1.5, None, 1.0, 1.0, 1.0, 1.0, 0.25, 1.0, 1.0])), ["column 'weight' has 1.5"]),
        (
            results(player=pl.Series(["ann", "", "cid", "dee", "ann", "cid", "eve", "bob", "dee", "eve"])),
            ["column 'player' has ''", "non-empty"],
        ),
    ],
)
def test_bad_rows_are_errors_naming_column_row_and_value(frame, fragments):
    if "rank" in frame.columns and frame["rank"].null_count() == frame.height:
        frame = frame.drop("rank")
    with pytest.raises(DuckrateInputError) as error:
        prepared(frame)
    message = str(error.value)
    assert message.startswith("team_results: ")
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_each_match_by_its_ranks_or_its_scores():
    """A table with both columns: a match with NULL ranks is given by its scores (and says so for a margin), a
    match with NULL scores by its ranks; a match giving a rank (or a score) on some rows only is an error."""
    frame = pl.DataFrame(
        {
            "match_id": [1, 1, 2, 2],
            "played_at": [1, 1, 2, 2],
            "team": ["a", "b", "a", "b"],
            "player": ["p", "q", "p", "q"],
            "rank": [None, None, 2, 1],
            "score": [1.0, 4.0, None, None],
        }
    )
    p = prepared(frame)
    assert p.team_rank.tolist() == [1, 2, 1, 2]
    assert p.match_has_score.tolist() == [True, False]
    names = p.players.to_pylist()
    assert [names[p.state[row]] for row in p.order] == ["q", "p", "q", "p"]
    partial = frame.with_columns(rank=pl.Series([1, None, 2, 1]))
    with pytest.raises(DuckrateInputError, match="column 'rank' has None at .*on every row of a match or on none"):
        prepared(partial)
    neither = frame.with_columns(score=pl.Series([1.0, 4.0, None, None]), rank=pl.Series([None, None, None, 1]))
    with pytest.raises(DuckrateInputError, match="a rank or a score on every row"):
        prepared(neither)
