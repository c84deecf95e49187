"""duckrate.systems.weng_lin against openskill 6.2.0 (a test-only dependency): random histories replayed
through both, match by match, for the five models and several option sets; forecasts before each match;
and edge cases (1v1, all teams tied, one-player teams with weights, extreme rating gaps, unsorted teams)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from duckrate.systems.weng_lin import (
    BRADLEY_TERRY_FULL,
    BRADLEY_TERRY_PART,
    MODEL_CODES,
    PLACKETT_LUCE,
    S_BALANCE,
    S_BETA,
    S_EPSILON,
    S_KAPPA,
    S_LIMIT_SIGMA,
    S_MARGIN,
    S_TAU,
    S_WEIGHT_HI,
    S_WEIGHT_LO,
    S_WINDOW_SIZE,
    THURSTONE_MOSTELLER_FULL,
    THURSTONE_MOSTELLER_PART,
    predict_match,
    predict_rank,
    rate_match,
    settings_array,
)
from duckrate.systems.weng_lin.common import (
    phi_major,
    phi_major_inverse,
    phi_minor,
    square,
    v,
    v_and_w,
    vt,
    vt_and_wt,
    w,
    wt,
)

openskill = pytest.importorskip("openskill")
from openskill.models import (  # noqa: E402
    BradleyTerryFull,
    BradleyTerryPart,
    PlackettLuce,
    ThurstoneMostellerFull,
    ThurstoneMostellerPart,
)
from openskill.models.weng_lin import common as openskill_common  # noqa: E402

TOLERANCE = 1e-9
MODELS = {
    PLACKETT_LUCE: PlackettLuce,
    BRADLEY_TERRY_FULL: BradleyTerryFull,
    BRADLEY_TERRY_PART: BradleyTerryPart,
    THURSTONE_MOSTELLER_FULL: ThurstoneMostellerFull,
    THURSTONE_MOSTELLER_PART: ThurstoneMostellerPart,
}
# openskill's keyword arguments; epsilon (Thurstone-Mosteller) and window_size (partial pairing) only go to
# the models that take them.
OPTION_SETS = {
    "defaults": {},
    "tau_limit_sigma": {"tau": 0.1, "limit_sigma": True},
    "balance": {"balance": True},
    "margin_scores": {"margin": 2.0},
    "raw_weights": {"weight_bounds": None},
    "custom": {"beta": 3.0, "kappa": 0.01, "tau": 0.02, "epsilon": 0.3, "window_size": 2},
}
RICH = {"tau": 0.05, "limit_sigma": True, "balance": True, "margin": 2.0, "weight_bounds": (0.5, 1.5)}


def openskill_model(code, options):
    kwargs = dict(options)
    if code not in (THURSTONE_MOSTELLER_FULL, THURSTONE_MOSTELLER_PART):
        kwargs.pop("epsilon", None)
    if code not in (BRADLEY_TERRY_PART, THURSTONE_MOSTELLER_PART):
        kwargs.pop("window_size", None)
    raw = "weight_bounds" in kwargs and kwargs["weight_bounds"] is None
    if raw:
        # openskill 6.2.0 is compiled with mypyc, whose constructor rejects weight_bounds=None (annotated
        # tuple[float, float]); the attribute itself is typed Optional and None works once set.
        del kwargs["weight_bounds"]
    model = MODELS[code](**kwargs)
    if raw:
        model.weight_bounds = None
    return model


def our_settings(options):
    keys = ("beta", "kappa", "tau", "limit_sigma", "balance", "margin", "weight_bounds", "epsilon", "window_size")
    return settings_array(**{key: options[key] for key in keys if key in options})


# --------------------------------------------------------------------------------------------------
# Random histories.


def random_match(rng, pool, *, score_share=0.35, weight_share=0.35, tie_share=0.25):
    """One match: teams (lists of pool indices) best first, dense ranks, scores (or None), weights (or None)."""
    n_teams = int(rng.integers(2, 9))
    sizes = rng.integers(1, 9, n_teams)
    drawn = rng.choice(pool, int(sizes.sum()), replace=False)
    teams = np.split(drawn, np.cumsum(sizes)[:-1])
    if rng.random() < 0.05:
        ranks = [1] * n_teams
    else:
        ranks = [1]
        for _ in range(n_teams - 1):
            ranks.append(ranks[-1] if rng.random() < tie_share else ranks[-1] + 1)
    scores = None
    if rng.random() < score_share:
        scores = [float(rng.integers(20, 40))]
        for k in range(1, n_teams):
            scores.append(scores[-1] if ranks[k] == ranks[k - 1] else scores[-1] - float(rng.integers(1, 8)))
    weights = None
    if rng.random() < weight_share:
        weights = []
        for team in teams:
            kind = rng.random()
            if kind < 0.15:
                weights.append([1.0] * len(team))
            elif kind < 0.3:
                weights.append([0.5] * len(team))
            else:
                weights.append([float(x) for x in rng.uniform(0.05, 1.0, len(team))])
    return [list(map(int, team)) for team in teams], ranks, scores, weights


def local_arrays(teams, ranks, scores, weights, mu, sigma):
    rows = [p for team in teams for p in team]
    bounds = np.zeros(len(teams) + 1, dtype=np.int64)
    bounds[1:] = np.cumsum([len(team) for team in teams])
    weight = np.ones(len(rows)) if weights is None else np.array([x for team in weights for x in team])
    score = np.zeros(len(teams)) if scores is None else np.array(scores, dtype=np.float64)
    return (
        np.array(rows, dtype=np.int64),
        mu[rows].copy(),
        sigma[rows].copy(),
        bounds,
        np.array(ranks, dtype=np.int64),
        score,
        weight,
    )


def replay(code, options, n_matches, seed, *, n_pool=80, weight_share=0.35, check_forecasts=True):
    """Two independent replays of one random history, ours and openskill's, compared after every match."""
    rng = np.random.default_rng(seed)
    model = openskill_model(code, options)
    settings = our_settings(options)
    pool = np.arange(n_pool)
    mu = np.full(n_pool, 25.0)
    sigma = np.full(n_pool, 25.0 / 3.0)
    their_mu = mu.copy()
    their_sigma = sigma.copy()
    worst = 0.0
    for _ in range(n_matches):
        teams, ranks, scores, weights = random_match(rng, pool, weight_share=weight_share)
        rows, m, s, bounds, rank, score, weight = local_arrays(teams, ranks, scores, weights, mu, sigma)
        theirs = [[model.rating(float(their_mu[p]), float(their_sigma[p])) for p in team] for team in teams]

        if check_forecasts:
            p_win = np.empty(len(teams))
            p_rank = np.empty(len(teams), dtype=np.int64)
            p_draw = predict_match(code, settings, m, s, bounds, p_win, p_rank)
            np.testing.assert_allclose(p_win, model.predict_win(theirs), rtol=0, atol=TOLERANCE)
            assert abs(p_draw - model.predict_draw(theirs)) <= TOLERANCE
            their_rank = model.predict_rank(theirs)
            assert p_rank.tolist() == [r for r, _ in their_rank]
            probability = np.empty(len(teams))
            predict_rank(settings, m, s, bounds, p_rank, probability)
            np.testing.assert_allclose(probability, [p for _, p in their_rank], rtol=0, atol=TOLERANCE)

        out_mu = np.empty_like(m)
        out_sigma = np.empty_like(s)
        rate_match(
            code,
            settings,
            m,
            s,
            bounds,
            rank,
            score,
            scores is not None,
            weight,
            weights is not None,
            out_mu,
            out_sigma,
        )
        mu[rows] = out_mu
        sigma[rows] = out_sigma
        if scores is not None:
            rated = model.rate(theirs, scores=scores, weights=weights)
        else:
            rated = model.rate(theirs, ranks=ranks, weights=weights)
        for team, new in zip(teams, rated):
            for p, rating in zip(team, new):
                their_mu[p] = rating.mu
                their_sigma[p] = rating.sigma
        diff = max(np.max(np.abs(mu - their_mu)), np.max(np.abs(sigma - their_sigma)))
        assert diff <= TOLERANCE, (diff, teams, ranks, scores, weights)
        worst = max(worst, diff)
    assert np.all(np.isfinite(mu)) and np.all(np.isfinite(sigma))
    return worst


# --------------------------------------------------------------------------------------------------
# Golden agreement.


@pytest.mark.parametrize("option_set", list(OPTION_SETS))
@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_random_history_matches_openskill(code, option_set):
    """300 matches of 2-8 teams of 1-8 players from a pool of 80: ties, scores, weights (see random_match)."""
    replay(code, OPTION_SETS[option_set], 300, seed=1000 + 10 * code + list(OPTION_SETS).index(option_set))


@pytest.mark.slow
@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_long_history_matches_openskill(code):
    replay(code, RICH, 10_000, seed=77 + code, n_pool=400, weight_share=0.4)


# --------------------------------------------------------------------------------------------------
# The interface.


def test_model_codes_and_settings_layout():
    assert MODEL_CODES == {
        "plackett_luce": 0,
        "bradley_terry_full": 1,
        "bradley_terry_part": 2,
        "thurstone_mosteller_full": 3,
        "thurstone_mosteller_part": 4,
    }
    settings = settings_array(3.0, 0.01, 0.2, True, True, 2.5, None)
    assert settings.dtype == np.float64
    assert (settings[S_BETA], settings[S_KAPPA], settings[S_TAU]) == (3.0, 0.01, 0.2)
    assert (settings[S_LIMIT_SIGMA], settings[S_BALANCE], settings[S_MARGIN]) == (1.0, 1.0, 2.5)
    assert math.isnan(settings[S_WEIGHT_LO]) and math.isnan(settings[S_WEIGHT_HI])
    assert (settings[S_EPSILON], settings[S_WINDOW_SIZE]) == (0.1, 4.0)
    bounded = settings_array(weight_bounds=(0.5, 3.0))
    assert (bounded[S_WEIGHT_LO], bounded[S_WEIGHT_HI]) == (0.5, 3.0)


def test_short_settings_array_uses_openskill_defaults_for_epsilon_and_window():
    long = settings_array()
    short = long[:8].copy()
    rng = np.random.default_rng(5)
    mu = rng.normal(25, 3, 7)
    sigma = rng.uniform(2, 8, 7)
    bounds = np.array([0, 1, 2, 3, 4, 5, 6, 7])
    rank = np.arange(1, 8)
    for code in MODELS:
        a = (np.empty(7), np.empty(7))
        b = (np.empty(7), np.empty(7))
        rate_match(code, long, mu, sigma, bounds, rank, np.zeros(7), False, np.ones(7), False, *a)
        rate_match(code, short, mu, sigma, bounds, rank, np.zeros(7), False, np.ones(7), False, *b)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_square_equals_the_c_library_pow_bit_for_bit():
    """square()'s fast path (the product when its error is far from half an ulp) returns what pow(x, 2)
    returns, on values where the product and pow differ too."""
    rng = np.random.default_rng(11)
    xs = np.concatenate(
        [
            rng.uniform(0.0, 30.0, 200_000),
            rng.normal(0.0, 1.0, 200_000),
            np.exp(rng.uniform(-330.0, 330.0, 100_000)),
            -rng.uniform(0.0, 10.0, 50_000),
        ]
    )
    differ = 0
    for x in xs.tolist():
        assert square(x) == x**2
        differ += x * x != x**2
    assert differ > 50  # the sample holds values where the rounded product is not pow's answer
    for x in (0.0, -0.0, 5e-324, 1e-160, 1e154, 1.3e154, 2.0**-511, 2.0**511, math.inf, -math.inf):
        assert square(x) == x**2
    assert math.isnan(square(math.nan))


def test_normal_helpers_equal_openskill_bit_for_bit():
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.normal(0, 4, 3000), rng.uniform(-40, 40, 3000)])
    ts = rng.uniform(0, 0.2, xs.size)
    for x, t in zip(xs.tolist(), ts.tolist()):
        assert phi_major(x) == openskill_common.phi_major(x)
        assert phi_minor(x) == openskill_common.phi_minor(x)
        assert v(x, t) == openskill_common.v(x, t)
        assert w(x, t) == openskill_common.w(x, t)
        assert vt(x, t) == openskill_common.vt(x, t)
        assert wt(x, t) == openskill_common.wt(x, t)
        # the kernels' one-pass forms give the same bits
        assert v_and_w(x, t) == (v(x, t), w(x, t))
        assert vt_and_wt(x, t) == (vt(x, t), wt(x, t))
    # the branches of the guards: tails where Φ or the draw interval vanish
    for x, t in ((-40.0, 0.1), (40.0, 0.1), (-9.0, 0.0), (9.0, 1e-9), (0.0, 0.0), (-38.0, 30.0)):
        assert v_and_w(x, t) == (v(x, t), w(x, t))
        assert vt_and_wt(x, t) == (vt(x, t), wt(x, t))
    ps = np.concatenate([rng.uniform(0, 1, 3000), 0.5 + rng.uniform(0, 0.5, 300) ** 8, rng.uniform(0, 1, 300) ** 30])
    for p in ps.tolist():
        if 0.0 < p < 1.0:
            assert phi_major_inverse(p) == openskill_common.phi_major_inverse(p)
    assert math.isnan(phi_major_inverse(0.0)) and math.isnan(phi_major_inverse(1.0))


# --------------------------------------------------------------------------------------------------
# Edge cases, each against openskill.


def rate_both(code, options, teams_mu, teams_sigma, *, ranks=None, scores=None, weights=None):
    """Rate one match given as nested lists with both implementations; returns (ours, theirs) as flat arrays."""
    model = openskill_model(code, options)
    settings = our_settings(options)
    mu = np.array([x for team in teams_mu for x in team], dtype=np.float64)
    sigma = np.array([x for team in teams_sigma for x in team], dtype=np.float64)
    bounds = np.zeros(len(teams_mu) + 1, dtype=np.int64)
    bounds[1:] = np.cumsum([len(team) for team in teams_mu])
    rank = np.array(ranks if ranks is not None else range(1, len(teams_mu) + 1), dtype=np.int64)
    score = np.array(scores if scores is not None else [0.0] * len(teams_mu), dtype=np.float64)
    weight = np.array([x for team in weights for x in team]) if weights is not None else np.ones(mu.size)
    out_mu = np.empty_like(mu)
    out_sigma = np.empty_like(sigma)
    rate_match(
        code,
        settings,
        mu,
        sigma,
        bounds,
        rank,
        score,
        scores is not None,
        weight,
        weights is not None,
        out_mu,
        out_sigma,
    )
    theirs = [[model.rating(m, s) for m, s in zip(tm, ts)] for tm, ts in zip(teams_mu, teams_sigma)]
    if scores is not None:
        rated = model.rate(theirs, scores=scores, weights=weights)
    else:
        rated = model.rate(theirs, ranks=list(rank.tolist()), weights=weights)
    their_mu = np.array([p.mu for team in rated for p in team])
    their_sigma = np.array([p.sigma for team in rated for p in team])
    return (out_mu, out_sigma), (their_mu, their_sigma)


def assert_agree(ours, theirs):
    np.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_one_versus_one(code):
    ours, theirs = rate_both(code, {}, [[25.0], [25.0]], [[25 / 3], [25 / 3]])
    assert_agree(ours, theirs)
    assert ours[0][0] > 25.0 > ours[0][1]
    ours, theirs = rate_both(code, {}, [[20.0], [31.0]], [[6.0], [2.0]], ranks=[1, 1])
    assert_agree(ours, theirs)


@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_all_teams_tied(code):
    mu = [[25.0, 28.0], [22.0], [30.0, 19.0, 24.0]]
    sigma = [[8.0, 3.0], [5.0], [2.0, 7.0, 4.0]]
    assert_agree(*rate_both(code, {}, mu, sigma, ranks=[1, 1, 1]))
    assert_agree(*rate_both(code, {"margin": 1.0}, mu, sigma, scores=[4.0, 4.0, 4.0]))


@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
@pytest.mark.parametrize("bounds", [(1.0, 2.0), None], ids=["bounded", "raw"])
def test_one_player_teams_with_weights(code, bounds):
    options = {"weight_bounds": bounds}
    mu = [[25.0], [27.0], [21.0]]
    sigma = [[8.0], [4.0], [6.0]]
    assert_agree(*rate_both(code, options, mu, sigma, ranks=[1, 2, 3], weights=[[0.3], [1.0], [0.7]]))
    assert_agree(*rate_both(code, options, mu, sigma, ranks=[1, 2, 2], weights=[[0.3], [0.3], [0.3]]))


@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_extreme_rating_gaps_stay_finite(code):
    sigma = 25.0 / 3.0
    for ranks in ([1, 2], [1, 1]):
        for top, bottom in ((25.0 + 100 * sigma, 25.0), (25.0, 25.0 + 100 * sigma)):
            ours, theirs = rate_both(code, {}, [[top], [bottom]], [[sigma], [sigma]], ranks=ranks)
            assert np.all(np.isfinite(ours[0])) and np.all(np.isfinite(ours[1]))
            assert np.all(ours[1] > 0)
            assert_agree(ours, theirs)
    # several teams, thin uncertainty, gaps of a hundred sigma
    mu = [[0.0], [100.0], [-100.0], [5.0, 5.0]]
    thin = [[1.0], [1.0], [1.0], [1.0, 1.0]]
    ours, theirs = rate_both(code, {}, mu, thin, ranks=[1, 2, 3, 4])
    assert np.all(np.isfinite(ours[0])) and np.all(np.isfinite(ours[1]))
    assert_agree(ours, theirs)
    settings = settings_array()
    p_win = np.empty(4)
    p_rank = np.empty(4, dtype=np.int64)
    m = np.array([x for team in mu for x in team])
    s = np.array([x for team in thin for x in team])
    p_draw = predict_match(code, settings, m, s, np.array([0, 1, 2, 3, 5]), p_win, p_rank)
    assert np.all(np.isfinite(p_win)) and math.isfinite(p_draw)
    assert p_rank.tolist() == [3, 1, 4, 2]


@pytest.mark.parametrize("code", list(MODELS), ids=[name for name in MODEL_CODES])
def test_teams_out_of_rank_order_are_sorted_and_unwound(code):
    mu = [[25.0, 28.0], [22.0], [30.0, 19.0], [26.0]]
    sigma = [[8.0, 3.0], [5.0], [2.0, 7.0], [6.0]]
    options = {"margin": 1.0}
    assert_agree(
        *rate_both(code, options, mu, sigma, ranks=[3, 1, 2, 1], weights=[[0.2, 0.9], [1.0], [0.5, 0.4], [1.0]])
    )
    assert_agree(*rate_both(code, options, mu, sigma, scores=[3.0, 10.0, 1.0, 10.0]))


def test_predict_rank_probabilities_and_ties():
    """predict_rank's probabilities are predict_win's for three teams or more (the same formula) and equal
    them up to rounding for two; equal teams share a rank and the next rank skips, as openskill's."""
    settings = settings_array()
    model = PlackettLuce()
    ranks = []
    cases = [
        ([[25.0], [30.0]], [[8.0], [2.0]]),
        ([[25.0, 20.0], [31.0], [25.0, 20.0]], [[3.0, 4.0], [5.0], [3.0, 4.0]]),
        ([[25.0], [25.0], [25.0], [25.0]], [[25 / 3]] * 4),
    ]
    for teams_mu, teams_sigma in cases:
        mu = np.array([x for team in teams_mu for x in team])
        sigma = np.array([x for team in teams_sigma for x in team])
        bounds = np.zeros(len(teams_mu) + 1, dtype=np.int64)
        bounds[1:] = np.cumsum([len(team) for team in teams_mu])
        n = len(teams_mu)
        p_win = np.empty(n)
        rank = np.empty(n, dtype=np.int64)
        predict_match(PLACKETT_LUCE, settings, mu, sigma, bounds, p_win, rank)
        probability = np.empty(n)
        predict_rank(settings, mu, sigma, bounds, np.empty(n, dtype=np.int64), probability)
        if n > 2:
            assert np.array_equal(probability, p_win)
        else:
            np.testing.assert_allclose(probability, p_win, rtol=0, atol=1e-15)
        theirs = [[model.rating(m, s) for m, s in zip(tm, ts)] for tm, ts in zip(teams_mu, teams_sigma)]
        assert rank.tolist() == [r for r, _ in model.predict_rank(theirs)]
        ranks.append(rank.tolist())
    assert ranks[1:] == [[1, 3, 1], [1, 1, 1, 1]]
