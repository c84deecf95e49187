"""Tests of the marts' Python API (``duckrate.leaderboard`` etc., run by DuckDB): leaderboard, calibration
tables and loss curve.

Each public function is checked against a naive pure-Python reference that
loops over the replay rows as dicts, on a small random replay with several
leagues (one of them null), two systems, draws, shuffled rows and sd columns
both null (Elo-like) and filled; plus hand-checked tiny cases.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import datetime, timedelta
from fractions import Fraction

import polars as pl
import pytest

from duckrate import calibration_bins, calibration_summary, leaderboard, loss_curve

Z_95 = 1.959963984540054
CLIP = 1e-15


# --------------------------------------------------------------------------- fixtures


def _random_replay(seed: int = 7) -> pl.DataFrame:
    """A few hundred shuffled matches over 3 leagues (one null) and 2 systems."""
    rng = random.Random(seed)
    rows = []
    match_id = 0
    start = datetime(2024, 1, 1)
    for league in (None, "east", "west"):
        pool = [f"p{i:02d}" for i in range(rng.randint(6, 12))]
        for system in ("elo", "glicko"):
            for seq in range(1, rng.randint(40, 90) + 1):
                player_a, player_b = rng.sample(pool, 2)
                # exact end and mid-points now and then, to hit the bin edges
                expected = rng.choice([0.0, 0.5, 1.0, 0.3, 0.7]) if rng.random() < 0.1 else rng.random()
                has_sd = system == "glicko"
                match_id += 1

                def sd() -> float | None:
                    return rng.uniform(40.0, 300.0) if has_sd else None

                rows.append(
                    {
                        "system": system,
                        "league": league,
                        "seq": seq,
                        "match_id": match_id,
                        "played_at": start + timedelta(hours=seq),
                        "player_a": player_a,
                        "player_b": player_b,
                        "score_a": rng.choice([0.0, 0.5, 1.0, 1.0, 0.0]),
                        "expected_a": expected,
                        "rating_a_before": float(rng.randint(1400, 1410)),
                        "rating_b_before": float(rng.randint(1400, 1410)),
                        "sd_a_before": sd(),
                        "sd_b_before": sd(),
                        # few distinct values, so that leaderboard ties happen
                        "rating_a_after": float(rng.randint(1400, 1406)),
                        "rating_b_after": float(rng.randint(1400, 1406)),
                        "sd_a_after": sd(),
                        "sd_b_after": sd(),
                    }
                )
    rng.shuffle(rows)
    return pl.DataFrame(rows, schema=_SCHEMA)


_SCHEMA = {
    "system": pl.Utf8,
    "league": pl.Utf8,
    "seq": pl.Int64,
    "match_id": pl.Int64,
    "played_at": pl.Datetime("us"),
    "player_a": pl.Utf8,
    "player_b": pl.Utf8,
    "score_a": pl.Float64,
    "expected_a": pl.Float64,
    "rating_a_before": pl.Float64,
    "rating_b_before": pl.Float64,
    "sd_a_before": pl.Float64,
    "sd_b_before": pl.Float64,
    "rating_a_after": pl.Float64,
    "rating_b_after": pl.Float64,
    "sd_a_after": pl.Float64,
    "sd_b_after": pl.Float64,
}


def _replay(matches: list[dict]) -> pl.DataFrame:
    """A replay from partial rows; unspecified columns get harmless defaults."""
    defaults = {
        "system": "elo",
        "league": None,
        "match_id": 0,
        "played_at": datetime(2024, 1, 1),
        "rating_a_before": 1500.0,
        "rating_b_before": 1500.0,
        "sd_a_before": None,
        "sd_b_before": None,
        "rating_a_after": 1500.0,
        "rating_b_after": 1500.0,
        "sd_a_after": None,
        "sd_b_after": None,
    }
    return pl.DataFrame([{**defaults, **match} for match in matches], schema=_SCHEMA)


@pytest.fixture(scope="module")
def replay() -> pl.DataFrame:
    return _random_replay()


# --------------------------------------------------------------------------- reference helpers


def _group_sort_key(key: tuple) -> tuple:
    """Sort order of (league, system, ...) keys: null league first."""
    league, *rest = key
    return (league is not None, league or "", *rest)


def _matches_by_group(replay: pl.DataFrame) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for row in replay.iter_rows(named=True):
        groups[(row["league"], row["system"])].append(row)
    return {key: sorted(rows, key=lambda row: row["seq"]) for key, rows in groups.items()}


def _log_loss(p: float, s: float) -> float:
    p = min(max(p, CLIP), 1.0 - CLIP)
    return -(s * math.log(p) + (1.0 - s) * math.log(1.0 - p))


def _assert_rows_equal(actual: pl.DataFrame, expected: list[dict]) -> None:
    got = actual.to_dicts()
    assert len(got) == len(expected)
    for got_row, expected_row in zip(got, expected):
        assert got_row.keys() == expected_row.keys()
        for column, value in expected_row.items():
            if isinstance(value, float):
                assert got_row[column] == pytest.approx(value, rel=1e-12, abs=1e-12), column
            else:
                assert got_row[column] == value, column


def _reference_leaderboard(replay: pl.DataFrame) -> list[dict]:
    state: dict[tuple, dict] = {}
    for (league, system), rows in _matches_by_group(replay).items():
        for row in rows:
            for side in ("a", "b"):
                key = (league, system, row[f"player_{side}"])
                games = state.get(key, {"games": 0})["games"] + 1
                state[key] = {
                    "rating": row[f"rating_{side}_after"],
                    "sd": row[f"sd_{side}_after"],
                    "games": games,
                    "last_played_at": row["played_at"],
                }
    by_group: dict[tuple, list] = defaultdict(list)
    for (league, system, player), values in state.items():
        by_group[(league, system)].append((player, values))
    result = []
    for group in sorted(by_group, key=_group_sort_key):
        players = sorted(by_group[group], key=lambda item: (-item[1]["rating"], item[0]))
        for rank, (player, values) in enumerate(players, start=1):
            sd = values["sd"]
            result.append(
                {
                    "league": group[0],
                    "system": group[1],
                    "player": player,
                    "rank": rank,
                    "rating": values["rating"],
                    "sd": sd,
                    "lower": None if sd is None else values["rating"] - Z_95 * sd,
                    "upper": None if sd is None else values["rating"] + Z_95 * sd,
                    "games": values["games"],
                    "last_played_at": values["last_played_at"],
                }
            )
    return result


def _wilson_by_quadratic(mean: float, n: int) -> tuple[float, float]:
    """Roots p of (mean - p)^2 = z^2 p (1 - p) / n, the Wilson interval bounds."""
    c = Z_95 * Z_95 / n
    a, b, constant = 1.0 + c, -(2.0 * mean + c), mean * mean
    root = math.sqrt(b * b - 4.0 * a * constant)
    return (-b - root) / (2.0 * a), (-b + root) / (2.0 * a)


def _reference_bins(replay: pl.DataFrame, bins: int) -> list[dict]:
    cells: dict[tuple, list[dict]] = defaultdict(list)
    for row in replay.iter_rows(named=True):
        bin_number = min(math.floor(row["expected_a"] * bins), bins - 1) + 1
        cells[(row["league"], row["system"], bin_number)].append(row)
    result = []
    for key in sorted(cells, key=_group_sort_key):
        rows = cells[key]
        n = len(rows)
        mean_score = sum(row["score_a"] for row in rows) / n
        lower, upper = _wilson_by_quadratic(mean_score, n)
        result.append(
            {
                "league": key[0],
                "system": key[1],
                "bin": key[2],
                "n": n,
                "mean_expected": sum(row["expected_a"] for row in rows) / n,
                "mean_score": mean_score,
                "lower": lower,
                "upper": upper,
            }
        )
    return result


def _mean_or_none(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _reference_summary(replay: pl.DataFrame, min_games: int, max_sd, warmup: float) -> list[dict]:
    result = []
    groups = _matches_by_group(replay)
    per_system = max_sd if isinstance(max_sd, dict) else None
    for key in sorted(groups, key=_group_sort_key):
        rows = groups[key]
        if per_system is not None:
            max_sd = per_system.get(key[1])
        games_so_far: dict[str, int] = defaultdict(int)
        scored = []
        for position, row in enumerate(rows, start=1):
            established = games_so_far[row["player_a"]] >= min_games and games_so_far[row["player_b"]] >= min_games
            if max_sd is not None:
                for column in ("sd_a_before", "sd_b_before"):
                    if row[column] is not None and row[column] > max_sd:
                        established = False
            games_so_far[row["player_a"]] += 1
            games_so_far[row["player_b"]] += 1
            if position > math.floor(warmup * len(rows)):
                scored.append((row, established))
        losses = [_log_loss(row["expected_a"], row["score_a"]) for row, _ in scored]
        hits = []
        for row, _ in scored:
            p, s = row["expected_a"], row["score_a"]
            if s in (0.0, 1.0):
                hits.append(0.5 if p == 0.5 else float((p > 0.5) == (s == 1.0)))
        established_losses = [loss for loss, (_, est) in zip(losses, scored) if est]
        result.append(
            {
                "league": key[0],
                "system": key[1],
                "n": len(scored),
                "log_loss": _mean_or_none(losses),
                "brier": _mean_or_none([(r["expected_a"] - r["score_a"]) ** 2 for r, _ in scored]),
                "accuracy": _mean_or_none(hits),
                "n_established": len(established_losses),
                "log_loss_established": _mean_or_none(established_losses),
            }
        )
    return result


def _reference_checkpoints(total: int, points: int) -> list[int]:
    if total <= points:
        return list(range(1, total + 1))
    if points == 1:
        return [total]
    return [1 + math.floor(Fraction((total - 1) * k, points - 1) + Fraction(1, 2)) for k in range(points)]


def _reference_loss_curve(replay: pl.DataFrame, points: int) -> list[dict]:
    result = []
    groups = _matches_by_group(replay)
    for key in sorted(groups, key=_group_sort_key):
        rows = groups[key]
        players = {row["player_a"] for row in rows} | {row["player_b"] for row in rows}
        checkpoints = set(_reference_checkpoints(len(rows), points))
        total_loss = 0.0
        for t, row in enumerate(rows, start=1):
            total_loss += _log_loss(row["expected_a"], row["score_a"])
            if t in checkpoints:
                result.append(
                    {
                        "league": key[0],
                        "system": key[1],
                        "t": t,
                        "t_over_n": t / len(players),
                        "mean_log_loss": total_loss / t,
                    }
                )
    return result


# --------------------------------------------------------------------------- against references


def test_leaderboard_matches_reference(replay):
    table = leaderboard(replay)
    assert table.columns == [
        "league",
        "system",
        "player",
        "rank",
        "rating",
        "sd",
        "lower",
        "upper",
        "games",
        "last_played_at",
        "rank_upper",  # checked against their definitions in test_interval_ranks.py
        "rank_lower",
        "tier",
    ]
    _assert_rows_equal(table.drop("rank_upper", "rank_lower", "tier"), _reference_leaderboard(replay))


@pytest.mark.parametrize("bins", [1, 3, 10])
def test_calibration_bins_match_reference(replay, bins):
    table = calibration_bins(replay, bins=bins)
    assert table.columns == [
        "league",
        "system",
        "bin",
        "n",
        "mean_expected",
        "mean_score",
        "lower",
        "upper",
    ]
    _assert_rows_equal(table, _reference_bins(replay, bins))


@pytest.mark.parametrize(
    ("min_games", "max_sd", "warmup"),
    [(10, None, 0.0), (3, 150.0, 0.0), (0, None, 0.3), (5, 200.0, 0.55), (3, {}, 0.0)]
    + [(3, {system: 150.0}, 0.0) for system in ("glicko", "elo", "not-a-system")],
)
def test_calibration_summary_matches_reference(replay, min_games, max_sd, warmup):
    table = calibration_summary(replay, min_games=min_games, max_sd=max_sd, warmup=warmup)
    assert table.columns == [
        "league",
        "system",
        "n",
        "log_loss",
        "brier",
        "accuracy",
        "n_established",
        "log_loss_established",
    ]
    _assert_rows_equal(table, _reference_summary(replay, min_games, max_sd, warmup))


@pytest.mark.parametrize("points", [1, 2, 7, 200])
def test_loss_curve_matches_reference(replay, points):
    table = loss_curve(replay, points=points)
    assert table.columns == ["league", "system", "t", "t_over_n", "mean_log_loss"]
    _assert_rows_equal(table, _reference_loss_curve(replay, points))


# --------------------------------------------------------------------------- hand-checked cases


def _three_matches() -> pl.DataFrame:
    """a-b (p .5, A wins), a-b (p .8, A loses), a-c (p .25, draw); rows shuffled."""
    return _replay(
        [
            {"seq": 3, "player_a": "a", "player_b": "c", "expected_a": 0.25, "score_a": 0.5},
            {"seq": 1, "player_a": "a", "player_b": "b", "expected_a": 0.5, "score_a": 1.0},
            {"seq": 2, "player_a": "b", "player_b": "a", "expected_a": 0.8, "score_a": 0.0},
        ]
    )


def test_summary_hand_checked_values():
    table = calibration_summary(_three_matches(), min_games=1)
    row = table.row(0, named=True)
    loss_1 = math.log(2.0)  # -ln .5
    loss_2 = -math.log(0.2)  # predicted .8, lost
    loss_3 = -0.5 * (math.log(0.25) + math.log(0.75))  # draw at p .25
    assert (row["league"], row["system"], row["n"]) == (None, "elo", 3)
    assert row["log_loss"] == pytest.approx((0.6931471805599453 + 1.6094379124341003 + 0.8369882167858358) / 3)
    assert row["log_loss"] == pytest.approx((loss_1 + loss_2 + loss_3) / 3)
    assert row["brier"] == pytest.approx((0.25 + 0.64 + 0.0625) / 3)
    assert row["accuracy"] == pytest.approx(0.25)  # p .5 counts half, p .8 lost counts 0
    # only match 2 has both players with >= 1 earlier match (c is new in match 3)
    assert row["n_established"] == 1
    assert row["log_loss_established"] == pytest.approx(loss_2)


def test_loss_curve_hand_checked_values():
    table = loss_curve(_three_matches())
    assert table["t"].to_list() == [1, 2, 3]
    assert table["t_over_n"].to_list() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert table["mean_log_loss"].to_list() == pytest.approx(
        [
            0.6931471805599453,
            (0.6931471805599453 + 1.6094379124341003) / 2,
            (0.6931471805599453 + 1.6094379124341003 + 0.8369882167858358) / 3,
        ]
    )


def test_log_loss_clips_certain_wrong_forecasts():
    matches = _replay(
        [
            {"seq": 1, "player_a": "a", "player_b": "b", "expected_a": 0.0, "score_a": 1.0},
            {"seq": 2, "player_a": "a", "player_b": "b", "expected_a": 1.0, "score_a": 1.0},
        ]
    )
    row = calibration_summary(matches).row(0, named=True)
    assert row["log_loss"] == pytest.approx((-math.log(1e-15) + 0.0) / 2, rel=1e-9)
    assert row["accuracy"] == pytest.approx(0.5)
    assert row["n_established"] == 0 and row["log_loss_established"] is None


def test_summary_accuracy_null_without_decisive_games():
    draws = _replay([{"seq": 1, "player_a": "a", "player_b": "b", "expected_a": 0.6, "score_a": 0.5}])
    assert calibration_summary(draws)["accuracy"].to_list() == [None]


def test_summary_max_sd_excludes_uncertain_players_but_not_null_sd():
    matches = _replay(
        [
            {
                "seq": 1,
                "player_a": "a",
                "player_b": "b",
                "expected_a": 0.5,
                "score_a": 1.0,
                "sd_a_before": 50.0,
                "sd_b_before": 50.0,
            },
            {
                "seq": 2,
                "player_a": "a",
                "player_b": "b",
                "expected_a": 0.6,
                "score_a": 1.0,
                "sd_a_before": 50.0,
                "sd_b_before": 120.0,
            },
            {
                "seq": 3,
                "player_a": "a",
                "player_b": "b",
                "expected_a": 0.7,
                "score_a": 0.0,
                "sd_a_before": 100.0,
                "sd_b_before": 100.0,
            },
            {"seq": 4, "player_a": "a", "player_b": "b", "expected_a": 0.4, "score_a": 0.0},
        ]
    )
    row = calibration_summary(matches, min_games=0, max_sd=100.0).row(0, named=True)
    assert row["n_established"] == 3  # match 2 has sd_b 120 > 100; match 4 has no sd
    assert row["log_loss_established"] == pytest.approx((math.log(2.0) - math.log(0.3) - math.log(0.6)) / 3)


def test_warmup_drops_first_share_in_seq_order_and_keeps_game_counts():
    rng = random.Random(3)
    scores = [rng.choice([0.0, 1.0]) for _ in range(10)]
    expected = [rng.uniform(0.05, 0.95) for _ in range(10)]
    rows = [
        {"seq": seq, "player_a": "a", "player_b": "b", "expected_a": expected[seq - 1], "score_a": scores[seq - 1]}
        for seq in range(1, 11)
    ]
    rng.shuffle(rows)
    other_league = [{**row, "league": "solo", "seq": row["seq"]} for row in rows[:4]]
    matches = _replay(rows + other_league)
    summary = calibration_summary(matches, min_games=2, warmup=0.25)
    row = summary.filter(pl.col("league").is_null()).row(0, named=True)
    kept = range(2, 10)  # floor(0.25 * 10) = 2 matches dropped: seq 1 and 2
    assert row["n"] == 8
    assert row["log_loss"] == pytest.approx(sum(_log_loss(expected[i], scores[i]) for i in kept) / 8)
    # the dropped matches still count as earlier games: seq 3 is established
    assert row["n_established"] == 8
    # 4 matches in league "solo": floor(0.25 * 4) = 1 dropped
    assert summary.filter(pl.col("league") == "solo")["n"].to_list() == [3]


def test_bins_put_certain_forecasts_in_the_end_bins():
    matches = _replay(
        [
            {"seq": 1, "player_a": "a", "player_b": "b", "expected_a": 1.0, "score_a": 1.0},
            {"seq": 2, "player_a": "a", "player_b": "b", "expected_a": 0.0, "score_a": 0.0},
            {"seq": 3, "player_a": "a", "player_b": "b", "expected_a": 0.25, "score_a": 0.5},
            {"seq": 4, "player_a": "a", "player_b": "b", "expected_a": 0.9999, "score_a": 0.0},
        ]
    )
    table = calibration_bins(matches, bins=4)
    assert table["bin"].to_list() == [1, 2, 4]
    assert table["n"].to_list() == [1, 1, 2]
    assert table["mean_score"].to_list() == pytest.approx([0.0, 0.5, 0.5])
    # Wilson interval for 0 successes out of 1: [0, z^2 / (1 + z^2)]
    first = table.row(0, named=True)
    assert first["lower"] == 0.0
    assert first["upper"] == pytest.approx(Z_95**2 / (1.0 + Z_95**2))


def test_leaderboard_ranks_have_no_gaps_and_break_ties_by_name():
    matches = _replay(
        [
            {"seq": 1, "player_a": "carol", "player_b": "bob", "rating_a_after": 1510.0, "rating_b_after": 1490.0},
            {
                "seq": 2,
                "player_a": "alice",
                "player_b": "bob",
                "rating_a_after": 1520.0,
                "rating_b_after": 1520.0,
                "played_at": datetime(2024, 2, 1),
            },
            {"seq": 3, "player_a": "dave", "player_b": "carol", "rating_a_after": 1510.0, "rating_b_after": 1505.0},
        ]
    )
    table = leaderboard(matches.reverse())
    assert table["player"].to_list() == ["alice", "bob", "dave", "carol"]
    assert table["rank"].to_list() == [1, 2, 3, 4]
    assert table["rating"].to_list() == [1520.0, 1520.0, 1510.0, 1505.0]
    bob = table.filter(pl.col("player") == "bob").row(0, named=True)
    assert bob["games"] == 2 and bob["last_played_at"] == datetime(2024, 2, 1)
    assert bob["sd"] is None and bob["lower"] is None and bob["upper"] is None


def test_leaderboard_interval_uses_last_side_sd():
    matches = _replay(
        [
            {
                "seq": 2,
                "player_a": "b",
                "player_b": "a",
                "rating_a_after": 1400.0,
                "rating_b_after": 1600.0,
                "sd_a_after": 80.0,
                "sd_b_after": 50.0,
            },
            {
                "seq": 1,
                "player_a": "a",
                "player_b": "b",
                "rating_a_after": 1550.0,
                "rating_b_after": 1450.0,
                "sd_a_after": 90.0,
                "sd_b_after": 90.0,
            },
        ]
    )
    first = leaderboard(matches).row(0, named=True)
    assert (first["player"], first["rating"], first["sd"]) == ("a", 1600.0, 50.0)
    assert first["games"] == 2
    assert first["lower"] == pytest.approx(1600.0 - Z_95 * 50.0)
    assert first["upper"] == pytest.approx(1600.0 + Z_95 * 50.0)


def test_empty_replay_gives_empty_tables():
    empty = _replay([]).clear()
    assert leaderboard(empty).height == 0
    assert calibration_bins(empty).height == 0
    assert calibration_summary(empty).height == 0
    assert loss_curve(empty).height == 0


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize("function", [leaderboard, calibration_bins, calibration_summary, loss_curve])
def test_missing_column_error_names_it(replay, function):
    expected_message = r"missing column\(s\) 'system'.*expected columns .*league"
    with pytest.raises(ValueError, match=expected_message):
        function(replay.drop("system"))


def test_missing_sd_column_only_required_with_max_sd(replay):
    without_sd = replay.drop("sd_b_before")
    assert calibration_summary(without_sd).height == 6
    with pytest.raises(ValueError, match="'sd_b_before'"):
        calibration_summary(without_sd, max_sd=100.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda r: calibration_bins(r, bins=0), "bins to be a positive integer"),
        (lambda r: loss_curve(r, points=0), "points to be a positive integer"),
        (lambda r: calibration_summary(r, warmup=1.0), r"warmup to be a share in \[0, 1\)"),
        (lambda r: calibration_summary(r, min_games=-1), "min_games to be a non-negative"),
        (lambda r: calibration_summary(r, max_sd=-1.0), "max_sd to be None, a non-negative number"),
        (
            lambda r: calibration_bins(r.with_columns(pl.col("expected_a") * 2)),
            r"expected_a within \[0, 1\]",
        ),
        (
            lambda r: calibration_summary(r.with_columns(score_a=None)),
            "score_a without nulls",
        ),
        (
            lambda r: leaderboard(r.with_columns(seq=pl.when(pl.col("seq") != 3).then(pl.col("seq")))),
            "leaderboard: expected seq without nulls",
        ),
    ],
)
def test_invalid_arguments_are_rejected(replay, call, message):
    with pytest.raises(ValueError, match=message):
        call(replay)
