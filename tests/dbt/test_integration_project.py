"""The integration dbt project: its models emit `actual` and `expected`; its equal_within tests must pass."""

from __future__ import annotations

from pathlib import Path

import duckdb

HERE = Path(__file__).resolve().parent


def test_integration_project_builds_and_its_checks_pass(build_project):
    warehouse = build_project(HERE / "integration_project")  # dbt build fails on any failing data test
    with duckdb.connect(str(warehouse), read_only=True) as con:
        checked = con.sql("SELECT count(*), max(abs(actual - expected)) FROM check_elo_cases").fetchall()[0]
        assert checked[0] == 18 and checked[1] < 1e-9
        assert con.sql("SELECT count(*) FROM check_elo_sequence WHERE actual = expected").fetchall()[0][0] == 6
        for model, tolerance in (("check_glicko_example", 5e-4), ("check_glicko2_example", 5e-5)):
            rows = dict(con.sql(f"SELECT quantity, abs(actual - expected) FROM {model}").fetchall())
            assert set(rows) == {"rating", "rd"} and max(rows.values()) < tolerance
        rows = dict(con.sql("SELECT quantity, abs(actual - expected) FROM check_bt_covariates").fetchall())
        assert set(rows) == {"beta", "beta_sd", "rating_ann", "rows"} and max(rows.values()) < 1e-6
        forecasts = dict(con.sql("SELECT quantity, abs(actual - expected) FROM check_win_probability").fetchall())
        assert {"elo x a v b", "elo x c v b", "bt a v b", "bt c v b"} <= set(forecasts) and len(forecasts) == 8
        assert max(forecasts.values()) < 1e-12
