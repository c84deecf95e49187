"""Elo-MMR: agreement with the elommr package, the fast phase 1 against the exact solve, the paper's
theorems as properties (5.5 aligned incentives, 5.6 memoryless monotonicity, 5.7 bounded change),
validation errors, determinism, parameters."""

from __future__ import annotations

import inspect
import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import duckrate
from duckrate import DuckrateInputError
from duckrate.synthetic import generate_contests
from duckrate.systems.elo_mmr.fast import performances_fast
from duckrate.systems.elo_mmr.gaussian_series import fit_block_series
from duckrate.systems.elo_mmr.history import robust_average
from duckrate.systems.elo_mmr.phase1 import performances_exact, solve_tie_groups
from duckrate.systems.elo_mmr.replay import BETA, DRIFT, ELO_MMR, contest_scales

# elommr's defaults (the reference's older parameterisation): weight_limit 0.2, sig_limit 80, so
# β = 80·√(1 + 1/0.2) and γ² = 0.2·80².
ELOMMR_BETA = 80.0 * math.sqrt(6.0)
ELOMMR_DRIFT = 80.0 * math.sqrt(0.2)


def results(n_contests=25, per_contest=40, pool=120, seed=3, tie_rate=0.1, n_leagues=1):
    return generate_contests(n_contests, per_contest, pool, seed=seed, tie_rate=tie_rate, n_leagues=n_leagues)


def run_elommr(frame: pl.DataFrame, weights=None, **settings_):
    """Replay ``frame`` with elommr: {(contest_id, player): (rating, sd, performance)}. elommr is a test
    dependency: without it the two tests that call this fail (ImportError), the others still run."""
    import elommr

    system = elommr.EloMMR(**settings_)
    players, out = {}, {}
    for (contest,), group in frame.sort("contest_id", "rank").group_by(["contest_id"], maintain_order=True):
        ranks, names = group["rank"].to_list(), group["player"].to_list()
        tied = {r: ranks.count(r) for r in set(ranks)}
        standings = [
            (players.setdefault(name, elommr.Player()), r - 1, r - 2 + tied[r]) for name, r in zip(names, ranks)
        ]
        system.round_update(
            standings,
            contest_time=group["played_at"][0].timestamp(),
            weight=1.0 if weights is None else weights[contest],
        )
        for name in names:
            player = players[name]
            out[(contest, name)] = (
                player.approx_posterior.mu,
                player.approx_posterior.sig,
                player._logistic_factors[-1].mu,
            )
    return out


def max_difference(ours: pl.DataFrame, reference: dict) -> dict:
    worst = {"rating_after": 0.0, "sd_after": 0.0, "performance": 0.0}
    for row in ours.iter_rows(named=True):
        rating, sd, performance = reference[(row["contest_id"], row["player"])]
        worst["rating_after"] = max(worst["rating_after"], abs(row["rating_after"] - rating))
        worst["sd_after"] = max(worst["sd_after"], abs(row["sd_after"] - sd))
        worst["performance"] = max(worst["performance"], abs(row["performance"] - performance))
    return worst


@pytest.mark.parametrize("algorithm", ["fast", "exact"])
def test_agrees_with_the_elommr_package(algorithm):
    frame = results()
    ours = duckrate.elo_mmr(frame, beta=ELOMMR_BETA, drift=ELOMMR_DRIFT, history_tolerance=0.0, algorithm=algorithm)
    worst = max_difference(ours, run_elommr(frame))
    assert max(worst.values()) < 1e-6, worst


def test_agrees_with_elommr_on_weights_time_drift_history_cap_and_transfer_rate():
    frame = results(n_contests=20, per_contest=30, pool=90, seed=7)
    weights = {c: 0.5 + (c % 4) * 0.5 for c in range(1, 21)}  # 0.5, 1, 1.5, 2
    frame = frame.with_columns(weight=pl.col("contest_id").replace_strict(weights, return_dtype=pl.Float64))
    per_day = 3.0  # drift sd per day; elommr takes a variance per second
    ours = duckrate.elo_mmr(
        frame,
        beta=ELOMMR_BETA,
        drift=ELOMMR_DRIFT,
        drift_per_day=per_day,
        rho=0.5,
        max_history=4,
        history_tolerance=0.0,
    )
    reference = run_elommr(frame, weights, drift_per_sec=per_day**2 / 86_400, transfer_speed=0.5, max_history=4)
    worst = max_difference(ours, reference)
    assert max(worst.values()) < 1e-6, worst


def test_default_history_tolerance_changes_nothing_visible():
    frame = results(n_contests=40, per_contest=30, pool=60, seed=5)
    compressed = duckrate.elo_mmr(frame)
    full = duckrate.elo_mmr(frame, history_tolerance=0.0)
    assert (compressed["rating_after"] - full["rating_after"]).abs().max() < 1e-6


def test_defaults_are_the_reference_implementations():
    assert ELO_MMR.defaults == {
        "variant": "logistic",
        "initial": 1500.0,
        "initial_sd": 350.0,
        "beta": 200.0,
        "drift": pytest.approx(80.0**2 / math.sqrt(200.0**2 - 80.0**2)),
        "drift_per_day": 0.0,
        "rho": 1.0,
        "max_history": None,
        "max_opponents": None,
        "history_tolerance": 1e-12,
        "algorithm": "fast",
    }
    assert DRIFT == pytest.approx(34.914862, abs=1e-6)
    signature = inspect.signature(duckrate.elo_mmr).parameters
    python = {name: p.default for name, p in signature.items() if name != "results"}
    assert python == {**ELO_MMR.defaults, "priors": None, "state": None, "chunk_size": None}
    assert list(python)[-3:] == ["priors", "state", "chunk_size"]
    # a player in every contest converges to the limiting uncertainty 80
    beta_w, drift_sq = contest_scales(BETA, DRIFT, np.array([1.0, 0.5, 3.0]))
    for b, g2 in zip(beta_w, drift_sq):
        sd = 80.0
        assert 1.0 / math.sqrt(1.0 / (sd * sd + g2) + 1.0 / (b * b)) == pytest.approx(80.0, rel=1e-12)


def phase1_inputs(rng, n, tie_rate):
    mu = rng.normal(1500.0, 350.0, n)
    sd = rng.uniform(60.0, 350.0, n)
    dbar = np.sqrt(sd**2 + BETA**2) * math.sqrt(3.0) / math.pi
    noisy = mu + rng.logistic(0.0, 120.0, n)
    order = np.argsort(-noisy, kind="stable")
    ties = rng.random(n) < tie_rate
    ties[0] = False
    rank = np.maximum.accumulate(np.where(ties, 0, np.arange(1, n + 1)))
    groups = np.append(np.flatnonzero(np.r_[True, rank[1:] != rank[:-1]]), n).astype(np.int64)
    return mu[order].copy(), dbar[order].copy(), rank.astype(np.int64), groups


@pytest.mark.parametrize(
    "n, tie_rate, seed", [(2, 0.0, 0), (7, 0.5, 1), (300, 0.05, 2), (3000, 0.01, 3), (20000, 0.02, 4)]
)
def test_fast_phase1_matches_the_exact_solve(n, tie_rate, seed):
    mu, dbar, rank, groups = phase1_inputs(np.random.default_rng(seed), n, tie_rate)
    fast = np.empty(len(groups) - 1)
    exact = np.empty(len(groups) - 1)
    assert performances_fast(mu, dbar, groups, 1e-11, fast)
    if n > 3000:  # the O(n²) solve on a sample of tie groups
        picked = np.linspace(0, len(groups) - 2, 40).astype(int)
        for g in picked:
            one = np.empty(1)
            performances_exact(mu, dbar, rank, np.array([groups[g], groups[g + 1]]), False, one)
            assert abs(one[0] - fast[g]) < 1e-6
        return
    performances_exact(mu, dbar, rank, groups, False, exact)
    assert np.abs(fast - exact).max() < 1e-6
    assert np.all(np.diff(exact) < 0)  # Theorem 5.2: a better rank means a higher performance


@pytest.mark.parametrize("n, tie_rate, seed", [(600, 0.0, 5), (2750, 0.02, 6), (3000, 0.3, 7)])
def test_gaussian_series_phase1_matches_the_exact_solve(n, tie_rate, seed):
    """Elo-MMχ's phase 1 through block series (gaussian_series) against the exact O(n²) solve."""
    mu, dbar, rank, groups = phase1_inputs(np.random.default_rng(seed), n, tie_rate)
    delta = dbar * math.pi / math.sqrt(3.0)  # the Gaussian model's scale
    ok, fit = fit_block_series(mu, delta)
    assert ok
    series = np.empty(len(groups) - 1)
    exact = np.empty(len(groups) - 1)
    solve_tie_groups(mu, delta, rank, groups, True, fit, series)
    performances_exact(mu, delta, rank, groups, True, exact)
    assert np.abs(series - exact).max() < 1e-7
    assert np.all(np.diff(exact) < 0)


def test_gaussian_fast_and_exact_replays_agree():
    frame = results(n_contests=6, per_contest=700, pool=1500, seed=10, tie_rate=0.05)
    fast = duckrate.elo_mmr(frame, variant="gaussian")
    exact = duckrate.elo_mmr(frame, variant="gaussian", algorithm="exact")
    assert (fast["rating_after"] - exact["rating_after"]).abs().max() < 1e-7
    assert (fast["performance"] - exact["performance"]).abs().max() < 1e-7
    assert (fast["performance"] - exact["performance"]).abs().max() > 0.0  # the series path ran


def test_gaussian_variant_agrees_with_the_reference_implementation_on_large_contests():
    """The reference's Elo-MMχ (``mmx``; its defaults σ∞ = 80, weight limit 0.2: β = 80√6, γ = 80√0.2) over contests
    large enough for the series path."""
    from helpers.contest_peer import reference_ratings

    frame = results(n_contests=5, per_contest=600, pool=1200, seed=11, tie_rate=0.05)
    ours = duckrate.elo_mmr(frame, variant="gaussian", beta=80 * math.sqrt(6), drift=80 * math.sqrt(0.2))
    reference = reference_ratings(frame, "mmx")
    expected = np.array([reference[(c, p)] for c, p in zip(ours["contest_id"], ours["player"])])
    assert np.abs(ours["rating_after"].to_numpy() - expected[:, 0]).max() < 1e-6
    assert np.abs(ours["sd_after"].to_numpy() - expected[:, 1]).max() < 1e-6


def test_fast_and_exact_replays_agree():
    frame = results(n_contests=15, per_contest=200, pool=400, seed=9, tie_rate=0.05)
    fast = duckrate.elo_mmr(frame)
    exact = duckrate.elo_mmr(frame, algorithm="exact")
    assert (fast["rating_after"] - exact["rating_after"]).abs().max() < 1e-6
    assert (fast["performance"] - exact["performance"]).abs().max() < 1e-6


def test_gaussian_variant_is_memoryless_and_exact_for_a_two_player_contest():
    # two newcomers, one contest: the loser's performance solves v(p) + d(p) = 0 for the winner, etc.
    frame = pl.DataFrame({"contest_id": [1, 1], "played_at": [1, 1], "player": ["a", "b"], "rank": [1, 2]})
    out = duckrate.elo_mmr(frame, variant="gaussian", drift=0.0).sort("rank")
    delta = math.sqrt(350.0**2 + BETA**2)
    p_a, p_b = out["performance"].to_list()
    assert p_a - 1500.0 == pytest.approx(1500.0 - p_b)  # symmetric
    z = (p_a - 1500.0) / delta
    hazard = math.exp(-z * z / 2) / math.sqrt(2 * math.pi) / (0.5 * math.erfc(-z / math.sqrt(2)))
    assert hazard / delta - z / delta == pytest.approx(0.0, abs=1e-12)  # Q(p) = v_b(p) + d_a(p)
    w0, wp = 1 / 350.0**2, 1 / BETA**2
    assert out["rating_after"][0] == pytest.approx((w0 * 1500 + wp * p_a) / (w0 + wp), abs=1e-9)
    assert out["sd_after"][0] == pytest.approx(1 / math.sqrt(w0 + wp), abs=1e-12)


# ---- Theorem 5.5: aligned incentives -----------------------------------------------------------------


def two_contests(first_ranks, second_ranks):
    """Player 'i' in two contests against disjoint fields, so others' ratings cannot depend on i."""
    rows = [(1, f"a{k}", r) for k, r in enumerate(first_ranks[1:])] + [(1, "i", first_ranks[0])]
    rows += [(2, f"b{k}", r) for k, r in enumerate(second_ranks[1:])] + [(2, "i", second_ranks[0])]
    return pl.DataFrame(rows, schema=["contest_id", "player", "rank"], orient="row").with_columns(
        played_at=pl.col("contest_id")
    )


def final_rating(frame, **params):
    out = duckrate.elo_mmr(frame, **params)
    return out.filter((pl.col("player") == "i") & (pl.col("contest_id") == 2))["rating_after"][0]


@settings(max_examples=30, deadline=None)
@given(
    first=st.lists(st.integers(1, 6), min_size=2, max_size=8),
    second=st.lists(st.integers(1, 6), min_size=2, max_size=8),
    variant=st.sampled_from(["logistic", "gaussian"]),
    rho=st.sampled_from([0.0, 0.3, 1.0, math.inf]),
    algorithm=st.sampled_from(["fast", "exact"]),
)
def test_aligned_incentives(first, second, variant, rho, algorithm):
    """Improving i's rank in a past contest (others' relative order fixed) never lowers i's rating."""
    params = dict(variant=variant, rho=rho, algorithm=algorithm)
    if first[0] == 1:
        return
    better = [first[0] - 1] + first[1:]
    assert (
        final_rating(two_contests(better, second), **params)
        > final_rating(two_contests(first, second), **params) - 1e-9
    )


# ---- Theorem 5.6: memoryless monotonicity ------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    gap=st.floats(0.0, 400.0),
    sd=st.floats(40.0, 350.0),
    others=st.lists(st.floats(1000.0, 2000.0), min_size=0, max_size=6),
    i_wins=st.booleans(),
    variant=st.sampled_from(["gaussian", "logistic-inf"]),
)
def test_memoryless_monotonicity(gap, sd, others, i_wins, variant):
    priors = pl.DataFrame(
        {
            "player": ["i", "j"] + [f"o{k}" for k in range(len(others))],
            "rating": [1500.0 + gap, 1500.0] + others,
            "sd": [sd, sd] + [200.0] * len(others),
        }
    )
    n = 2 + len(others)
    order = (["i", "j"] if i_wins else ["j", "i"]) + [f"o{k}" for k in range(len(others))]
    rng = np.random.default_rng(len(others))
    placing = rng.permutation(n)  # where the pair and the others finish; i and j keep their order
    pair_slots = sorted(placing[:2])
    ranks = {order[0]: int(pair_slots[0]) + 1, order[1]: int(pair_slots[1]) + 1}
    for k, slot in zip(order[2:], placing[2:]):
        ranks[k] = int(slot) + 1
    frame = pl.DataFrame({"contest_id": 1, "played_at": 1, "player": list(ranks), "rank": list(ranks.values())})
    params = {"variant": "gaussian"} if variant == "gaussian" else {"rho": math.inf}
    out = {r["player"]: r for r in duckrate.elo_mmr(frame, priors=priors, **params).iter_rows(named=True)}
    i, j = out["i"], out["j"]
    assert i["sd_after"] == pytest.approx(j["sd_after"], rel=1e-12)
    if i_wins:
        assert i["rating_after"] > j["rating_after"]
    else:
        assert j["rating_after"] - j["rating_before"] > i["rating_after"] - i["rating_before"] - 1e-9


# ---- Theorem 5.7: bounded change -------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(
    w0=st.floats(1e-6, 1e-3),
    p0=st.floats(1000.0, 2000.0),
    history=st.lists(st.tuples(st.floats(800.0, 2400.0), st.floats(100.0, 300.0), st.floats(0.05, 1.0)), max_size=8),
    beta_t=st.floats(100.0, 300.0),
    sign=st.sampled_from([1.0, -1.0]),
)
def test_rating_change_is_bounded(w0, p0, history, beta_t, sign):
    """Δ± of Theorem 5.7: π/(β_t√3)·(1/β0² + π²/6 Σ ω_k/β_k²)⁻¹ <= Δ± <= π β0²/(β_t √3), β0² = 1/w0."""
    centres = np.array([p for p, _, _ in history] + [sign * 1e9])
    betas = np.array([b for _, b, _ in history] + [beta_t])
    omegas = np.array([o for _, _, o in history] + [1.0])
    args = math.pi / (math.sqrt(12.0) * betas)
    outs = omegas * math.pi / (math.sqrt(3.0) * betas)
    before = robust_average(p0, w0, centres, args, outs, 0, len(history), p0)
    after = robust_average(p0, w0, centres, args, outs, 0, len(history) + 1, before)
    change = sign * (after - before)
    lower = math.pi / (beta_t * math.sqrt(3.0)) / (w0 + math.pi**2 / 6 * float(np.sum(omegas[:-1] / betas[:-1] ** 2)))
    upper = math.pi / (w0 * beta_t * math.sqrt(3.0))
    assert lower * (1 - 1e-9) <= change <= upper * (1 + 1e-9)


# ---- validation, parameters, determinism -------------------------------------------------------------


def small():
    return pl.DataFrame(
        {
            "contest_id": [1, 1, 1, 2, 2],
            "played_at": [1, 1, 1, 2, 2],
            "player": ["a", "b", "c", "a", "c"],
            "rank": [1, 2, 2, 2, 1],
        }
    )


@pytest.mark.parametrize(
    "change, message",
    [
        ({"player": ["a", None, "c", "a", "c"]}, "column 'player' has None at (contest_id=1, player=None)"),
        ({"rank": [1, None, 2, 2, 1]}, "column 'rank' has None at (contest_id=1, player='b')"),
        ({"rank": [1, 0, 2, 2, 1]}, "column 'rank' has 0 at (contest_id=1, player='b'); expected a rank >= 1"),
        ({"rank": [1.0, 2.5, 2.0, 2.0, 1.0]}, "column 'rank' has 2.5 at (contest_id=1, player='b')"),
        (
            {"player": ["a", "b", "a", "a", "c"]},
            "column 'player' has 'a' at (contest_id=1, player='a'); expected each player at most once per contest",
        ),
        (
            {"played_at": [1, 1, 2, 2, 2]},
            "column 'played_at' has 2 at (contest_id=1, player='c'); expected one played_at per contest",
        ),
        ({"contest_id": [1, 1, None, 2, 2]}, "column 'contest_id' has None at (contest_id=None, player='c')"),
        ({"weight": [1.0, 1.0, 1.0, -2.0, -2.0]}, "column 'weight' has -2.0 at (contest_id=2, player='a')"),
        (
            {"weight": [1.0, 2.0, 1.0, 1.0, 1.0]},
            "column 'weight' has 2.0 at (contest_id=1, player='b'); expected one weight per contest",
        ),
    ],
)
def test_bad_results_name_column_key_and_value(change, message):
    frame = small().with_columns(pl.Series(name, values) for name, values in change.items())
    with pytest.raises(DuckrateInputError) as error:
        duckrate.elo_mmr(frame)
    assert message in str(error.value)


def test_missing_column_and_bad_parameters():
    with pytest.raises(DuckrateInputError, match="missing column"):
        duckrate.elo_mmr(small().drop("rank"))
    for params, message in [
        ({"rho": -1.0}, "parameter rho"),
        ({"variant": "tanh"}, "parameter variant"),
        ({"max_history": 0}, "parameter max_history"),
        ({"beta": 0.0}, "parameter beta"),
        ({"max_opponents": 1}, "parameter max_opponents"),
    ]:
        with pytest.raises(DuckrateInputError, match=message):
            duckrate.elo_mmr(small(), **params)
    with pytest.raises(DuckrateInputError, match="unknown parameter"):
        ELO_MMR.resolve({"k": 3})


def test_same_output_whatever_the_row_order():
    frame = results(n_contests=12, per_contest=30, pool=60, seed=11, n_leagues=2)
    first = duckrate.elo_mmr(frame)
    shuffled = duckrate.elo_mmr(frame.sample(fraction=1.0, shuffle=True, seed=4))
    assert first.equals(shuffled)


def test_leagues_are_independent_and_priors_apply():
    frame = results(n_contests=10, per_contest=20, pool=60, seed=2, n_leagues=2)
    both = duckrate.elo_mmr(frame)
    alone = duckrate.elo_mmr(frame.filter(pl.col("league") == "league_1"))
    assert both.filter(pl.col("league") == "league_1").equals(alone)
    player = frame["player"][0]
    priors = pl.DataFrame({"player": [player], "rating": [2100.0], "sd": [90.0]})
    first = duckrate.elo_mmr(frame, priors=priors).filter(pl.col("player") == player).sort("seq").row(0, named=True)
    assert first["rating_before"] == 2100.0
    assert first["sd_before"] == pytest.approx(math.sqrt(90.0**2 + DRIFT**2))


def test_opponent_subsampling_uses_the_nearest_ratings():
    frame = results(n_contests=8, per_contest=60, pool=100, seed=6)
    everyone = duckrate.elo_mmr(frame, algorithm="exact")
    window = duckrate.elo_mmr(frame, max_opponents=1000)  # wider than any contest: no subsampling
    assert (window["rating_after"] - everyone["rating_after"]).abs().max() < 1e-6
    sampled = duckrate.elo_mmr(frame, max_opponents=20)
    assert (sampled["rating_after"] - everyone["rating_after"]).abs().max() > 0
    # an approximation: the final ratings still agree closely in order with the full solve
    final = lambda out: (
        out.sort("seq").group_by("player", maintain_order=True).agg(pl.col("rating_after").last()).sort("player")
    )
    assert np.corrcoef(final(sampled)["rating_after"], final(everyone)["rating_after"])[0, 1] > 0.95


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_subsampled_solves_find_the_zero_of_q_over_each_window(seed):
    """The subsampled phase 1 solves log P - log N = 0 (P, N: Q's positive and negative parts); its roots
    are Q's roots over each player's window of distinct terms (equal (μ, scale) merged, as the reference
    buckets them), found here by bisection on Q itself, the window taken by hand."""
    from duckrate.systems.elo_mmr.phase1 import merged_terms, performances_subsampled, q_value_merged

    rng = np.random.default_rng(seed)
    n, window = 300, 40
    mu = rng.normal(1500, 350, n)
    scale = rng.uniform(150, 300, n) * math.sqrt(3) / math.pi
    newcomers = rng.choice(n, 60, replace=False)  # one crowd sharing the prior: one merged term
    mu[newcomers], scale[newcomers] = 1500.0, 350.0 * math.sqrt(3) / math.pi
    rank = np.argsort(np.argsort(-(mu + rng.normal(0, 300, n)))) + 1
    rank[rng.integers(0, n, 20)] = rank[rng.integers(0, n, 20)]  # some ties
    by_rank = np.argsort(rank, kind="stable")  # the kernel takes the contest in rank order
    mu, scale, rank = mu[by_rank].copy(), scale[by_rank].copy(), rank[by_rank].copy()
    out = np.empty(n)
    performances_subsampled(mu, scale, rank, window, False, out)
    terms = merged_terms(mu, scale, rank)
    distinct = sorted(set(zip(mu.tolist(), scale.tolist())))
    assert len(terms[0]) == len(distinct) == n - 59
    for k in range(n):
        own = distinct.index((mu[k], scale[k]))
        lo = min(max(own - window // 2, 0), len(distinct) - window)
        low, high = mu.min() - 60 * scale.max(), mu.max() + 60 * scale.max()
        while high - low > 1e-10:  # Q decreases: bisection to the last few bits
            middle = 0.5 * (low + high)
            q, _ = q_value_merged(middle, terms, lo, lo + window, rank[k], False)
            low, high = (middle, high) if q > 0 else (low, middle)
        assert out[k] == pytest.approx(0.5 * (low + high), abs=1e-9)


def test_the_robust_average_does_not_bounce_between_the_ends_of_its_bracket():
    """A history where plain Newton steps from the start alternate between ~1503 and ~1973 for ever (the
    tanh sum flattens on both sides): the safeguard bisects such steps and finds the root bisection finds."""
    from duckrate.systems.elo_mmr.history import robust_average

    history = [(800.0, 137.5, 0.42578125), (800.0, 138.25, 0.87890625), (1071.0, 169.5, 0.42578125)]
    history += [(1735.0, 135.0, 0.466796875), (2203.0, 106.0, 0.060546875), (1667.5, 100.0, 0.8)]
    history += [(1824.125, 100.0, 0.3359375), (2046.25, 150.125, 0.9321755568646898)]
    centres = np.array([p for p, _, _ in history])
    betas = np.array([b for _, b, _ in history])
    args = math.pi / (math.sqrt(12.0) * betas)
    outs = np.array([o for _, _, o in history]) * math.pi / (math.sqrt(3.0) * betas)

    def slope_of_l(x):
        return 1e-5 * (x - 1974.0) + float(np.sum(outs * np.tanh(args * (x - centres))))

    low, high = 800.0, 2400.0
    for _ in range(200):
        low, high = (0.5 * (low + high), high) if slope_of_l(0.5 * (low + high)) < 0 else (low, 0.5 * (low + high))
    assert robust_average(1974.0, 1e-5, centres, args, outs, 0, len(history), 1974.0) == pytest.approx(low, abs=1e-9)
