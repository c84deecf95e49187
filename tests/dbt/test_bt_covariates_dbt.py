"""bt_ratings with covariates and a cluster set in var('duckrate_bt_params'): stg_matches carries the raw
columns through, and the model equals duckrate.bt_fit on the same battles."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl
import pytest
from helpers.dbt_projects import run_dbt

import duckrate

PROJECT = Path(__file__).resolve().parent / "integration_project"
PARAMS = {"covariates": ["len_diff"], "cluster": "conversation", "uncertainty": "sandwich", "prior_sd": 400}


@pytest.fixture(scope="module")
def project(copy_dbt_project):
    return copy_dbt_project(PROJECT)


@pytest.fixture(scope="module")
def warehouse(project):
    variables = json.dumps({"duckrate_matches_model": "styled_battles", "duckrate_bt_params": PARAMS})
    run_dbt(project, "seed", "--select", "styled_battles")
    run_dbt(project, "run", "--select", "stg_matches_checked", "stg_matches", "bt_ratings", "--vars", variables)
    con = duckdb.connect(str(project / "warehouse.duckdb"), read_only=True)
    yield con
    con.close()


def test_stg_matches_carries_the_named_raw_columns(warehouse):
    columns = [row[0] for row in warehouse.sql("DESCRIBE stg_matches").fetchall()]
    assert columns[-2:] == ["len_diff", "conversation"]


def test_bt_ratings_fits_the_covariates_as_the_python_api(warehouse):
    battles = warehouse.sql("SELECT * FROM styled_battles").pl()
    expected = duckrate.bt_fit(battles, **PARAMS).sort("kind", "player")
    actual = warehouse.sql("SELECT * FROM bt_ratings").pl().sort("kind", "player")
    assert actual.columns == expected.columns
    assert actual.select("player", "kind", "uncertainty").equals(expected.select("player", "kind", "uncertainty"))
    assert actual.filter(pl.col("kind") == "covariate")["player"].to_list() == ["len_diff"]
    for column in ("rating", "sd", "lower", "upper"):
        assert (actual[column] - expected[column]).abs().max() < 1e-9, column


def test_a_canonical_column_as_covariate_is_refused(project, warehouse):
    variables = json.dumps(
        {"duckrate_matches_model": "styled_battles", "duckrate_bt_params": {"covariates": ["weight"]}}
    )
    with pytest.raises(AssertionError, match="names the canonical column 'weight'"):
        run_dbt(project, "compile", "--select", "stg_matches", "--vars", variables)
