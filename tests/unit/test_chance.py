"""duckrate's luck-aware grid system (``chance``): the paper's worked examples (4.1's exact fractions, 4.2's
support set, Figure 3.1 against eq. 4 and the β = 1 limit), a plain-numpy replay of the whole output table,
the fast and Laplace paths against the naive one (1e-12 in every ρ), invariants, bit-for-bit determinism
whatever the thread settings, input validation and pinned defaults.

``tests/data/chance_golden.json`` is written by ``python tests/data/generate_chance_golden.py`` from the
references in ``tests/helpers/chance_reference.py``.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from helpers.chance_reference import (
    DEFAULTS,
    RANDOM_PRIORS,
    SCALE,
    eq_4,
    frame_of,
    random_history,
    reference_chance,
    reference_prior,
)
from helpers.replay_cases import CONTRACT_COLUMNS, assert_after_state_is_carried_into_the_next_match
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from scipy import integrate

from duckrate import DuckrateInputError
from duckrate.systems.chance import lowrank as _chance_lowrank
from duckrate.systems.chance.drift import symmetric_taps
from duckrate.systems.chance.grid import grid, grid_step, luck_table, prior_vector
from duckrate.systems.chance.laplace import grid_cdf_sums, grid_pdf_sums, laplace_cdf_sums, laplace_pdf_sums
from duckrate.systems.chance.lowrank import cross_approximation, factors
from duckrate.systems.chance.naive import drift, posterior, toeplitz_apply
from duckrate.systems.chance.replay import CHANCE, chance, posteriors

# the replay module itself: some of its helpers are tested directly
chance_module = importlib.import_module("duckrate.systems.chance.replay")

STATE_COLUMNS = CONTRACT_COLUMNS[8:]
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GOLDEN_PATH = Path(__file__).parents[1] / "data" / "chance_golden.json"


def max_errors(out, reference):
    """(largest |Δ| over rating/sd columns in display points, largest |Δ expected_a|)."""
    worst_state, worst_expected = 0.0, 0.0
    for row in out.iter_rows(named=True):
        want = reference[row["match_id"]]
        assert (row["league"], row["seq"]) == (want["league"], want["seq"])
        worst_state = max(worst_state, *(abs(row[c] - want[c]) for c in STATE_COLUMNS))
        worst_expected = max(worst_expected, abs(row["expected_a"] - want["expected_a"]))
    return worst_state, worst_expected


# --------------------------------------------------------------------------------------------------
# The paper's worked examples.


def test_example_4_1_exact_fractions():
    golden = json.loads(GOLDEN_PATH.read_text())["example_4_1"]
    support_a, support_b = np.array([2.0, 5.0, 13.0]), np.array([3.0, 7.0, 11.0])
    rho_a, rho_b = np.array([9, 3, 8]) / 20, np.array([2, 4, 5]) / 11
    lam = support_a[:, None] / (support_a[:, None] + support_b[None, :])  # Λ(x, y) = x/(x+y)
    new_a, new_b, expected = posterior(rho_a, rho_b, lam, theta=1.0)
    want_a = [Fraction(v) for v in golden["rho_a"]]
    want_b = [Fraction(v) for v in golden["rho_b"]]
    assert want_a == [Fraction(69024, 284005), Fraction(41925, 284005), Fraction(173056, 284005)]  # the paper's
    assert want_b == [Fraction(74724, 284005), Fraction(105456, 284005), Fraction(103825, 284005)]
    assert np.abs(new_a - np.array([float(v) for v in want_a])).max() <= 2e-16
    assert np.abs(new_b - np.array([float(v) for v in want_b])).max() <= 2e-16
    assert expected == pytest.approx(float(Fraction(golden["expected"])), abs=1e-16)
    # B's update uses ρA, not ρA' (the note closing Example 4.1): updating from ρA' gives something else
    wrong_b = posterior(new_a, rho_b, lam, theta=1.0)[1]
    assert np.abs(wrong_b - new_b).max() > 1e-3
    # a loss of A is a win of B with the sides exchanged (Λ(y, x) = 1 - Λ(x, y))
    loss_b, loss_a, _ = posterior(rho_b, rho_a, 1.0 - lam.T, theta=1.0)
    np.testing.assert_allclose(posterior(rho_a, rho_b, lam, theta=0.0)[:2], (loss_a, loss_b), rtol=0, atol=1e-16)


def test_example_4_1_exact_fractions_by_eq_1_in_rationals():
    """The same update in exact rational arithmetic (eq. 1 with θ = 1), which must give the printed fractions."""
    a, b = [2, 5, 13], [3, 7, 11]
    rho_a = [Fraction(9, 20), Fraction(3, 20), Fraction(8, 20)]
    rho_b = [Fraction(2, 11), Fraction(4, 11), Fraction(5, 11)]
    lam = [[Fraction(x, x + y) for y in b] for x in a]
    raw_a = [rho_a[j] * sum(rho_b[k] * lam[j][k] for k in range(3)) for j in range(3)]
    assert raw_a == [Fraction(719, 7150), Fraction(43, 704), Fraction(208, 825)]  # the unnormalised values printed
    golden = json.loads(GOLDEN_PATH.read_text())["example_4_1"]
    assert [v / sum(raw_a) for v in raw_a] == [Fraction(v) for v in golden["rho_a"]]


def test_example_4_2_support_set():
    golden = json.loads(GOLDEN_PATH.read_text())["example_4_2"]
    support = np.arange(1, 101)
    rho = np.where(np.isin(support, np.arange(1, 11) ** 2), 0.1, 0.0)
    box = np.where(np.abs(np.subtract.outer(support, support)) <= 1, 1.0 / 3.0, 0.0)
    drifted = drift(rho, box)
    assert sorted(support[drifted > 0].tolist()) == golden["support"]
    assert golden["support"][:6] == [1, 2, 3, 4, 5, 8] and len(golden["support"]) == 28
    np.testing.assert_allclose(drifted[drifted > 0], float(Fraction(golden["value"])), rtol=1e-15)
    assert Fraction(golden["value"]) == Fraction(1, 28)  # the mass 1/30 carried to 0 and 101 is dropped


def test_example_4_2_through_the_grid_drift_code():
    """The replay's own drift routines (full sums and truncated taps) on the same box kernel."""
    golden = json.loads(GOLDEN_PATH.read_text())["example_4_2"]
    support = np.arange(1, 101)
    rho = np.where(np.isin(support, np.arange(1, 11) ** 2), 0.1, 0.0)
    table = np.zeros(2 * 100 - 1)
    table[98:101] = 1.0 / 3.0  # K(d) for d = -1, 0, 1 at index n + d (n = 99)
    full, taps = np.empty(100), np.empty(100)
    toeplitz_apply(table, rho, full, False)
    symmetric_taps(np.array([1.0 / 3.0, 1.0 / 3.0]), rho, taps)
    for out in (full, taps):
        assert sorted(support[out > 0].tolist()) == golden["support"]
        np.testing.assert_allclose(out[out > 0] / out.sum(), 1.0 / 28.0, rtol=1e-15)


def eq_4_quad(m, sigma, beta, y=2000.0):
    """The same by adaptive quadrature (scipy quad), as an independent check."""

    def weight(z):
        return math.exp(-0.5 * z * z) / (1.0 + 10.0 ** ((y - (m + sigma * z)) / 400.0))

    kw = dict(points=[(y - m) / sigma], limit=400, epsabs=0.0, epsrel=1e-10)
    first = integrate.quad(lambda z: weight(z) * z, -40.0, 40.0, **kw)[0]
    mass = integrate.quad(weight, -40.0, 40.0, **kw)[0]
    return beta * sigma * first / ((1.0 - beta) / 2.0 * math.sqrt(2.0 * math.pi) + beta * mass)


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
def test_figure_3_1_golden_is_eq_4():
    golden = json.loads(GOLDEN_PATH.read_text())["figure_3_1"]
    for beta, sigma, m, change in golden["rows"]:
        # 1e-10, not 1e-13: np.trapezoid's sums run in an order that depends on the CPU's SIMD width, and the
        # odd part of the first moment cancels (measured: 6.5e-12 between an Intel AVX-512 and an AMD machine)
        assert eq_4(m, sigma, beta) == pytest.approx(change, rel=1e-10, abs=1e-300)
    for beta, sigma, m, change in golden["rows"][::5]:
        assert eq_4_quad(m, sigma, beta) == pytest.approx(change, rel=golden["tolerance_relative"], abs=1e-300)


def wide_grid_change(m, sigma, beta, y=2000.0):
    """m' - m by the update function on a fine grid wide enough for any m here (natural units inside)."""
    x = np.linspace(-40.0, 30.0, 28001)  # step 0.0025 natural = 0.43 display points
    rho_a = reference_prior(x, (m - 1500.0) / SCALE, sigma / SCALE)
    lam = (1 - beta) / 2 + beta / (1 + np.exp(-(x - (y - 1500.0) / SCALE)))  # Λ(x, y) for B at y
    new_a, _, _ = posterior(rho_a, np.ones(1), lam[:, None], theta=1.0)
    return SCALE * (new_a @ x - rho_a @ x)


def test_figure_3_1_update_reproduces_eq_4():
    golden = json.loads(GOLDEN_PATH.read_text())["figure_3_1"]
    for beta, sigma, m, change in golden["rows"]:
        assert wide_grid_change(m, sigma, beta) == pytest.approx(change, rel=1e-9, abs=1e-9), (beta, sigma, m)


def test_figure_3_1_behaviour():
    """β = 1: m' - m grows as m falls and tends to σ² ln10/400 (Section 3.1); β < 1: the luck term caps it,
    the change vanishes far below B, and 1 -> 0.99 changes the curve far more than 0.99 -> 0.8."""
    golden = json.loads(GOLDEN_PATH.read_text())["figure_3_1"]
    ms = np.array(golden["m"])
    for sigma in golden["sigma"]:
        curves = {beta: np.array([wide_grid_change(m, sigma, beta) for m in ms]) for beta in golden["beta"]}
        limit = sigma * sigma * math.log(10.0) / 400.0
        one = curves[1.0]
        assert (np.diff(one) < 0).all()  # strictly decreasing in m
        assert (one < limit).all()
        assert one[0] == pytest.approx(limit, rel=1e-6)  # m = -2000: the limit, up to e^-(y-m)·ln10/400
        inside = (ms >= 0) & (ms <= 4000)
        for beta in (0.8, 0.99):
            curve = curves[beta]
            assert curve[0] < 1e-6 * limit and curve[-1] < 0.05 * limit  # far below and far above B
            peak = int(np.argmax(np.where(inside, curve, -np.inf)))
            assert inside[peak] and 0 < ms[peak] < 4000  # an interior maximum on [0, 4000]
            assert curve[peak] < one[peak]
        at_zero = int(np.flatnonzero(ms == 0)[0])
        assert one[at_zero] - curves[0.99][at_zero] > 10 * abs(curves[0.99][at_zero] - curves[0.8][at_zero])


def test_figure_3_1_through_the_replay():
    """One match of the replay (drift off) against eq. (4), with B a point mass at the grid point nearest
    2000 and A's prior N(m, σ²) on the default grid."""
    x = grid(1001, 7.0)
    y = 1500.0 + SCALE * x[int(np.argmin(np.abs(x - 500.0 / SCALE)))]
    for beta in (0.8, 0.99, 1.0):
        for m, sigma in ((1000.0, 50.0), (1500.0, 100.0), (1900.0, 80.0), (2300.0, 60.0)):
            priors = pl.DataFrame({"player": ["p0", "p1"], "rating": [m, y], "sd": [sigma, 1e-9]})
            for algorithm in ("naive", "fast"):
                row = chance(
                    frame_of([0], [1], [1.0]), priors=priors, beta=beta, drift_sd=0.0, algorithm=algorithm
                ).row(0, named=True)
                assert row["rating_a_before"] == pytest.approx(m, abs=1e-9)
                assert row["rating_b_before"] == pytest.approx(y, abs=1e-9) and row["sd_b_before"] < 1e-6
                change = row["rating_a_after"] - row["rating_a_before"]
                assert change == pytest.approx(eq_4(m, sigma, beta, y), rel=1e-8, abs=1e-8), (beta, m, sigma, algorithm)
                assert row["rating_b_after"] == pytest.approx(y, abs=1e-9)  # a point mass cannot move


# --------------------------------------------------------------------------------------------------
# The whole output table against the numpy replay.

# Largest differences observed over the cases below: 1.8e-12 display points in ratings and sds (a grid
# mean sums 1001 terms of size up to 7 natural units, and the reference sums in other orders) and 2.4e-15
# in expected_a. The tolerances keep a ~10x margin and are still far below any real mistake (a wrong θ,
# drift or normalisation moves values by 1e-3 or more).
REFERENCE_STATE_TOLERANCE = 2e-11
REFERENCE_EXPECTED_TOLERANCE = 2e-14

DECISIVE, FRACTIONAL = (0.0, 0.5, 1.0), (0.0, 0.5, 1.0, 0.25, 0.9)
REFERENCE_CASES = {
    "defaults": (dict(), 60, DECISIVE),
    "defaults_naive": (dict(algorithm="naive"), 40, FRACTIONAL),
    "coarse_beta_one_fractional": (dict(grid_points=201, grid_max=5.0, beta=1.0, drift_sd=0.1), 300, FRACTIONAL),
    "normal_laplace_kernel": (dict(grid_points=301, sigmoid="normal", kernel="laplace", prior_sd=1.0), 300, DECISIVE),
    "laplace_laplace": (
        dict(grid_points=257, sigmoid="laplace", kernel="laplace", algorithm="laplace", beta=0.6),
        300,
        FRACTIONAL,
    ),
    "laplace_sigmoid_no_drift": (dict(grid_points=201, sigmoid="laplace", drift_sd=0.0), 300, DECISIVE),
}


@pytest.mark.parametrize(("params", "n", "scores"), REFERENCE_CASES.values(), ids=REFERENCE_CASES.keys())
def test_matches_numpy_reference(params, n, scores):
    frame = random_history(n, n=n, scores=scores)
    out = chance(frame, priors=RANDOM_PRIORS, **params)
    assert out.columns == CONTRACT_COLUMNS and out.height == frame.height
    reference, _ = reference_chance(frame, priors=RANDOM_PRIORS, **params)
    state_error, expected_error = max_errors(out, reference)
    assert state_error <= REFERENCE_STATE_TOLERANCE
    assert expected_error <= REFERENCE_EXPECTED_TOLERANCE
    by_id = {r["match_id"]: r for r in frame.to_dicts()}
    for row in out.iter_rows(named=True):
        assert all(row[c] == by_id[row["match_id"]][c] for c in ("played_at", "player_a", "player_b", "score_a"))


def test_posteriors_match_numpy_reference():
    frame = random_history(11, n=150)
    players, rho = posteriors(frame, priors=RANDOM_PRIORS, grid_points=301)
    _, states = reference_chance(frame, priors=RANDOM_PRIORS, grid_points=301)
    assert players.height == len(states) == rho.shape[0] and rho.shape[1] == 301
    for i, (league, player) in enumerate(players.select("league", "player").iter_rows()):
        assert np.abs(rho[i] - states[(league, player)]).max() <= 1e-13  # observed 9e-15 (ρ up to 0.07 here)


def test_check_values_one_match_between_newcomers():
    """Default parameters: a win, a draw and a loss between newcomers (golden values from the numpy reference)."""
    golden = json.loads(GOLDEN_PATH.read_text())["newcomers"]
    for score, want in golden["rows"].items():
        row = chance(frame_of([0], [1], [float(score)])).row(0, named=True)
        for column, value in want.items():
            assert row[column] == pytest.approx(value, abs=golden["tolerance"]), (score, column)
    row = chance(frame_of([0], [1], [1.0])).row(0, named=True)
    assert row["rating_a_before"] == 1500.0 and row["expected_a"] == pytest.approx(0.5, abs=1e-15)
    assert row["sd_a_before"] == pytest.approx(0.7 * SCALE, rel=1e-12)  # the grid prior N(0, 0.7²)


# --------------------------------------------------------------------------------------------------
# Fast and Laplace paths against the naive one.

RHO_TOLERANCE = 1e-12  # the bar; observed: at most 1.2e-14 (β = 1, normal sigmoid), mostly ~1e-16


def replay_with_states(frame, priors=None, **params):
    """The output columns (input row order) and the final vectors of one run."""
    from duckrate.core.matches import columns_from_polars, prepare_matches
    from duckrate.core.priors import prior_columns

    prepared = prepare_matches(columns_from_polars(frame))
    computed, rho, _ = chance_module._replay(prepared, prior_columns(priors), CHANCE.resolve(params))
    return computed, rho


@pytest.mark.parametrize("beta", [0.8, 1.0])
@pytest.mark.parametrize(
    ("sigmoid", "kernel"),
    [("logistic", "gaussian"), ("normal", "laplace"), ("laplace", "gaussian"), ("laplace", "laplace")],
)
def test_fast_paths_agree_with_naive(sigmoid, kernel, beta, monkeypatch):
    monkeypatch.setattr(chance_module, "FACTORISE_MIN_ROWS", 30)  # fractional results get their own factors
    frame = random_history(21, n=300, n_players=16, scores=(0.0, 0.5, 1.0, 0.3, 0.7), leagues=(None,))
    params = dict(beta=beta, sigmoid=sigmoid, kernel=kernel)
    out_naive, naive = replay_with_states(frame, priors=RANDOM_PRIORS, algorithm="naive", **params)
    algorithms = ["fast"] + (["laplace"] if sigmoid == kernel == "laplace" else [])
    for algorithm in algorithms:
        out_fast, fast = replay_with_states(frame, priors=RANDOM_PRIORS, algorithm=algorithm, **params)
        assert np.abs(fast - naive).max() <= RHO_TOLERANCE, algorithm
        assert (out_fast["seq"] == out_naive["seq"]).all()
        for column in STATE_COLUMNS:  # display points
            assert np.abs(out_fast[column] - out_naive[column]).max() <= 1e-9, (algorithm, column)
        assert np.abs(out_fast["expected_a"] - out_naive["expected_a"]).max() <= 1e-13


def test_fast_path_guards_big_upsets():
    """At β = 1 a lopsided match has a tiny normaliser Z (here ~1e-9), and the low-rank products' absolute
    error (~1e-14) divided by Z would be visible: such matches are recomputed with the naive sums."""
    priors = pl.DataFrame({"player": ["p0", "p1"], "rating": [600.0, 2400.0], "sd": [80.0, 80.0]})
    frame = frame_of([0, 0, 1], [1, 1, 0], [1.0, 0.5, 0.0])
    for sigmoid in ("logistic", "normal"):
        out_naive, naive = replay_with_states(frame, priors=priors, beta=1.0, sigmoid=sigmoid, algorithm="naive")
        out_fast, fast = replay_with_states(frame, priors=priors, beta=1.0, sigmoid=sigmoid)
        assert out_naive["expected_a"][0] < 1e-4
        assert np.abs(fast - naive).max() <= RHO_TOLERANCE
        assert np.abs(out_fast["rating_a_after"] - out_naive["rating_a_after"]).max() <= 1e-9


def test_fast_path_uses_factors_and_falls_back_to_naive_for_rare_results():
    thetas, counts = np.array([1.0, 0.0, 0.5, 0.3, 0.7]), np.array([0, 9, 3, 600, 3])
    plan = chance_module._luck_plan(dict(DEFAULTS), thetas, counts)
    assert plan["method"] == chance_module.LUCK_LOWRANK
    # draws always get their (symmetric) factors, a common fractional result its own pair, rare ones the naive sums
    assert plan["op_a"].tolist() == [-1, -1, 1, 2, -1] and plan["op_b"].tolist() == [-1, -1, 1, 3, -1]
    assert 40 <= plan["max_rank"] <= 70
    naive = chance_module._luck_plan({**DEFAULTS, "algorithm": "naive"}, thetas, counts)
    assert naive["method"] == chance_module.LUCK_NAIVE
    laplace = chance_module._luck_plan({**DEFAULTS, "sigmoid": "laplace"}, thetas, counts)
    assert laplace["method"] == chance_module.LUCK_LAPLACE


@pytest.mark.parametrize(("sigmoid", "beta", "theta"), [(0, 0.8, 1.0), (0, 0.8, 0.5), (1, 1.0, 1.0), (0, 1.0, 0.3)])
def test_cross_approximation_bounds_every_entry(sigmoid, beta, theta):
    size = 1001
    table = luck_table(theta, beta, sigmoid, size, grid_step(size, 7.0))
    v, ut, rank = factors(sigmoid, beta, theta, size, 7.0)
    dense = table[size - 1 + np.subtract.outer(np.arange(size), np.arange(size))]
    error = np.abs(dense - ut.T @ v.T).max()
    assert error <= 4 * _chance_lowrank.RESIDUAL_TOLERANCE * np.abs(table).max()
    assert rank <= 70
    small = luck_table(1.0, 0.8, 0, 101, grid_step(101, 7.0))
    assert cross_approximation(small, 101, 1e-30, 3)[2] == -1  # more rank needed than allowed: no factors
    assert factors(2, 0.8, 1.0, 1001, 7.0) is None  # the Laplace sigmoid's kink: the O(n) sweeps instead


def test_laplace_algorithms_match_direct_sums():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 2, 40), np.concatenate([rng.normal(0, 3, 25), [0.0, 1.5]])
    x[:3] = [0.0, 1.5, 1.5]  # ties between support points and queries
    rho = rng.dirichlet(np.ones(40))
    for b in (0.05, 0.7, 3.0):
        diff = np.subtract.outer(y, x)  # y_i - x_k
        pdf = np.exp(-np.abs(diff) / b) / (2 * b)
        cdf = np.where(diff >= 0, 1 - 0.5 * np.exp(-np.abs(diff) / b), 0.5 * np.exp(-np.abs(diff) / b))
        np.testing.assert_allclose(laplace_pdf_sums(x, rho, y, b), pdf @ rho, rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(laplace_cdf_sums(x, rho, y, b), cdf @ rho, rtol=1e-13, atol=1e-300)
    size, h, a = 301, 0.05, 2.0
    rho = rng.dirichlet(np.ones(size))
    k = np.subtract.outer(np.arange(size), np.arange(size))  # i - k
    q = math.exp(-h / a)
    out = np.empty(size)
    grid_pdf_sums(rho, q, out)
    np.testing.assert_allclose(out, np.exp(-np.abs(k) * h / a) @ rho, rtol=1e-13)
    cdf = np.where(k >= 0, 1 - 0.5 * np.exp(-np.abs(k) * h / a), 0.5 * np.exp(-np.abs(k) * h / a))
    grid_cdf_sums(rho, q, out, False)
    np.testing.assert_allclose(out, cdf @ rho, rtol=1e-13)
    grid_cdf_sums(rho, q, out, True)
    np.testing.assert_allclose(out, cdf.T @ rho, rtol=1e-13)


# --------------------------------------------------------------------------------------------------
# Invariants.


def test_posteriors_sum_to_one_and_stay_non_negative():
    frame = random_history(5, n=300, scores=(0.0, 0.5, 1.0, 0.2))
    for params in ({}, {"beta": 1.0, "sigmoid": "normal"}, {"sigmoid": "laplace", "kernel": "laplace"}):
        players, rho = posteriors(frame, priors=RANDOM_PRIORS, **params)
        assert np.abs(rho.sum(axis=1) - 1.0).max() <= 1e-14
        assert (rho >= 0).all()
        # each row is the state after the player's last match
        out = chance(frame, priors=RANDOM_PRIORS, **params).sort("league", "seq", nulls_last=True)
        last = {}
        for row in out.iter_rows(named=True):
            for side in "ab":
                last[(row["league"], row[f"player_{side}"])] = (row[f"rating_{side}_after"], row[f"sd_{side}_after"])
        for league, player, rating, sd in players.iter_rows():
            assert (rating, sd) == pytest.approx(last[(league, player)], abs=1e-9)


def test_swapping_sides_mirrors():
    frame = random_history(6, n=300, scores=(0.0, 0.5, 1.0, 0.35))
    swapped = frame.with_columns(
        player_a=pl.col("player_b"), player_b=pl.col("player_a"), score_a=1.0 - pl.col("score_a")
    )
    for params in ({}, {"algorithm": "naive", "grid_points": 301}, {"sigmoid": "laplace", "kernel": "laplace"}):
        out, mirror = chance(frame, **params), chance(swapped, **params)
        for side, other in (("a", "b"), ("b", "a")):
            for kind in ("rating", "sd"):
                for when in ("before", "after"):
                    got = mirror[f"{kind}_{other}_{when}"].to_numpy()
                    np.testing.assert_allclose(got, out[f"{kind}_{side}_{when}"].to_numpy(), rtol=0, atol=1e-9)
        np.testing.assert_allclose(
            mirror["expected_a"].to_numpy(), 1.0 - out["expected_a"].to_numpy(), rtol=0, atol=1e-14
        )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"algorithm": "naive", "grid_points": 401},
        {"sigmoid": "normal", "beta": 1.0},
        {"sigmoid": "laplace", "kernel": "laplace"},
    ],
)
def test_draws_between_equals_leave_means_unchanged(params):
    # newcomers, then equal symmetric priors at several ratings (a grid point as the centre keeps ρ symmetric)
    x = grid(params.get("grid_points", 1001), 7.0)
    row = chance(frame_of([0], [1], [0.5]), **params).row(0, named=True)
    assert row["rating_a_after"] == pytest.approx(1500.0, abs=1e-10)
    assert row["rating_b_after"] == pytest.approx(1500.0, abs=1e-10)
    assert row["sd_a_after"] == pytest.approx(row["sd_b_after"], abs=1e-10)
    for k, sd in ((len(x) // 2 + 40, 60.0), (len(x) // 2 - 60, 100.0)):
        rating = 1500.0 + SCALE * x[k]
        priors = pl.DataFrame({"player": ["p0", "p1"], "rating": [rating, rating], "sd": [sd, sd]})
        row = chance(frame_of([0], [1], [0.5]), priors=priors, **params).row(0, named=True)
        assert row["expected_a"] == pytest.approx(0.5, abs=1e-14)
        for side in "ab":
            assert row[f"rating_{side}_after"] == pytest.approx(rating, abs=1e-8)
        assert row["sd_a_after"] == pytest.approx(row["sd_b_after"], abs=1e-9)


def test_after_state_is_carried_into_the_next_match():
    out = chance(random_history(8, n=300), priors=RANDOM_PRIORS)
    assert_after_state_is_carried_into_the_next_match(out)


def test_priors_and_newcomers_start_where_expected():
    out = chance(random_history(9, n=200), priors=RANDOM_PRIORS)
    first = {}
    for row in out.sort("league", "seq", nulls_last=True).iter_rows(named=True):
        for side in "ab":
            key = (row["league"], row[f"player_{side}"])
            first.setdefault(key, (row[f"rating_{side}_before"], row[f"sd_{side}_before"]))
    assert first[("go", "p2")] == pytest.approx((2300.0, 15.0), abs=1e-6)  # the league's own prior
    assert first[("chess", "p1")] == pytest.approx((1650.0, 90.0), abs=1e-6)
    assert first[("go", "p1")] == pytest.approx((1300.0, 0.7 * SCALE), abs=1e-6)  # NULL sd: prior_sd
    assert first[("go", "p5")] == pytest.approx((1500.0, 0.7 * SCALE), abs=1e-9)  # a newcomer


def test_seq_is_one_based_and_leagues_are_independent():
    frame = random_history(10, n=300)
    whole = chance(frame)
    for (league,), group in whole.group_by("league"):
        assert sorted(group["seq"].to_list()) == list(range(1, group.height + 1)), league
    for league in ("chess", "go"):
        alone = chance(frame.filter(pl.col("league") == league))
        assert_frame_equal(whole.filter(pl.col("league") == league), alone, check_exact=True)


def test_weight_column_of_nulls_and_ones_and_period_column_are_accepted():
    frame = random_history(12, n=100)
    plain = chance(frame)
    for extra in (
        {"weight": pl.lit(None, dtype=pl.Float64)},
        {"weight": pl.lit(1.0)},
        {"period": pl.lit(3, dtype=pl.Int64)},
    ):
        assert_frame_equal(chance(frame.with_columns(**extra)), plain, check_exact=True)


chance_params = st.fixed_dictionaries(
    {
        "beta": st.floats(0.05, 1.0),
        "prior_sd": st.floats(0.05, 2.0),
        "drift_sd": st.one_of(st.just(0.0), st.floats(0.001, 0.5)),
        "grid_points": st.integers(64, 301),
        "grid_max": st.floats(2.0, 12.0),
        "sigmoid": st.sampled_from(["logistic", "normal", "laplace"]),
        "kernel": st.sampled_from(["gaussian", "laplace"]),
    }
)


@st.composite
def histories(draw):
    n = draw(st.integers(1, 30))
    n_players = draw(st.integers(2, 6))
    a = draw(st.lists(st.integers(0, n_players - 1), min_size=n, max_size=n))
    offsets = draw(st.lists(st.integers(1, n_players - 1), min_size=n, max_size=n))
    scores = draw(st.lists(st.one_of(st.sampled_from([0.0, 0.5, 1.0]), st.floats(0.0, 1.0)), min_size=n, max_size=n))
    played_at = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    leagues = draw(st.lists(st.sampled_from(["x", "y", None]), min_size=n, max_size=n))
    return frame_of(a, [(i + o) % n_players for i, o in zip(a, offsets)], scores, leagues, played_at)


prior_ratings = st.lists(
    st.tuples(st.floats(700.0, 2300.0), st.one_of(st.none(), st.floats(5.0, 300.0))), min_size=6, max_size=6
)


def priors_from(values):
    return pl.DataFrame(
        {"player": [f"p{i}" for i in range(6)], "rating": [r for r, _ in values], "sd": [s for _, s in values]},
        schema={"player": pl.Utf8, "rating": pl.Float64, "sd": pl.Float64},
    )


@PROPERTY_SETTINGS
@given(histories(), chance_params, prior_ratings)
def test_property_fast_agrees_with_naive(history, params, priors):
    priors = priors_from(priors)
    _, naive = posteriors(history, priors=priors, algorithm="naive", **params)
    _, fast = posteriors(history, priors=priors, algorithm="fast", **params)
    assert np.abs(fast - naive).max() <= RHO_TOLERANCE
    assert np.abs(fast.sum(axis=1) - 1.0).max() <= 1e-13 and (fast >= 0).all()


@PROPERTY_SETTINGS
@given(histories(), chance_params, prior_ratings, st.integers(0, 2**32 - 1))
def test_property_outputs_are_finite_ordered_and_row_order_free(history, params, priors, seed):
    priors = priors_from(priors)
    out = chance(history, priors=priors, **params)
    assert np.isfinite(out.select(["expected_a", *STATE_COLUMNS]).to_numpy()).all()
    assert ((out["expected_a"] >= 0) & (out["expected_a"] <= 1)).all()
    assert (out.select("sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after").to_numpy() >= 0).all()
    shuffled = chance(history.sample(fraction=1.0, shuffle=True, seed=seed), priors=priors, **params)
    key = ["league", "seq"]
    assert_frame_equal(out.sort(key, nulls_last=True), shuffled.sort(key, nulls_last=True), check_exact=True)
    # Without drift (which drops mass past the grid's ends) a winner's mean never falls and a loser's never
    # rises: Λ(x, y) increases in x, so the likelihood tilts the posterior up (Chebyshev's sum inequality).
    still = chance(history, priors=priors, **{**params, "drift_sd": 0.0})
    for row in still.iter_rows(named=True):
        low, high = ("a", "b") if row["score_a"] == 1.0 else ("b", "a") if row["score_a"] == 0.0 else (None, None)
        if low is not None:
            assert row[f"rating_{low}_after"] >= row[f"rating_{low}_before"] - 1e-9
            assert row[f"rating_{high}_after"] <= row[f"rating_{high}_before"] + 1e-9


# --------------------------------------------------------------------------------------------------
# Determinism across thread settings (fresh processes: thread pools are sized at start-up).

_DETERMINISM_SCRIPT = textwrap.dedent(
    """
    import hashlib, sys
    import numba
    import numpy as np
    import polars as pl
    sys.path.insert(0, sys.argv[1])  # tests, for helpers
    from helpers.chance_reference import RANDOM_PRIORS, random_history
    from duckrate.systems.chance.replay import chance, posteriors
    frame = random_history(31, n=400, scores=(0.0, 0.5, 1.0, 0.6))
    digest = hashlib.sha256()
    for params in ({}, {"algorithm": "naive", "grid_points": 257}, {"sigmoid": "laplace", "kernel": "laplace"}):
        out = chance(frame, priors=RANDOM_PRIORS, **params).sort("league", "seq", nulls_last=True)
        digest.update(out.select(pl.exclude("league", "player_a", "player_b", "match_id")).to_numpy().tobytes())
        digest.update(posteriors(frame, priors=RANDOM_PRIORS, **params)[1].tobytes())
    print(numba.get_num_threads(), digest.hexdigest())
    """
)


def _digest_in_subprocess(threads: int) -> tuple[str, str]:
    env = {
        **os.environ,
        "NUMBA_NUM_THREADS": str(threads),
        "OMP_NUM_THREADS": str(threads),
        "OPENBLAS_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
    }
    completed = subprocess.run(
        [sys.executable, "-c", _DETERMINISM_SCRIPT, str(Path(__file__).parents[1])],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    threads_seen, digest = completed.stdout.split()
    return threads_seen, digest


@pytest.mark.slow  # 8-11 s on 2 cores: two replays in subprocesses, one with two threads
def test_bit_for_bit_whatever_the_thread_count():
    one, two = _digest_in_subprocess(1), _digest_in_subprocess(2)
    assert (one[0], two[0]) == ("1", "2")
    assert one[1] == two[1]


def test_repeated_runs_are_identical():
    frame = random_history(13, n=200, scores=(0.0, 0.5, 1.0, 0.4))
    first = chance(frame, priors=RANDOM_PRIORS)
    _chance_lowrank.factors.cache_clear()  # refactorising gives the same factors, bit for bit
    assert_frame_equal(chance(frame, priors=RANDOM_PRIORS), first, check_exact=True)


# --------------------------------------------------------------------------------------------------
# Input validation.


def base_frame(**extra):
    rows = {
        "match_id": [5, 7, 9],
        "played_at": [1, 2, 3],
        "player_a": ["ann", "bob", "cy"],
        "player_b": ["bob", "cy", "ann"],
        "score_a": [1.0, 0.5, 0.0],
        **extra,
    }
    return pl.DataFrame(rows)


@pytest.mark.parametrize("value", [2.0, 0.5, 1.0000001])
def test_weights_are_rejected(value):
    with pytest.raises(DuckrateInputError) as error:
        chance(base_frame(weight=[1.0, value, None]))
    message = str(error.value)
    assert "'weight'" in message and "match_id=7" in message and f"has {value!r} at" in message
    assert "no match weights" in message and "expected 1 or NULL" in message


@pytest.mark.parametrize("sd", [0.0, -2.0])
def test_prior_sd_must_be_positive(sd):
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [1600.0, 1400.0], "sd": [50.0, sd]})
    with pytest.raises(DuckrateInputError) as error:
        chance(base_frame(), priors=priors)
    message = str(error.value)
    assert "'sd'" in message and "'bob'" in message and repr(sd) in message and "expected sd > 0" in message


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"beta": 0.0}, "beta"),
        ({"beta": 1.0000001}, "beta"),
        ({"beta": float("nan")}, "beta"),
        ({"prior_sd": 0.0}, "prior_sd"),
        ({"prior_sd": float("inf")}, "prior_sd"),
        ({"drift_sd": -0.01}, "drift_sd"),
        ({"drift_sd": float("nan")}, "drift_sd"),
        ({"grid_points": 2}, "grid_points"),
        ({"grid_points": 1001.5}, "grid_points"),
        ({"grid_points": float("inf")}, "grid_points"),
        ({"grid_max": 0.0}, "grid_max"),
        ({"grid_max": -7.0}, "grid_max"),
        ({"sigmoid": "cauchy"}, "sigmoid"),
        ({"sigmoid": 1.0}, "sigmoid"),
        ({"kernel": "box"}, "kernel"),
        ({"algorithm": "fft"}, "algorithm"),
        ({"beta": None}, "beta"),
        ({"algorithm": "laplace"}, "algorithm"),
        ({"algorithm": "laplace", "sigmoid": "laplace"}, "algorithm"),
    ],
)
def test_bad_parameters(params, named):
    with pytest.raises(DuckrateInputError, match=rf"parameter {named}\b") as error:
        chance(base_frame(), **params)
    assert "expected" in str(error.value)


def test_parameter_spellings():
    out = chance(base_frame(), sigmoid="Normal", kernel="LAPLACE", algorithm="Fast", grid_points=201.0)
    assert_frame_equal(out, chance(base_frame(), sigmoid="normal", kernel="laplace", grid_points=201))
    with pytest.raises(TypeError, match="k"):
        chance(base_frame(), k=32)
    with pytest.raises(DuckrateInputError, match="unknown parameter"):
        CHANCE.resolve({"k": 32})


def test_empty_input_returns_empty_frame():
    schema = {
        "match_id": pl.Int64,
        "played_at": pl.Int64,
        "player_a": pl.Utf8,
        "player_b": pl.Utf8,
        "score_a": pl.Float64,
    }
    out = chance(pl.DataFrame(schema=schema))
    assert out.height == 0 and out.columns == CONTRACT_COLUMNS
    assert out.schema["seq"] == pl.Int64 and out.schema["sd_a_after"] == pl.Float64


def test_priors_off_the_grid_still_give_a_distribution():
    priors = pl.DataFrame({"player": ["ann", "bob"], "rating": [9000.0, 1500.0], "sd": [1e-6, None]})
    row = chance(base_frame(), priors=priors).sort("seq").row(0, named=True)
    top = 1500.0 + SCALE * 7.0  # the grid's last point
    assert row["rating_a_before"] == pytest.approx(top, abs=1e-9) and row["sd_a_before"] == pytest.approx(0.0, abs=1e-6)
    assert math.isfinite(row["rating_a_after"]) and math.isfinite(row["expected_a"])


# --------------------------------------------------------------------------------------------------
# Defaults.


def test_python_defaults_pinned():
    parameters = inspect.signature(chance).parameters
    defaults = {name: p.default for name, p in parameters.items() if name != "matches"}
    assert defaults == {**DEFAULTS, "priors": None, "state": None, "chunk_size": None}
    assert CHANCE.defaults == DEFAULTS
    assert CHANCE.name == "chance" and CHANCE.has_sd
    assert DEFAULTS == {
        "beta": 0.8,
        "prior_sd": 0.7,
        "drift_sd": 0.03,
        "grid_points": 1001,
        "grid_max": 7,
        "sigmoid": "logistic",
        "kernel": "gaussian",
        "algorithm": "fast",
    }


def test_defaults_are_the_explicit_values():
    frame = random_history(14, n=100)
    assert_frame_equal(chance(frame), chance(frame, **DEFAULTS), check_exact=True)
    assert not chance(frame, beta=0.9)["rating_a_after"].equals(chance(frame)["rating_a_after"])


def test_default_grid_and_prior_are_the_papers():
    x = grid(1001, 7.0)
    assert x[0] == -7.0 and x[-1] == 7.0 and x[500] == 0.0 and (x[::-1] == -x).all()
    np.testing.assert_allclose(np.diff(x), 14.0 / 1000.0, rtol=1e-12)
    rho = prior_vector(1001, 7.0, 0.0, 0.7)
    want = np.exp(-(x**2) / (2 * 0.49))
    np.testing.assert_allclose(rho, want / want.sum(), rtol=1e-13, atol=1e-300)  # the sums run in other orders


# --------------------------------------------------------------------------------------------------
# Golden values (run this file to regenerate tests/data/chance_golden.json).
