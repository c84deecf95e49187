"""duckrate's two-player TrueSkill: check values worked out by hand from Herbrich et al.'s update, the ``trueskill`` package (scipy
backend) replayed match by match, a naive math.erf reference for the forecast, 100-digit golden values of
the v/w functions at extreme t, invariants, input validation and pinned defaults."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import polars as pl
import pytest
import trueskill as trueskill_package  # test-only peer (extra "test"): a missing package fails, never skips
from helpers import replay_cases
from helpers.replay_cases import (
    CONTRACT_COLUMNS,
    assert_after_state_is_carried_into_the_next_match,
    assert_leagues_are_independent,
    assert_mirrors,
    assert_null_weight_means_one,
    assert_period_column_is_ignored,
    assert_relabelling_changes_nothing,
    assert_row_order_and_repeats_give_identical_output,
    assert_seq_is_one_based_and_contiguous_per_league,
    histories,
    load_data,
    match_id_column,
    name_permutations,
    one_match,
    played_at_column,
    prior_values,
    priors_frame,
    property_settings,
    python_defaults,
    small_frame,
    swap_sides,
)
from helpers.scipy_normal import SCIPY_NORM
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from duckrate import DuckrateInputError
from duckrate.systems.saved_state import RebuildRequired
from duckrate.systems.trueskill import (
    TRUESKILL,
    draw_margin,
    interval_moments,
    match_quality,
    outcome_probabilities,
    trueskill,
    upper_moments,
    v_draw,
    v_win,
    w_draw,
    w_win,
)
from duckrate.systems.two_player import replay_with_state

STATE_COLUMNS = CONTRACT_COLUMNS[8:]  # rating_{a,b}_before, sd_{a,b}_before, then the same _after
DEFAULTS = {"mu": 25.0, "sigma": 25.0 / 3.0, "beta": 25.0 / 6.0, "tau": 25.0 / 300.0, "draw_probability": 0.10}
MATCH_SCHEMA = {name: kind for name, kind in replay_cases.MATCH_SCHEMA.items() if name != "weight"}
PRIOR_SCHEMA = {"player": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64, "league": pl.Utf8}
PROPERTY_SETTINGS = property_settings(60)
GOLDEN = load_data("trueskill_golden.json")


def head_to_head(mu_a, sigma_a, mu_b, sigma_b, score, **params):
    """One game between two players with the given starting states (through priors)."""
    priors = pl.DataFrame({"player": ["A", "B"], "rating": [mu_a, mu_b], "sd": [sigma_a, sigma_b]})
    return trueskill(one_match(score), priors=priors, **params).row(0, named=True)


# --------------------------------------------------------------------------------------------------
# Check values (worked by hand from the paper's update, default environment).


def test_check_value_win():
    row = trueskill(one_match(1.0)).row(0, named=True)
    assert (round(row["rating_a_after"], 3), round(row["sd_a_after"], 3)) == (29.396, 7.171)
    assert (round(row["rating_b_after"], 3), round(row["sd_b_after"], 3)) == (20.604, 7.171)
    assert row["rating_a_before"] == row["rating_b_before"] == 25.0
    assert row["sd_a_before"] == row["sd_b_before"] == 25.0 / 3.0
    assert row["expected_a"] == pytest.approx(0.5, abs=1e-15)
    assert row["seq"] == 1 and row["league"] is None


def test_check_value_loss_mirrors_win():
    win = trueskill(one_match(1.0)).row(0, named=True)
    loss = trueskill(one_match(0.0)).row(0, named=True)
    assert (loss["rating_a_after"], loss["sd_a_after"]) == (win["rating_b_after"], win["sd_b_after"])
    assert (loss["rating_b_after"], loss["sd_b_after"]) == (win["rating_a_after"], win["sd_a_after"])


def test_check_value_draw():
    row = trueskill(one_match(0.5)).row(0, named=True)
    for side in "ab":
        assert (round(row[f"rating_{side}_after"], 3), round(row[f"sd_{side}_after"], 3)) == (25.000, 6.458)
    assert row["rating_a_after"] == row["rating_b_after"] == 25.0  # equal players: no shift at all


def test_check_value_win_with_draw_probability_half():
    row = trueskill(one_match(1.0), draw_probability=0.5).row(0, named=True)
    assert (round(row["rating_a_after"], 3), round(row["sd_a_after"], 3)) == (30.267, 7.077)
    assert (round(row["rating_b_after"], 3), round(row["sd_b_after"], 3)) == (19.733, 7.077)


def test_check_value_quality():
    assert round(match_quality(), 3) == 0.447
    assert match_quality() == pytest.approx(math.sqrt(0.2), abs=1e-15)  # 2β² / (2β² + 2σ²) = 1/5
    qualities = match_quality(np.array([25.0, 30.0]), np.array([25 / 3, 2.0]), 25.0, np.array([25 / 3, 3.0]))
    assert qualities.shape == (2,) and qualities[0] == pytest.approx(math.sqrt(0.2), abs=1e-15)
    assert match_quality(40.0, 1.0, 10.0, 1.0) < 0.01  # a lopsided pairing is a poor match


def test_draw_margin():
    # ε = Φ⁻¹((p + 1)/2) · sqrt(2) · β
    assert draw_margin(0.10, 25 / 6) == pytest.approx(NormalDist().inv_cdf(0.55) * math.sqrt(2) * 25 / 6, rel=1e-14)
    assert draw_margin(0.0, 25 / 6) == 0.0
    assert math.isfinite(draw_margin(1 - 2**-53, 25 / 6))


# --------------------------------------------------------------------------------------------------
# Random histories: the `trueskill` package and a naive reference, replayed match by match.


def random_history(
    seed, n=400, n_players=30, id_kind="int", time_kind="int", leagues=("chess", "go", None), draw_share=0.2
):
    """Wins, draws (``draw_share`` of the games) and losses only, no weights: TrueSkill's own draws, not
    replay_cases.random_history's (fractional scores and weights, which TrueSkill rejects)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    t = rng.integers(0, max(n // 4, 1), n)  # many ties in played_at
    score = rng.choice([0.0, 0.5, 1.0], n, p=[(1 - draw_share) / 2, draw_share, (1 - draw_share) / 2])
    ids = rng.permutation(n * 3)[:n]
    played_at, time_type = played_at_column(t, time_kind)  # 'int' or 'datetime' (a minute a step)
    match_id, id_type = match_id_column(ids, n, id_kind)  # 'str': lexicographic tie-breaking
    frame = pl.DataFrame(
        {
            "match_id": match_id,
            "played_at": played_at,
            "player_a": [f"p{x}" for x in a],
            "player_b": [f"p{x}" for x in b],
            "score_a": score.tolist(),
            "league": [leagues[i] for i in rng.integers(0, len(leagues), n)],
        },
        schema={**MATCH_SCHEMA, "match_id": id_type, "played_at": time_type},
    )
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


# League-specific rows give their own sd (or the player has no league-less sd), so a field never falls
# back from a league row to a league-less row; absent players and leagues are ignored.
RANDOM_PRIORS = pl.DataFrame(
    {
        "player": ["p0", "p1", "p1", "p2", "p3", "nobody", "p4", "p5"],
        "rating": [32.0, 20.0, 28.5, 35.0, 12.0, 50.0, 40.0, 25.0],
        "sd": [3.0, None, 5.0, 1.5, 0.5, 1.0, 2.0, 20.0],
        "league": [None, None, "chess", "go", None, None, "not-a-league", None],
    },
    schema=PRIOR_SCHEMA,
)


def starting_states(frame, priors, mu, sigma):
    """(league, player) -> [mu, sigma]: a league's own prior row wins; NULL sd means the default."""
    general, specific = {}, {}
    for prior in priors.to_dicts() if priors is not None else []:
        state = [prior["rating"], sigma if prior.get("sd") is None else prior["sd"]]
        (general if prior.get("league") is None else specific)[(prior.get("league"), prior["player"])] = state
    states = {}
    for r in frame.to_dicts():
        for player in (r["player_a"], r["player_b"]):
            key = (r.get("league"), player)
            states.setdefault(key, list(specific.get(key, general.get((None, player), [mu, sigma]))))
    return states


def replay_with_package(frame, priors=None, **params):
    """match_id -> the eight state values, from trueskill.rate_1vs1 in (played_at, match_id) order."""
    ts = trueskill_package

    p = {**DEFAULTS, **params}
    env = ts.TrueSkill(
        mu=p["mu"],
        sigma=p["sigma"],
        beta=p["beta"],
        tau=p["tau"],
        draw_probability=p["draw_probability"],
        backend=SCIPY_NORM,
    )
    states = {
        key: env.create_rating(*state) for key, state in starting_states(frame, priors, p["mu"], p["sigma"]).items()
    }
    result = {}
    for r in sorted(frame.to_dicts(), key=lambda r: (r["played_at"], r["match_id"])):
        key_a, key_b = (r.get("league"), r["player_a"]), (r.get("league"), r["player_b"])
        a, b = states[key_a], states[key_b]
        if r["score_a"] == 1.0:
            new_a, new_b = ts.rate_1vs1(a, b, env=env)
        elif r["score_a"] == 0.0:
            new_b, new_a = ts.rate_1vs1(b, a, env=env)
        else:
            new_a, new_b = ts.rate_1vs1(a, b, drawn=True, env=env)
        states[key_a], states[key_b] = new_a, new_b
        result[r["match_id"]] = dict(
            zip(STATE_COLUMNS, (a.mu, b.mu, a.sigma, b.sigma, new_a.mu, new_b.mu, new_a.sigma, new_b.sigma))
        )
    return result


def _cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _pdf(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def reference_trueskill(frame, priors=None, **params):
    """match_id -> every computed column, by the textbook formulas (Herbrich et al. 2006, two players)."""
    p = {**DEFAULTS, **params}
    beta, tau = p["beta"], p["tau"]
    epsilon = NormalDist().inv_cdf((p["draw_probability"] + 1) / 2) * math.sqrt(2) * beta
    states = starting_states(frame, priors, p["mu"], p["sigma"])
    played, result = {}, {}
    for r in sorted(frame.to_dicts(), key=lambda r: (r["played_at"], r["match_id"])):
        league = r.get("league")
        (mu_a, sigma_a), (mu_b, sigma_b) = states[(league, r["player_a"])], states[(league, r["player_b"])]
        var_a, var_b = sigma_a**2 + tau**2, sigma_b**2 + tau**2
        c = math.sqrt(2 * beta**2 + var_a + var_b)
        t, h = (mu_a - mu_b) / c, epsilon / c
        p_win = _cdf(t - h)
        p_draw = _cdf(h - t) - _cdf(-h - t)
        if r["score_a"] != 0.5:
            sign = 1.0 if r["score_a"] == 1.0 else -1.0
            x = sign * t - h
            v = _pdf(x) / _cdf(x)
            w = v * (v + x)
            v *= sign
        elif h == 0:
            v, w = -t, 1.0
        else:
            a, b = h - abs(t), -h - abs(t)
            mass = _cdf(a) - _cdf(b)
            v = (_pdf(b) - _pdf(a)) / mass * (-1.0 if t < 0 else 1.0)
            w = v * v + (a * _pdf(a) - b * _pdf(b)) / mass
        new_a = (mu_a + var_a / c * v, math.sqrt(var_a * (1 - var_a / c**2 * w)))
        new_b = (mu_b - var_b / c * v, math.sqrt(var_b * (1 - var_b / c**2 * w)))
        states[(league, r["player_a"])], states[(league, r["player_b"])] = new_a, new_b
        played[league] = played.get(league, 0) + 1
        result[r["match_id"]] = {
            "league": league,
            "seq": played[league],
            "expected_a": p_win + 0.5 * p_draw,
            **dict(zip(STATE_COLUMNS, (mu_a, mu_b, sigma_a, sigma_b, *new_a[:1], *new_b[:1], new_a[1], new_b[1]))),
        }
    return result


def max_error(out, reference, columns):
    """Largest |got - want| / max(1, |want|) over the columns (absolute near 0, relative for large μ)."""
    worst = 0.0
    for row in out.iter_rows(named=True):
        want = reference[row["match_id"]]
        for column in columns:
            worst = max(worst, abs(row[column] - want[column]) / max(1.0, abs(want[column])))
    return worst


PARAMETER_SETS = {
    "defaults": {},
    "custom": {"mu": 10.0, "sigma": 3.0, "beta": 2.0, "tau": 0.5, "draw_probability": 0.3},
    "no_dynamics_rare_draws": {"tau": 0.0, "draw_probability": 0.01},
    "wide": {"mu": 1500.0, "sigma": 350.0, "beta": 200.0, "tau": 5.0, "draw_probability": 0.6},
}

# Tolerances, as max |got - want| / max(1, |want|) over every value of a 400-500 match history. The package
# works in natural parameters (π = 1/σ², τ = μ/σ²) through a factor graph and duckrate in (μ, σ) with
# closed forms and tail-stable v, w, so the two differ by rounding, compounded over each player's ~30-40
# games. Largest differences observed over the histories below: 3.5e-14 against the package (rare draws:
# its cdf difference over a narrow draw interval loses digits) and 4.7e-14 against the naive reference
# (wide parameters with priors). 2e-13 keeps a 4-6x margin for other platforms' libm and is still far
# below any real mistake (a wrong τ, ε or variance factor moves values by 1e-4 or more).
PACKAGE_TOLERANCE = 2e-13
REFERENCE_TOLERANCE = 2e-13


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize(("seed", "id_kind", "time_kind"), [(0, "int", "int"), (1, "str", "datetime")])
def test_matches_trueskill_package(seed, id_kind, time_kind, params):
    frame = random_history(seed, id_kind=id_kind, time_kind=time_kind)
    out = trueskill(frame, **params)
    assert out.columns == CONTRACT_COLUMNS and out.height == frame.height
    assert max_error(out, replay_with_package(frame, **params), STATE_COLUMNS) <= PACKAGE_TOLERANCE


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
def test_matches_trueskill_package_with_priors(params):
    frame = random_history(7, n=500)
    priors = RANDOM_PRIORS.with_columns(pl.col("rating") * (params.get("mu", 25.0) / 25.0))
    out = trueskill(frame, priors=priors, **params)
    assert max_error(out, replay_with_package(frame, priors=priors, **params), STATE_COLUMNS) <= PACKAGE_TOLERANCE
    first = first_states(out)
    assert first[("go", "p2")] == (priors["rating"][3], 1.5)  # a league's own prior
    assert first[("chess", "p1")] == (priors["rating"][2], 5.0)
    assert first[("go", "p1")] == (priors["rating"][1], DEFAULTS["sigma"] if "sigma" not in params else params["sigma"])


def first_states(out):
    """(league, player) -> (μ, σ) before the player's first match in that league."""
    first = {}
    for row in out.sort("league", "seq", nulls_last=True).iter_rows(named=True):
        for side in "ab":
            first.setdefault(
                (row["league"], row[f"player_{side}"]), (row[f"rating_{side}_before"], row[f"sd_{side}_before"])
            )
    return first


@pytest.mark.parametrize("params", PARAMETER_SETS.values(), ids=PARAMETER_SETS.keys())
@pytest.mark.parametrize("with_priors", [False, True])
def test_matches_naive_reference(params, with_priors):
    frame = random_history(3)
    priors = RANDOM_PRIORS if with_priors else None
    out = trueskill(frame, priors=priors, **params)
    reference = reference_trueskill(frame, priors=priors, **params)
    assert max_error(out, reference, ["expected_a", *STATE_COLUMNS]) <= REFERENCE_TOLERANCE
    by_id = {r["match_id"]: r for r in frame.to_dicts()}
    for row in out.iter_rows(named=True):
        assert (row["league"], row["seq"]) == (reference[row["match_id"]]["league"], reference[row["match_id"]]["seq"])
        assert all(row[c] == by_id[row["match_id"]][c] for c in ("played_at", "player_a", "player_b", "score_a"))


def test_no_draw_margin_matches_reference():
    """draw_probability = 0: wins use ε = 0 and draws the limit v = -t, w = 1 (the package cannot rate these)."""
    frame = random_history(4, draw_share=0.3)
    out = trueskill(frame, draw_probability=0.0, priors=RANDOM_PRIORS)
    assert (
        max_error(
            out, reference_trueskill(frame, priors=RANDOM_PRIORS, draw_probability=0.0), ["expected_a", *STATE_COLUMNS]
        )
        <= REFERENCE_TOLERANCE
    )


def test_draw_without_margin_by_hand():
    row = head_to_head(30.0, 2.0, 20.0, 3.0, 0.5, draw_probability=0.0, tau=0.0)
    c = math.sqrt(2 * (25 / 6) ** 2 + 4.0 + 9.0)
    t = 10.0 / c
    assert row["expected_a"] == pytest.approx(_cdf(t), abs=1e-15)  # no draws: P(A wins)
    assert row["rating_a_after"] == pytest.approx(30.0 - 4.0 / c * t, abs=1e-13)
    assert row["rating_b_after"] == pytest.approx(20.0 + 9.0 / c * t, abs=1e-13)
    assert row["sd_a_after"] == pytest.approx(math.sqrt(4.0 * (1 - 4.0 / c**2)), abs=1e-14)
    assert row["sd_b_after"] == pytest.approx(math.sqrt(9.0 * (1 - 9.0 / c**2)), abs=1e-14)


def test_seq_is_one_based_and_contiguous_per_league():
    assert_seq_is_one_based_and_contiguous_per_league(trueskill(random_history(2)))


def test_after_state_is_carried_into_the_next_match():
    out = trueskill(random_history(5), priors=RANDOM_PRIORS)
    assert_after_state_is_carried_into_the_next_match(out)


def test_leagues_are_independent():
    assert_leagues_are_independent(trueskill, random_history(8))


def test_weight_column_of_nulls_and_ones_is_accepted():
    frame = random_history(6)
    assert_null_weight_means_one(trueskill, frame)
    some_null = frame.with_columns(weight=pl.when(pl.col("match_id").hash() % 3 == 0).then(None).otherwise(1.0))
    assert_frame_equal(trueskill(some_null), trueskill(frame), check_exact=True)


def test_period_column_is_ignored():
    assert_period_column_is_ignored(trueskill, random_history(4))


# --------------------------------------------------------------------------------------------------
# The v and w functions against 100-digit values, including extreme t.


def _close(got, want, relative, absolute=1e-300):
    return abs(got - want) <= max(relative * abs(want), absolute)


def test_golden_upper_moments():
    tol = GOLDEN["tolerance"]
    for alpha, mean, var, w in GOLDEN["upper"]:
        got_mean, got_var = upper_moments(alpha)
        assert _close(got_mean, mean, tol["mean_relative"]), (alpha, got_mean, mean)
        assert abs(got_var - var) <= tol["var_absolute"], (alpha, got_var, var)
        if var >= 1e-250:
            assert _close(got_var, var, tol["var_relative"]), (alpha, got_var, var)
        # the paper's functions at t = -alpha, ε = 0
        assert v_win(-alpha, 0.0) == got_mean
        assert _close(w_win(-alpha, 0.0), w, tol["w_relative"]), (alpha, w_win(-alpha, 0.0), w)


def test_golden_interval_moments():
    tol = GOLDEN["tolerance"]
    for s, h, mean, var in GOLDEN["interval"]:
        got_mean, got_var = interval_moments(s, h)
        assert _close(got_mean, mean, tol["mean_relative"]), (s, h, got_mean, mean)
        assert abs(got_var - var) <= tol["var_absolute"], (s, h, got_var, var)
        if var >= 1e-250:
            assert _close(got_var, var, tol["var_relative"]), (s, h, got_var, var)
        # a draw with A ahead by t = s: A's mean moves down by the conditional mean
        assert v_draw(s, h) == (-got_mean if s > 0 else got_mean) and v_draw(-s, h) == got_mean
        assert w_draw(s, h) == w_draw(-s, h) == 1.0 - got_var


def test_golden_outcome_probabilities():
    tol = GOLDEN["tolerance"]["probability_relative"]
    for t, h, win, draw, loss in GOLDEN["probabilities"]:
        got = outcome_probabilities(t, h)
        for g, want in zip(got, (win, draw, loss)):
            assert _close(g, want, tol), (t, h, got, (win, draw, loss))


def test_v_w_match_the_trueskill_package_functions():
    """Where the package's direct formulas are accurate (|t| <= 6), the functions agree with them."""
    env = trueskill_package.TrueSkill(backend=SCIPY_NORM)
    for t in np.linspace(-6.0, 6.0, 121):
        for e in (1e-3, 0.0563, 0.5, 2.0):
            assert v_win(t, e) == pytest.approx(env.v_win(t, e), rel=1e-11, abs=1e-300)
            assert w_win(t, e) == pytest.approx(env.w_win(t, e), rel=1e-9)
            assert v_draw(t, e) == pytest.approx(env.v_draw(t, e), rel=1e-9, abs=1e-12)
            assert w_draw(t, e) == pytest.approx(env.w_draw(t, e), rel=1e-9)


@pytest.mark.parametrize("t", [-1e8, -1e3, -40.0, -38.5, -5.0, 0.0, 5.0, 38.5, 40.0, 1e3, 1e8])
@pytest.mark.parametrize("e", [0.0, 1e-9, 0.056, 0.5, 4.0])
def test_v_w_extreme_t(t, e):
    for v, w in ((v_win(t, e), w_win(t, e)), (v_draw(t, e), w_draw(t, e))):
        assert math.isfinite(v) and math.isfinite(w)
        assert 0.0 <= w <= 1.0
    assert v_win(t, e) >= max(0.0, e - t) * (1 - 1e-15)  # E[Z | Z > ε - t] >= max(ε - t, 0)
    # W_win ≈ (t - ε) φ(t - ε) for large t - ε: positive wherever that is representable (t - ε < 37.5);
    # beyond, it underflows to 0 (and 1 - W, all the σ update uses, is exactly 1 either way).
    assert w_win(t, e) > 0.0 or t - e > 37.0
    assert w_draw(t, e) > 0.0
    if e == 0.0:
        assert (v_draw(t, e), w_draw(t, e)) == (-t, 1.0)  # the ε -> 0 limit
    else:
        assert (v_draw(t, e) < 0) == (t > 0)  # a draw pulls the favourite down, the underdog up


def test_extreme_t_win_and_draw_limits():
    """Far tails: an upset win at α = ε - t >> 0 moves the mean to ~α with variance ~1/α²."""
    mean, var = upper_moments(40.0)
    assert mean == pytest.approx(40.0 + 1 / 40 - 2 / 40**3 + 10 / 40**5 - 74 / 40**7, rel=1e-13)
    assert var == pytest.approx(1 / 40**2 - 6 / 40**4 + 50 / 40**6 - 518 / 40**8, rel=1e-9)
    assert v_win(-40.0, 0.0) == mean and w_win(-40.0, 0.0) == 1.0 - var
    mean, var = upper_moments(-40.0)  # an expected win: nothing moves
    assert 0.0 <= mean < 1e-300 and var == 1.0
    mean, var = interval_moments(40.0, 0.5)  # a draw 40 c apart: near the interval's inner end
    assert 39.5 < mean < 39.5 + 1 / 39.5 and 0.0 < var < 1 / 39.5**2


# --------------------------------------------------------------------------------------------------
# Hypothesis properties.


def trueskill_histories():
    """TrueSkill rates wins, draws and losses only, without weights."""
    return histories(fractional_scores=False, weights=False)


trueskill_params = st.fixed_dictionaries(
    {
        "mu": st.sampled_from([25.0, 0.0, 1500.0]),
        "sigma": st.floats(0.01, 500.0),
        "beta": st.floats(0.01, 200.0),
        "tau": st.one_of(st.just(0.0), st.floats(0.0, 50.0)),
        "draw_probability": st.one_of(st.just(0.0), st.floats(0.0, 0.95)),
    }
)
prior_states = prior_values(st.tuples(st.floats(-100.0, 100.0), st.one_of(st.none(), st.floats(0.01, 50.0))))


@PROPERTY_SETTINGS
@given(trueskill_histories(), trueskill_params, prior_states)
def test_property_sd_never_grows_past_dynamics(history, params, states):
    out = trueskill(history, priors=priors_frame(states, history, PRIOR_SCHEMA), **params)
    tau = params["tau"]
    for side in "ab":
        before, after = out[f"sd_{side}_before"].to_numpy(), out[f"sd_{side}_after"].to_numpy()
        assert (after <= np.sqrt(before * before + tau * tau)).all()
        assert (after > 0).all()
    values = out.select(["expected_a", *STATE_COLUMNS]).to_numpy()
    assert np.isfinite(values).all()
    assert ((out["expected_a"] >= 0) & (out["expected_a"] <= 1)).all()


@PROPERTY_SETTINGS
@given(trueskill_histories(), trueskill_params, prior_states)
def test_property_swapping_sides_mirrors(history, params, states):
    priors = priors_frame(states, history, PRIOR_SCHEMA)
    out = trueskill(history, priors=priors, **params)
    mirror = trueskill(swap_sides(history), priors=priors, **params)
    # the update is symmetric in the two sides bit for bit (atol=None)
    assert_mirrors(out, mirror, kinds=("rating", "sd"), atol=None, expected_atol=1e-14)


@PROPERTY_SETTINGS
@given(
    st.floats(-1e4, 1e4),
    st.floats(-1e4, 1e4),
    st.floats(0.01, 1e3),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.fixed_dictionaries(
        {"beta": st.floats(0.01, 100.0), "tau": st.floats(0.0, 10.0), "draw_probability": st.floats(0.0, 0.95)}
    ),
)
def test_property_equal_sigma_game_keeps_mean_sum(mu_a, mu_b, sigma, score, params):
    row = head_to_head(mu_a, sigma, mu_b, sigma, score, **params)
    before = row["rating_a_before"] + row["rating_b_before"]
    after = row["rating_a_after"] + row["rating_b_after"]
    step = abs(row["rating_a_after"] - row["rating_a_before"])
    assert abs(after - before) <= 4e-16 * (abs(mu_a) + abs(mu_b) + 2 * step) + 1e-300
    assert row["sd_a_after"] == row["sd_b_after"]


@PROPERTY_SETTINGS
@given(trueskill_histories(), trueskill_params, prior_states, name_permutations)
def test_property_relabelling_players_changes_nothing(history, params, states, permutation):
    priors = priors_frame(states, history, PRIOR_SCHEMA)
    assert_relabelling_changes_nothing(trueskill, history, priors, permutation, **params)


@PROPERTY_SETTINGS
@given(trueskill_histories(), trueskill_params, prior_states, st.integers(0, 2**32 - 1))
def test_property_row_order_and_repeats_give_identical_output(history, params, states, seed):
    priors = priors_frame(states, history, PRIOR_SCHEMA)
    assert_row_order_and_repeats_give_identical_output(trueskill, history, seed, priors=priors, **params)


@PROPERTY_SETTINGS
@given(
    st.floats(-1e6, 1e6),
    st.floats(-1e6, 1e6),
    st.floats(1e-3, 1e3),
    st.floats(1e-3, 1e3),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.fixed_dictionaries(
        {
            "beta": st.floats(1e-3, 100.0),
            "tau": st.floats(0.0, 10.0),
            "draw_probability": st.one_of(st.just(0.0), st.floats(0.0, 0.99)),
        }
    ),
)
def test_property_extreme_rating_gaps_stay_finite(mu_a, mu_b, sigma_a, sigma_b, score, params):
    row = head_to_head(mu_a, sigma_a, mu_b, sigma_b, score, **params)
    assert all(math.isfinite(row[c]) for c in ["expected_a", *STATE_COLUMNS])
    assert 0.0 <= row["expected_a"] <= 1.0
    assert row["sd_a_after"] > 0 and row["sd_b_after"] > 0
    # the winner never loses rating, the loser never gains
    if score == 1.0:
        assert row["rating_a_after"] >= row["rating_a_before"] and row["rating_b_after"] <= row["rating_b_before"]
    elif score == 0.0:
        assert row["rating_a_after"] <= row["rating_a_before"] and row["rating_b_after"] >= row["rating_b_before"]


def test_huge_upset_is_finite_and_large():
    row = head_to_head(0.0, 1.0, 1e6, 1.0, 1.0)  # A, a million μ behind, wins
    var = 1.0 + (25 / 300) ** 2
    c = math.sqrt(2 * (25 / 6) ** 2 + 2 * var)
    alpha = draw_margin(0.1, 25 / 6) / c + 1e6 / c  # α = h - t
    shift = var / c * (alpha + 1 / alpha - 2 / alpha**3)  # V_win ≈ α + 1/α for large α
    assert row["expected_a"] == 0.0
    assert row["rating_a_after"] == pytest.approx(shift, rel=1e-12)
    assert row["rating_b_after"] == pytest.approx(1e6 - shift, rel=1e-12)
    assert row["sd_a_after"] == pytest.approx(math.sqrt(var * (1 - var / c**2 * (1 - 1 / alpha**2))), rel=1e-9)
    expected = head_to_head(1e6, 1.0, 0.0, 1.0, 1.0)  # the favourite wins: nothing to learn
    assert row["expected_a"] == 0.0 and expected["expected_a"] == 1.0
    assert (expected["rating_a_after"], expected["sd_a_after"]) == (1e6, math.sqrt(var))


# --------------------------------------------------------------------------------------------------
# Input validation.


def with_value(column, value):
    return replay_cases.with_value(replay_cases.base_rows(), column, value)


@pytest.mark.parametrize("value", [0.25, 0.75, 0.999, 1e-9])
def test_fractional_score_is_rejected(value):
    with pytest.raises(DuckrateInputError) as error:
        trueskill(with_value("score_a", value))
    message = str(error.value)
    assert "'score_a'" in message and "match_id=7" in message and f"has {value!r} at" in message
    assert "TrueSkill rates wins, draws and losses only; expected 0, 0.5 or 1" in message


def test_fractional_score_with_string_match_id():
    frame = with_value("score_a", 0.3).with_columns(match_id=pl.Series(["x", "y", "z"]))
    with pytest.raises(DuckrateInputError, match=r"match_id='y'"):
        trueskill(frame)


@pytest.mark.parametrize("value", [2.0, 0.5, 1.0000001])
def test_weights_are_rejected(value):
    with pytest.raises(DuckrateInputError) as error:
        trueskill(with_value("weight", value))
    message = str(error.value)
    assert "'weight'" in message and "match_id=7" in message and f"has {value!r} at" in message
    assert "no match weights" in message


def test_score_outside_unit_interval_keeps_the_shared_message():
    with pytest.raises(DuckrateInputError, match=r"'score_a' has 1.5 at match_id=7"):
        trueskill(with_value("score_a", 1.5))


@pytest.mark.parametrize("sd", [0.0, -2.0])
def test_prior_sd_must_be_positive(sd):
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [30.0, 20.0], "sd": [1.0, sd]})
    with pytest.raises(DuckrateInputError) as error:
        trueskill(small_frame(), priors=priors)
    message = str(error.value)
    assert "'sd'" in message and "'bob'" in message and repr(sd) in message


def test_prior_sd_that_is_infinite_is_rejected():
    priors = pl.DataFrame({"player": ["ann"], "rating": [30.0], "sd": [float("inf")]})
    with pytest.raises(DuckrateInputError, match="'ann'"):
        trueskill(small_frame(), priors=priors)


def test_priors_set_mu_and_sigma():
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [31.0, 19.0], "sd": [2.5, None]})
    first = trueskill(small_frame(), priors=priors).sort("seq").row(0, named=True)
    assert (first["rating_a_before"], first["sd_a_before"]) == (31.0, 2.5)
    assert (first["rating_b_before"], first["sd_b_before"]) == (19.0, 25.0 / 3.0)  # NULL sd: the default σ


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"draw_probability": 1.0}, "draw_probability"),
        ({"draw_probability": -0.1}, "draw_probability"),
        ({"draw_probability": float("nan")}, "draw_probability"),
        ({"sigma": -1.0}, "sigma"),
        ({"sigma": 0.0}, "sigma"),
        ({"beta": 0.0}, "beta"),
        ({"beta": float("inf")}, "beta"),
        ({"tau": -0.1}, "tau"),
        ({"mu": float("nan")}, "mu"),
        ({"mu": float("inf")}, "mu"),
        ({"mu": None}, "mu"),
    ],
)
def test_bad_parameters(params, named):
    with pytest.raises(DuckrateInputError, match=rf"parameter {named}\b") as error:
        trueskill(small_frame(), **params)
    assert "expected" in str(error.value)


def test_unknown_parameter():
    with pytest.raises(TypeError, match="k"):
        trueskill(small_frame(), k=32)
    with pytest.raises(DuckrateInputError, match="unknown parameter"):
        TRUESKILL.resolve({"k": 32})


# --------------------------------------------------------------------------------------------------
# Empty input and defaults.


def test_empty_input_returns_empty_frame():
    schema = {
        "match_id": pl.Int64,
        "played_at": pl.Int64,
        "player_a": pl.Utf8,
        "player_b": pl.Utf8,
        "score_a": pl.Float64,
    }
    out = trueskill(pl.DataFrame(schema=schema))
    assert out.height == 0 and out.columns == CONTRACT_COLUMNS
    assert out.schema["seq"] == pl.Int64 and out.schema["sd_a_after"] == pl.Float64


def test_python_defaults_pinned():
    assert python_defaults(trueskill) == {**DEFAULTS, "priors": None, "state": None, "chunk_size": None}
    assert TRUESKILL.defaults == DEFAULTS
    assert TRUESKILL.name == "trueskill" and TRUESKILL.has_sd
    assert DEFAULTS == {"mu": 25, "sigma": 25 / 3, "beta": 25 / 6, "tau": 25 / 300, "draw_probability": 0.1}


def test_defaults_are_the_explicit_values():
    frame = random_history(9, n=200)
    assert_frame_equal(trueskill(frame), trueskill(frame, **DEFAULTS), check_exact=True)
    assert not trueskill(frame, beta=3.0)["rating_a_after"].equals(trueskill(frame)["rating_a_after"])


# --------------------------------------------------------------------------------------------------
# Saved state (test_replay_state.py checks that batches equal one replay; here: the layout and refusals).


def test_state_holds_mu_and_sigma_and_continues():
    frame = random_history(12, n=120).sort("played_at", "match_id")
    full, full_state = replay_with_state(TRUESKILL, frame, tau=0.3)
    first, state = replay_with_state(TRUESKILL, frame[:70], tau=0.3)
    rest, state = replay_with_state(TRUESKILL, frame[70:], state=state, tau=0.3)
    assert_frame_equal(pl.concat([first, rest]).sort("league", "seq", nulls_last=True), full, check_exact=True)
    assert_frame_equal(state, full_state, check_exact=True)
    last = (
        pl.concat(
            [
                full.select("league", "seq", player="player_a", mu="rating_a_after", sigma="sd_a_after"),
                full.select("league", "seq", player="player_b", mu="rating_b_after", sigma="sd_b_after"),
            ]
        )
        .sort("seq")
        .group_by("league", "player")
        .last()
    )
    players = state.filter(pl.col("kind") == "player").select("league", "player", "value")
    check = players.join(last, on=["league", "player"], nulls_equal=True)
    assert check.height == players.height == last.height
    assert check["value"].to_list() == [[mu, sigma] for mu, sigma in zip(check["mu"], check["sigma"])]


def test_state_refusals():
    frame = random_history(13, n=60).sort("played_at", "match_id")
    _, state = replay_with_state(TRUESKILL, frame[:30])
    with pytest.raises(RebuildRequired, match="parameters"):
        replay_with_state(TRUESKILL, frame[30:], state=state, draw_probability=0.2)
    with pytest.raises(RebuildRequired, match="arrived late"):
        replay_with_state(TRUESKILL, frame[29:], state=state)
    with pytest.raises(RebuildRequired, match="expected a trueskill state"):
        replay_with_state(TRUESKILL, frame[30:], state=state.with_columns(pl.lit("elo").alias("system")))
