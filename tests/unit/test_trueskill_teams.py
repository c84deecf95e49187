"""duckrate.systems.trueskill_teams against the ``trueskill`` package 0.4.5 (scipy backend, through
helpers.scipy_normal): sequential replays of random team histories through both (ratings carried forward
separately), match quality, the forecast against scipy's quadrature and closed forms, the two-player system, and
the edge cases where the package raises."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from helpers.scipy_normal import SCIPY_NORM
from scipy import integrate
from scipy.stats import norm

from duckrate.systems.trueskill import draw_margin, update_1vs1
from duckrate.systems.trueskill_teams import (
    MIN_DELTA,
    S_BETA,
    S_DRAW_PROBABILITY,
    S_MIN_DELTA,
    S_TAU,
    match_quality,
    predict_match,
    predicted_ranks,
    rate_match,
    settings_array,
)
from duckrate.systems.trueskill_teams.factor_graph import package_draw, package_win, truncation_moments
from duckrate.systems.trueskill_teams.forecast import outright_win_probability, team_performances

trueskill = pytest.importorskip("trueskill")

TOLERANCE = 1e-6
QUALITY_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Params:
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    tau: float = 25.0 / 300.0
    draw_probability: float = 0.10
    min_delta: float = MIN_DELTA

    def env(self):
        return trueskill.TrueSkill(self.mu, self.sigma, self.beta, self.tau, self.draw_probability, backend=SCIPY_NORM)

    def settings(self) -> np.ndarray:
        return settings_array(self.beta, self.tau, self.draw_probability, self.min_delta)


@dataclass(frozen=True)
class Match:
    players: np.ndarray  # int64[n]: pool indices, teams best first, each team contiguous
    bounds: np.ndarray  # int64[k + 1]
    ranks: np.ndarray  # int64[k], dense places, nondecreasing
    weights: np.ndarray  # float64[n] in (0, 1]


def random_history(seed, n_matches, n_pool, params, *, max_teams=8, max_players=8, tie_rate=0.15, partial_rate=0.3):
    """Matches among a pool with latent skills: team performances Σ w (skill + N(0, β²)) decide the places;
    adjacent places merge into a tie with probability ``tie_rate``. Weights: 1, else uniform in (0.02, 1], and
    a few tiny ones (below the default min_delta: the package raises those to min_delta)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(params.mu, params.sigma, n_pool)
    matches = []
    for _ in range(n_matches):
        k = int(rng.integers(2, max_teams + 1))
        sizes = rng.integers(1, max_players + 1, size=k)
        chosen = rng.choice(n_pool, size=int(sizes.sum()), replace=False)
        weights = np.ones(chosen.size)
        partial = rng.random(chosen.size) < partial_rate
        weights[partial] = rng.uniform(0.02, 1.0, int(partial.sum()))
        tiny = rng.random(chosen.size) < 0.02
        weights[tiny] = 10.0 ** rng.uniform(-6.0, -2.0, int(tiny.sum()))
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        performance = np.array(
            [
                np.sum(weights[a:b] * (skill[chosen[a:b]] + rng.normal(0.0, params.beta, b - a)))
                for a, b in zip(bounds[:-1], bounds[1:])
            ]
        )
        order = np.argsort(-performance, kind="stable")
        players, weights_sorted, sorted_sizes = [], [], []
        for team in order:
            players.extend(chosen[bounds[team] : bounds[team + 1]])
            weights_sorted.extend(weights[bounds[team] : bounds[team + 1]])
            sorted_sizes.append(sizes[team])
        ranks = [1]
        for _ in range(1, k):
            ranks.append(ranks[-1] if rng.random() < tie_rate else ranks[-1] + 1)
        matches.append(
            Match(
                np.array(players, dtype=np.int64),
                np.concatenate([[0], np.cumsum(sorted_sizes)]).astype(np.int64),
                np.array(ranks, dtype=np.int64),
                np.array(weights_sorted, dtype=np.float64),
            )
        )
    return matches


def package_groups(match, mu, sigma):
    """The package's rating groups and weights for a match (Python floats: the package's Matrix needs them)."""
    groups, weights = [], []
    for a, b in zip(match.bounds[:-1], match.bounds[1:]):
        groups.append(tuple(trueskill.Rating(float(mu[p]), float(sigma[p])) for p in match.players[a:b]))
        weights.append(tuple(float(w) for w in match.weights[a:b]))
    return groups, weights


def replay_both(params, matches, n_pool):
    """Replay ``matches`` through rate_match and through the package, each carrying its own ratings forward;
    assert agreement after every match and quality before it. Returns the largest differences seen."""
    env = params.env()
    settings = params.settings()
    ours_mu = np.full(n_pool, params.mu)
    ours_sigma = np.full(n_pool, params.sigma)
    theirs_mu = [params.mu] * n_pool
    theirs_sigma = [params.sigma] * n_pool
    worst_rating = 0.0
    worst_quality = 0.0
    skipped = 0
    for index, match in enumerate(matches):
        groups, weights = package_groups(match, theirs_mu, theirs_sigma)
        expected_quality = env.quality(groups, weights)
        quality = match_quality(
            settings,
            np.array(theirs_mu)[match.players],
            np.array(theirs_sigma)[match.players],
            match.bounds,
            match.weights,
        )
        assert abs(quality - expected_quality) <= QUALITY_TOLERANCE, (index, quality, expected_quality)
        worst_quality = max(worst_quality, abs(quality - expected_quality))

        new_mu = np.empty(match.players.size)
        new_sigma = np.empty(match.players.size)
        rate_match(
            settings,
            ours_mu[match.players],
            ours_sigma[match.players],
            match.bounds,
            match.ranks,
            match.weights,
            new_mu,
            new_sigma,
        )
        try:
            rated = env.rate(groups, ranks=[int(r) for r in match.ranks], weights=weights, min_delta=params.min_delta)
        except FloatingPointError:
            # the package cannot rate this match (e.g. a win by a team whose weights are all tiny: the draw margin
            # ignores weights, so the standardised margin is huge and Φ underflows); the kernel stays finite.
            # Both replays leave the match out.
            assert np.all(np.isfinite(new_mu)) and np.all(np.isfinite(new_sigma)) and np.all(new_sigma > 0)
            skipped += 1
            continue
        expected = [rating for group in rated for rating in group]
        expected_mu = np.array([r.mu for r in expected])
        expected_sigma = np.array([r.sigma for r in expected])
        difference = max(np.max(np.abs(new_mu - expected_mu)), np.max(np.abs(new_sigma - expected_sigma)))
        assert difference <= TOLERANCE, (index, difference, new_mu - expected_mu, new_sigma - expected_sigma)
        worst_rating = max(worst_rating, difference)
        ours_mu[match.players] = new_mu
        ours_sigma[match.players] = new_sigma
        for row, player in enumerate(match.players):
            theirs_mu[player] = expected[row].mu
            theirs_sigma[player] = expected[row].sigma
    assert skipped <= 0.01 * len(matches), skipped
    return worst_rating, worst_quality, skipped


PARAMETER_SETS = {
    "defaults": (Params(), 0.15),
    # without a draw margin a tie is a probability-zero event the package cannot rate (tested separately)
    "no draws": (Params(draw_probability=0.0), 0.0),
    "draw 0.3": (Params(draw_probability=0.3), 0.25),
    "large tau": (Params(tau=1.5), 0.15),
    "other scale": (Params(mu=1500.0, sigma=350.0, beta=200.0, tau=10.0, draw_probability=0.05), 0.1),
    "min_delta 1e-6": (Params(min_delta=1e-6), 0.15),
}


@pytest.mark.parametrize("name", list(PARAMETER_SETS))
def test_replay_agrees_with_package(name):
    params, tie_rate = PARAMETER_SETS[name]
    n_pool = 60
    matches = random_history(sorted(PARAMETER_SETS).index(name), 300, n_pool, params, tie_rate=tie_rate)
    worst_rating, worst_quality, skipped = replay_both(params, matches, n_pool)
    assert worst_rating <= TOLERANCE and worst_quality <= QUALITY_TOLERANCE
    print(f"{name}: largest rating difference {worst_rating:.1e}, quality {worst_quality:.1e}, skipped {skipped}")


@pytest.mark.slow
def test_full_history_agrees_with_package():
    """10,000 matches of 2-8 teams of 1-8 players, partial play and ties, defaults."""
    params = Params()
    n_pool = 200
    matches = random_history(20260, 10_000, n_pool, params, tie_rate=0.15, partial_rate=0.3)
    assert sum(m.ranks.size for m in matches) > 40_000
    worst_rating, worst_quality, skipped = replay_both(params, matches, n_pool)
    assert worst_rating <= TOLERANCE
    print(f"full history: largest rating difference {worst_rating:.1e}, quality {worst_quality:.1e}, skipped {skipped}")


# --------------------------------------------------------------------------------------------------
# Single matches: ordering, weights, ties, edge cases.


def rate(params, mu, sigma, bounds, ranks, weights=None):
    mu = np.asarray(mu, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    weights = np.ones(mu.size) if weights is None else np.asarray(weights, dtype=np.float64)
    out_mu = np.empty(mu.size)
    out_sigma = np.empty(mu.size)
    rate_match(
        params.settings(),
        mu,
        sigma,
        np.asarray(bounds, dtype=np.int64),
        np.asarray(ranks, dtype=np.int64),
        weights,
        out_mu,
        out_sigma,
    )
    return out_mu, out_sigma


def package_rate(params, mu, sigma, bounds, ranks, weights=None):
    groups = [
        tuple(trueskill.Rating(float(mu[i]), float(sigma[i])) for i in range(a, b))
        for a, b in zip(bounds[:-1], bounds[1:])
    ]
    w = None if weights is None else [tuple(float(x) for x in weights[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    rated = params.env().rate(groups, ranks=list(ranks), weights=w, min_delta=params.min_delta)
    flat = [r for g in rated for r in g]
    return np.array([r.mu for r in flat]), np.array([r.sigma for r in flat])


def test_settings_layout_and_validation():
    s = settings_array(4.0, 0.1, 0.2, 1e-5)
    assert s.dtype == np.float64 and s.shape == (4,)
    assert (s[S_BETA], s[S_TAU], s[S_DRAW_PROBABILITY], s[S_MIN_DELTA]) == (4.0, 0.1, 0.2, 1e-5)
    assert settings_array(4.0, 0.1, 0.2)[S_MIN_DELTA] == 0.0001
    for bad in [(0.0, 0.1, 0.1), (4.0, -1.0, 0.1), (4.0, 0.1, 1.0), (4.0, 0.1, -0.1), (4.0, 0.1, 0.1, 0.0)]:
        with pytest.raises(ValueError):
            settings_array(*bad)


def test_unsorted_ranks_are_sorted_and_unsorted_as_the_package_does():
    params = Params()
    rng = np.random.default_rng(5)
    mu = rng.normal(25, 4, 9)
    sigma = rng.uniform(2, 8, 9)
    bounds = [0, 2, 5, 6, 9]
    weights = rng.uniform(0.3, 1.0, 9)
    for ranks in ([3, 1, 2, 1], [2, 2, 1, 3], [4, 3, 2, 1]):
        ours = rate(params, mu, sigma, bounds, ranks, weights)
        theirs = package_rate(params, mu, sigma, bounds, ranks, weights)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_all_teams_tied():
    params = Params()
    rng = np.random.default_rng(6)
    for k in (2, 3, 6):
        sizes = rng.integers(1, 4, size=k)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        mu = rng.normal(25, 3, bounds[-1])
        sigma = rng.uniform(3, 8, bounds[-1])
        ours = rate(params, mu, sigma, bounds, [1] * k)
        np.testing.assert_allclose(ours, package_rate(params, mu, sigma, bounds, [1] * k), rtol=0, atol=1e-10)
    # equal teams tied: the means stay, the deviations shrink
    mu = np.full(6, 25.0)
    sigma = np.full(6, 25.0 / 3.0)
    out_mu, out_sigma = rate(params, mu, sigma, [0, 2, 4, 6], [1, 1, 1])
    np.testing.assert_allclose(out_mu, 25.0, atol=1e-12)
    assert np.all(out_sigma < math.sqrt(sigma[0] ** 2 + params.tau**2))


def test_tie_without_draw_margin_is_the_limit_of_small_margins():
    """draw_probability 0: the package raises on a tie; the kernel conditions on equal team performances, the
    limit of ever smaller draw margins (taken here with the package at draw probabilities 1e-4 and 1e-5)."""
    mu = np.array([30.0, 22.0, 25.0, 18.0, 27.0])
    sigma = np.array([3.0, 6.0, 5.0, 7.0, 2.0])
    bounds = np.array([0, 2, 3, 5])
    ranks = [1, 1, 2]
    with pytest.raises(FloatingPointError):
        package_rate(Params(draw_probability=0.0), mu, sigma, bounds, ranks)
    ours = np.array(rate(Params(draw_probability=0.0), mu, sigma, bounds, ranks))
    assert np.all(np.isfinite(ours))
    near = [np.array(package_rate(Params(draw_probability=p), mu, sigma, bounds, ranks)) for p in (1e-4, 1e-5)]
    assert np.max(np.abs(near[1] - ours)) < np.max(np.abs(near[0] - ours))
    assert np.max(np.abs(near[1] - ours)) < 1e-4
    # all tied, equal teams: nothing moves but σ
    out_mu, out_sigma = rate(Params(draw_probability=0.0), np.full(6, 25.0), np.full(6, 5.0), [0, 2, 4, 6], [1, 1, 1])
    np.testing.assert_allclose(out_mu, 25.0, atol=1e-12)
    assert np.all(np.isfinite(out_sigma)) and np.all(out_sigma < 5.0)


def test_extreme_gaps_stay_finite_where_the_package_raises():
    params = Params()
    for gap in (400.0, 1000.0, 1e5):
        mu = np.array([0.0, gap])
        sigma = np.array([1.0, 1.0])
        with pytest.raises(FloatingPointError):
            package_rate(params, mu, sigma, [0, 1, 2], [1, 2])
        # the huge upset: the winner rises, the loser falls, both deviations shrink
        out_mu, out_sigma = rate(params, mu, sigma, [0, 1, 2], [1, 2])
        assert np.all(np.isfinite(out_mu)) and np.all(np.isfinite(out_sigma))
        assert out_mu[0] > 0.0 and out_mu[1] < gap and np.all(out_sigma < 1.0)
        # the expected result: nothing but τ
        out_mu, out_sigma = rate(params, mu[::-1].copy(), sigma, [0, 1, 2], [1, 2])
        np.testing.assert_allclose(out_mu, mu[::-1], atol=1e-9)
        np.testing.assert_allclose(out_sigma, math.sqrt(1.0 + params.tau**2), atol=1e-9)
        # a tie across the gap, and in a multi-team match
        for ranks in ([1, 1], [1, 2]):
            out = rate(params, np.array([0.0, gap, gap / 2]), np.ones(3), [0, 1, 2, 3], ranks + [3])
            assert np.all(np.isfinite(out))
    # tiny deviations and a tie beyond the package's underflow
    out = rate(Params(draw_probability=1e-9), np.array([0.0, 50.0]), np.array([0.1, 0.1]), [0, 1, 2], [1, 1])
    assert np.all(np.isfinite(out))


def test_weights_below_min_delta_are_raised_to_it():
    params = Params()
    mu = np.array([25.0, 30.0, 20.0, 28.0])
    sigma = np.array([8.0, 4.0, 6.0, 3.0])
    weights = np.array([1e-7, 1.0, 0.5, 1e-5])
    bounds = [0, 2, 4]
    ours = rate(params, mu, sigma, bounds, [1, 2], weights)
    np.testing.assert_allclose(ours, package_rate(params, mu, sigma, bounds, [1, 2], weights), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(ours[0], rate(params, mu, sigma, bounds, [1, 2], np.maximum(weights, 1e-4))[0])


def test_one_on_one_matches_the_two_player_system():
    params = Params()
    epsilon = draw_margin(params.draw_probability, params.beta)
    rng = np.random.default_rng(7)
    for _ in range(50):
        mu = rng.normal(25, 6, 2)
        sigma = rng.uniform(0.5, 9, 2)
        for ranks, score in (([1, 2], 1.0), ([1, 1], 0.5)):
            out_mu, out_sigma = rate(params, mu, sigma, [0, 1, 2], ranks)
            _, mu_a, sigma_a, mu_b, sigma_b = update_1vs1(
                mu[0], sigma[0], mu[1], sigma[1], score, params.beta, params.tau, epsilon
            )
            np.testing.assert_allclose(out_mu, [mu_a, mu_b], rtol=0, atol=1e-9)
            np.testing.assert_allclose(out_sigma, [sigma_a, sigma_b], rtol=0, atol=1e-9)


def test_invalid_matches_raise():
    params = Params()
    with pytest.raises(ValueError):
        rate(params, [25.0], [8.0], [0, 1], [1])
    with pytest.raises(ValueError):
        rate(params, [25.0, 25.0], [8.0, 8.0], [0, 2, 2], [1, 2])
    settings = params.settings()
    settings[S_MIN_DELTA] = 0.0
    with pytest.raises(ValueError):
        rate_match(
            settings, np.ones(2), np.ones(2), np.array([0, 1, 2]), np.array([1, 2]), np.ones(2), *np.empty((2, 2))
        )


def test_truncation_formulas_are_the_packages():
    """V and 1 - W as the package evaluates them, where its formulas are valid (to rounding: the package's W sums
    terms of size ~t², so its own rounding error grows like t² eps); finite moments where it raises."""
    env = trueskill.TrueSkill(backend=SCIPY_NORM)
    for t in np.linspace(-8.0, 8.0, 161):
        for e in (0.01, 0.1, 0.5, 1.0, 3.0):
            v, one_minus_w, ok = package_win(t, e)
            assert ok
            assert abs(v - env.v_win(t, e)) <= 1e-13 * max(1.0, abs(v))
            assert abs(one_minus_w - (1.0 - env.w_win(t, e))) <= 1e-13 * (1.0 + t * t)
            v, one_minus_w, ok = package_draw(t, e)
            assert ok
            assert abs(v - env.v_draw(t, e)) <= 1e-13 * max(1.0, abs(v))
            assert abs(one_minus_w - (1.0 - env.w_draw(t, e))) <= 1e-13 * (1.0 + t * t)
    # where the package's formulas are accurate the kernel uses them as they are
    for t in np.linspace(-4.0, 4.0, 81):
        for e in (0.05, 0.5, 2.0):
            assert truncation_moments(t, e, False) == package_win(t, e)[:2]
            assert truncation_moments(t, e, True) == package_draw(t, e)[:2]
    for t, e, tie in ((-45.0, 0.1, False), (45.0, 0.1, False), (-60.0, 0.1, True), (3.0, 0.0, True)):
        with pytest.raises(FloatingPointError):
            (env.w_draw if tie else env.w_win)(t, e)
        v, one_minus_w = truncation_moments(t, e, tie)
        assert math.isfinite(v) and 0.0 <= one_minus_w <= 1.0


# --------------------------------------------------------------------------------------------------
# Quality.


def test_quality_matches_package_on_odd_inputs():
    params = Params(beta=3.0)
    env = params.env()
    rng = np.random.default_rng(8)
    for _ in range(30):
        k = int(rng.integers(2, 9))
        sizes = rng.integers(1, 6, size=k)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        mu = rng.normal(25, 10, bounds[-1])
        sigma = rng.uniform(0.1, 12, bounds[-1])
        weights = rng.uniform(0.01, 1.0, bounds[-1])
        groups = [
            tuple(trueskill.Rating(float(mu[i]), float(sigma[i])) for i in range(a, b))
            for a, b in zip(bounds[:-1], bounds[1:])
        ]
        w = [tuple(float(x) for x in weights[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
        assert abs(match_quality(params.settings(), mu, sigma, bounds, weights) - env.quality(groups, w)) <= 1e-12
    # two newcomers: sqrt(2β² / (2β² + 2σ²))
    assert match_quality(
        Params().settings(), np.full(2, 25.0), np.full(2, 25 / 3), np.array([0, 1, 2]), np.ones(2)
    ) == pytest.approx(math.sqrt(1 / 5), abs=1e-15)


# --------------------------------------------------------------------------------------------------
# The forecast.


def forecast(params, mu, sigma, bounds, weights=None):
    weights = np.ones(len(mu)) if weights is None else np.asarray(weights, dtype=np.float64)
    p_win = np.empty(len(bounds) - 1)
    p_draw = predict_match(
        params.settings(), np.asarray(mu, float), np.asarray(sigma, float), np.asarray(bounds, np.int64), weights, p_win
    )
    return p_win, p_draw


def test_two_team_forecast_is_the_closed_form():
    rng = np.random.default_rng(9)
    for draw_probability in (0.0, 0.1, 0.3):
        params = Params(draw_probability=draw_probability)
        for _ in range(20):
            sizes = rng.integers(1, 5, size=2)
            bounds = np.concatenate([[0], np.cumsum(sizes)])
            mu = rng.normal(25, 5, bounds[-1])
            sigma = rng.uniform(1, 8, bounds[-1])
            weights = rng.uniform(0.2, 1.0, bounds[-1])
            p_win, p_draw = forecast(params, mu, sigma, bounds, weights)
            m = [np.sum(weights[a:b] * mu[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
            v = [
                np.sum(weights[a:b] ** 2 * (sigma[a:b] ** 2 + params.tau**2 + params.beta**2))
                for a, b in zip(bounds[:-1], bounds[1:])
            ]
            c = math.sqrt(v[0] + v[1])
            epsilon = norm.ppf((draw_probability + 1) / 2) * math.sqrt(bounds[-1]) * params.beta
            assert p_win[0] == pytest.approx(norm.cdf((m[0] - m[1] - epsilon) / c), abs=1e-14)
            assert p_win[1] == pytest.approx(norm.cdf((m[1] - m[0] - epsilon) / c), abs=1e-14)
            expected_draw = norm.cdf((epsilon - (m[0] - m[1])) / c) - norm.cdf((-epsilon - (m[0] - m[1])) / c)
            assert p_draw == pytest.approx(expected_draw, abs=1e-14)
            assert p_win.sum() + p_draw == pytest.approx(1.0, abs=1e-14)
            # the quadrature gives the same
            means, sds, n = team_performances(params.settings(), mu, sigma, bounds.astype(np.int64), weights)
            unit = norm.ppf((draw_probability + 1) / 2)
            for i in range(2):
                assert outright_win_probability(i, means, sds, n, unit, params.beta) == pytest.approx(
                    p_win[i], abs=1e-13
                )


def quad_win(i, means, sds, sizes, unit, beta):
    """P(team i wins outright) by scipy.integrate.quad over its performance x (Φ as erfc: quick in Python)."""
    epsilon = [unit * math.sqrt(sizes[i] + sizes[j]) * beta for j in range(len(means))]
    others = [j for j in range(len(means)) if j != i]

    def f(x):
        value = math.exp(-0.5 * ((x - means[i]) / sds[i]) ** 2) / (math.sqrt(2 * math.pi) * sds[i])
        for j in others:
            value *= 0.5 * math.erfc(-(x - epsilon[j] - means[j]) / (sds[j] * math.sqrt(2)))
        return value

    lo, hi = means[i] - 12 * sds[i], means[i] + 12 * sds[i]
    points = sorted({means[j] + epsilon[j] for j in range(len(means)) if j != i and lo < means[j] + epsilon[j] < hi})
    value, _ = integrate.quad(f, lo, hi, points=points or None, epsabs=1e-14, epsrel=1e-12, limit=500)
    return value


def test_k_team_forecast_against_quad():
    rng = np.random.default_rng(10)
    for case in range(40):
        params = Params(draw_probability=(0.0, 0.1, 0.3)[case % 3], tau=(0.0, 0.5)[case % 2])
        k = int(rng.integers(3, 9))
        sizes = rng.integers(1, 6, size=k)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        mu = rng.normal(25, (1.0, 5.0, 20.0)[case % 3], bounds[-1])
        sigma = rng.uniform(0.05, 9, bounds[-1])
        weights = np.where(rng.random(bounds[-1]) < 0.3, rng.uniform(0.001, 1.0, bounds[-1]), 1.0)
        p_win, p_draw = forecast(params, mu, sigma, bounds, weights)
        means, sds, n = team_performances(params.settings(), mu, sigma, bounds, weights)
        unit = norm.ppf((params.draw_probability + 1) / 2)
        for i in range(k):
            assert abs(p_win[i] - quad_win(i, means, sds, n, unit, params.beta)) <= 1e-10
        assert np.all((p_win >= 0) & (p_win <= 1)) and 0.0 <= p_draw <= 1.0
        assert p_win.sum() + p_draw == pytest.approx(1.0, abs=1e-12)
        if params.draw_probability == 0.0:
            assert p_draw <= 1e-10  # without a margin some team always wins outright


def test_forecast_extremes_and_ranks():
    params = Params()
    # a hopeless field: the favourite wins surely, in every form
    p_win, p_draw = forecast(params, [100.0, 0.0, 1.0, 2.0], [1.0] * 4, [0, 1, 2, 3, 4])
    assert p_win[0] == pytest.approx(1.0, abs=1e-12) and p_draw == pytest.approx(0.0, abs=1e-12)
    # equal teams share the chances
    p_win, p_draw = forecast(params, [25.0] * 6, [5.0] * 6, [0, 2, 4, 6])
    np.testing.assert_allclose(p_win, p_win[0], rtol=1e-12)
    assert 0.0 < p_draw < 1.0
    ranks = np.empty(5, dtype=np.int64)
    predicted_ranks(np.array([0.1, 0.4, 0.1, 0.3, 0.1]), ranks)
    assert ranks.tolist() == [3, 1, 3, 2, 3]
    assert ranks.dtype == np.int64
