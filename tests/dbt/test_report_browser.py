"""The report of the demo warehouse in a real headless browser (Debian's chromium and chromedriver, driven
by selenium): the page loads without console errors, every chart is drawn (a non-empty SVG whose screenshot
is not blank), and the numbers on the page are the marts'. Missing chromium or chromedriver is a failure,
not a skip: `.ci/run` installs them."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import numpy as np
import pytest
from helpers.png import distinct_colours, png_pixels
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from duckrate.report import write_report
from duckrate.report.html import format_value

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.browser


def _executable(name: str) -> str:
    for candidate in (f"/usr/bin/{name}", shutil.which(name)):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.fail(f"{name} is missing: apt-get install -y chromium chromium-driver (.ci/run does)")


@pytest.fixture(scope="module")
def warehouse(build_project) -> Path:
    return build_project(REPO / "demo", threads=1)  # the demo build shared with test_demo_build


@pytest.fixture(scope="module")
def report(warehouse, tmp_path_factory) -> Path:
    return write_report(warehouse, tmp_path_factory.mktemp("report") / "report.html")


@pytest.fixture(scope="module")
def browser(report):
    options = webdriver.ChromeOptions()
    options.binary_location = _executable("chromium")
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(_executable("chromedriver")), options=options)
    try:
        driver.get(report.as_uri())
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def plain(warehouse):
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


def test_the_page_loads_without_console_errors(browser):
    assert browser.title.startswith("duckrate report")
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not severe, severe
    # nothing but the page itself was loaded: no network, no other file
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources == []


def test_every_chart_is_drawn(browser, plain):
    charts = browser.find_elements("css selector", "svg.chart")
    leagues = plain.sql("SELECT count(DISTINCT league) FROM calibration_bins").fetchall()[0][0]
    systems = plain.sql("SELECT count(DISTINCT system) FROM calibration_bins").fetchall()[0][0]
    fits = plain.sql("SELECT count(DISTINCT system) FROM rating_history WHERE system LIKE '%_fit'").fetchall()[0][0]
    # per league: a reliability diagram, a loss-by-gap chart and a trajectory chart per system, one loss curve,
    # and a rating-history chart per whole-history fit
    assert fits == 2
    assert len(charts) == leagues * (3 * systems + 1 + fits)
    for svg in charts:
        name = svg.get_attribute("id")
        assert svg.size["width"] > 100 and svg.size["height"] > 100, name
        drawn = browser.execute_script(
            "const s = arguments[0]; return [s.querySelectorAll('path.line').length, "
            "s.querySelectorAll('circle.dot').length, s.querySelectorAll('path.band').length, "
            "Array.from(s.querySelectorAll('path.line, path.band')).map(p => p.getBBox().width * p.getBBox().height)]",
            svg,
        )
        lines, dots, bands, areas = drawn
        assert lines + dots > 0, name
        assert all(area > 0 for area in areas), name
        browser.execute_script("arguments[0].scrollIntoView()", svg)
        image = png_pixels(svg.screenshot_as_png)
        assert image.shape[0] > 100 and image.shape[1] > 100, name
        assert distinct_colours(image) > 10, name
        # mostly background, but far from uniform: some share of the pixels is ink (axes, text, series)
        ink = np.any(image[..., :3] < 200, axis=-1).mean()
        assert 0.01 < ink < 0.6, (name, ink)
        if name.startswith(("trajectories-", "history-")):
            assert lines == 5, name  # the top 5 players' lines
        if name.startswith("history-"):
            assert bands == 5, name  # and their bands


def test_a_screenshot_of_the_page_is_not_blank(browser):
    browser.execute_script("window.scrollTo(0, 0)")
    image = png_pixels(browser.get_screenshot_as_png())
    assert distinct_colours(image) > 50
    assert np.any(image[..., :3] < 128, axis=-1).mean() > 0.005  # text and table lines


def _page_cells(browser) -> list[tuple]:
    return browser.execute_script(
        "return Array.from(document.querySelectorAll('td[data-mart]')).map(td => "
        "[td.dataset.mart, td.dataset.column, td.parentElement.dataset.key, td.dataset.value, td.textContent])"
    )


KEYS = {  # mart -> (its key columns as on the page, the numeric columns to compare)
    "leaderboard": (("league", "system", "player"), ("rank", "rating", "sd", "lower", "upper", "games")),
    "bt_ratings": (("league", "player"), ("rating", "sd", "lower", "upper", "games")),
    "contest_leaderboard": (("league", "system", "player"), ("rank", "rating", "sd", "lower", "upper", "contests")),
    "calibration_summary": (("league", "system"), ("n", "log_loss", "brier", "accuracy", "log_loss_established")),
    "bt_tests": (("league", "test"), ("statistic", "df", "p_value", "n_games")),
    "contest_metrics": (("league", "system"), ("pair_inversion", "rank_deviation", "n")),
    "contest_system_comparison": (("league", "system"), ("pair_inversion", "rank_deviation", "seconds")),
    "tuning": (("league", "system", "params"), ("rank", "criterion", "log_loss", "brier", "accuracy", "n")),
}


def test_the_numbers_on_the_page_are_the_marts(browser, plain):
    cells = _page_cells(browser)
    compared = {mart: 0 for mart in KEYS}
    tables = {}
    for mart, (keys, columns) in KEYS.items():
        rows = plain.sql(f"SELECT {', '.join(keys + columns)} FROM {mart}").fetchall()
        tables[mart] = {
            "|".join("" if v is None else str(v) for v in row[: len(keys)]): dict(zip(columns, row[len(keys) :]))
            for row in rows
        }
    for mart, column, key, exact, text in cells:
        if mart not in KEYS or column not in KEYS[mart][1]:
            continue
        value = tables[mart][key][column]
        assert text == format_value(column, value), (mart, key, column)
        assert exact == ("" if value is None else repr(value)), (mart, key, column)
        compared[mart] += 1
    assert all(count > 0 for count in compared.values()), compared
    assert compared["leaderboard"] >= 2 * 7 * 20 * 5  # 2 leagues x 7 systems x the top 20 rows


def test_the_tiers_on_the_page_are_the_marts(browser, plain):
    shown = browser.execute_script(
        "return Array.from(document.querySelectorAll('table[data-mart=leaderboard] tbody tr')).map(tr => "
        "[tr.dataset.key, tr.querySelector('td[data-column=tier]').textContent])"
    )
    board = plain.sql(
        "SELECT league, system, player, CASE WHEN lower IS NOT NULL THEN tier END FROM leaderboard WHERE rank <= 20"
    ).fetchall()
    expected = {"|".join(row[:3]): format_value("tier", row[3]) for row in board}
    assert dict(shown) == expected
    assert any(tier not in ("1", "—") for tier in expected.values())  # some system has more than one tier


def test_loss_by_gap_points_are_the_mart(browser, plain):
    points = browser.execute_script(
        "return Array.from(document.querySelectorAll('circle[data-mart=loss_by_gap]')).map(c => "
        "[c.closest('svg').id, c.dataset.gapBin, c.dataset.n, c.dataset.meanLogLoss, c.dataset.shareOfTotalLoss])"
    )
    rows = plain.sql(
        "SELECT league, system, gap_bin, n, mean_log_loss, share_of_total_loss FROM loss_by_gap WHERE gap_bin IS NOT NULL"
    ).fetchall()
    assert len(points) == len(rows)
    expected = sorted((repr(g), str(n), repr(m), repr(s)) for _, _, g, n, m, s in rows)
    assert sorted(tuple(point[1:]) for point in points) == expected
