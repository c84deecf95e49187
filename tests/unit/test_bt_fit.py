"""Bradley-Terry batch fits: agreement with choix and with a direct scipy minimisation of a naive
log-posterior, both solvers at one optimum, MM monotonicity, invariances, existence, uncertainty."""

from __future__ import annotations

import math

import choix
import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize

import duckrate
from duckrate import DuckrateInputError
from duckrate.fits import bt_theta
from duckrate.fits.bradley_terry.pairs import pairs_from_rows
from duckrate.fits.bradley_terry.solve import fit_pairs
from duckrate.synthetic import generate_matches

POINTS = 400.0 / math.log(10.0)  # rating points per natural unit


@pytest.fixture(scope="module")
def games() -> pl.DataFrame:
    """Real-shaped data: 40 players paired by a running Elo estimate, draws and a first-move edge."""
    frame = generate_matches(2500, 40, seed=7)
    return frame.select("match_id", "played_at", "player_a", "player_b", "score_a")


@pytest.fixture(scope="module")
def decisive(games) -> pl.DataFrame:
    return games.filter(pl.col("score_a") != 0.5)


def coded(frame: pl.DataFrame):
    """Integer codes (players sorted by name), scores, and the names."""
    names = sorted(set(frame["player_a"]) | set(frame["player_b"]))
    index = {name: i for i, name in enumerate(names)}
    a = np.array([index[x] for x in frame["player_a"]])
    b = np.array([index[x] for x in frame["player_b"]])
    weight = frame["weight"].to_numpy() if "weight" in frame.columns else np.ones(frame.height)
    return a, b, frame["score_a"].to_numpy(), weight, names


def naive_objective(theta, a, b, s, w, precision=0.0, mu=0.0, alpha=0.0):
    """-log-posterior, one game at a time (the test's own, independent implementation)."""
    d = theta[a] - theta[b] + alpha
    log_p = -np.logaddexp(0.0, -d)
    log_q = -np.logaddexp(0.0, d)
    return -np.sum(w * (s * log_p + (1 - s) * log_q)) + 0.5 * np.sum(precision * (theta - mu) ** 2)


def naive_gradient(theta, a, b, s, w, precision=0.0, mu=0.0, alpha=0.0):
    d = theta[a] - theta[b] + alpha
    r = w * (1.0 / (1.0 + np.exp(-d)) - s)
    g = precision * (theta - mu)
    g = g + np.bincount(a, r, len(theta)) - np.bincount(b, r, len(theta))
    return g, r.sum()


def scipy_reference(a, b, s, w, n, precision=0.0, mu=0.0, alpha=False):
    """Direct minimisation (BFGS to a tight gradient tolerance) of the naive objective."""

    def fun(x):
        theta, al = (x[:n], x[n]) if alpha else (x, 0.0)
        g, ga = naive_gradient(theta, a, b, s, w, precision, mu, al)
        return naive_objective(theta, a, b, s, w, precision, mu, al), (np.append(g, ga) if alpha else g)

    result = minimize(fun, np.zeros(n + alpha), jac=True, method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    return result.x


def by_player(result: pl.DataFrame) -> dict:
    return dict(zip(result["player"], result["rating"]))


# --------------------------------------------------------------------------------------------------
# Agreement with choix
# --------------------------------------------------------------------------------------------------


def test_plain_mle_equals_choix_ilsr_and_mm(decisive):
    a, b, s, _, names = coded(decisive)
    data = [(x, y) if won == 1.0 else (y, x) for x, y, won in zip(a, b, s)]
    ilsr = choix.ilsr_pairwise(len(names), data, alpha=0.0, tol=1e-13, max_iter=10000)
    mm = choix.mm_pairwise(len(names), data, tol=1e-12, max_iter=100000)
    fit = duckrate.bt_fit(decisive, uncertainty="none")
    ours = np.array([by_player(fit)[name] for name in names])
    theta = (ours - 1500.0) / POINTS
    assert abs(theta.mean()) < 1e-12  # mean zero, like choix
    assert np.max(np.abs(theta - ilsr)) < 1e-8
    assert np.max(np.abs(theta - mm)) < 1e-7


@pytest.mark.parametrize("method", ["newton", "mm"])
def test_ridge_equals_choix_opt_pairwise(decisive, method):
    """choix's penalty is alpha·‖θ‖², ours (1/2σ²)‖θ‖²: alpha = 1/(2σ²) with σ = prior_sd·ln10/400."""
    a, b, s, _, names = coded(decisive)
    data = [(x, y) if won == 1.0 else (y, x) for x, y, won in zip(a, b, s)]
    prior_sd = 250.0
    sigma = prior_sd / POINTS
    theirs = choix.opt_pairwise(len(names), data, alpha=1.0 / (2 * sigma**2), method="Newton-CG", tol=1e-13)
    fit = duckrate.bt_fit(decisive, prior_sd=prior_sd, method=method, uncertainty="none")
    theta = (np.array([by_player(fit)[name] for name in names]) - 1500.0) / POINTS
    assert np.max(np.abs(theta - theirs)) < 1e-8


# --------------------------------------------------------------------------------------------------
# Two solvers, one optimum; MM monotone
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ridge", [0.0, 0.3])
@pytest.mark.parametrize("home", [False, True])
def test_newton_and_mm_reach_the_same_optimum(games, ridge, home):
    a, b, s, w, names = coded(games)
    n = len(names)
    newton = bt_theta(a, b, s, n, ridge=ridge, home_advantage=home, method="newton")
    mm = bt_theta(a, b, s, n, ridge=ridge, home_advantage=home, method="mm")
    for solution in (newton, mm):
        assert solution.converged and solution.gradient_norm < 1e-9
        g, ga = naive_gradient(solution.theta, a, b, s, w, ridge, 0.0, solution.alpha)
        assert math.hypot(np.linalg.norm(g), ga if home else 0.0) < 1e-8  # the test's own gradient agrees
    assert np.max(np.abs(newton.theta - mm.theta)) < 1e-9
    assert abs(newton.alpha - mm.alpha) < 1e-9
    assert newton.iterations < 15 < mm.iterations


@pytest.mark.parametrize("ridge", [0.0, 2.0])
def test_mm_log_posterior_rises_at_every_step(games, ridge):
    a, b, s, _, names = coded(games)
    pairs = pairs_from_rows(a, b, s, None, len(names))
    rng = np.random.default_rng(3)
    mu = rng.normal(0.0, 0.5, len(names)) if ridge else np.zeros(len(names))
    for home in (False, True):
        solution = fit_pairs(pairs, np.full(len(names), ridge), mu, home, "mm", 1e-9)
        history = np.array(solution.history)
        assert len(history) > 20
        steps = np.diff(history)
        assert np.all(steps >= -1e-12 * np.abs(history[1:])), steps.min()
        assert steps[0] > 0


def test_mm_update_handles_strong_players_without_overflow():
    """exp((A + μC)/C) overflows for a strong player under a tight prior (docs/papers.md); the
    Wright-omega form does not."""
    a = np.array([0] * 400 + [1, 2])
    b = np.array([1] * 400 + [2, 0])
    s = np.ones(402)
    ridge = 0.5  # A/C = 800: exp(800) overflows a double
    mm = bt_theta(a, b, s, 3, ridge=ridge, method="mm")
    newton = bt_theta(a, b, s, 3, ridge=ridge, method="newton")
    assert mm.converged and np.all(np.isfinite(mm.theta))
    assert np.max(np.abs(mm.theta - newton.theta)) < 1e-8  # gradient 1e-9 / curvature >= 0.5


# --------------------------------------------------------------------------------------------------
# MAP with per-player priors against a direct minimisation
# --------------------------------------------------------------------------------------------------


def test_map_with_priors_table_equals_direct_minimisation(games):
    a, b, s, w, names = coded(games)
    rng = np.random.default_rng(11)
    prior_rating = rng.normal(1550.0, 150.0, len(names))
    prior_sd = rng.uniform(80.0, 300.0, len(names))
    with_sd = rng.random(len(names)) < 0.5
    has_row = rng.random(len(names)) < 0.8
    priors = pl.DataFrame(
        {
            "player": [n for n, keep in zip(names, has_row) if keep],
            "rating": prior_rating[has_row],
            "sd": np.where(with_sd, prior_sd, np.nan)[has_row],
        }
    ).with_columns(pl.col("sd").fill_nan(None))
    default_sd = 200.0
    mu = np.where(has_row, (prior_rating - 1500.0) / POINTS, 0.0)
    sigma = np.where(has_row & with_sd, prior_sd, default_sd) / POINTS
    reference = scipy_reference(a, b, s, w, len(names), 1.0 / sigma**2, mu, alpha=True)
    for method in ("newton", "mm"):
        fit = duckrate.bt_fit(
            games, prior_sd=default_sd, priors=priors, home_advantage=True, method=method, uncertainty="none"
        )
        theta = (np.array([by_player(fit)[name] for name in names]) - 1500.0) / POINTS
        assert np.max(np.abs(theta - reference[:-1])) < 1e-6
        assert abs(fit["home_advantage"][0] / POINTS - reference[-1]) < 1e-6
        assert fit["converged"].all()


# --------------------------------------------------------------------------------------------------
# Invariances, draws and weights
# --------------------------------------------------------------------------------------------------


def test_row_order_does_not_change_a_single_bit(games):
    first = duckrate.bt_fit(games, prior_sd=200.0, uncertainty="bootstrap", resamples=5)
    shuffled = games.sample(fraction=1.0, shuffle=True, seed=5)
    second = duckrate.bt_fit(shuffled, prior_sd=200.0, uncertainty="bootstrap", resamples=5)
    assert first.equals(second)


def test_relabelling_players_permutes_the_ratings(games):
    names = sorted(set(games["player_a"]) | set(games["player_b"]))
    rng = np.random.default_rng(2)
    new_names = dict(zip(names, [f"q{i:03d}" for i in rng.permutation(len(names))]))
    renamed = games.with_columns(
        pl.col("player_a").replace_strict(new_names), pl.col("player_b").replace_strict(new_names)
    )
    for kwargs in ({}, {"prior_sd": 150.0, "home_advantage": True}):
        before = by_player(duckrate.bt_fit(games, uncertainty="hessian", **kwargs))
        after = by_player(duckrate.bt_fit(renamed, uncertainty="hessian", **kwargs))
        assert max(abs(before[name] - after[new_names[name]]) for name in names) < 1e-9


def test_draws_are_half_wins_and_weights_multiply_games(games):
    draws = games.filter(pl.col("score_a") == 0.5)
    assert draws.height > 50
    others = games.filter(pl.col("score_a") != 0.5).with_columns(weight=pl.lit(1.0))
    split = pl.concat(
        [
            others,
            draws.with_columns(score_a=pl.lit(1.0), weight=pl.lit(0.5)),
            draws.with_columns(match_id=pl.col("match_id") + 10**9, score_a=pl.lit(0.0), weight=pl.lit(0.5)),
        ]
    )
    plain = by_player(duckrate.bt_fit(games, uncertainty="none"))
    halves = by_player(duckrate.bt_fit(split, uncertainty="none"))
    assert max(abs(plain[k] - halves[k]) for k in plain) < 1e-8
    doubled = games.with_columns(weight=pl.lit(2.0))
    twice = pl.concat([games, games.with_columns(match_id=pl.col("match_id") + 10**9)])
    one, two = (
        by_player(duckrate.bt_fit(doubled, prior_sd=100.0, uncertainty="none")),
        by_player(duckrate.bt_fit(twice, prior_sd=100.0, uncertainty="none")),
    )
    assert max(abs(one[k] - two[k]) for k in one) < 1e-8


def test_leagues_are_independent_fits(games):
    other = games.with_columns(pl.col("player_a") + "x", pl.col("player_b") + "x", match_id=pl.col("match_id") + 10**9)
    both = pl.concat([games.with_columns(league=pl.lit("one")), other.with_columns(league=pl.lit("two"))])
    fit = duckrate.bt_fit(both, prior_sd=200.0)
    alone = duckrate.bt_fit(games, prior_sd=200.0)
    one = fit.filter(pl.col("league") == "one").drop("league")
    assert one.equals(alone.drop("league"))
    assert fit.filter(pl.col("league") == "two").height == alone.height


def test_anchoring_shifts_only_the_scale(games):
    free = by_player(duckrate.bt_fit(games, uncertainty="none"))
    anchor = sorted(free)[3]
    anchored = duckrate.bt_fit(games, anchor_player=anchor, anchor_rating=2000.0, uncertainty="hessian")
    ratings = by_player(anchored)
    assert ratings[anchor] == pytest.approx(2000.0, abs=1e-9)
    assert max(abs((ratings[k] - ratings[anchor]) - (free[k] - free[anchor])) for k in free) < 1e-8
    assert anchored.filter(pl.col("player") == anchor)["sd"][0] == 0.0
    assert abs(sum(free.values()) / len(free) - 1500.0) < 1e-9  # unanchored MLE: mean 1500


# --------------------------------------------------------------------------------------------------
# When the MLE does not exist
# --------------------------------------------------------------------------------------------------


def frame_of(rows):
    return pl.DataFrame(
        {
            "match_id": list(range(len(rows))),
            "played_at": list(range(len(rows))),
            "player_a": [r[0] for r in rows],
            "player_b": [r[1] for r in rows],
            "score_a": [float(r[2]) for r in rows],
        }
    )


def test_a_player_who_never_lost_is_named_and_a_prior_suggested():
    rows = [("ann", "bob", 1), ("bob", "cid", 1), ("cid", "bob", 1), ("cid", "ann", 0), ("bob", "ann", 0.0)]
    with pytest.raises(DuckrateInputError, match=r"never lost to anyone outside their group.*'ann'.*prior_sd"):
        duckrate.bt_fit(frame_of(rows))
    fit = duckrate.bt_fit(frame_of(rows), prior_sd=200.0)  # a prior makes it finite
    assert fit["player"][0] == "ann" and fit["rating"].is_finite().all()
    with pytest.raises(DuckrateInputError, match="never lost"):
        duckrate.bt_fit(frame_of(rows), method="mm")


def test_groups_never_beaten_or_never_met_are_named():
    top = [("a1", "a2", 1), ("a2", "a1", 1)]
    bottom = [("b1", "b2", 0.5)]
    cross = [("a1", "b1", 1), ("b2", "a2", 0)]
    with pytest.raises(DuckrateInputError) as error:
        duckrate.bt_fit(frame_of(top + bottom + cross))
    message = str(error.value)
    assert "{'a1', 'a2'}" in message and "never lost" in message
    assert "{'b1', 'b2'}" in message and "never beat" in message
    with pytest.raises(
        DuckrateInputError, match=r"never played anyone outside their group.*\{'a1', 'a2'\}.*\{'b1', 'b2'\}"
    ):
        duckrate.bt_fit(frame_of(top + bottom))


def test_a_home_side_that_always_wins_is_an_error_not_a_runaway_number():
    rows = [("x", "y", 1), ("y", "x", 1), ("y", "z", 1), ("z", "y", 1), ("x", "z", 1), ("z", "x", 1)]
    assert duckrate.bt_fit(frame_of(rows))["rating"].to_list() == [1500.0] * 3
    with pytest.raises(DuckrateInputError, match="side-A"):
        duckrate.bt_fit(frame_of(rows), home_advantage=True)


# --------------------------------------------------------------------------------------------------
# Uncertainty
# --------------------------------------------------------------------------------------------------


def numerical_hessian(a, b, s, w, theta, precision, alpha=None):
    """Central differences of the naive gradient."""
    x0 = theta if alpha is None else np.append(theta, alpha)
    n = len(theta)

    def grad(x):
        g, ga = naive_gradient(x[:n], a, b, s, w, precision, 0.0, 0.0 if alpha is None else x[n])
        return g if alpha is None else np.append(g, ga)

    h = np.empty((len(x0), len(x0)))
    step = 1e-5
    for i in range(len(x0)):
        e = np.zeros(len(x0))
        e[i] = step
        h[:, i] = (grad(x0 + e) - grad(x0 - e)) / (2 * step)
    return (h + h.T) / 2


def test_hessian_standard_errors_equal_the_numerical_inverse(games):
    a, b, s, w, names = coded(games)
    n = len(names)
    # plain MLE: the mean-zero constrained covariance is the pseudo-inverse
    fit = duckrate.bt_fit(games, uncertainty="hessian")
    theta = (np.array([by_player(fit)[k] for k in names]) - 1500.0) / POINTS
    covariance = np.linalg.pinv(numerical_hessian(a, b, s, w, theta, 0.0), rcond=1e-9)
    sd = dict(zip(fit["player"], fit["sd"]))
    expected = np.sqrt(np.diag(covariance)) * POINTS
    assert np.max(np.abs(np.array([sd[k] for k in names]) - expected) / expected) < 1e-5
    row = fit.row(0, named=True)
    assert row["lower"] == pytest.approx(row["rating"] - 1.959963984540054 * row["sd"], abs=1e-9)
    # ridge with an order effect: the inverse of the bordered Hessian, reported for θ_i - mean(θ)
    fit = duckrate.bt_fit(games, prior_sd=150.0, home_advantage=True, uncertainty="hessian")
    theta = (np.array([by_player(fit)[k] for k in names]) - 1500.0) / POINTS
    precision = 1.0 / (150.0 / POINTS) ** 2
    covariance = np.linalg.inv(numerical_hessian(a, b, s, w, theta, precision, fit["home_advantage"][0] / POINTS))[
        :n, :n
    ]
    centring = np.eye(n) - 1.0 / n
    sd = dict(zip(fit["player"], fit["sd"]))
    expected = np.sqrt(np.diag(centring @ covariance @ centring)) * POINTS
    assert np.max(np.abs(np.array([sd[k] for k in names]) - expected) / expected) < 1e-5
    # MAP with prior means: the posterior sd of θ_i itself (the priors set the level)
    priors = pl.DataFrame({"player": names[:5], "rating": [1600.0, 1400.0, 1550.0, 1500.0, 1450.0]})
    fit = duckrate.bt_fit(games, prior_sd=150.0, priors=priors, uncertainty="hessian")
    theta = (np.array([by_player(fit)[k] for k in names]) - 1500.0) / POINTS
    covariance = np.linalg.inv(numerical_hessian(a, b, s, w, theta, precision))
    sd = dict(zip(fit["player"], fit["sd"]))
    expected = np.sqrt(np.diag(covariance)) * POINTS
    assert np.max(np.abs(np.array([sd[k] for k in names]) - expected) / expected) < 1e-5


def test_bootstrap_is_reproducible_by_seed_and_close_to_the_hessian(games):
    kwargs = dict(prior_sd=200.0, uncertainty="bootstrap", resamples=60)
    first = duckrate.bt_fit(games, seed=1, **kwargs)
    assert first.equals(duckrate.bt_fit(games, seed=1, **kwargs))
    other = duckrate.bt_fit(games, seed=2, **kwargs)
    assert not first["sd"].equals(other["sd"])
    assert first["rating"].equals(other["rating"])
    assert (first["uncertainty"] == "bootstrap").all() and (first["resamples"] == 60).all()
    assert (first["lower"] < first["rating"]).all() and (first["rating"] < first["upper"]).all()
    hessian = duckrate.bt_fit(games, prior_sd=200.0, uncertainty="hessian")
    ratio = first["sd"].mean() / hessian["sd"].mean()
    assert 0.8 < ratio < 1.25


def test_bootstrap_without_prior_skips_resamples_without_a_finite_mle():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(8):  # a ring where each player has exactly one loss: resamples often drop it
        rows += [(f"p{i}", f"p{(i + 1) % 8}", 1.0)] * 3
        rows += [(f"p{i}", f"p{(i + 3) % 8}", float(rng.integers(0, 2)))]
    fit = duckrate.bt_fit(frame_of(rows), uncertainty="bootstrap", resamples=30, seed=4)
    used = fit["resamples"][0]
    assert 0 <= used < 30


# --------------------------------------------------------------------------------------------------
# Parameters and validation
# --------------------------------------------------------------------------------------------------


def test_defaults_are_pinned():
    import inspect

    signature = inspect.signature(duckrate.bt_fit)
    assert {name: p.default for name, p in signature.parameters.items() if name != "matches"} == {
        "prior_sd": None,
        "priors": None,
        "method": "newton",
        "home_advantage": False,
        "anchor_player": None,
        "anchor_rating": 1500.0,
        "uncertainty": "auto",
        "resamples": 100,
        "seed": 0,
        "tol": 1e-9,
        "max_iter": None,
        "covariates": None,
        "cluster": None,
        "reweight": "none",
        "min_pair_count": 50,
    }


def test_output_columns_and_the_uncertainty_choice(games):
    fit = duckrate.bt_fit(games)
    assert fit.columns == [
        "league",
        "player",
        "rating",
        "sd",
        "lower",
        "upper",
        "games",
        "method",
        "converged",
        "iterations",
        "home_advantage",
        "uncertainty",
        "resamples",
        "rank_upper",
        "rank_lower",
        "tier",
        "component",
        "kind",
    ]
    assert fit.height == 40 and (fit["uncertainty"] == "hessian").all() and fit["converged"].all()
    assert fit["games"].sum() == 2 * games.height
    assert fit["rating"].is_sorted(descending=True)
    assert duckrate.bt_fit(games, uncertainty="none")["sd"].null_count() == 40
    capped = duckrate.bt_fit(games, method="mm", max_iter=3, uncertainty="none")
    assert not capped["converged"].any() and (capped["iterations"] == 3).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "lbfgs"}, r"method = 'lbfgs'; expected 'newton' or 'mm'"),
        ({"prior_sd": 0.0}, r"prior_sd = 0.0; expected a prior sd > 0"),
        ({"resamples": 1}, r"resamples = 1; expected an integer"),
        ({"home_advantage": "yes"}, r"home_advantage = 'yes'; expected true or false"),
        ({"anchor_player": "nobody"}, r"anchor_player 'nobody' has no games"),
        ({"priors": pl.DataFrame({"player": ["x"], "rating": [1600.0]})}, r"priors need prior_sd"),
        (
            {"priors": pl.DataFrame({"player": ["x"], "rating": [1600.0]}), "prior_sd": 100.0, "anchor_player": "x"},
            r"not both",
        ),
        (
            {"prior_sd": 100.0, "priors": pl.DataFrame({"player": ["x"], "rating": [1600.0], "sd": [-1.0]})},
            r"column 'sd' has -1.0",
        ),
    ],
)
def test_bad_parameters_are_named(games, kwargs, message):
    with pytest.raises(DuckrateInputError, match=message):
        duckrate.bt_fit(games, **kwargs)


def test_unknown_parameter_and_bad_rows_are_named(games):
    from duckrate.core.matches import columns_from_polars
    from duckrate.fits.bradley_terry.fit import fit_columns

    with pytest.raises(DuckrateInputError, match=r"unknown parameter\(s\) k;"):
        fit_columns(columns_from_polars(games), None, {"k": 3})
    bad = games.with_columns(
        score_a=pl.when(pl.col("match_id") == games["match_id"][5]).then(1.5).otherwise(pl.col("score_a"))
    )
    with pytest.raises(DuckrateInputError, match=rf"column 'score_a' has 1.5 at match_id={games['match_id'][5]}"):
        duckrate.bt_fit(bad)


def test_disconnected_groups_are_reported_as_components_and_one_game_is_not_precise():
    """A MAP fit over two groups that never met: each player's component of the comparison graph is reported
    (1 = the top-rated player's); a newcomer with one game gets an interval near the prior's, not one as
    narrow as players with dozens of games."""
    import random
    from datetime import datetime

    rng = random.Random(1)
    rows = []
    for group in ("x", "y"):
        for k in range(300):
            a, b = rng.sample(range(8), 2)
            rows.append(
                (
                    f"{group}{k}",
                    datetime(2024, 1, 1),
                    f"{group}{a}",
                    f"{group}{b}",
                    float(rng.random() < 0.5 + 0.05 * (a - b)),
                )
            )
    rows.append(("lone", datetime(2024, 1, 2), "x0", "newbie", 0.0))
    games = pl.DataFrame(rows, schema=["match_id", "played_at", "player_a", "player_b", "score_a"], orient="row")
    fit = duckrate.bt_fit(games, prior_sd=200)
    component = dict(zip(fit["player"], fit["component"]))
    assert component[fit["player"][0]] == 1
    assert {component[f"x{i}"] for i in range(8)} | {component["newbie"]} == {component["x0"]}
    assert {component[f"y{i}"] for i in range(8)} == {3 - component["x0"]}
    sd = dict(zip(fit["player"], fit["sd"]))
    assert sd["newbie"] > 150 > 2 * max(value for player, value in sd.items() if player != "newbie")
