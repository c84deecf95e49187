"""One real ``dbt deps`` + ``dbt build`` of the demo project in a temporary directory.

The temporary project is the demo's own dbt_project.yml and profile, with the package installed from
this checkout by absolute path; the warehouse file is then read by a plain DuckDB connection that has
no duckrate functions registered, as a dashboard would read it.
"""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import polars as pl
import pytest
import yaml
from helpers import older_duckdb
from helpers.systems import contest_systems, team_systems, two_player_systems

import duckrate
from duckrate.synthetic import DEMO_BAD_MATCH_ROWS

REPO = Path(__file__).resolve().parents[2]
MART_TABLES = ("leaderboard", "calibration_bins", "calibration_summary", "loss_curve", "loss_by_gap")
ALL_TABLES = (
    "stg_matches_checked",
    "stg_matches",
    "rejected_matches",
    "replay_elo",
    "replays",
    "bt_tests",
    *MART_TABLES,
    "bt_ratings",
)


@pytest.fixture(scope="module")
def warehouse(build_project) -> Path:
    return build_project(REPO / "demo", threads=1)  # shared with test_determinism_dbt (threads 1 vs 4)


@pytest.fixture(scope="module")
def plain(warehouse):
    """A connection to the built warehouse without duckrate's functions."""
    con = duckdb.connect(str(warehouse), read_only=True)
    yield con
    con.close()


def test_every_model_is_a_plain_readable_relation(plain):
    assert not plain.sql("SELECT * FROM duckdb_functions() WHERE function_name LIKE 'duckrate_%'").fetchall()
    for table in ALL_TABLES:
        assert plain.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0] > 0, table


def test_warehouse_keeps_the_older_storage_format(plain):
    (tags,) = plain.sql("SELECT tags FROM duckdb_databases() WHERE database_name = current_database()").fetchall()[0]
    assert tags["storage_version"].startswith("v1.5.0")  # DuckDB 1.5.x tools can open the file


@pytest.mark.network  # the older DuckDB is installed from PyPI on first use
def test_the_warehouse_opens_in_the_oldest_duckdb_its_storage_version_allows(warehouse, plain):
    """The profile's storage_compatibility_version names the oldest release that reads the file (docs/dbt.md):
    that release opens the demo warehouse and reads every table, row for row."""
    version = older_duckdb.oldest_release(older_duckdb.storage_version(REPO / "demo" / "profiles.yml"))
    read = older_duckdb.read_tables(version, warehouse)  # read-only beside `plain`, as dashboards share it
    assert read["version"] == version
    tables = plain.sql(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY table_name"
    ).fetchall()
    assert read["counts"] == {t: plain.sql(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for (t,) in tables}
    assert set(ALL_TABLES) - {"replays"} <= set(read["counts"])


def test_bad_rows_land_in_rejected_matches_with_a_reason(plain):
    reasons = dict(plain.sql("SELECT reason, count(*) FROM rejected_matches GROUP BY reason").fetchall())
    # the injected duplicate game_id conflicts with its original: both rows are rejected
    assert sum(reasons.values()) == DEMO_BAD_MATCH_ROWS + 1
    assert reasons == {
        "missing_player_b": 1,
        "self_match": 1,
        "missing_or_invalid_score": 1,
        "missing_or_invalid_played_at": 2,
        "conflicting_match_id": 2,
    }
    raw, staged, rejected = (
        plain.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0]
        for t in ("demo_matches", "stg_matches", "rejected_matches")
    )
    assert raw == staged + rejected  # nothing silently dropped


SYSTEMS = tuple(system.name for system in two_player_systems())
WITHOUT_SD = tuple(system.name for system in two_player_systems() if not system.has_sd)
DEMO_PARAMS = yaml.safe_load((REPO / "demo" / "dbt_project.yml").read_text())["vars"]["duckrate_params"]


@pytest.mark.parametrize("system", SYSTEMS)
def test_dbt_replay_equals_the_python_api(plain, system):
    staged = plain.sql("SELECT match_id, played_at, player_a, player_b, score_a, league FROM stg_matches").pl()
    expected = getattr(duckrate, system)(staged, **DEMO_PARAMS.get(system, {})).sort("league", "seq")
    actual = plain.sql(f"SELECT * FROM replay_{system}").pl().sort("league", "seq")
    assert actual.columns == list(expected.columns)
    assert actual.select("league", "seq", "match_id", "player_a", "player_b").equals(
        expected.select("league", "seq", "match_id", "player_a", "player_b")
    )
    columns = ["expected_a", "rating_a_before", "rating_b_after"] + (
        ["sd_a_before", "sd_b_after"] if system not in WITHOUT_SD else []
    )
    for column in columns:
        assert (actual[column] - expected[column]).abs().max() < 1e-9, column
    assert plain.sql(f"SELECT count(*) FROM replays WHERE system = '{system}'").fetchall()[0][0] == actual.height


def test_tuning_ranks_every_default_grid_and_equals_the_python_api(plain):
    demo = yaml.safe_load((REPO / "demo" / "dbt_project.yml").read_text())["vars"]
    tuning = plain.sql("SELECT * FROM tuning").pl()
    assert sorted(tuning["system"].unique()) == sorted(demo["duckrate_tuning"] + demo["duckrate_contest_tuning"])
    contest_rows = tuning.filter(pl.col("system").is_in(demo["duckrate_contest_tuning"]))
    assert contest_rows["pair_inversion"].is_not_null().all() and contest_rows["log_loss"].is_null().all()
    leagues = plain.sql("SELECT count(DISTINCT league) FROM stg_matches").fetchall()[0][0]
    for system in demo["duckrate_tuning"]:
        rows = tuning.filter(pl.col("system") == system)
        assert rows.height == leagues * len(duckrate.tuning.parameter_sets(system, None)), system
        assert rows.group_by("league").agg((pl.col("rank") == 1).sum())["rank"].to_list() == [1] * leagues
    staged = plain.sql("SELECT match_id, played_at, player_a, player_b, score_a, league FROM stg_matches").pl()
    expected = duckrate.tune(staged, "elo", **DEMO_PARAMS["elo"]).sort("league", "rank")
    actual = tuning.filter(pl.col("system") == "elo").sort("league", "rank")
    assert actual.select("league", "params", "rank").equals(expected.select("league", "params", "rank"))
    for column in ("log_loss", "brier", "accuracy", "criterion"):
        assert (actual[column] - expected[column]).abs().max() < 1e-12, column


def test_leaderboard_ranks_every_player_once(plain):
    board = plain.sql("SELECT * FROM leaderboard").pl()
    players = plain.sql(
        "SELECT league, count(DISTINCT p) FROM (SELECT league, player_a AS p FROM stg_matches "
        "UNION ALL SELECT league, player_b FROM stg_matches) GROUP BY league"
    ).fetchall()
    assert sorted(board["system"].unique()) == sorted(SYSTEMS)
    for system in SYSTEMS:
        for league, count in players:
            ranks = board.filter((pl.col("league") == league) & (pl.col("system") == system))["rank"].sort().to_list()
            assert ranks == list(range(1, count + 1))
        sds = board.filter(pl.col("system") == system)["sd"]
        assert sds.null_count() == (sds.len() if system in WITHOUT_SD else 0)
    assert board.schema["last_played_at"] == pl.Datetime("us")
    # the leader's rating is the rating after their last replayed match
    top = board.filter((pl.col("league") == "league_1") & (pl.col("rank") == 1) & (pl.col("system") == "elo")).row(
        0, named=True
    )
    last = plain.execute(
        "SELECT CASE WHEN player_a = ? THEN rating_a_after ELSE rating_b_after END FROM replay_elo "
        "WHERE league = 'league_1' AND ? IN (player_a, player_b) ORDER BY seq DESC LIMIT 1",
        [top["player"], top["player"]],
    ).fetchall()[0][0]
    assert math.isclose(top["rating"], last, rel_tol=0, abs_tol=1e-9)


def test_calibration_tables_cover_every_match(plain):
    for system in SYSTEMS:
        summary = plain.sql(f"SELECT league, n FROM calibration_summary WHERE system = '{system}'").fetchall()
        per_league = dict(plain.sql(f"SELECT league, count(*) FROM replay_{system} GROUP BY league").fetchall())
        assert dict(summary) == per_league
        binned = dict(
            plain.sql(
                f"SELECT league, sum(n) FROM calibration_bins WHERE system = '{system}' GROUP BY league"
            ).fetchall()
        )
        assert binned == per_league
        curve = plain.sql(f"SELECT league, max(t) FROM loss_curve WHERE system = '{system}' GROUP BY league").fetchall()
        assert dict(curve) == per_league
        gaps = plain.sql(f"SELECT league, sum(n) FROM loss_by_gap WHERE system = '{system}' GROUP BY league").fetchall()
        assert dict(gaps) == per_league


MART_CALLS = {  # each mart over the union of every replay, with the demo's vars
    "leaderboard": "leaderboard('replays')",
    "calibration_bins": "calibration_bins('replays', bins := 10)",
    "calibration_summary": "calibration_summary('replays', min_games := 10, max_sd := MAP {'chance': 70}, warmup := 0.0)",
    "loss_curve": "loss_curve('replays', points := 200)",
    "loss_by_gap": "loss_by_gap('replays')",
}


@pytest.mark.parametrize("mart", MART_TABLES)
def test_marts_built_one_replay_at_a_time_equal_the_mart_over_all_replays(warehouse, mart):
    """The duckrate_mart materialization runs the mart over each replay model in turn (one statement per
    system, so one replay is packed in memory at a time); the table equals the mart over the union."""
    executed = (warehouse.parent / "target" / "run" / "duckrate" / "models" / "marts" / f"{mart}.sql").read_text()
    assert executed.count("create or replace table") == 1 and executed.count("insert into") == len(SYSTEMS) - 1
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        duckrate.register(con)
        expected = con.sql(f"SELECT * FROM {MART_CALLS[mart]} ORDER BY ALL").fetchall()
        actual = con.sql(f"SELECT * FROM {mart} ORDER BY ALL").fetchall()
    finally:
        con.close()
    assert actual == expected and len({row[1] for row in actual}) == len(SYSTEMS)


def test_chance_established_view_uses_the_papers_sd_filter(plain):
    """calibration_summary's established matches for the grid system: both players had 10 earlier games
    and both sds below 70 (variance below 70², display scale), the games-of-chance paper's filter."""
    replay = plain.sql("SELECT * FROM replay_chance").pl().sort("league", "seq")
    sides = (
        pl.concat(
            [
                replay.select("league", "seq", player="player_a"),
                replay.select("league", "seq", player="player_b"),
            ]
        )
        .sort("league", "seq")
        .with_columns(earlier=pl.int_range(pl.len()).over("league", "player"))
    )
    earlier = {(row["league"], row["seq"], row["player"]): row["earlier"] for row in sides.iter_rows(named=True)}
    expected = {}
    for row in replay.iter_rows(named=True):
        established = (
            earlier[(row["league"], row["seq"], row["player_a"])] >= 10
            and earlier[(row["league"], row["seq"], row["player_b"])] >= 10
            and row["sd_a_before"] <= 70
            and row["sd_b_before"] <= 70
        )
        expected[row["league"]] = expected.get(row["league"], 0) + established
    got = dict(plain.sql("SELECT league, n_established FROM calibration_summary WHERE system = 'chance'").fetchall())
    assert got == expected
    assert 0 < sum(got.values()) < replay.height  # the filter bites, but not everything


def test_bt_tests_has_every_test_per_league_as_the_python_api(plain):
    staged = plain.sql("SELECT match_id, played_at, player_a, player_b, score_a, league FROM stg_matches").pl()
    expected = duckrate.bt_lr_test(staged)
    actual = plain.sql("SELECT * FROM bt_tests").pl()
    assert actual.sort("league", "test").equals(expected.sort("league", "test"))
    assert actual.height == 8 * staged["league"].n_unique()


CONTEST_SYSTEM_NAMES = [system.name for system in contest_systems()]
CONTEST_TABLES = (
    "stg_contest_results_checked",
    "stg_contest_results",
    *(f"replay_{name}" for name in CONTEST_SYSTEM_NAMES),
    "contest_replays",
    "contest_leaderboard",
    "contest_metrics",
    "contest_system_comparison",
)


def test_contest_models_are_built_and_equal_the_python_api(plain):
    for table in CONTEST_TABLES:
        assert plain.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0] > 0, table
    raw, staged, rejected = (
        plain.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0]
        for t in ("demo_contest_results", "stg_contest_results", "rejected_contest_results")
    )
    assert raw == staged + rejected and rejected == 0  # the contest seed has no bad rows
    staged_frame = plain.sql("SELECT contest_id, played_at, player, rank, league FROM stg_contest_results").pl()
    key = ["league", "seq", "rank", "player"]
    for name in CONTEST_SYSTEM_NAMES:  # the demo builds every registered contest system
        expected = getattr(duckrate, name)(staged_frame).sort(key)
        actual = plain.sql(f"SELECT * FROM replay_{name}").pl().sort(key)
        assert actual.equals(expected), name
    metrics = plain.sql("SELECT * FROM contest_metrics ORDER BY system").pl()
    assert metrics["system"].to_list() == sorted(CONTEST_SYSTEM_NAMES)
    assert all(0.5 < value < 1 for value in metrics["pair_inversion"])
    comparison = plain.sql("SELECT * FROM contest_system_comparison ORDER BY system").pl()
    assert comparison.select("system", "pair_inversion", "rank_deviation", "n").equals(
        metrics.select("system", "pair_inversion", "rank_deviation", "n")
    )
    assert comparison["rank_by_pair_inversion"].min() == 1 and (comparison["seconds"] > 0).all()
    assert set(comparison["build_mode"]) == {"full"}
    board = plain.sql("SELECT * FROM contest_leaderboard ORDER BY system, rank").pl()
    for (name,), part in board.group_by(["system"]):
        assert part["rank"].to_list() == list(range(1, part.height + 1)), name
    assert board.schema["last_played_at"] == pl.Datetime("us")


def test_bt_ratings_is_the_python_fit_of_the_staged_matches(plain):
    """bt_ratings (var duckrate_bt_params: {} = plain MLE, inverse-Hessian intervals) equals duckrate.bt_fit."""
    staged = plain.sql("SELECT match_id, played_at, player_a, player_b, score_a, league, weight FROM stg_matches").pl()
    expected = duckrate.bt_fit(staged).sort("league", "player")
    actual = plain.sql("SELECT * FROM bt_ratings").pl().sort("league", "player")
    assert actual.columns == expected.columns
    assert actual.select("league", "player", "games", "method", "uncertainty").equals(
        expected.select("league", "player", "games", "method", "uncertainty")
    )
    for column in ("rating", "sd", "lower", "upper"):
        assert (actual[column] - expected[column]).abs().max() < 1e-9, column
    assert actual["converged"].all() and (actual["uncertainty"] == "hessian").all()
    per_league = actual.group_by("league").agg(pl.col("rating").mean(), pl.len())
    assert all(abs(mean - 1500.0) < 1e-6 for mean in per_league["rating"])  # mean-zero θ
    players = dict(
        plain.sql(
            "SELECT league, count(DISTINCT p) FROM (SELECT league, player_a AS p FROM stg_matches "
            "UNION ALL SELECT league, player_b FROM stg_matches) GROUP BY league"
        ).fetchall()
    )
    assert dict(per_league.select("league", "len").iter_rows()) == players


def test_whole_history_fits_are_the_python_fits_of_the_staged_matches(plain):
    """whr_ratings and ttt_ratings (vars {}: the fits' defaults, TTT's p_draw the staged share of draws) equal
    duckrate.whr_fit and duckrate.ttt_fit of stg_matches (period_start a TIMESTAMP in both: played_at is one)."""
    staged = plain.sql("SELECT match_id, played_at, player_a, player_b, score_a, league FROM stg_matches").pl()
    draws = staged["score_a"].eq(0.5).mean()
    key = ["league", "player", "step"]
    for model, expected in (
        ("whr_ratings", duckrate.whr_fit(staged)),
        ("ttt_ratings", duckrate.ttt_fit(staged, p_draw=draws)),
    ):
        actual = plain.sql(f"SELECT * FROM {model}").pl().sort(key)
        assert actual.equals(expected.sort(key)), model
        assert actual["converged"].all() or model == "ttt_ratings", model


def test_rating_history_holds_each_step_of_every_system(plain):
    """Replays: the rating after a player's last match of each day; fits: their rows as they are."""
    systems = {s for (s,) in plain.sql("SELECT DISTINCT system FROM replays").fetchall()}
    history = plain.sql("SELECT * FROM rating_history").pl()
    assert set(history["system"]) == systems | {"whr_fit", "ttt_fit"}
    assert history.columns[:6] == ["league", "system", "player", "period_start", "step", "rating"]
    expected = plain.sql(
        """WITH sides AS (
               SELECT league, system, seq, played_at, player_a AS player, rating_a_after AS rating FROM replays
               UNION ALL SELECT league, system, seq, played_at, player_b, rating_b_after FROM replays)
           SELECT league, system, player, date_trunc('day', played_at) AS period_start,
                  max_by(rating, seq) AS rating, count(*) AS games
           FROM sides GROUP BY ALL"""
    ).pl()
    key = ["league", "system", "player", "period_start"]
    replayed = history.filter(pl.col("system").is_in(sorted(systems))).select(*key, "rating", "games")
    assert replayed.sort(key).equals(expected.sort(key))
    fitted = history.filter(pl.col("system") == "whr_fit").drop("system").sort("league", "player", "period_start")
    whr = plain.sql("SELECT league, player, period_start, rating, sd, games FROM whr_ratings").pl()
    assert fitted.select(whr.columns).equals(whr.sort("league", "player", "period_start"))
    assert fitted["step"].null_count() == fitted.height  # a TIMESTAMP played_at: the steps are period_start


def documented_models() -> dict[str, dict]:
    """Every model's yml entry under models/, by name."""
    models = {}
    for path in (REPO / "models").rglob("*.yml"):
        for model in yaml.safe_load(path.read_text()).get("models", []):
            assert model["name"] not in models, f"{model['name']} is documented twice"
            models[model["name"]] = model
    return models


# Views over every replay document their own column and point to a replay table for the rest; the rejected
# rows' tables end with the raw table's own columns.
DOCUMENTED_PREFIX = {
    "replays",
    "contest_replays",
    "team_replays",
    "rejected_matches",
    "rejected_contest_results",
    "rejected_team_results",
}


def test_every_model_is_documented_with_its_columns(plain):
    """`dbt docs generate` shows a description for every model and every column, and the yml stays in step
    with what the models build (a column added or renamed without its description fails here)."""
    documented = documented_models()
    built = {
        path.stem
        for path in (REPO / "models").rglob("*.sql")
        if plain.sql(f"SELECT count(*) FROM duckdb_tables() WHERE table_name = '{path.stem}'").fetchall()[0][0]
        or plain.sql(f"SELECT count(*) FROM duckdb_views() WHERE view_name = '{path.stem}'").fetchall()[0][0]
    }
    assert built == {path.stem for path in (REPO / "models").rglob("*.sql")}  # the demo builds every model
    assert set(documented) == built
    for name, model in documented.items():
        assert model.get("description", "").strip(), f"{name} has no description"
        columns = [column["name"] for column in model.get("columns", [])]
        for column in model.get("columns", []):
            assert column.get("description", "").strip(), f"{name}.{column['name']} has no description"
        actual = [row[0] for row in plain.sql(f"DESCRIBE {name}").fetchall()]
        if name in DOCUMENTED_PREFIX:
            assert columns == actual[: len(columns)], name
        else:
            assert columns == actual, name


def test_team_models_are_built_with_the_bad_matches_rejected(plain):
    """The team seed's two bad matches are rejected whole (2001: a share of 1.5 leaves one team; 2002: one gamer
    on both sides); every other row is staged and rated by every registered team system, the goals of the 5v5
    league as places."""
    rejected = plain.sql("SELECT match, gamer, reason FROM rejected_team_results").fetchall()
    assert sorted(rejected) == [
        (2001, "p000001", "single_team_match"),
        (2001, "p000002", "invalid_weight"),
        (2002, "p000003", "player_twice_in_match"),
        (2002, "p000003", "player_twice_in_match"),
    ]
    raw, staged = (
        plain.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ("demo_team_results", "stg_team_results")
    )
    assert raw == staged + len(rejected)
    for system in team_systems():
        by_league = dict(plain.sql(f"SELECT league, count(rank) FROM replay_{system.name} GROUP BY league").fetchall())
        assert sum(by_league.values()) == staged and set(by_league) == {"arena_5v5", "squads"}, system.name


def test_team_marts_equal_the_python_api(plain):
    replays = plain.sql("SELECT * FROM team_replays").pl()
    names = sorted(system.name for system in team_systems())
    assert sorted(replays["system"].unique().to_list()) == names
    order = ["league", "system"]
    board = plain.sql("SELECT * FROM team_leaderboard").pl()
    assert board.sort([*order, "rank"]).equals(duckrate.team_leaderboard(replays).sort([*order, "rank"]))
    metrics = plain.sql("SELECT * FROM team_metrics").pl().sort(order)
    assert metrics.equals(duckrate.team_metrics(replays).sort(order))
    assert metrics.height == 2 * len(names) and (metrics["pair_inversion"] > 0.5).all()
    pairs = duckrate.team_match_forecasts(replays)
    assert set(pairs["league"].unique()) == {"arena_5v5"}  # the squads' matches have 3-6 teams
    calibration = plain.sql("SELECT * FROM team_calibration_summary").pl().sort(order)
    assert calibration.equals(duckrate.calibration_summary(pairs, min_games=0).sort(order))
