"""bt_fit against LMArena's arena-rank (0.1.1, its own venv: it pins numpy and jax versions of its own).

Same arena-shaped battles (``duckrate.synthetic.generate_battles``), same model: ratings, sandwich sds and the
style coefficients agree to 1e-6 rating points. arena-rank's knobs are set to compute the same estimator:
its L-BFGS run to a gradient of 1e-12 (its default stops on a relative loss change of 1e-9, about 0.03 points
from the optimum here), no ridge on the coefficients and the features taken as they are (duckrate fits β
unpenalised on the columns given).

The sds are compared with the sandwich built from arena-rank's own H and J (its
``compute_hessian_and_covariance``) without the ``εI`` it adds to H before ``inv``: H is singular along
the common shift of the ratings, so ``inv(H + εI)`` carries a ``1/ε`` eigenvalue that only J·1 = 0 cancels;
J·1 is zero only up to rounding, so a tiny ε does not reach the limit in floating point, and arena-rank's
default ε (``1e-5·N`` unweighted) narrows its intervals a little (checked here: by under 1%). duckrate's
sandwich is the ε → 0 limit, which the helper takes with a pseudo-inverse (``exact_sandwich``).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from helpers.bt_peers import arena_rank

import duckrate
from duckrate.synthetic import generate_battles

pytestmark = pytest.mark.network  # arena-rank's venv is built from PyPI on first use

POINTS = 400.0 / math.log(10.0)
STYLE = ["len_diff", "md_headers_diff", "bold_diff"]
EXACT = {"gtol": 1e-12, "ftol": 0.0, "max_iter": 20000, "warmup": False, "exact_sandwich": True}


@pytest.fixture(scope="module")
def battles() -> pl.DataFrame:
    return generate_battles(n_models=30, n_battles=40_000, seed=7)


def ours(battles, **options):
    fit = duckrate.bt_fit(battles, uncertainty="sandwich", tol=1e-11, **options)
    return fit.filter(pl.col("kind") == "player").sort("player"), fit.filter(pl.col("kind") == "covariate")


def test_plain_sandwich_and_reweighting_agree(battles):
    for reweighted in (False, True):
        players, _ = ours(battles, reweight="inverse_pair_frequency" if reweighted else "none")
        peer = arena_rank(battles, ci_method="sandwich", reweighted=reweighted, **EXACT)
        assert list(peer["competitors"]) == players["player"].to_list()
        np.testing.assert_allclose(players["rating"].to_numpy() - 1500.0, peer["ratings"] - 1000.0, rtol=0, atol=1e-6)
        sd = players["sd"].to_numpy()
        np.testing.assert_allclose(sd, np.sqrt(peer["exact_variances"]), rtol=0, atol=1e-6)
        narrowing = np.sqrt(peer["variances"]) / sd
        assert np.all(narrowing <= 1.0 + 1e-9) and np.all(narrowing > 0.99), narrowing


def test_contextual_model_agrees(battles):
    players, coefficients = ours(battles, covariates=STYLE, reweight="inverse_pair_frequency")
    peer = arena_rank(
        battles, covariates=STYLE, ci_method="sandwich", reweighted=True, reg=0.0, normalize_features=False, **EXACT
    )
    np.testing.assert_allclose(players["rating"].to_numpy() - 1500.0, peer["ratings"] - 1000.0, rtol=0, atol=1e-6)
    np.testing.assert_allclose(players["sd"].to_numpy(), np.sqrt(peer["exact_variances"]), rtol=0, atol=1e-6)
    assert coefficients["player"].to_list() == STYLE
    np.testing.assert_allclose(coefficients["rating"].to_numpy(), peer["coeffs"] * POINTS, rtol=0, atol=1e-6)
    np.testing.assert_allclose(
        coefficients["sd"].to_numpy(), np.sqrt(peer["exact_coeff_variances"]) * POINTS, rtol=0, atol=1e-6
    )
