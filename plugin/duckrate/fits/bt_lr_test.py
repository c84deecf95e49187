"""Does Bradley-Terry fit these games? The tests of Tang, Wang & Jin, Section 3.1 and Appendices B-C.

``bt_lr_test(matches)`` runs, per league, six tests and returns one row per (league, test):

``split``
    Symmetrise (swap each game's sides with probability ½, seeded), split the games 50/50 at random,
    fit ridge Bradley-Terry (λ = 10) on the train half, and give every test game the features
    ``g_t = [θ_train[i_t], θ_train[j_t]]``. The likelihood-ratio statistic
    ``Λ = 2 [min_θ L_test(θ) - min_{θ,α} L̃_test(θ, α)]`` of the augmented logistic model is referred to
    ``1.25 χ²`` (the Sur et al. correction the paper applies). One of the two directions of α adds
    ``θ_train[i] - θ_train[j]``, which the free θ absorbs exactly (it is a linear function of the pair
    design), so Λ has **1** degree of freedom, not the paper's 2; counting 2 would make the test
    conservative (see docs/bradley-terry.md, "Which test answers which question").
``martingale_0.01``, ``martingale_0.08``
    The same statistic over all games with ``g_t = [θ_t[i_t], θ_t[j_t]]`` from online Elo (natural units,
    η = 0.01 and 0.08) before game t (Appendix B.3); these change over time, so 2 degrees of freedom.
``martingale_split_0.01``, ``martingale_split_0.08`` (not in the paper)
    The martingale tests as the paper states them are not calibrated (they reject Bradley-Terry data:
    the online ratings carry the luck of the very outcomes the per-player fit overfits; see docs/bradley-terry.md).
    These variants keep the time-respecting features but take them from Elo run over the *train half*
    only (its state just before each test game) and test on the test half: features independent of the
    test outcomes, 2 degrees of freedom.
``lowrank``
    For dense data (Appendix B.1): ``g_t = [u_i v_j, u_j v_i]`` from the rank-2 skew model
    ``σ(u_i v_j - u_j v_i)`` fitted on the train half by gradient descent with early stopping on a
    held-out fifth of it; 2 degrees of freedom.
``matchmaking``
    Correlation of ``θ_train[i_t]`` and ``θ_train[j_t]`` over the test games (Appendix C), against what
    pairing independent of strength gives when a player never meets itself (for N equally active
    players, ``-1/(N-1)``): Fisher's z, two-sided. ``statistic`` is the correlation.
``order_permutation``
    Elo (η = ``permutation_eta``) over the games in their real order against ``permutations`` random
    orders (Appendix C, "bootstrap experiments"): each run's final ratings are compared (cosine) with
    the mean of the other runs', and the p-value is the rank of the real order's similarity among all
    ``permutations + 1`` runs, two-sided (exact under exchangeable games). ``statistic`` is that cosine.
    The random orders are uniform, drawn by the cache-friendly Rao-Sandelius shuffle (:mod:`.random_orders`).

The test-half fits carry a tiny ridge (``test_ridge``) on θ in both models, so the minima exist even for
a player who won every test game; as it goes to 0 the statistic tends to the paper's. Results depend only
on the games and ``seed``: never on row order or thread count.
"""

from __future__ import annotations

import math
import zlib
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.matches import PreparedMatches, columns_from_polars, prepare_matches
from duckrate.core.parameters import Parameter, Signature
from duckrate.core.scales import LN10
from duckrate.fits.bradley_terry.solve import bt_theta
from duckrate.fits.game_logistic import fit_games, log_loss
from duckrate.fits.league_games import league_rows, name_ordered_codes
from duckrate.fits.random_orders import MAX_RECORDS, bucket_bits, largest_bucket, lay_out_buckets, shuffle_bucket
from duckrate.systems.elo import elo_replay_kernel

TESTS = (
    "split",
    "martingale_0.01",
    "martingale_0.08",
    "lowrank",
    "matchmaking",
    "order_permutation",
    "martingale_split_0.01",
    "martingale_split_0.08",
)
MARTINGALE_ETAS = {"martingale_0.01": 0.01, "martingale_0.08": 0.08}
SPLIT_MARTINGALE_ETAS = {"martingale_split_0.01": 0.01, "martingale_split_0.08": 0.08}
SUR_FACTOR = 1.25
OUTPUT_SCHEMA = {
    "league": pl.Utf8,
    "test": pl.Utf8,
    "n_players": pl.Int64,
    "n_games": pl.Int64,
    "games_per_player": pl.Float64,
    "statistic": pl.Float64,
    "df": pl.Float64,
    "p_value": pl.Float64,
    "seed": pl.Int64,
}

PARAMETERS = (
    Parameter("seed", 0, "an integer seed", lambda v: math.isfinite(v) and 0 <= v < 2**63, integer=True),
    Parameter(
        "ridge",
        10.0,
        "a finite ridge λ > 0 for the train-half fit (10 in the paper)",
        lambda v: math.isfinite(v) and v > 0,
    ),
    Parameter(
        "test_ridge", 1e-3, "a finite test_ridge >= 0 on θ in the test-half fits", lambda v: math.isfinite(v) and v >= 0
    ),
    Parameter(
        "permutations",
        199,
        "an integer number of random orders between 1 and 10000",
        lambda v: 1 <= v <= 10_000,
        integer=True,
    ),
    Parameter(
        "permutation_eta",
        0.02,
        "a finite Elo step η > 0 (natural units) for order_permutation",
        lambda v: math.isfinite(v) and v > 0,
    ),
    Parameter(
        "lowrank_epochs",
        300,
        "an integer number of epochs between 1 and 100000",
        lambda v: 1 <= v <= 100_000,
        integer=True,
    ),
)
BT_LR_TEST = Signature(name="bt_lr_test", parameters=PARAMETERS)


# --------------------------------------------------------------------------------------------------
# Features


def _online_elo(a, b, target, weight, n, eta, order=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Elo in natural units (p = σ(θ_a - θ_b), θ += η(o - p)) over the games in ``order`` (default: as
    given): the ratings of both sides before each game, and the final ratings. Runs the Elo kernel itself."""
    t = a.shape[0]
    order = np.arange(t, dtype=np.int64) if order is None else order
    rating = np.zeros(n)
    seq, expected = np.empty(t, np.int64), np.empty(t)
    before_a, before_b, after_a, after_b = (np.empty(t) for _ in range(4))
    elo_replay_kernel(
        order,
        a,
        b,
        np.zeros(t, np.int64),
        target,
        weight,
        rating,
        np.ones(1, np.int64),
        np.zeros(1, np.int64),
        eta,
        LN10,
        0.0,
        0.0,
        0.0,
        False,
        (seq, expected, before_a, before_b, after_a, after_b),
    )
    return before_a, before_b, rating


#: The permutation test's game records, one row per game, so that a game's players and score move together
#: when the games are shuffled. Most games fit one float64 (exact below 2^53): ``a·2^27 + b·4 + 2·score``
#: for unweighted games with scores 0, ½ or 1 and players below 2^25 (8 bytes a game, half the memory
#: traffic). Otherwise ``(a·2^26 + b, score)`` or ``(a·2^26 + b, score, weight)``.
PACKED_SHIFT, PACKED_PLAYERS = 2.0**27, 2**25
PAIR_SHIFT = 2.0**26


@inlined_kernel
def _elo_over(games, count, eta, rating):
    """Natural-unit Elo over the first ``count`` game records of ``games`` in their order, continuing
    ``rating`` (the permutation test's many runs; the Elo kernel's update without its per-game outputs)."""
    width = games.shape[1]
    for position in range(count):
        packed = np.int64(games[position, 0])
        if width == 1:
            i = packed >> 27
            j = (packed >> 2) & 0x1FFFFFF
            score = (packed & 3) * 0.5
        else:
            i = packed >> 26
            j = packed & 0x3FFFFFF
            score = games[position, 1]
        w = games[position, 2] if width == 3 else 1.0
        change = eta * w * (score - 1.0 / (1.0 + math.exp(rating[j] - rating[i])))
        rating[i] += change
        rating[j] -= change


#: Random orders per task of the permutation test: small tasks fill the cores while the fits run.
RUNS_PER_TASK = 8


@kernel
def _random_order_finals(games, eta, seeds, bits, finals):
    """``finals[r]``: the final Elo ratings over the games in the uniform random order drawn from
    ``seeds[r]`` (:func:`~duckrate.fits.random_orders.shuffle_into`'s order, read bucket after bucket,
    each bucket put in order in a small buffer that stays in cache). A run depends only on its seed."""
    laid_out = np.empty_like(games)
    ends = np.empty(1 << bits, np.int64)
    scratch = np.empty((0, games.shape[1]))
    for r in range(seeds.shape[0]):
        rating = finals[r]
        rating[:] = 0.0
        state = lay_out_buckets(games, seeds[r], bits, laid_out, ends)
        largest = largest_bucket(ends)
        if largest > scratch.shape[0]:
            scratch = np.empty((largest, games.shape[1]))
        first = 0
        for k in range(ends.shape[0]):
            last = ends[k]
            state = shuffle_bucket(laid_out, first, last, scratch, state)
            _elo_over(scratch, last - first, eta, rating)
            first = last


@kernel
def _real_order_finals(games, eta, rating):
    """``rating``: the final Elo ratings over the games in their real order."""
    rating[:] = 0.0
    _elo_over(games, games.shape[0], eta, rating)


@kernel
def _lowrank_epoch(a, b, target, weight, u, v, grad_u, grad_v):
    """Loss and gradient of Σ w ℓ(o, σ(u_i v_j - u_j v_i)) over the given games."""
    weighted = weight.shape[0] == a.shape[0]
    grad_u[:] = 0.0
    grad_v[:] = 0.0
    total = 0.0
    for t in range(a.shape[0]):
        i, j = a[t], b[t]
        z = u[i] * v[j] - u[j] * v[i]
        w = weight[t] if weighted else 1.0
        loss, p = log_loss(z, target[t])
        total += w * loss
        r = w * (p - target[t])
        grad_u[i] += r * v[j]
        grad_v[j] += r * u[i]
        grad_u[j] -= r * v[i]
        grad_v[i] -= r * u[j]
    return total


def _lowrank_draws(rng, n_train: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The low-rank fit's randomness, drawn up front: the held-out split of the train games and the start."""
    order = rng.permutation(n_train)
    u = rng.normal(0.0, 0.1, n)
    v = 1.0 + rng.normal(0.0, 0.1, n)
    return order, u, v


def _lowrank_features(a, b, target, weight, n, train, test, draws, epochs) -> np.ndarray:
    """Fit u, v on ``train`` (a random fifth held out for early stopping), then features of ``test``."""
    order, u, v = draws
    shuffled = train[order]
    held = np.sort(shuffled[: max(1, train.size // 5)])
    fit = np.sort(shuffled[max(1, train.size // 5) :])
    u = u.copy()
    v = v.copy()
    a_fit, b_fit, o_fit = a[fit], b[fit], target[fit]  # gathered once, not every epoch
    a_held, b_held, o_held = a[held], b[held], target[held]
    games = np.bincount(a_fit, minlength=n) + np.bincount(b_fit, minlength=n)
    step = 1.0 / (1.0 + games)  # Jacobi-scaled gradient descent: each player moves by its own curvature
    gu, gv = np.empty(n), np.empty(n)
    hu, hv = np.empty(n), np.empty(n)
    w_fit = weight if weight.shape[0] == 1 else weight[fit]
    w_held = weight if weight.shape[0] == 1 else weight[held]
    best = (np.inf, u.copy(), v.copy())
    patience = 0
    for _ in range(epochs):
        _lowrank_epoch(a_fit, b_fit, o_fit, w_fit, u, v, gu, gv)
        u -= 2.0 * step * gu
        v -= 2.0 * step * gv
        held_loss = _lowrank_epoch(a_held, b_held, o_held, w_held, u, v, hu, hv)
        if not np.isfinite(best[0]) or held_loss < best[0] - 1e-9 * abs(best[0]):
            best, patience = (held_loss, u.copy(), v.copy()), 0
        else:
            patience += 1
            if patience >= 10:
                break
    u, v = best[1], best[2]
    return np.column_stack([u[a[test]] * v[b[test]], u[b[test]] * v[a[test]]])


# --------------------------------------------------------------------------------------------------
# Statistics


def _likelihood_ratio(a, b, target, weight, n, features, test_ridge, null) -> float:
    """Λ = 2 [f(null fit) - f(augmented fit)], the augmented fit started from the null one."""
    alternative = fit_games(a, b, target, weight, n, features, ridge=test_ridge, start=null.theta)
    return max(0.0, 2.0 * (null.value - alternative.value))


def _lr_row(statistic: float, df: int) -> tuple[float, float, float]:
    from scipy import stats  # imported when used: scipy.stats costs 0.4 s at import

    return statistic, float(df), float(stats.chi2.sf(statistic / SUR_FACTOR, df))


def _matchmaking(
    x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray, theta: np.ndarray, n: int
) -> tuple[float, float, float]:
    """Correlation of the two sides' train ratings over the test games, against its value under pairing
    independent of strength among distinct players with the observed activity q (the share of test-game
    sides each player takes): E[x y] = ((Σ q θ)² - Σ q² θ²) / (1 - Σ q²)."""
    count = x.size
    if count < 4 or np.std(x) == 0.0 or np.std(y) == 0.0:
        return float("nan"), float(max(count - 2, 0)), float("nan")
    r = float(np.corrcoef(x, y)[0, 1])
    q = (np.bincount(a, minlength=n) + np.bincount(b, minlength=n)) / (2.0 * count)
    mean = float(q @ theta)
    second = float(q @ theta**2)
    concentration = float(q @ q)
    cross = (mean**2 - float((q * q) @ theta**2)) / (1.0 - concentration)
    variance = second - mean**2
    r0 = (cross - mean**2) / variance if variance > 0 else 0.0
    z = (math.atanh(max(min(r, 1 - 1e-15), -1 + 1e-15)) - math.atanh(max(min(r0, 1 - 1e-15), -1 + 1e-15))) * math.sqrt(
        count - 3
    )
    from scipy import stats

    return r, float(count - 2), float(2.0 * stats.norm.sf(abs(z)))


@kernel
def _cosine_to_others(finals):
    """For each run r: cosine of finals[r] with the sum of the other runs' finals."""
    runs, n = finals.shape
    total = np.zeros(n)
    for r in range(runs):
        for i in range(n):
            total[i] += finals[r, i]
    out = np.empty(runs)
    for r in range(runs):
        dot = 0.0
        own = 0.0
        other = 0.0
        for i in range(n):
            rest = total[i] - finals[r, i]
            dot += finals[r, i] * rest
            own += finals[r, i] * finals[r, i]
            other += rest * rest
        out[r] = dot / math.sqrt(own * other) if own > 0.0 and other > 0.0 else 0.0
    return out


def _game_records(a, b, target, weight, n) -> np.ndarray:
    """The permutation runs' game records (:data:`PACKED_SHIFT`: one float64 a game where it fits)."""
    if n >= 2**26:
        raise ValueError(f"order_permutation: at most {2**26 - 1} players per league")
    if a.shape[0] > MAX_RECORDS:
        raise ValueError(f"order_permutation: at most {MAX_RECORDS} games per league")
    weighted = weight.shape[0] == a.shape[0]
    if not weighted and n <= PACKED_PLAYERS and bool(np.all((target == 0.0) | (target == 0.5) | (target == 1.0))):
        return (a.astype(np.float64) * PACKED_SHIFT + b.astype(np.float64) * 4.0 + target * 2.0).reshape(-1, 1)
    games = np.empty((a.shape[0], 3 if weighted else 2))
    games[:, 0] = a.astype(np.float64) * PAIR_SHIFT + b
    games[:, 1] = target
    if weighted:
        games[:, 2] = weight
    return games


def _submit_permutation_runs(pool, games, n, eta, seeds) -> tuple[np.ndarray, list]:
    """The real order's run and the random orders' runs as tasks of ``pool``, in chunks of
    :data:`RUNS_PER_TASK`: ``(finals, futures)``; row 0 of ``finals`` is the real order, row r the order
    of ``seeds[r - 1]``, filled when the futures are done. Each run writes its own row, so the rows do not
    depend on which task runs where or when."""
    finals = np.empty((seeds.shape[0] + 1, n))
    bits = bucket_bits(games.shape[0])
    futures = [pool.submit(_real_order_finals, games, eta, finals[0])]
    for first in range(0, seeds.shape[0], RUNS_PER_TASK):
        last = min(first + RUNS_PER_TASK, seeds.shape[0])
        futures.append(
            pool.submit(_random_order_finals, games, eta, seeds[first:last], bits, finals[first + 1 : last + 1])
        )
    return finals, futures


def _order_permutation_row(finals) -> tuple[float, float, float]:
    """Statistic and p-value of ``order_permutation`` from the runs' final ratings (row 0: real order)."""
    permutations = finals.shape[0] - 1
    similarity = _cosine_to_others(finals)
    below = np.count_nonzero(similarity <= similarity[0])
    above = np.count_nonzero(similarity >= similarity[0])
    p_value = min(1.0, 2.0 * min(below, above) / (permutations + 1))  # two-sided rank p-value
    return float(similarity[0]), float("nan"), p_value


# --------------------------------------------------------------------------------------------------
# One league


def _league_generator(seed: int, league) -> np.random.Generator:
    """Randomness of one league: the seed and a stable digest of the league's name (never of its position)."""
    tag = zlib.crc32(("" if league is None else "L:" + str(league)).encode("utf-8"))
    return np.random.Generator(np.random.PCG64([seed, tag]))


def _league_tests(a, b, target, weight, n, league, params) -> list[dict]:
    """The six tests over one league's games (a, b canonical player codes, rows in replay order)."""
    rng = _league_generator(params["seed"], league)
    t = a.shape[0]
    flip = rng.random(t) < 0.5  # symmetrise: the tests are of the side-free model (Appendix B.1)
    a, b = np.where(flip, b, a), np.where(flip, a, b)
    target = np.where(flip, 1.0 - target, target)
    in_train_half = np.zeros(t, dtype=np.bool_)
    in_train_half[rng.permutation(t)[: t // 2]] = True  # a random half, as sorted row numbers
    train, test = np.flatnonzero(in_train_half), np.flatnonzero(~in_train_half)
    w_train = weight if weight.shape[0] == 1 else weight[train]
    w_test = weight if weight.shape[0] == 1 else weight[test]
    a_test, b_test, o_test = a[test], b[test], target[test]
    ridge0 = params["test_ridge"]
    # the rest of the randomness, drawn in the order the tests use it, so the tests can then run concurrently
    lowrank_draws = _lowrank_draws(rng, train.size, n)
    seeds = rng.integers(0, 2**63, params["permutations"], dtype=np.int64).astype(np.uint64)
    in_train = np.where(in_train_half, 1.0 if weight.shape[0] == 1 else weight, 0.0)  # the train games' weights
    records = _game_records(a, b, target, weight, n)

    def martingale_features(eta):
        before_a, before_b, _ = _online_elo(a, b, target, weight, n, eta)
        return np.column_stack([before_a, before_b])

    def split_martingale_features(eta):  # Elo over the train games only; test games weigh 0
        before_a, before_b, _ = _online_elo(a, b, target, in_train, n, eta)
        return np.column_stack([before_a[test], before_b[test]])

    # Independent pieces run on a pool of as many threads as numba may use (the kernels release the GIL);
    # each is deterministic on its own, so the results do not depend on which finishes first or where.
    # Every piece is submitted after the pieces it waits for, so a waiting piece never holds back one it
    # needs; the permutation runs come last, in small tasks that keep every thread busy to the end.
    with ThreadPoolExecutor(max_workers=max(1, numba.get_num_threads())) as pool:
        # the train-half ridge fit is the package's Bradley-Terry fit (pair-aggregated Newton-CG)
        train_fit = pool.submit(
            bt_theta,
            a[train],
            b[train],
            target[train],
            n,
            None if weight.shape[0] == 1 else w_train,
            ridge=params["ridge"],
            tol=1e-9,
        )
        null_test = pool.submit(fit_games, a_test, b_test, o_test, w_test, n, None, ridge=ridge0)  # split, lowrank
        null_all = pool.submit(fit_games, a, b, target, weight, n, None, ridge=ridge0)  # both martingale tests
        lowrank = pool.submit(
            _lowrank_features, a, b, target, weight, n, train, test, lowrank_draws, params["lowrank_epochs"]
        )
        features = {name: pool.submit(martingale_features, eta) for name, eta in MARTINGALE_ETAS.items()}
        features |= {name: pool.submit(split_martingale_features, eta) for name, eta in SPLIT_MARTINGALE_ETAS.items()}

        def test_half(name, get_features, df):
            return name, _lr_row(
                _likelihood_ratio(a_test, b_test, o_test, w_test, n, get_features(), ridge0, null_test.result()), df
            )

        def all_games(name, df):
            return name, _lr_row(
                _likelihood_ratio(a, b, target, weight, n, features[name].result(), ridge0, null_all.result()), df
            )

        def split_features():
            theta = train_fit.result().theta
            return np.column_stack([theta[a_test], theta[b_test]])

        statistics = [pool.submit(test_half, "split", split_features, 1)]
        statistics += [pool.submit(all_games, name, 2) for name in MARTINGALE_ETAS]
        statistics += [pool.submit(test_half, name, features[name].result, 2) for name in SPLIT_MARTINGALE_ETAS]
        statistics.append(pool.submit(test_half, "lowrank", lowrank.result, 2))
        finals, runs = _submit_permutation_runs(pool, records, n, params["permutation_eta"], seeds)
        results = dict(future.result() for future in statistics)
        for run in runs:
            run.result()
        results["order_permutation"] = _order_permutation_row(finals)
    theta = train_fit.result().theta
    results["matchmaking"] = _matchmaking(theta[a_test], theta[b_test], a_test, b_test, theta, n)
    games = float(t if weight.shape[0] == 1 else weight.sum())
    return [
        {
            "league": league,
            "test": name,
            "n_players": n,
            "n_games": t,
            "games_per_player": 2.0 * games / n,
            "statistic": results[name][0],
            "df": results[name][1],
            "p_value": results[name][2],
            "seed": params["seed"],
        }
        for name in TESTS
    ]


def _league_games(prepared: PreparedMatches, rows: np.ndarray, local: np.ndarray, n: int):
    """One league's games (``rows`` in replay order) as player codes 0..n-1 in name order, scores, weights."""
    weight = prepared.weight if prepared.weight.shape[0] == 1 else np.ascontiguousarray(prepared.weight[rows])
    return (
        local[prepared.state_a[rows]],
        local[prepared.state_b[rows]],
        np.ascontiguousarray(prepared.score[rows]),
        weight,
    )


def lr_test_columns(columns: dict[str, pa.Array], given: dict, table: str = "matches") -> pl.DataFrame:
    """The tests over a table given as Arrow columns (the SQL path and the Python function share this)."""
    params = BT_LR_TEST.resolve(given)
    prepared = prepare_matches(columns, table)
    local, members = name_ordered_codes(prepared)
    rows = []
    for league, league_games in enumerate(league_rows(prepared)):
        if league_games.size:
            a, b, target, weight = _league_games(prepared, league_games, local, members[league].size)
            rows.extend(
                _league_tests(a, b, target, weight, members[league].size, prepared.league_names[league], params)
            )
    out = pl.DataFrame(rows, schema=OUTPUT_SCHEMA).sort("league", nulls_last=True, maintain_order=True)
    return out.with_columns(pl.col("statistic", "df", "p_value").fill_nan(None))  # not applicable: NULL


def bt_lr_test(
    matches: pl.DataFrame,
    seed: int = 0,
    ridge: float = 10.0,
    test_ridge: float = 1e-3,
    permutations: int = 199,
    permutation_eta: float = 0.02,
    lowrank_epochs: int = 300,
) -> pl.DataFrame:
    """Likelihood-ratio and related tests of the Bradley-Terry model, per league (module docstring).

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` and
        optionally ``league`` and ``weight`` (a game's weight multiplies its log-likelihood).
    seed : seeds the side flips, the split, the low-rank start and the random orders.
    ridge : λ of the train-half fit (10 in the paper).
    test_ridge : ridge on θ in both test-half fits (keeps the minima finite; 0 = the paper's unpenalised fits).
    permutations : random orders in the order-permutation test (the paper used 100 runs; 199 lets the
        two-sided p-value reach 0.01).
    permutation_eta : Elo step (natural units) of the order-permutation test (0.02 in the paper's Figure 4).
    lowrank_epochs : at most this many gradient epochs for the low-rank features (early stopping ends sooner).

    Returns
    -------
    DataFrame, one row per (league, test): ``league, test, n_players, n_games, games_per_player (2T/N),
    statistic, df, p_value, seed``.
    """
    return lr_test_columns(
        columns_from_polars(matches),
        dict(
            seed=seed,
            ridge=ridge,
            test_ridge=test_ridge,
            permutations=permutations,
            permutation_eta=permutation_eta,
            lowrank_epochs=lowrank_epochs,
        ),
    )
