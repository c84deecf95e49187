"""``contest_metrics(definition='reference')``: the Elo-MMR reference implementation's metric (EbTech/Elo-MMR,
``multi-skill/src/metrics.rs``; Ebtekar & Liu 2021, Section 6.2, Table 2).

Checked by hand on a tiny history, against a naive O(n²) pure-Python implementation of the definition on
random replays (several leagues, one null, two systems, ties in rank and in rating, newcomers, warm-up,
``min_history`` 0 / 1 / 5, ``top``), through the SQL mart in real DuckDB, for independence of the row order
and of numba's thread count, and for clear errors on bad parameters.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict

import numba
import numpy as np
import polars as pl
import pytest

from duckrate.core.errors import DuckrateInputError
from duckrate.evaluation.contest_marts import CONTEST_METRICS_COLUMNS, contest_metrics

# --------------------------------------------------------------------------- the naive definition


def naive_reference(replay: pl.DataFrame, warmup: float = 0.1, min_history: int = 5, top: int | None = None):
    """The reference's metric over the rows of ``replay`` as dicts, pair by pair: {(league, system):
    (pair_inversion, rank_deviation, n)} for the (league, system) with something scored."""
    groups = defaultdict(list)
    for row in replay.to_dicts():
        groups[(row["league"], row.get("system"))].append(row)
    result = {}
    for key, rows in groups.items():
        cutoff = math.floor(max(row["seq"] for row in rows) * warmup)
        contests = defaultdict(list)
        for row in rows:
            contests[row["seq"]].append(row)
        seen = Counter()  # earlier contests of each player
        weight = pair_sum = error_sum = 0.0
        for seq in sorted(contests):
            standings = sorted(contests[seq], key=lambda row: (row["rank"], row["player"]))
            if seq > cutoff:
                kept = [row for row in standings if seen[row["player"]] >= max(min_history, 1)]
                lo = [min(j for j, other in enumerate(kept) if other["rank"] == row["rank"]) for row in kept]
                hi = [max(j for j, other in enumerate(kept) if other["rank"] == row["rank"]) for row in kept]
                if top is not None:
                    n_top = sum(1 for low in lo if low < top)
                    kept, lo, hi = kept[:n_top], lo[:n_top], hi[:n_top]
                n = len(kept)
                if n > 0 and hi[0] + 1 < n:
                    rating = [row["rating_before"] for row in kept]
                    # a pair placed in different ties is wrong when the one placed ahead has the lower rating
                    inversions = sum(
                        1
                        for i in range(n)
                        for j in range(i + 1, n)
                        if kept[i]["rank"] != kept[j]["rank"] and rating[i] < rating[j]
                    )
                    by_rating = sorted(range(n), key=lambda i: -rating[i])  # stable: standings order
                    error = sum(abs(p - min(max(p, lo[i]), hi[i])) for p, i in enumerate(by_rating))
                    weight += n
                    pair_sum += n * (1 - 2 * inversions / (n * (n - 1)))
                    error_sum += n * error / (n * (n - 1))
            for row in standings:
                seen[row["player"]] += 1
        if weight > 0:
            result[key] = (pair_sum / weight, error_sum / weight, int(weight))
    return result


def as_dict(frame: pl.DataFrame) -> dict:
    return {
        (row["league"], row["system"]): (row["pair_inversion"], row["rank_deviation"], row["n"])
        for row in frame.iter_rows(named=True)
    }


def random_replay(seed: int, max_size: int = 14) -> pl.DataFrame:
    """Shuffled contests over 3 leagues (one null) x 2 systems: 1..max_size players each from a pool that
    grows (newcomers keep arriving), competition ranks with ties (sometimes every player tied), prior
    ratings on a coarse grid (equal ratings are common)."""
    rng = random.Random(seed)
    rows = []
    for league in (None, "east", "west"):
        for system in ("elo_mmr", "other"):
            for seq in range(1, rng.randint(12, 30) + 1):
                pool = 6 + seq
                size = min(rng.randint(1, max_size), pool)
                players = rng.sample(range(pool), size)
                if rng.random() < 0.1:
                    ranks = [1] * size
                else:
                    ranks = sorted(rng.randint(1, size) for _ in range(size))
                for player, rank in zip(players, ranks):
                    rows.append(
                        {
                            "league": league,
                            "system": system,
                            "seq": seq,
                            "contest_id": 1000 * seq + len(league or ""),
                            "player": f"p{player:03d}",
                            "rank": rank,
                            "rating_before": 1500.0 + 25.0 * rng.randint(-8, 8),
                        }
                    )
    return pl.DataFrame(rows, infer_schema_length=None).sample(fraction=1.0, shuffle=True, seed=seed)


def assert_matches_naive(replay: pl.DataFrame, **params) -> None:
    actual = as_dict(contest_metrics(replay, **params))
    expected = naive_reference(replay, **params)
    assert actual.keys() == expected.keys()
    for key, (pair, deviation, n) in expected.items():
        assert actual[key][0] == pytest.approx(pair, abs=1e-12, rel=0)
        assert actual[key][1] == pytest.approx(deviation, abs=1e-12, rel=0)
        assert actual[key][2] == n


# --------------------------------------------------------------------------- by hand


def hand_replay() -> pl.DataFrame:
    """Three contests of league L:

    * seq 1: A, B, C, D, E (everyone new: nothing scored);
    * seq 2: A 1st, B and C tied 2nd, F 4th (new: never counts), D 5th, E 6th; prior ratings A 1500,
      B 1600, C 1400, F 2000, D 1450, E 1300;
    * seq 3: A 1st, B 2nd, C 3rd; ratings A 1500, B 1400, C 1450.
    """
    rows = [("L", 1, p, r, 1500.0) for p, r in zip("ABCDE", (1, 2, 3, 4, 5))]
    rows += [
        ("L", 2, "A", 1, 1500.0),
        ("L", 2, "B", 2, 1600.0),
        ("L", 2, "C", 2, 1400.0),
        ("L", 2, "F", 4, 2000.0),
        ("L", 2, "D", 5, 1450.0),
        ("L", 2, "E", 6, 1300.0),
    ]
    rows += [("L", 3, "A", 1, 1500.0), ("L", 3, "B", 2, 1400.0), ("L", 3, "C", 3, 1450.0)]
    return pl.DataFrame(rows, schema=["league", "seq", "player", "rank", "rating_before"], orient="row")


def test_a_hand_computed_history():
    """Contest 2, min_history 1 (or 0: F is new either way): kept A, B, C, D, E (n = 5), ties re-numbered
    A [0,0], B [1,2], C [1,2], D [3,3], E [4,4] (F's removal closes the gap).
    Pair inversion: the tie (B, C) pre-sorted by rating, 1600 before 1400, gives the sequence
    1500, 1600, 1400, 1450, 1300; pairs i < j with rating_i < rating_j: (A, B) 1500 < 1600 and
    (C, D) 1400 < 1450, inv = 2, so 1 - 2·2/(5·4) = 0.8.
    Rank deviation: by rating B 1600, A 1500, D 1450, C 1400, E 1300 at positions 0..4:
    |0 - clamp(0, 1, 2)| = 1 (B), |1 - clamp(1, 0, 0)| = 1 (A), |2 - clamp(2, 3, 3)| = 1 (D),
    |3 - clamp(3, 1, 2)| = 1 (C), |4 - 4| = 0 (E): 4/(5·4) = 0.2.
    Contest 3 (n = 3, A [0,0], B [1,1], C [2,2]): sequence 1500, 1400, 1450, inv = 1 (B, C):
    1 - 2/6 = 2/3; by rating A, C, B: 0 + |1 - 2| + |2 - 1| = 2, 2/6 = 1/3.
    Weighted by n: pair inversion (5·0.8 + 3·2/3)/8 = 6/8 = 0.75, rank deviation (5·0.2 + 3·1/3)/8 = 0.25,
    n = 8."""
    replay = hand_replay()
    for min_history in (0, 1):
        result = contest_metrics(replay, warmup=0.0, min_history=min_history)
        assert result.columns == list(CONTEST_METRICS_COLUMNS)
        assert result["league"].to_list() == ["L"] and result["system"].to_list() == [None]
        assert result["pair_inversion"][0] == pytest.approx(0.75, abs=1e-15)
        assert result["rank_deviation"][0] == pytest.approx(0.25, abs=1e-15)
        assert result["n"][0] == 8


def test_by_hand_min_history_warmup_and_top():
    replay = hand_replay()
    # min_history 2: contest 2 keeps nobody (everyone has 1 earlier contest), contest 3 alone
    only_third = contest_metrics(replay, warmup=0.0, min_history=2)
    assert only_third.select("pair_inversion", "rank_deviation", "n").rows() == [
        pytest.approx((2 / 3, 1 / 3, 3), abs=1e-15)
    ]
    # warm-up 0.67: floor(3 · 0.67) = 2 contests not scored, contest 3 alone again
    assert contest_metrics(replay, warmup=0.67, min_history=1).equals(only_third)
    # min_history 3: nobody has 3 earlier contests, so no row
    assert contest_metrics(replay, warmup=0.0, min_history=3).is_empty()
    # top 2 in contest 2: lo < 2 keeps A [0,0] and the whole tie B, C [1,2] (n = 3): sequence 1500, 1600,
    # 1400, inv = 1, 1 - 2/6 = 2/3; by rating B, A, C: 1 + 1 + 0 = 2, 2/6 = 1/3. Contest 3 with top 2
    # keeps A, B (n = 2): 1500 before 1400, inv 0, pair 1; no error. Weighted: (3·2/3 + 2·1)/5 = 0.8,
    # (3·1/3 + 0)/5 = 0.2, n = 5.
    top_two = contest_metrics(replay, warmup=0.0, min_history=1, top=2)
    assert top_two.select("pair_inversion", "rank_deviation", "n").rows() == [pytest.approx((0.8, 0.2, 5), abs=1e-15)]
    # top 1 in contest 2 keeps A alone (n = 1: nothing), in contest 3 A alone: no row
    assert contest_metrics(replay, warmup=0.0, min_history=1, top=1).is_empty()


def test_a_contest_of_one_tie_counts_nothing():
    """Everyone seen before but all tied (the reference's ``outcome_free``): weight 0, and ties in rating
    across places never count as wrong."""
    rows = [("L", 1, p, 1, 1500.0) for p in "ABC"] + [
        ("L", 2, p, 1, r) for p, r in zip("ABC", (1400.0, 1500.0, 1600.0))
    ]
    rows += [("L", 3, p, rank, 1500.0) for p, rank in zip("ABC", (1, 2, 3))]  # equal ratings: inv 0
    replay = pl.DataFrame(rows, schema=["league", "seq", "player", "rank", "rating_before"], orient="row")
    result = contest_metrics(replay, warmup=0.0, min_history=1)
    # contest 3 alone: pair inversion 1; by rating (stable) A, B, C = standings order: no error
    assert result.select("pair_inversion", "rank_deviation", "n").rows() == [(1.0, 0.0, 3)]


# --------------------------------------------------------------------------- against the naive definition

PARAMETERS = [
    {"warmup": 0.0, "min_history": 0},
    {"warmup": 0.0, "min_history": 1},
    {"warmup": 0.1, "min_history": 5},
    {"warmup": 0.1, "min_history": 0, "top": 100},
    {"warmup": 0.0, "min_history": 0, "top": 3},
    {"warmup": 0.3, "min_history": 2, "top": 2},
    {"warmup": 0.5, "min_history": 1, "top": 5},
]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("params", PARAMETERS, ids=lambda p: "-".join(f"{k}{v}" for k, v in p.items()))
def test_equals_the_naive_definition_on_random_replays(seed, params):
    assert_matches_naive(random_replay(seed), **params)


def test_the_defaults_are_the_papers_protocol():
    replay = random_replay(4)
    assert contest_metrics(replay).equals(contest_metrics(replay, warmup=0.1, min_history=5, top=None))
    assert contest_metrics(replay).equals(contest_metrics(replay, definition="reference"))
    assert_matches_naive(replay, warmup=0.1, min_history=5)


def test_large_contests_with_long_ties_equal_the_naive_definition():
    """Contests of up to 300 players (many merge passes), with ties of dozens of places and repeated
    ratings."""
    rng = random.Random(11)
    rows = []
    for seq in range(1, 9):
        players = rng.sample(range(400), rng.randint(150, 300))
        ranks = sorted(rng.choice([1, 2, 5, 40, 41, 42, 100, 200, 250]) for _ in players)
        for player, rank in zip(players, ranks):
            rows.append(("x", seq, f"q{player}", rank, float(rng.randint(0, 30))))
    replay = pl.DataFrame(rows, schema=["league", "seq", "player", "rank", "rating_before"], orient="row")
    for params in ({"warmup": 0.0, "min_history": 0}, {"warmup": 0.0, "min_history": 2, "top": 60}):
        assert_matches_naive(replay, **params)


def test_row_order_and_thread_count_do_not_change_a_bit():
    replay = random_replay(5, max_size=40)
    expected = contest_metrics(replay, min_history=1)
    for seed in (1, 2):
        assert contest_metrics(replay.sample(fraction=1.0, shuffle=True, seed=seed), min_history=1).equals(expected)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert contest_metrics(replay, min_history=1).equals(expected)
    finally:
        numba.set_num_threads(threads)


def test_player_and_number_types():
    """Integer players, float ranks that are whole numbers, integer ratings: the same result as text/int/float."""
    replay = random_replay(6)
    expected = contest_metrics(replay, min_history=1)
    other = replay.with_columns(
        pl.col("player").str.slice(1).cast(pl.Int64),
        pl.col("rank").cast(pl.Float64),
        pl.col("rating_before").cast(pl.Int64),
        pl.col("seq").cast(pl.Int32),
    )
    assert contest_metrics(other, min_history=1).equals(expected)


def test_empty_and_nothing_scored_give_no_rows():
    replay = hand_replay()
    for frame in (replay.clear(), replay.filter(pl.col("seq") == 1)):
        result = contest_metrics(frame)
        assert result.is_empty() and result.columns == list(CONTEST_METRICS_COLUMNS)
        assert result.schema == contest_metrics(replay, definition="all_contests").schema


def test_the_two_definitions_differ_and_all_contests_still_works():
    replay = random_replay(7)
    reference = contest_metrics(replay, min_history=1)
    all_contests = contest_metrics(replay, definition="all_contests", min_contests=2)
    assert reference.columns == all_contests.columns
    assert not reference.equals(all_contests)
    assert contest_metrics(replay, definition="ALL_CONTESTS", min_contests=2).equals(all_contests)
    assert contest_metrics(replay, definition="all_contests", min_contests=2).equals(all_contests)


# --------------------------------------------------------------------------- SQL


@pytest.mark.parametrize(
    "sql_params, python_params",
    [
        ("", {}),
        (", min_history := 0, top := 100", {"min_history": 0, "top": 100}),
        (", min_history := 1, top := 3, warmup := 0.25", {"min_history": 1, "top": 3, "warmup": 0.25}),
        (", definition := 'reference', min_history := 2", {"definition": "reference", "min_history": 2}),
        (", definition := 'all_contests', min_contests := 3", {"definition": "all_contests", "min_contests": 3}),
    ],
)
def test_the_sql_mart_equals_the_python_function(con, sql_params, python_params):
    replay = random_replay(8, max_size=25)
    con.register("replay_frame", replay)
    con.execute("CREATE TABLE replay AS SELECT * FROM replay_frame")
    actual = con.sql(f"SELECT * FROM contest_metrics('replay'{sql_params})").pl()
    expected = contest_metrics(replay, **python_params)
    assert actual.columns == expected.columns
    assert actual.sort("league", "system", nulls_last=False).equals(expected)


def test_the_sql_mart_labels_a_replay_without_system(con):
    replay = hand_replay()
    con.register("replay_frame", replay)
    con.execute("CREATE TABLE replay AS SELECT * FROM replay_frame")
    rows = con.sql("SELECT * FROM contest_metrics('replay', warmup := 0, min_history := 1, system := 'mmr')").fetchall()
    assert rows == [("L", "mmr", pytest.approx(0.75), pytest.approx(0.25), 8)]


# --------------------------------------------------------------------------- bad input

BAD_PARAMETERS = [
    (
        {"definition": "paper"},
        "contest_metrics: parameter definition = 'paper'; expected one of 'reference', 'all_contests'",
    ),
    ({"definition": None}, "contest_metrics: parameter definition is NULL"),
    (
        {"min_history": -1},
        "contest_metrics: parameter min_history = -1; expected an integer number of earlier contests >= 0",
    ),
    ({"min_history": 2.5}, "contest_metrics: parameter min_history = 2.5; expected an integer"),
    ({"min_history": "5"}, "contest_metrics: parameter min_history = '5'; expected an integer"),
    ({"top": 0}, "contest_metrics: parameter top = 0; expected an integer number of places >= 1, or NULL"),
    ({"top": 1.5}, "contest_metrics: parameter top = 1.5; expected an integer number of places >= 1"),
    ({"warmup": 1.0}, "contest_metrics: parameter warmup = 1.0; expected a share in [0, 1)"),
    ({"warmup": float("nan")}, "contest_metrics: parameter warmup = nan; expected a share in [0, 1)"),
    (
        {"min_contests": -1},
        "contest_metrics: parameter min_contests = -1; expected an integer number of contests >= 0 (definition",
    ),
]


@pytest.mark.parametrize("params, message", BAD_PARAMETERS, ids=[str(p) for p, _ in BAD_PARAMETERS])
def test_bad_parameters_name_the_parameter(params, message):
    with pytest.raises(DuckrateInputError) as raised:
        contest_metrics(hand_replay(), **params)
    assert message in str(raised.value)


SQL_BAD_PARAMETERS = [
    (
        "definition := 'paper'",
        "contest_metrics: parameter definition = 'paper'; expected one of 'reference', 'all_contests'",
    ),
    ("definition := NULL", "contest_metrics: parameter definition is NULL"),
    (
        "min_history := -1",
        "contest_metrics: parameter min_history = -1; expected an integer number of earlier contests",
    ),
    ("min_history := 2.5", "contest_metrics: parameter min_history = 2.5; expected an integer"),
    ("top := 0", "contest_metrics: parameter top = 0; expected an integer number of places >= 1, or NULL"),
    ("top := 'x'", "contest_metrics: parameter top = 'x'; expected an integer number of places"),
]


@pytest.mark.parametrize("call, message", SQL_BAD_PARAMETERS, ids=[c for c, _ in SQL_BAD_PARAMETERS])
def test_bad_sql_parameters_name_the_parameter(con, call, message):
    con.register("replay_frame", hand_replay())
    con.execute("CREATE TABLE replay AS SELECT * FROM replay_frame")
    with pytest.raises(Exception) as raised:
        con.sql(f"SELECT * FROM contest_metrics('replay', {call})").fetchall()
    assert message in str(raised.value)


@pytest.mark.parametrize("column", ["seq", "player", "rank", "rating_before"])
def test_nulls_in_a_column_read_are_an_error_naming_it(column):
    replay = hand_replay().with_columns(
        pl.when(pl.col("player") == "C").then(None).otherwise(pl.col(column)).alias(column)
    )
    with pytest.raises(DuckrateInputError, match=f"contest_metrics: expected {column} without nulls"):
        contest_metrics(replay)


def test_a_nan_rating_is_an_error():
    replay = hand_replay().with_columns(
        pl.when(pl.col("player") == "C").then(np.nan).otherwise(pl.col("rating_before")).alias("rating_before")
    )
    with pytest.raises(DuckrateInputError, match="expected rating_before without nulls or NaN, found 0 null and 3 NaN"):
        contest_metrics(replay)
