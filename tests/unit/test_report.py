"""The report's pure parts: the tier rule, the loss_by_gap mart against a naive transcription, the SVG
builders, and a page written from a small warehouse whose marked numbers equal the marts."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import duckdb
import numpy as np
import polars as pl
import pytest

import duckrate
from duckrate.evaluation.replay_rows import PROBABILITY_CLIP
from duckrate.report import write_report
from duckrate.report.html import format_value, shown_tiers
from duckrate.report.svg import Series, chart, nice_ticks
from duckrate.synthetic import generate_matches

# --- tiers (the rule itself: test_interval_ranks.py) -------------------------------------------------------


def test_the_page_shows_the_marts_tiers_only_where_there_is_an_interval():
    rows = [
        {"lower": 100.0, "upper": 120.0, "tier": 1},
        {"lower": None, "upper": None, "tier": 2},  # a system without an sd: equal ratings only
        {"lower": 75.0, "upper": 95.0, "tier": 3},
    ]
    assert shown_tiers(rows) == [1, None, 3]


# --- loss_by_gap against a naive computation ---------------------------------------------------------


def _naive_loss_by_gap(replay: pl.DataFrame, width_of) -> dict:
    totals: dict = {}
    for row in replay.iter_rows(named=True):
        a, b = row["rating_a_before"], row["rating_b_before"]
        width = width_of(row["system"])
        gap_bin = None if a is None or b is None else math.floor((a - b) / width) * width
        p = min(max(row["expected_a"], PROBABILITY_CLIP), 1 - PROBABILITY_CLIP)
        s = row["score_a"]
        loss = -(s * math.log(p) + (1 - s) * math.log(1 - p))
        key = (row["league"], row["system"], gap_bin)
        n, total = totals.get(key, (0, 0.0))
        totals[key] = (n + 1, total + loss)
    group_totals: dict = {}
    for (league, system, _), (_, total) in totals.items():
        group_totals[league, system] = group_totals.get((league, system), 0.0) + total
    return {key: (n, total / n, total / group_totals[key[0], key[1]]) for key, (n, total) in totals.items()}


@pytest.fixture(scope="module")
def small_replay() -> pl.DataFrame:
    matches = generate_matches(600, 25, seed=5, n_leagues=2)
    return pl.concat(
        [
            duckrate.elo(matches).with_columns(system=pl.lit("elo")),
            duckrate.glicko(matches).with_columns(system=pl.lit("glicko")),
            duckrate.trueskill(matches).with_columns(system=pl.lit("trueskill")),
        ],
        how="diagonal_relaxed",
    )


@pytest.mark.parametrize("bin_width", [None, 25.0, 3])
def test_loss_by_gap_equals_a_naive_computation_in_sql_and_python(small_replay, bin_width):
    widths = {"trueskill": 1.0}
    width_of = (lambda system: widths.get(system, 50.0)) if bin_width is None else (lambda system: float(bin_width))
    expected = _naive_loss_by_gap(small_replay, width_of)
    con = duckrate.register(duckdb.connect())
    con.register("replay_frame", small_replay)
    argument = "" if bin_width is None else f", bin_width := {bin_width}"
    from_sql = con.sql(f"SELECT * FROM loss_by_gap('replay_frame'{argument})").fetchall()
    from_python = duckrate.loss_by_gap(small_replay, bin_width=bin_width).rows()
    for rows in (from_sql, from_python):
        assert len(rows) == len(expected)
        for league, system, gap_bin, n, mean, share in rows:
            want = expected[league, system, gap_bin]
            assert n == want[0]
            assert mean == pytest.approx(want[1], rel=1e-12)
            assert share == pytest.approx(want[2], rel=1e-12)
    shares = con.sql(
        f"SELECT league, system, sum(share_of_total_loss) FROM loss_by_gap('replay_frame'{argument}) GROUP BY ALL"
    )
    assert all(total == pytest.approx(1.0, rel=1e-12) for _, _, total in shares.fetchall())


def test_loss_by_gap_rejects_a_bad_bin_width(small_replay):
    con = duckrate.register(duckdb.connect())
    con.register("replay_frame", small_replay)
    for bad in ("0", "-5", "'wide'"):
        with pytest.raises(duckdb.Error, match="bin_width"):
            con.sql(f"SELECT * FROM loss_by_gap('replay_frame', bin_width := {bad})").fetchall()
    for bad in (0, -5.0, "wide", float("inf")):
        with pytest.raises(duckrate.DuckrateInputError, match="bin_width"):
            duckrate.loss_by_gap(small_replay, bin_width=bad)


def test_loss_by_gap_puts_matches_without_ratings_in_a_null_bin():
    replay = pl.DataFrame(
        {
            "league": ["x", "x", "x"],
            "system": ["elo"] * 3,
            "rating_a_before": [1500.0, None, float("nan")],
            "rating_b_before": [1420.0, 1500.0, 1500.0],
            "expected_a": [0.6, 0.5, 0.5],
            "score_a": [1.0, 0.0, 1.0],
        }
    )
    rows = duckrate.loss_by_gap(replay).rows()
    assert [(r[2], r[3]) for r in rows] == [(None, 2), (50.0, 1)]
    con = duckrate.register(duckdb.connect())
    con.register("replay_frame", replay)
    assert [(r[2], r[3]) for r in con.sql("SELECT * FROM loss_by_gap('replay_frame')").fetchall()] == [
        (None, 2),
        (50.0, 1),
    ]


# --- SVG ---------------------------------------------------------------------------------------------------


def test_nice_ticks_are_round_and_cover_the_range():
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(1493.0, 1507.0) == [1495.0, 1500.0, 1505.0]
    assert nice_ticks(3.0, 3.0) == [3.0]
    assert nice_ticks(float("nan"), 1.0) == []


def test_chart_draws_lines_dots_error_bars_and_bands():
    series = [
        Series("a", [(0.0, 1.0), (1.0, 2.0), (2.0, 1.5)], band=[(0.0, 0.5, 1.5), (1.0, 1.5, 2.5), (2.0, 1.0, 2.0)]),
        Series("b", [(0.5, 0.5)], line=False, dots=True, errors=[(0.5, 0.2, 0.8)], marks=[{"bin": "3"}]),
    ]
    svg = chart(series, title="t", x_label="x", y_label="y", chart_id="c1", diagonal=True)
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    paths = re.findall(r'<path class="(\w+)" d="([^"]+)"', svg)
    assert {kind for kind, _ in paths} == {"line", "band"}
    assert all(len(d) > 10 for _, d in paths)
    assert svg.count('class="dot"') == 1 and 'data-bin="3"' in svg
    assert 'class="error-bar"' in svg and 'class="diagonal"' in svg
    assert "nan" not in svg.lower().replace("nanosecond", "")


def test_chart_skips_missing_values():
    svg = chart(
        [Series("a", [(0.0, float("nan")), (1.0, 2.0), (2.0, 3.0)], dots=True)],
        title="t",
        x_label="x",
        y_label="y",
        chart_id="c2",
    )
    assert svg.count('class="dot"') == 2 and "nan" not in svg


def test_format_value_is_fixed_per_column():
    assert format_value("rating", 1512.345) == "1512.3"
    assert format_value("log_loss", 0.693147) == "0.6931"
    assert format_value("p_value", 0.000123456) == "0.000123"
    assert format_value("games", 12) == "12"
    assert format_value("sd", None) == "—"
    assert format_value("sd", float("nan")) == "—"


# --- a page from a small warehouse ---------------------------------------------------------------------


class _Cells(HTMLParser):
    """Every marked mart cell: (mart, column, row key, exact value, text)."""

    def __init__(self):
        super().__init__()
        self.cells, self.key, self.open = [], None, None
        self.svgs = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg":
            self.svgs += 1
        if tag == "tr":
            self.key = attrs.get("data-key")
        if tag == "td" and "data-mart" in attrs:
            self.open = [attrs["data-mart"], attrs["data-column"], self.key, attrs.get("data-value"), ""]

    def handle_data(self, data):
        if self.open is not None:
            self.open[4] += data

    def handle_endtag(self, tag):
        if tag == "td" and self.open is not None:
            self.cells.append(tuple(self.open))
            self.open = None


@pytest.fixture(scope="module")
def small_warehouse(tmp_path_factory, small_replay):
    path = tmp_path_factory.mktemp("report") / "warehouse.duckdb"
    con = duckrate.register(duckdb.connect(str(path)))
    con.register("replay_frame", small_replay)
    con.execute("CREATE TABLE replays AS SELECT * FROM replay_frame")
    for mart in ("leaderboard", "calibration_bins", "calibration_summary", "loss_curve", "loss_by_gap"):
        con.execute(f"CREATE TABLE {mart} AS SELECT * FROM {mart}('replays')")
    con.close()
    return path


def test_report_numbers_equal_the_marts(small_warehouse, tmp_path):
    out = write_report(small_warehouse, tmp_path / "report.html")
    text = out.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in text and "<script" not in text
    parser = _Cells()
    parser.feed(text)
    # 3 systems x 2 leagues: reliability, loss by gap and trajectories each; one loss curve per league
    assert parser.svgs == 3 * 2 * 3 + 2
    con = duckdb.connect(str(small_warehouse), read_only=True)
    board = {
        (league, system, player): {"rating": rating, "sd": sd, "games": games}
        for league, system, player, rating, sd, games in con.sql(
            "SELECT league, system, player, rating, sd, games FROM leaderboard"
        ).fetchall()
    }
    summary = {
        (league, system): {"log_loss": log_loss, "n": n}
        for league, system, log_loss, n in con.sql(
            "SELECT league, system, log_loss, n FROM calibration_summary"
        ).fetchall()
    }
    checked = 0
    for mart, column, key, exact, shown in parser.cells:
        if mart == "leaderboard" and column in ("rating", "sd", "games"):
            value = board[tuple(key.split("|"))][column]
        elif mart == "calibration_summary" and column in ("log_loss", "n"):
            value = summary[tuple(key.split("|"))][column]
        else:
            continue
        assert shown == format_value(column, value)
        assert exact == ("" if value is None else repr(value))
        checked += 1
    assert checked > 100
    gaps = {
        (league, system, repr(gap_bin)): mean
        for league, system, gap_bin, mean in con.sql(
            "SELECT league, system, gap_bin, mean_log_loss FROM loss_by_gap WHERE gap_bin IS NOT NULL"
        ).fetchall()
    }
    marks = re.findall(
        r'<svg class="chart" id="loss-by-gap-([^"]+)"|data-gap-bin="([^"]+)"[^>]*data-mean-log-loss="([^"]+)"', text
    )
    assert len([m for m in marks if m[1]]) == len(gaps)
    assert sorted(float(m[2]) for m in marks if m[1]) == sorted(gaps.values())
    con.close()


def test_report_of_a_warehouse_without_marts(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    out = write_report(path, tmp_path / "report.html")
    assert "No marts found" in out.read_text()


def test_cli_report_writes_the_page(small_warehouse, tmp_path):
    from duckrate.cli import main

    out = tmp_path / "sub" / "r.html"
    assert main(["report", "--warehouse", str(small_warehouse), "--out", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>")
    np.testing.assert_equal(out.stat().st_size > 10_000, True)


def test_report_team_section_equals_the_team_marts(tmp_path):
    """A warehouse with the team marts only: the page shows a Team games section per league, every cell
    the mart's value in its fixed format."""
    from duckrate.synthetic import generate_team_matches

    path = tmp_path / "teams.duckdb"
    con = duckrate.register(duckdb.connect(str(path)))
    results = generate_team_matches(300, 120, seed=4, n_leagues=2, teams_per_match=(2, 3))
    con.register("results", results)
    con.execute(
        "CREATE TABLE team_replays AS SELECT 'plackett_luce' AS system, * FROM plackett_luce_replay('results') "
        "UNION ALL BY NAME SELECT 'trueskill_teams' AS system, * FROM trueskill_teams_replay('results')"
    )
    con.execute("CREATE TABLE team_leaderboard AS SELECT * FROM team_leaderboard('team_replays')")
    con.execute("CREATE TABLE team_metrics AS SELECT * FROM team_metrics('team_replays')")
    con.execute("CREATE TABLE pairs AS SELECT * FROM team_match_forecasts('team_replays')")
    con.execute("CREATE TABLE team_calibration_summary AS SELECT * FROM calibration_summary('pairs', min_games := 0)")
    expected = {
        mart: {
            tuple(str(v) for v in row[:2]) + ((str(row[2]),) if mart == "team_leaderboard" else ()): row
            for row in con.sql(f"SELECT * FROM {mart}").fetchall()
        }
        for mart in ("team_leaderboard", "team_metrics", "team_calibration_summary")
    }
    columns = {mart: [c[0] for c in con.sql(f"DESCRIBE {mart}").fetchall()] for mart in expected}
    con.close()
    text = write_report(path, tmp_path / "teams.html").read_text()
    assert text.count("<h3>Team games</h3>") == 2
    parser = _Cells()
    parser.feed(text)
    checked = 0
    for mart, column, key, exact, shown in parser.cells:
        if mart not in expected:
            continue
        row = expected[mart][tuple(key.split("|"))]
        value = row[columns[mart].index(column)]
        assert shown == format_value(column, value)
        if not isinstance(value, str):  # numbers carry their exact value
            assert exact == ("" if value is None else repr(value))
        checked += 1
    assert checked > 100 and {cell[0] for cell in parser.cells} == set(expected)
