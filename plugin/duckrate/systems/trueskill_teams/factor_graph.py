"""TrueSkill with teams: the message passing on one match's factor graph, as ``trueskill`` 0.4.5 runs it.

Herbrich, Minka & Graepel, "TrueSkill™: A Bayesian Skill Rating System" (NIPS 2006). Player i has skill
s_i ~ N(μ_i, σ_i² + τ²) (the dynamics τ added by the prior factor), performance p_i ~ N(s_i, β²); team j
performs t_j = Σ_{i∈j} w_i p_i (w_i the partial-play weight); the teams sorted by place give the differences
d_j = t_j - t_{j+1}, observed as d_j > ε_j (team j placed above team j+1) or |d_j| <= ε_j (a tie). The draw
margin of each adjacent pair comes from the number of players in the two teams, n = n_j + n_{j+1}:
``ε_j = Φ⁻¹((draw_probability + 1)/2) · sqrt(n) · β`` (the package's ``calc_draw_margin``; the weights
play no part in it).

The graph's layers (messages are Gaussians in natural parameters: precision π and precision-adjusted mean
τ = π·μ), as the package's ``factor_graph_builders`` and ``run_schedule`` pass them:

1. down: prior -> skill, likelihood -> performance (``a = 1/(1 + β² π)``), team sum -> team performance;
2. the team-difference chain: with two teams, down to d_0 and up the truncation; with more, up to 10
   rounds of a forward sweep (for j = 0 .. k-3: down to d_j, truncation j, up to t_{j+1}) and a backward
   sweep (for j = k-2 .. 1: down to d_j, truncation j, up to t_j), stopping after the first round whose
   largest change of a difference's marginal, ``max(|Δτ|, sqrt(|Δπ|))`` over the truncation updates, is at
   most ``min_delta`` (so the first and last truncations are updated once per round, the middle ones twice);
3. up: d_0 -> t_0 and d_{k-2} -> t_{k-1}, then each team sum -> its players' performances (with the
   coefficients 1/w_i and -w_l/w_i), and likelihood -> skill. A skill's posterior is prior × likelihood
   message; its μ and σ are the new rating.

The truncation factor of d_j with cavity N(m, s²) uses t = m/s and e = ε_j/s and the package's V and W:
``v = φ(t - e)/Φ(t - e)``, ``w = v (v + t - e)`` for a win and the two-sided forms for a tie, evaluated as the
package's scipy backend does (``norm.cdf`` is ``ndtr``: ½ ± ½ erf / ½ erfc of x/√2; ``norm.pdf`` is
``exp(-x²/2)/√(2π)``); the moment-matched marginal has precision π/(1 - w) and adjusted mean
(τ + √π v)/(1 - w).

Choices and the package's behaviour worth knowing (each checked against the package in the tests):

- Teams are sorted by rank with a stable sort and the results unsorted, as the package does; rows given best
  team first (nondecreasing ``team_rank``) are already in that order.
- Weights below ``min_delta`` are raised to ``min_delta`` in the update (the package's ``rate`` does this,
  so the convergence threshold doubles as a weight floor); ``quality`` uses the weights as given.
- The stopping rule measures the change of the difference's *natural* parameters, ``max(|Δτ|, sqrt(|Δπ|))``:
  not scale free (multiplying all ratings by c changes it), and it counts an infinite change of π as 0.
  At most 10 rounds are run; with two teams the second round repeats the first, so it stops there.
- trueskill.py's truncated-Gaussian moments (:mod:`duckrate.systems.trueskill`, accurate to ~1e-15 against
  50-digit values) do not agree with the package's formulas to 1e-12 wherever those are finite: the package's
  1 - W_win loses ~eps·x² to the cancellation in ``1 - v (v + x)`` for an upset x = t - e < 0 (its W is off
  by 7e-12 at x = -10, 3e-10 at x = -37), and its draw formulas subtract nearly equal Φ values for narrow
  margins (W_draw off by 4e-6 at e = 1e-6, |t| = 30). So the kernel evaluates the package's own formulas
  (V and W as above, with Φ and φ as scipy's; they agree with the package's to 1e-13 in V and
  1e-13·(1 + t²) in 1 - W for |t| <= 8, e >= 0.01), and the accurate moments only where the package's are
  invalid or wrong by more than ``PACKAGE_ACCURACY`` = 1e-9 relative (in V or in 1 - W): ``W_win`` outside
  (0, 1) (an upset beyond x ≈ -37.5 or a win by more than x ≈ 38.5, where Φ or φ underflow: the package
  raises ``FloatingPointError``), a tie with interval mass ``Φ(a) - Φ(b) = 0`` (the package raises) or
  ``W_draw`` outside (0, 1) (the package goes on with a nonpositive precision and fails later), and the
  ill-conditioned far upsets and narrow ties. Where the package's formulas are wrong by more than 1e-9 their
  value is rounding noise, which no other evaluation reproduces; the accurate moments at least vary smoothly,
  so the stopping rule below does not chase noise. The kernel stays finite where the package raises.
- Agreement: over random histories (2-8 teams of 1-8 players, ties, partial play) the kernel's ratings are
  within 1e-10 of the package's after 10,000 carried-forward matches (tests). Where the package's own
  arithmetic is ill-conditioned (tiny β against large σ, tiny weights or tiny draw probabilities, with a
  loose ``min_delta``) the two can differ by more than 1e-6; in every such case examined the package run with
  its mpmath backend at 60 digits agreed with the kernel to 1e-12: the scipy backend's error came from
  dividing a variable's marginal by a very precise message, or from its stopping rule comparing rounding
  noise (sqrt of a change of a precision near 1e8) with ``min_delta``, which changes the number of rounds.
- With ``draw_probability = 0`` a tie is the event d_j = 0 exactly. The package raises
  ``FloatingPointError`` (its interval mass is 0); the kernel takes the limit ε -> 0, conditioning on
  t_j = t_{j+1}: the truncation's message to d_j is the point mass at 0 (precision ∞; its change is counted
  as 0 in the stopping rule, as the package counts an infinite change of π).
- The kernel keeps the messages only and forms each cavity as the product of the variable's other messages
  (the package divides the variable's marginal by the factor's message: equal up to rounding, and free of
  the cancellation that a very precise truncation message causes there).
- The draw margin ignores the weights: a pair of teams of low-weight players keeps the margin of full players
  while its performance difference has a tiny spread, so the standardised margin e is huge and a win by
  either team is a near-impossible event (with all weights near 1e-4 the package's Φ(t - e) underflows and it
  raises ``FloatingPointError``; the kernel's accurate moments give the finite limit).
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.numerics import normal_quantile
from duckrate.systems.trueskill import interval_moments, upper_moments

# The settings array.
S_BETA = 0
S_TAU = 1
S_DRAW_PROBABILITY = 2
S_MIN_DELTA = 3
N_SETTINGS = 4

#: The package's DELTA: the default ``min_delta``.
MIN_DELTA = 0.0001
#: The most rounds over the team-difference chain (the package's ``range(10)``).
MAX_ROUNDS = 10
#: Where the package's V or 1 - W is wrong by more than this (relative), rounding decides its value: the
#: kernel then uses the accurate moments (see the module docstring).
PACKAGE_ACCURACY = 1e-9

_SQRT1_2 = 0.7071067811865476  # 1/√2 as a double (M_SQRT1_2)
_PDF_C = 2.5066282746310002  # √(2π) as scipy.stats.norm's _norm_pdf_C


def settings_array(beta: float, tau: float, draw_probability: float, min_delta: float = MIN_DELTA) -> np.ndarray:
    """The settings of :func:`rate_match`, :func:`~.quality.match_quality` and :func:`~.forecast.predict_match`.

    ``beta`` (> 0) the performance spread, ``tau`` (>= 0) the dynamics added to σ before a match,
    ``draw_probability`` in [0, 1) and ``min_delta`` (> 0) the stopping threshold (and weight floor) of the
    package's ``rate``. The newcomers' μ and σ are the caller's business.
    """
    if not (math.isfinite(beta) and beta > 0.0):
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    if not (math.isfinite(tau) and tau >= 0.0):
        raise ValueError(f"tau must be finite and >= 0, got {tau!r}")
    if not (0.0 <= draw_probability < 1.0):
        raise ValueError(f"draw_probability must be in [0, 1), got {draw_probability!r}")
    if not (math.isfinite(min_delta) and min_delta > 0.0):
        raise ValueError(f"min_delta must be finite and > 0, got {min_delta!r}")
    settings = np.empty(N_SETTINGS, dtype=np.float64)
    settings[S_BETA] = beta
    settings[S_TAU] = tau
    settings[S_DRAW_PROBABILITY] = draw_probability
    settings[S_MIN_DELTA] = min_delta
    return settings


# --------------------------------------------------------------------------------------------------
# The standard normal as scipy.stats.norm evaluates it, and the package's V and W.


@kernel
def scipy_cdf(x):
    """Φ(x) as ``scipy.special.ndtr``: ½ + ½ erf(x/√2) near 0, else ½ erfc(|x|/√2) (reflected for x > 0)."""
    y = x * _SQRT1_2
    z = abs(y)
    if z < _SQRT1_2:
        return 0.5 + 0.5 * math.erf(y)
    p = 0.5 * math.erfc(z)
    return 1.0 - p if y > 0.0 else p


@kernel
def scipy_pdf(x):
    """φ(x) as ``scipy.stats.norm.pdf``: exp(-x²/2)/√(2π)."""
    return math.exp(-(x * x) / 2.0) / _PDF_C


@kernel
def draw_margin_unit(draw_probability):
    """Φ⁻¹((p + 1)/2): the draw margin of a pair of teams with n players in all is this · sqrt(n) · β."""
    return normal_quantile((draw_probability + 1.0) / 2.0)


@kernel
def package_win(t, e):
    """(V_win, 1 - W_win, ok) by the package's formulas; ok is False where the package raises (W not in (0, 1))."""
    x = t - e
    denom = scipy_cdf(x)
    v = scipy_pdf(x) / denom if denom != 0.0 else -x
    w = v * (v + x)
    return v, 1.0 - w, (w > 0.0) and (w < 1.0)


@kernel
def package_draw(t, e):
    """(V_draw, 1 - W_draw, ok) by the package's formulas; ok is False where the interval mass is 0 (the package
    raises) or W_draw is not in (0, 1) (the package would go on with a nonpositive precision)."""
    abs_t = abs(t)
    a = e - abs_t
    b = -e - abs_t
    denom = scipy_cdf(a) - scipy_cdf(b)
    if denom == 0.0:
        return (-a if t < 0.0 else a), 0.0, False
    pdf_a = scipy_pdf(a)
    pdf_b = scipy_pdf(b)
    v_abs = (pdf_b - pdf_a) / denom
    v = -v_abs if t < 0.0 else v_abs
    w = v_abs * v_abs + (a * pdf_a - b * pdf_b) / denom
    ok = (w > 0.0) and (w < 1.0) and math.isfinite(v)
    return v, 1.0 - w, ok


@kernel
def truncation_moments(t, e, tie):
    """(V, 1 - W) of the truncation at t = m/s, e = ε/s: the package's formulas where they are valid and within
    :data:`PACKAGE_ACCURACY` of the true moments, else the accurate moments of :mod:`duckrate.systems.trueskill`
    (finite for every t; 1 - W = 0 only for a tie with e = 0)."""
    if tie:
        v, one_minus_w, ok = package_draw(t, e)
        mean, var = interval_moments(abs(t), e)
        accurate_v = -mean if t > 0.0 else mean
    else:
        v, one_minus_w, ok = package_win(t, e)
        accurate_v, var = upper_moments(e - t)
    if (
        ok
        and abs(one_minus_w - var) <= PACKAGE_ACCURACY * var
        and abs(v - accurate_v) <= PACKAGE_ACCURACY * max(1.0, abs(accurate_v))
    ):
        return v, one_minus_w
    return accurate_v, var


# --------------------------------------------------------------------------------------------------
# Gaussian messages in natural parameters (π, τ). Column 0 holds π, column 1 τ.

_PI = 0
_TAU = 1


@kernel
def _mean(pi, tau):
    """The package's ``Gaussian.mu``: τ/π, and 0 for the uniform message π = 0 (and for a point mass π = ∞)."""
    if pi == 0.0:
        return 0.0
    return tau / pi


@kernel
def _two_term_sum(c1, pi1, tau1, c2, pi2, tau2):
    """The message c1·X1 + c2·X2 of a sum factor from its two other variables' cavities (the package's
    ``SumFactor.update``: a cavity of precision 0 makes the result uniform)."""
    mu = c1 * _mean(pi1, tau1) + c2 * _mean(pi2, tau2)
    if pi1 == 0.0 or pi2 == 0.0:
        return 0.0, 0.0
    pi_inv = c1 * c1 / pi1 + c2 * c2 / pi2
    pi = 1.0 / pi_inv
    return pi, pi * mu


@kernel
def _diff_down(j, t_sum, t_left, t_right, d_sum):
    """Team-difference factor j sends d_j = t_j - t_{j+1} down."""
    a_pi = t_sum[j, _PI] + t_left[j, _PI]
    a_tau = t_sum[j, _TAU] + t_left[j, _TAU]
    b_pi = t_sum[j + 1, _PI] + t_right[j + 1, _PI]
    b_tau = t_sum[j + 1, _TAU] + t_right[j + 1, _TAU]
    pi, tau = _two_term_sum(1.0, a_pi, a_tau, -1.0, b_pi, b_tau)
    d_sum[j, _PI] = pi
    d_sum[j, _TAU] = tau


@kernel
def _diff_up(j, side, t_sum, t_left, t_right, d_trunc):
    """Team-difference factor j sends up to t_j (side 0: t_j = d_j + t_{j+1}) or t_{j+1} (side 1:
    t_{j+1} = t_j - d_j). The cavity of d_j is the truncation's message."""
    d_pi = d_trunc[j, _PI]
    d_tau = d_trunc[j, _TAU]
    if side == 0:
        b_pi = t_sum[j + 1, _PI] + t_right[j + 1, _PI]
        b_tau = t_sum[j + 1, _TAU] + t_right[j + 1, _TAU]
        pi, tau = _two_term_sum(1.0, d_pi, d_tau, 1.0, b_pi, b_tau)
        t_right[j, _PI] = pi
        t_right[j, _TAU] = tau
    else:
        a_pi = t_sum[j, _PI] + t_left[j, _PI]
        a_tau = t_sum[j, _TAU] + t_left[j, _TAU]
        pi, tau = _two_term_sum(1.0, a_pi, a_tau, -1.0, d_pi, d_tau)
        t_left[j + 1, _PI] = pi
        t_left[j + 1, _TAU] = tau


@kernel
def _truncate_up(j, margin, tie, d_sum, d_trunc):
    """Truncation factor j updates d_j's marginal by moment matching; returns the package's delta."""
    c_pi = d_sum[j, _PI]
    c_tau = d_sum[j, _TAU]
    old_pi = c_pi + d_trunc[j, _PI]
    old_tau = c_tau + d_trunc[j, _TAU]
    sqrt_pi = math.sqrt(c_pi)
    v, one_minus_w = truncation_moments(c_tau / sqrt_pi, margin * sqrt_pi, tie)
    if one_minus_w == 0.0:
        # the point mass at 0: a tie with no draw margin (or a moment underflowing beyond any real rating gap)
        d_trunc[j, _PI] = math.inf
        d_trunc[j, _TAU] = 0.0
        return 0.0
    new_pi = c_pi / one_minus_w
    new_tau = (c_tau + sqrt_pi * v) / one_minus_w
    d_trunc[j, _PI] = new_pi - c_pi
    d_trunc[j, _TAU] = new_tau - c_tau
    pi_delta = abs(old_pi - new_pi)
    if not pi_delta < math.inf:  # ∞ (the package's rule) or NaN (from a previous point mass)
        return 0.0
    return max(abs(old_tau - new_tau), math.sqrt(pi_delta))


@kernel
def _stable_rank_order(team_rank):
    """Team indices sorted by rank, ties in input order (Python's stable ``sorted``)."""
    n_teams = team_rank.shape[0]
    order = np.arange(n_teams)
    for i in range(1, n_teams):
        current = order[i]
        k = i - 1
        while k >= 0 and team_rank[order[k]] > team_rank[current]:
            order[k + 1] = order[k]
            k -= 1
        order[k + 1] = current
    return order


@kernel
def rate_match(settings, mu, sigma, team_bounds, team_rank, weight, out_mu, out_sigma):
    """One match of TrueSkill with teams (Herbrich, Minka & Graepel, NIPS 2006): each row's μ and σ after it.

    ``mu``, ``sigma``: the players' ratings before the match (σ before τ); ``team_bounds``: int64[k + 1]
    offsets of each team's rows; ``team_rank``: int64[k], the teams' places (1 best; ties share a place);
    ``weight``: each row's partial-play weight in (0, 1]. Writes ``out_mu``, ``out_sigma`` (float64[n]), as
    ``trueskill.TrueSkill(..., backend='scipy').rate(groups, ranks=team_rank, weights=weights,
    min_delta=settings[S_MIN_DELTA])`` computes them (see the module docstring for where it differs: only
    where the package raises or its arithmetic is ill-conditioned). Raises ValueError for fewer than two
    teams, an empty team or ``min_delta <= 0``. σ² + τ² must be positive (the package rejects σ = 0).
    """
    beta = settings[S_BETA]
    tau = settings[S_TAU]
    min_delta = settings[S_MIN_DELTA]
    n_teams = team_bounds.shape[0] - 1
    if n_teams < 2:
        raise ValueError("a match needs at least two teams")
    if not min_delta > 0.0:
        raise ValueError("min_delta must be greater than 0")
    for j in range(n_teams):
        if team_bounds[j + 1] <= team_bounds[j]:
            raise ValueError("every team needs at least one player")
    unit_margin = draw_margin_unit(settings[S_DRAW_PROBABILITY])
    beta2 = beta * beta

    # The teams in rank order: rows[r] is the input row at sorted position r, team j at start[j]:start[j+1].
    order = _stable_rank_order(team_rank)
    n = team_bounds[n_teams] - team_bounds[0]
    rows = np.empty(n, dtype=np.int64)
    start = np.empty(n_teams + 1, dtype=np.int64)
    r = 0
    for j in range(n_teams):
        start[j] = r
        team = order[j]
        for row in range(team_bounds[team], team_bounds[team + 1]):
            rows[r] = row
            r += 1
    start[n_teams] = n

    n_diffs = n_teams - 1
    margin = np.empty(n_diffs, dtype=np.float64)
    tie = np.empty(n_diffs, dtype=np.bool_)
    for j in range(n_diffs):
        size = start[j + 2] - start[j]
        margin[j] = unit_margin * math.sqrt(size) * beta
        tie[j] = team_rank[order[j]] == team_rank[order[j + 1]]

    # Messages (π, τ): prior -> skill, likelihood -> skill, likelihood -> performance, team sum -> performance.
    prior = np.empty((n, 2), dtype=np.float64)
    like_skill = np.empty((n, 2), dtype=np.float64)
    like_perf = np.empty((n, 2), dtype=np.float64)
    sum_perf = np.zeros((n, 2), dtype=np.float64)
    w = np.empty(n, dtype=np.float64)
    # Team performance t_j: from its sum factor, from difference j-1 (left) and from difference j (right).
    t_sum = np.empty((n_teams, 2), dtype=np.float64)
    t_left = np.zeros((n_teams, 2), dtype=np.float64)
    t_right = np.zeros((n_teams, 2), dtype=np.float64)
    # Difference d_j: from its sum factor and from its truncation factor.
    d_sum = np.zeros((n_diffs, 2), dtype=np.float64)
    d_trunc = np.zeros((n_diffs, 2), dtype=np.float64)

    # Down: prior (with τ), likelihood, team sums.
    for r in range(n):
        row = rows[r]
        w[r] = max(min_delta, weight[row])
        pi = 1.0 / (sigma[row] * sigma[row] + tau * tau)
        prior[r, _PI] = pi
        prior[r, _TAU] = pi * mu[row]
        a = 1.0 / (1.0 + beta2 * pi)
        like_perf[r, _PI] = a * pi
        like_perf[r, _TAU] = a * prior[r, _TAU]
    for j in range(n_teams):
        mean = 0.0
        pi_inv = 0.0
        uniform = False
        for r in range(start[j], start[j + 1]):
            mean += w[r] * _mean(like_perf[r, _PI], like_perf[r, _TAU])
            if like_perf[r, _PI] == 0.0:
                uniform = True
            else:
                pi_inv += w[r] * w[r] / like_perf[r, _PI]
        pi = 0.0 if uniform else 1.0 / pi_inv
        t_sum[j, _PI] = pi
        t_sum[j, _TAU] = pi * mean

    # The team-difference chain.
    for _ in range(MAX_ROUNDS):
        if n_diffs == 1:
            _diff_down(0, t_sum, t_left, t_right, d_sum)
            delta = _truncate_up(0, margin[0], tie[0], d_sum, d_trunc)
        else:
            delta = 0.0
            for j in range(n_diffs - 1):
                _diff_down(j, t_sum, t_left, t_right, d_sum)
                delta = max(delta, _truncate_up(j, margin[j], tie[j], d_sum, d_trunc))
                _diff_up(j, 1, t_sum, t_left, t_right, d_trunc)
            for j in range(n_diffs - 1, 0, -1):
                _diff_down(j, t_sum, t_left, t_right, d_sum)
                delta = max(delta, _truncate_up(j, margin[j], tie[j], d_sum, d_trunc))
                _diff_up(j, 0, t_sum, t_left, t_right, d_trunc)
        if delta <= min_delta:
            break
    _diff_up(0, 0, t_sum, t_left, t_right, d_trunc)
    _diff_up(n_diffs - 1, 1, t_sum, t_left, t_right, d_trunc)

    # Up: team sums to their players' performances (t_j's cavity: its two difference messages), likelihoods.
    for j in range(n_teams):
        team_pi = t_left[j, _PI] + t_right[j, _PI]
        team_tau = t_left[j, _TAU] + t_right[j, _TAU]
        for x in range(start[j], start[j + 1]):
            mean = 0.0
            pi_inv = 0.0
            uniform = False
            for r in range(start[j], start[j + 1]):
                if r == x:
                    coeff = 1.0 / w[x]
                    c_pi = team_pi
                    c_tau = team_tau
                else:
                    coeff = -w[r] / w[x]
                    c_pi = like_perf[r, _PI]
                    c_tau = like_perf[r, _TAU]
                mean += coeff * _mean(c_pi, c_tau)
                if uniform:
                    continue
                if c_pi == 0.0:
                    uniform = True
                else:
                    pi_inv += coeff * coeff / c_pi
            pi = 0.0 if uniform else 1.0 / pi_inv
            sum_perf[x, _PI] = pi
            sum_perf[x, _TAU] = pi * mean
    for r in range(n):
        a = 1.0 / (1.0 + beta2 * sum_perf[r, _PI])
        like_skill[r, _PI] = a * sum_perf[r, _PI]
        like_skill[r, _TAU] = a * sum_perf[r, _TAU]
        pi = prior[r, _PI] + like_skill[r, _PI]
        tau_post = prior[r, _TAU] + like_skill[r, _TAU]
        row = rows[r]
        out_mu[row] = _mean(pi, tau_post)
        out_sigma[row] = math.sqrt(1.0 / pi) if pi != 0.0 else math.inf
