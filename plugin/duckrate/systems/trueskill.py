"""TrueSkill for two players: Gaussian skill beliefs updated by moment matching on a truncated Gaussian.

Herbrich, Minka & Graepel, "TrueSkill™: A Bayesian Skill Rating System" (NIPS 2006), two-player case.
Each player's skill is N(μ, σ²); before a game both variances grow by the dynamics τ² (σ'² = σ² + τ²).
Performances add noise β², so the performance difference is d ~ N(μ_a - μ_b, c²) with
``c² = 2β² + σ_a'² + σ_b'²``. A win means d > ε, a draw |d| <= ε, with the draw margin
``ε = Φ⁻¹((p_draw + 1)/2) · sqrt(2) · β``. Conditioning d on the result and matching moments gives, with
``t = (μ_a - μ_b)/c`` and ``h = ε/c``, and Z = d/c - t the standardised difference,

    v = E[Z | result],   w = 1 - Var[Z | result],
    μ_a' = μ_a + σ_a'²/c · v,    μ_b' = μ_b - σ_b'²/c · v,
    σ_i'' ² = σ_i'² (1 - σ_i'²/c² · w)   (evaluated as σ_i'² (c² - σ_i'² + σ_i'² (1 - w)) / c²).

For a win of A, Z > h - t: ``v = φ(t-h)/Φ(t-h)``, ``w = v (v + t - h)`` (the paper's V_win, W_win); for a
draw, -h - t <= Z <= h - t (V_draw, W_draw). The forecast before the match is ``P(A wins) = Φ(t - h)``,
``P(draw) = Φ(h - t) - Φ(-h - t)`` and ``expected_a = P(A wins) + ½ P(draw)``.

The truncated-Gaussian moments are evaluated so that they stay finite and accurate for any t: the
Laplace continued fraction of the Mills ratio in the far tail (where φ and Φ underflow and ``v (v + x)``
cancels), a Hermite series for narrow draw intervals (small draw probability; the limit ε = 0 gives
v = -t, w = 1), and erf/erfc forms that avoid subtracting nearly equal probabilities elsewhere.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from duckrate.core.errors import DuckrateInputError
from duckrate.core.forecast import Forecast, Players, Probabilities, column
from duckrate.core.jit import kernel
from duckrate.core.matches import PreparedMatches, reject_weights, row_key_text
from duckrate.core.parameters import Parameter
from duckrate.core.priors import check_positive_priors, initial_states
from duckrate.core.protocol import Preset
from duckrate.core.scales import TRUESKILL_MU
from duckrate.systems.saved_state import EndState, StartState, StateField
from duckrate.systems.two_player import ReplaySystem, kernel_outputs, new_outputs, replay_frame

_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TAIL = 3.0  # from here on the upper-tail moments come from the continued fraction
_NARROW = 1.0  # draw intervals with h·(1 + |t|) below this use the Hermite series
_SERIES_TERMS = 40


# --------------------------------------------------------------------------------------------------
# Moments of the truncated standard normal. Every function returns Var = 1 - w rather than w: the
# variance update needs 1 - w, which would cancel badly if formed from w near 1.


@kernel
def _pdf(x):
    return _INV_SQRT_2PI * math.exp(-0.5 * x * x)


@kernel
def _upper_q(x):
    """P(Z > x) for Z ~ N(0, 1), accurate in relative terms in the upper tail."""
    return 0.5 * math.erfc(x * _SQRT_HALF)


@kernel
def _mills_tail(alpha):
    """(T1, T2) of the Laplace continued fraction R(α) = 1/(α + T1), T_n = n/(α + T_{n+1}); α >= _TAIL.

    Then E[Z | Z > α] = α + T1 and Var[Z | Z > α] = T1 (T2 - T1), both free of cancellation.
    The depths give full double precision (checked against 40-digit values: 59 terms are needed at
    α = 3, 41 at 4, 30 at 5, 24 at 6, 16 at 10, 10 at 20).
    """
    if alpha < 4.0:
        depth = 64 if alpha < 3.5 else 52
    elif alpha < 6.0:
        depth = 44 if alpha < 5.0 else 32
    else:
        depth = 26 if alpha < 10.0 else (16 if alpha < 20.0 else 12)
    t = 0.0
    for n in range(depth, 1, -1):
        t = n / (alpha + t)
    t1 = 1.0 / (alpha + t)
    return t1, t


@kernel
def upper_moments(alpha):
    """Mean and variance of Z ~ N(0, 1) conditioned on Z > α (the win case, α = h - t).

    ``mean`` is the paper's V_win(t, ε) and ``1 - var`` its W_win. Finite for every finite α: for
    α -> -inf the mean tends to 0 and the variance to 1; for α -> +inf the mean tends to α and the
    variance to 0 like 1/α².
    """
    if alpha >= _TAIL:
        t1, t2 = _mills_tail(alpha)
        return alpha + t1, t1 * (t2 - t1)
    mean = _pdf(alpha) / _upper_q(alpha)
    var = 1.0 - mean * (mean - alpha)
    return mean, min(max(var, 0.0), 1.0)


@kernel
def _narrow_series(s, h):
    """(z0, mean_y, var_y) for Z = s + y restricted to y in [-h, h], by a Hermite series (h·(1 + s) small).

    The density of y is ∝ exp(-s y - y²/2) = Σ He_n(s) (-y)^n / n!. With g_n = He_n(s) h^n / n!
    (g_{n+1} = (s h g_n - h² g_{n-1}) / (n + 1)) the moments of y over [-h, h], divided by 2h, are
    z0 = Σ_even g_n/(n+1), z1 = -h Σ_odd g_n/(n+2) and z2 = h² Σ_even g_n/(n+3); P(s - h <= Z <= s + h)
    = φ(s) · 2h · z0. For h = 0 this gives z0 = 1 and the point mass at s.
    """
    g_prev, g = 1.0, s * h
    z0, z1, z2 = 1.0, 0.0, 1.0 / 3.0
    for n in range(1, _SERIES_TERMS):
        if n % 2 == 1:
            z1 += g / (n + 2)
        else:
            z0 += g / (n + 1)
            z2 += g / (n + 3)
        if abs(g) + abs(g_prev) < 1e-18 * z0:
            break
        g_prev, g = g, (s * h * g - h * h * g_prev) / (n + 1)
    mean_y = -h * z1 / z0
    return z0, mean_y, h * h * z2 / z0 - mean_y * mean_y


@kernel
def interval_moments(s, h):
    """Mean and variance of Z ~ N(0, 1) conditioned on s - h <= Z <= s + h, for s >= 0, h >= 0.

    A draw with t = (μ_a - μ_b)/c conditions the standardised difference on [-h - t, h - t]; by
    reflection that is this interval with s = |t| and the mean negated when t > 0, so the paper's
    V_draw(t, ε) = -sign(t)·mean and W_draw = 1 - var. h = 0 gives the limit mean = s, var = 0.
    """
    if h * (1.0 + s) <= _NARROW:
        _, mean_y, var = _narrow_series(s, h)
        return s + mean_y, min(max(var, 0.0), 1.0)
    alpha = s - h
    beta = s + h
    if alpha >= _TAIL:
        # Both ends in the far upper tail: combine the one-sided moments at α and β with
        # ρ = P(Z > β) / P(Z > α) = exp(-2hs) · λ(α)/λ(β), never forming the underflowing probabilities.
        t1a, t2a = _mills_tail(alpha)
        t1b, t2b = _mills_tail(beta)
        mean_a, var_a = alpha + t1a, t1a * (t2a - t1a)
        mean_b, var_b = beta + t1b, t1b * (t2b - t1b)
        gap = 2.0 * h + (t1b - t1a)  # λ(β) - λ(α)
        log_rho = -2.0 * h * s + math.log1p(-gap / mean_b)
        rho = math.exp(log_rho)
        one_minus_rho = -math.expm1(log_rho)
        mean = mean_a - rho * gap / one_minus_rho
        var = (var_a - rho * var_b) / one_minus_rho - rho * gap * gap / (one_minus_rho * one_minus_rho)
        return mean, min(max(var, 0.0), 1.0)
    mass = _interval_mass(s, h)
    pdf_alpha = _pdf(alpha)
    pdf_beta = _pdf(beta)
    mean = pdf_alpha * -math.expm1(-2.0 * h * s) / mass  # (φ(α) - φ(β)) / mass; φ(β)/φ(α) = exp(-2hs)
    var = 1.0 + (alpha * pdf_alpha - beta * pdf_beta) / mass - mean * mean
    return mean, min(max(var, 0.0), 1.0)


@kernel
def _interval_mass(s, h):
    """P(s - h <= Z <= s + h) for s, h >= 0, accurate in relative terms (also for narrow intervals)."""
    if h * (1.0 + s) <= _NARROW:
        return _pdf(s) * 2.0 * h * _narrow_series(s, h)[0]
    alpha = s - h
    if alpha < 0.0:  # the interval straddles 0: erf values of opposite signs, no cancellation
        return 0.5 * (math.erf((s + h) * _SQRT_HALF) - math.erf(alpha * _SQRT_HALF))
    return _upper_q(alpha) - _upper_q(s + h)  # not narrow: at most a mild cancellation


@kernel
def outcome_probabilities(t, h):
    """(P(A wins), P(draw), P(B wins)) for t = (μ_a - μ_b)/c and h = ε/c, each accurate when small."""
    return _upper_q(h - t), _interval_mass(abs(t), h), _upper_q(h + t)


# The paper's V and W functions, t = (μ_winner - μ_loser)/c (for a draw μ_a - μ_b) and e = ε/c. The
# replay uses the moments above directly (it needs 1 - W, not W); these are for users and tests.


@kernel
def v_win(t, e):
    """V_win(t, ε) = φ(t - ε)/Φ(t - ε): the winner's mean shift in units of σ²/c."""
    return upper_moments(e - t)[0]


@kernel
def w_win(t, e):
    """W_win(t, ε) = V (V + t - ε), in [0, 1]; accurate where it is small (it underflows to 0 for t - ε > 38)."""
    alpha = e - t
    mean, var = upper_moments(alpha)
    if alpha >= _TAIL:
        return 1.0 - var
    return min(mean * (mean - alpha), 1.0)


@kernel
def v_draw(t, e):
    """V_draw(t, ε): side A's mean shift (in units of σ_a²/c) after a draw; -t when ε = 0."""
    mean = interval_moments(abs(t), e)[0]
    return -mean if t > 0.0 else mean


@kernel
def w_draw(t, e):
    """W_draw(t, ε) = 1 - Var of the difference truncated to the draw interval, in [0, 1]; 1 when ε = 0."""
    return 1.0 - interval_moments(abs(t), e)[1]


@kernel
def _performance_difference(mu_a, sigma_a, mu_b, sigma_b, beta, tau, epsilon):
    """(σ_a'², σ_b'², 2β², c², c, t, h) of a game between two stored states (σ before the dynamics τ)."""
    var_a = sigma_a * sigma_a + tau * tau
    var_b = sigma_b * sigma_b + tau * tau
    base = 2.0 * beta * beta
    c2 = base + (var_a + var_b)  # (var_a + var_b): symmetric in the two sides, bit for bit
    c = math.sqrt(c2)
    return var_a, var_b, base, c2, c, (mu_a - mu_b) / c, epsilon / c


@kernel
def _expected_and_draw(t, h):
    """(P(A wins) + ½ P(draw), P(draw)) for t = (μ_a - μ_b)/c and h = ε/c."""
    p_win, p_draw, _ = outcome_probabilities(t, h)
    return p_win + 0.5 * p_draw, p_draw


@kernel
def forecast_1vs1(mu_a, sigma_a, mu_b, sigma_b, beta, tau, epsilon):
    """The forecast before a game between two stored states: (expected_a, P(draw)), as :func:`update_1vs1`
    computes it (τ² added to both variances first)."""
    _, _, _, _, _, t, h = _performance_difference(mu_a, sigma_a, mu_b, sigma_b, beta, tau, epsilon)
    return _expected_and_draw(t, h)


@kernel
def trueskill_forecasts(mu_a, sigma_a, mu_b, sigma_b, beta, tau, epsilon):
    """:func:`forecast_1vs1` for each pair of the arrays: (expected_a, P(draw)) arrays."""
    n = mu_a.shape[0]
    expected = np.empty(n, dtype=np.float64)
    draw = np.empty(n, dtype=np.float64)
    for i in range(n):
        e, d = forecast_1vs1(mu_a[i], sigma_a[i], mu_b[i], sigma_b[i], beta, tau, epsilon)
        expected[i] = e
        draw[i] = d
    return expected, draw


@kernel
def update_1vs1(mu_a, sigma_a, mu_b, sigma_b, score, beta, tau, epsilon):
    """One TrueSkill game: (expected_a, μ_a', σ_a', μ_b', σ_b'); score 1 A wins, 0 B wins, else a draw.

    σ_a, σ_b are the stored deviations before the dynamics step; τ² is added here.
    """
    var_a, var_b, base, c2, c, t, h = _performance_difference(mu_a, sigma_a, mu_b, sigma_b, beta, tau, epsilon)
    expected, _ = _expected_and_draw(t, h)
    if score == 1.0:
        v, var = upper_moments(h - t)
    elif score == 0.0:
        v, var = upper_moments(h + t)
        v = -v
    else:
        mean, var = interval_moments(abs(t), h)
        v = -mean if t > 0.0 else mean
    new_mu_a = mu_a + var_a / c * v
    new_mu_b = mu_b - var_b / c * v
    # σ² (1 - σ²/c² · w) = σ² (c² - σ² + σ² (1 - w)) / c², with c² - σ² formed without cancellation;
    # the factor is capped at 1 so that rounding never lets σ grow past sqrt(σ² + τ²).
    new_var_a = var_a * min(((base + var_b) + var_a * var) / c2, 1.0)
    new_var_b = var_b * min(((base + var_a) + var_b * var) / c2, 1.0)
    return expected, new_mu_a, math.sqrt(new_var_a), new_mu_b, math.sqrt(new_var_b)


@kernel
def trueskill_replay_kernel(
    order,
    state_a,
    state_b,
    league,
    score,
    mu,
    sigma,
    played_in_league,
    beta,
    tau,
    epsilon,
    outputs,
):
    """Replay matches in ``order``, updating ``mu`` and ``sigma`` (one slot per league and player) in place.

    Output arrays are indexed by input row. ``sd_*_before`` is the stored σ (before this game's τ).
    ``played_in_league`` counts each league's matches so far (updated in place: a continued replay starts
    from its saved count). ``order`` may hold only some of the rows.

    ``outputs``: the output columns (``kernel_outputs``), indexed by input row.
    """
    (
        seq,
        expected_a,
        rating_a_before,
        rating_b_before,
        sd_a_before,
        sd_b_before,
        rating_a_after,
        rating_b_after,
        sd_a_after,
        sd_b_after,
    ) = outputs
    for position in range(order.shape[0]):
        row = order[position]
        slot_a = state_a[row]
        slot_b = state_b[row]
        this_league = league[row]
        played_in_league[this_league] += 1
        before_mu_a = mu[slot_a]
        before_mu_b = mu[slot_b]
        before_sigma_a = sigma[slot_a]
        before_sigma_b = sigma[slot_b]
        expected, new_mu_a, new_sigma_a, new_mu_b, new_sigma_b = update_1vs1(
            before_mu_a, before_sigma_a, before_mu_b, before_sigma_b, score[row], beta, tau, epsilon
        )
        mu[slot_a] = new_mu_a
        mu[slot_b] = new_mu_b
        sigma[slot_a] = new_sigma_a
        sigma[slot_b] = new_sigma_b
        seq[row] = played_in_league[this_league]
        expected_a[row] = expected
        rating_a_before[row] = before_mu_a
        rating_b_before[row] = before_mu_b
        sd_a_before[row] = before_sigma_a
        sd_b_before[row] = before_sigma_b
        rating_a_after[row] = new_mu_a
        rating_b_after[row] = new_mu_b
        sd_a_after[row] = new_sigma_a
        sd_b_after[row] = new_sigma_b


# --------------------------------------------------------------------------------------------------
# Python side: parameters, priors, input checks.


def draw_margin(draw_probability: float, beta: float) -> float:
    """ε = Φ⁻¹((p + 1)/2) · sqrt(2) · β, evaluated as -Φ⁻¹((1 - p)/2) so that p near 1 stays finite."""
    from scipy.special import ndtri  # imported when used: scipy.special costs 0.1 s at import

    return float(-ndtri(0.5 * (1.0 - draw_probability)) * math.sqrt(2.0) * beta)


def match_quality(mu_a=25.0, sigma_a=25.0 / 3.0, mu_b=25.0, sigma_b=25.0 / 3.0, beta: float = 25.0 / 6.0):
    """Two-player match quality: the draw likelihood relative to the draw likelihood of equal players.

    ``q = sqrt(2β² / c²) · exp(-(μ_a - μ_b)² / (2c²))`` with ``c² = 2β² + σ_a² + σ_b²`` (Herbrich et al.
    2006, the matchmaking criterion for two players; no dynamics τ, as in the ``trueskill`` package).
    Two default newcomers give sqrt(1/5) = 0.447. Accepts floats or NumPy arrays (broadcast).
    """
    mu_a, sigma_a, mu_b, sigma_b = (np.asarray(x, dtype=np.float64) for x in (mu_a, sigma_a, mu_b, sigma_b))
    c2 = 2.0 * beta * beta + sigma_a * sigma_a + sigma_b * sigma_b
    quality = np.sqrt(2.0 * beta * beta / c2) * np.exp(-((mu_a - mu_b) ** 2) / (2.0 * c2))
    return float(quality) if quality.ndim == 0 else quality


def _check_outcomes(columns: dict, prepared: PreparedMatches, table: str) -> None:
    """Scores must be a win, a draw or a loss, and weights absent, NULL or 1 (input order: first bad row)."""
    score = prepared.score
    bad = np.flatnonzero((score != 0.0) & (score != 0.5) & (score != 1.0))
    if bad.size:
        row = int(bad[0])
        raise DuckrateInputError(
            f"{table}: column 'score_a' has {float(score[row])!r} at {row_key_text(columns, row)}; "
            "TrueSkill rates wins, draws and losses only; expected 0, 0.5 or 1"
        )
    reject_weights(columns, prepared, table, "TrueSkill (partial play is not modelled)")


def _run(prepared: PreparedMatches, priors, params: dict, start: StartState) -> tuple[dict, EndState]:
    states = initial_states(prepared, priors, {"rating": params["mu"], "sd": params["sigma"]})
    check_positive_priors(priors, ("sd",), "a TrueSkill σ")
    player = start.overlay({"mu": states["rating"], "sigma": states["sd"]})
    out = new_outputs(prepared.n_rows)
    trueskill_replay_kernel(
        prepared.order,
        prepared.state_a,
        prepared.state_b,
        prepared.league,
        prepared.score,
        player["mu"],
        player["sigma"],
        start.seq.copy(),
        params["beta"],
        params["tau"],
        draw_margin(params["draw_probability"], params["beta"]),
        kernel_outputs(out),
    )
    return out, EndState(player=player)


def _forecast(players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
    """P(A wins) + ½ P(draw) and P(draw) from μ and σ, after τ's growth, as before their next match."""
    epsilon = draw_margin(params["draw_probability"], params["beta"])
    mu_a, sigma_a = column(players, "rating", a), column(players, "sd", a)
    mu_b, sigma_b = column(players, "rating", b), column(players, "sd", b)
    return trueskill_forecasts(mu_a, sigma_a, mu_b, sigma_b, params["beta"], params["tau"], epsilon)


TRUESKILL = ReplaySystem(
    name="trueskill",
    summary=(
        "TrueSkill (Herbrich, Minka & Graepel 2007) for two players with draws; ratings are TrueSkill's own mu "
        "and sigma."
    ),
    parameters=(
        Parameter("mu", 25.0, "a finite newcomer mean μ"),
        Parameter("sigma", 25.0 / 3.0, "a finite newcomer σ > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("beta", 25.0 / 6.0, "a finite performance spread β > 0", lambda v: math.isfinite(v) and v > 0),
        Parameter("tau", 25.0 / 300.0, "a finite dynamics τ >= 0", lambda v: math.isfinite(v) and v >= 0),
        Parameter("draw_probability", 0.10, "a draw probability in [0, 1)", lambda v: 0.0 <= v < 1.0),
    ),
    run=_run,
    check_matches=_check_outcomes,
    weighted=False,
    has_sd=True,
    player_state=(StateField("mu"), StateField("sigma")),
    scale=TRUESKILL_MU,
    forecast=Forecast(_forecast, uses=("beta", "tau", "draw_probability")),
    grid={"beta": [25 / 12, 25 / 6, 25 / 3], "tau": [0.0, 25 / 300, 25 / 100]},
    presets=(
        Preset(),
        Preset(
            {"tau": 0.5, "draw_probability": 0.0},
            priors={
                "player": ["p1", "p2", "p3"],
                "league": ["east", None, "west"],
                "rating": [30.0, 20.0, 25.0],
                "sd": [1.0, 12.0, None],
            },
        ),
    ),
)


def trueskill(
    matches: pl.DataFrame,
    mu: float = 25.0,
    sigma: float = 25.0 / 3.0,
    beta: float = 25.0 / 6.0,
    tau: float = 25.0 / 300.0,
    draw_probability: float = 0.10,
    priors: pl.DataFrame | None = None,
    state: pl.DataFrame | None = None,
    chunk_size: int | None = None,
) -> pl.DataFrame:
    """Two-player TrueSkill replay over a matches table.

    Herbrich, Minka & Graepel (2006), two-player case. Before each game both players' variances grow by
    τ²; with ``c² = 2β² + σ_a'² + σ_b'²``, ``t = (μ_a - μ_b)/c`` and the draw margin
    ``ε = Φ⁻¹((draw_probability + 1)/2) · sqrt(2) · β`` (h = ε/c), a game updates
    ``μ_a += σ_a'²/c · v``, ``μ_b -= σ_b'²/c · v`` and ``σ_i² = σ_i'² (1 - σ_i'²/c² · w)``, where v and w
    are the mean and one minus the variance of the truncated Gaussian of the performance difference:
    ``v = φ(t-h)/Φ(t-h)``, ``w = v (v + t - h)`` for a win (mirrored for a loss) and the two-sided
    truncation to [-h - t, h - t] for a draw (with ε = 0 a draw gives v = -t, w = 1).

    Parameters
    ----------
    matches : DataFrame with ``match_id``, ``played_at``, ``player_a``, ``player_b``, ``score_a`` (1 win,
        0.5 draw, 0 loss; other values are rejected) and optionally ``league`` (independent replays).
        A ``weight`` column must be NULL or 1 (TrueSkill has no partial-play weights).
    mu : newcomer mean μ0.
    sigma : newcomer standard deviation σ0 (> 0).
    beta : performance spread β (> 0); the skill gap giving about 76% win probability.
    tau : dynamics τ (>= 0) added in quadrature to each player's σ before every game.
    draw_probability : draw probability between equal players, in [0, 1); sets the draw margin ε.
    priors : ``player_priors`` frame (``player``, ``rating`` = μ, optional ``sd`` = σ > 0, optional
        ``league``) of starting states.
    state : a saved state (:func:`duckrate.replay_state`) to continue from: ``matches`` are then only the
        matches after it, and the result is that of one replay over the whole history.
    chunk_size : the most matches replayed at once (default ``duckrate.DEFAULT_CHUNK_ROWS``): a longer
        history replays in chunks in time order, each continuing from the state the one before left, with
        the same result.

    Returns
    -------
    DataFrame with one row per match: ``league, seq, match_id, played_at, player_a, player_b, score_a,
    expected_a, rating_{a,b}_{before,after}, sd_{a,b}_{before,after}``. Ratings are μ and sds are σ; the
    before-values are the stored state (σ without this game's τ), the after-values the state carried into
    each player's next match; ``expected_a = P(A wins) + ½ P(draw)`` from the before-state.

    References
    ----------
    R. Herbrich, T. Minka, T. Graepel, "TrueSkill™: A Bayesian Skill Rating System", NIPS 19 (2006).
    """
    return replay_frame(
        TRUESKILL,
        matches,
        priors,
        state,
        chunk_size=chunk_size,
        mu=mu,
        sigma=sigma,
        beta=beta,
        tau=tau,
        draw_probability=draw_probability,
    )
