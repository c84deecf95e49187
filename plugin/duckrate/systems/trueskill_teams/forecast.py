"""The forecast of TrueSkill with teams before a match: each team's probability of winning outright, and of no
outright winner.

Herbrich, Minka & Graepel, "TrueSkill™: A Bayesian Skill Rating System" (NIPS 2006): team i performs
T_i = Σ_{l∈i} w_l p_l with p_l ~ N(μ_l, σ_l² + τ² + β²), so T_i ~ N(m_i, s_i²),

    m_i = Σ w_l μ_l,    s_i² = Σ w_l² (σ_l² + τ² + β²),

independently across teams. The choices made here (the package has no forecast of its own):

- τ is included: the forecast is made from the ratings as the match's prior factor sees them (σ² + τ²), as
  :func:`~.factor_graph.rate_match` does before it updates them.
- The weights are raised to ``min_delta`` as in :func:`~.factor_graph.rate_match` (the package's ``rate``);
  for weights in [min_delta, 1] this changes nothing.
- The draw margin between teams i and j is the package's for that pair,
  ``ε_ij = Φ⁻¹((draw_probability + 1)/2) · sqrt(n_i + n_j) · β`` (n the teams' player counts), so each
  pairwise comparison uses the margin the update would use were the two teams adjacent in the result
  (rather than one margin per team, e.g. from its strongest opponent's size).
- Two teams: ``P(team 0 wins) = P(T_0 - T_1 > ε_01) = Φ((m_0 - m_1 - ε)/c)``, ``P(draw) = P(|T_0 - T_1| <= ε)``,
  c² = s_0² + s_1², in closed form (each accurate when small: erfc, and a series for narrow margins, from
  :mod:`duckrate.systems.trueskill`); the returned p_draw is that draw probability.
- k > 2 teams: team i wins outright when it beats every other team j by more than ε_ij:
  ``P_i = ∫ φ(z) Π_{j≠i} Φ((m_i - m_j - ε_ij + s_i z)/s_j) dz``, by adaptive Gauss–Kronrod (7–15) quadrature
  on [max(-9, max_j(c_j - 9 s_j/s_i)), 9] (c_j = (m_j + ε_ij - m_i)/s_i, where factor j steps from 0 to 1;
  beyond these limits the integrand's mass is below 1e-18), split at the c_j, each piece subdivided until
  QUADPACK's error estimate is below 1e-12 per unit of the interval. These events are disjoint (ε >= 0),
  and ``p_draw = 1 - Σ_i P_i`` is the probability that no team wins outright (some tie for first within the
  margins), clamped at 0. For two teams the quadrature gives the closed form; for more it agrees with
  ``scipy.integrate.quad`` to ~1e-15 (tests). Cost: about 40 µs for 3 teams, 250 µs for 8.
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import kernel
from duckrate.systems.numerics import normal_cdf
from duckrate.systems.trueskill import outcome_probabilities
from duckrate.systems.trueskill_teams.factor_graph import (
    S_BETA,
    S_DRAW_PROBABILITY,
    S_MIN_DELTA,
    S_TAU,
    draw_margin_unit,
)

_LIMIT = 9.0  # P(|Z| > 9) = 2.3e-19
_TOLERANCE = 1e-12  # the error estimate allowed per unit length of the integration interval
_MAX_PIECES = 4096
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

# Gauss–Kronrod 7–15 on [-1, 1] (QUADPACK's qk15): the Kronrod nodes (the odd ones are the Gauss nodes) and
# weights, largest node first; the Gauss weights of the nodes 1, 3, 5, 7.
_XK = (
    0.991455371120812639206854697526329,
    0.949107912342758524526189684047851,
    0.864864423359769072789712788640926,
    0.741531185599394439863864773280788,
    0.586087235467691130294144845693013,
    0.405845151377397166906606412076961,
    0.207784955007898467600689403773245,
    0.0,
)
_WK = (
    0.022935322010529224963732008058970,
    0.063092092629978553290700663189204,
    0.104790010322250183839876322541518,
    0.140653259715525918745189590510238,
    0.169004726639267902826583426598550,
    0.190350578064785409913256402421014,
    0.204432940075298892414161999234649,
    0.209482141084727828012999174891714,
)
_WG = (
    0.129484966168869693270611432679082,
    0.279705391489276667901467771423780,
    0.381830050505118944950369775488975,
    0.417959183673469387755102040816327,
)


@kernel
def team_performances(settings, mu, sigma, team_bounds, weight):
    """(m, s, n): each team's performance mean, sd (τ and β included, weights raised to min_delta) and size."""
    beta = settings[S_BETA]
    tau = settings[S_TAU]
    min_delta = settings[S_MIN_DELTA]
    n_teams = team_bounds.shape[0] - 1
    means = np.empty(n_teams, dtype=np.float64)
    sds = np.empty(n_teams, dtype=np.float64)
    sizes = np.empty(n_teams, dtype=np.int64)
    for j in range(n_teams):
        mean = 0.0
        var = 0.0
        for row in range(team_bounds[j], team_bounds[j + 1]):
            w = max(min_delta, weight[row])
            mean += w * mu[row]
            var += w * w * (sigma[row] * sigma[row] + tau * tau + beta * beta)
        means[j] = mean
        sds[j] = math.sqrt(var)
        sizes[j] = team_bounds[j + 1] - team_bounds[j]
    return means, sds, sizes


@kernel
def _integrand(z, centers, slopes):
    """φ(z) Π_j Φ(slopes[j] (z - centers[j]))."""
    value = _INV_SQRT_2PI * math.exp(-0.5 * z * z)
    for j in range(centers.shape[0]):
        value *= normal_cdf(slopes[j] * (z - centers[j]))
        if value == 0.0:
            break
    return value


@kernel
def _kronrod(a, b, centers, slopes):
    """(K15 estimate, error estimate) of the integral of :func:`_integrand` over [a, b]. The error estimate is
    QUADPACK's: |K15 - G7| scaled as ``resasc · min(1, (200 |K15 - G7| / resasc)^1.5)`` (resasc the mean
    absolute deviation of the integrand from its mean), since K15 is far more accurate than G7."""
    half = 0.5 * (b - a)
    middle = 0.5 * (a + b)
    values = np.empty(15, dtype=np.float64)
    f0 = _integrand(middle, centers, slopes)
    kronrod = _WK[7] * f0
    gauss = _WG[3] * f0
    for k in range(7):
        x = half * _XK[k]
        f1 = _integrand(middle - x, centers, slopes)
        f2 = _integrand(middle + x, centers, slopes)
        values[2 * k] = f1
        values[2 * k + 1] = f2
        kronrod += _WK[k] * (f1 + f2)
        if k % 2 == 1:
            gauss += _WG[k // 2] * (f1 + f2)
    mean = 0.5 * kronrod
    resasc = _WK[7] * abs(f0 - mean)
    for k in range(7):
        resasc += _WK[k] * (abs(values[2 * k] - mean) + abs(values[2 * k + 1] - mean))
    resasc *= half
    error = abs((kronrod - gauss) * half)
    if resasc != 0.0 and error != 0.0:
        error = resasc * min(1.0, (200.0 * error / resasc) ** 1.5)
    return kronrod * half, error


@kernel
def outright_win_probability(i, means, sds, sizes, unit_margin, beta):
    """P(T_i - T_j > ε_ij for every j ≠ i) for independent T_j ~ N(means[j], sds[j]²), by quadrature."""
    n_teams = means.shape[0]
    centers = np.empty(n_teams - 1, dtype=np.float64)
    slopes = np.empty(n_teams - 1, dtype=np.float64)
    lower = -_LIMIT
    upper = _LIMIT
    k = 0
    for j in range(n_teams):
        if j == i:
            continue
        epsilon = unit_margin * math.sqrt(sizes[i] + sizes[j]) * beta
        centers[k] = (means[j] + epsilon - means[i]) / sds[i]
        slopes[k] = sds[i] / sds[j]
        lower = max(lower, centers[k] - _LIMIT / slopes[k])
        k += 1
    if not lower < upper:
        return 0.0
    # the pieces: [lower, upper] split at the centers inside it, sorted
    points = np.empty(n_teams + 1, dtype=np.float64)
    n_points = 0
    points[n_points] = lower
    n_points += 1
    for k in range(n_teams - 1):
        if lower < centers[k] < upper:
            points[n_points] = centers[k]
            n_points += 1
    points[n_points] = upper
    n_points += 1
    inner = points[1 : n_points - 1]
    inner.sort()
    stack_a = np.empty(_MAX_PIECES, dtype=np.float64)
    stack_b = np.empty(_MAX_PIECES, dtype=np.float64)
    top = 0
    for p in range(n_points - 2, -1, -1):
        stack_a[top] = points[p]
        stack_b[top] = points[p + 1]
        top += 1
    total = 0.0
    while top > 0:
        top -= 1
        a = stack_a[top]
        b = stack_b[top]
        kronrod, error = _kronrod(a, b, centers, slopes)
        if error <= _TOLERANCE * (b - a) or top + 2 > _MAX_PIECES or b - a < 1e-12:
            total += kronrod
        else:
            middle = 0.5 * (a + b)
            stack_a[top] = middle
            stack_b[top] = b
            stack_a[top + 1] = a
            stack_b[top + 1] = middle
            top += 2
    return min(max(total, 0.0), 1.0)


@kernel
def predict_match(settings, mu, sigma, team_bounds, weight, out_p_win):
    """The forecast before a match (Herbrich, Minka & Graepel, NIPS 2006, team performances): writes each team's
    probability of winning outright to ``out_p_win`` (float64[k]) and returns p_draw, the probability that no
    team does (for two teams, of a draw). Inputs as :func:`~.factor_graph.rate_match` (σ before τ; ranks are not
    needed). See the module docstring for the model and the choices."""
    beta = settings[S_BETA]
    n_teams = team_bounds.shape[0] - 1
    if n_teams < 2:
        raise ValueError("a match needs at least two teams")
    unit_margin = draw_margin_unit(settings[S_DRAW_PROBABILITY])
    means, sds, sizes = team_performances(settings, mu, sigma, team_bounds, weight)
    if n_teams == 2:
        c = math.sqrt(sds[0] * sds[0] + sds[1] * sds[1])
        epsilon = unit_margin * math.sqrt(sizes[0] + sizes[1]) * beta
        p_first, p_draw, p_second = outcome_probabilities((means[0] - means[1]) / c, epsilon / c)
        out_p_win[0] = p_first
        out_p_win[1] = p_second
        return p_draw
    total = 0.0
    for i in range(n_teams):
        out_p_win[i] = outright_win_probability(i, means, sds, sizes, unit_margin, beta)
        total += out_p_win[i]
    return max(1.0 - total, 0.0)


@kernel
def predicted_ranks(p_win, out_rank):
    """Competition ranking of the teams by ``p_win``, highest first: 1 + the number of teams with a larger
    probability (tied teams share the best rank: 1, 2, 2, 4). Writes int64 ranks to ``out_rank``."""
    n = p_win.shape[0]
    for i in range(n):
        better = 0
        for j in range(n):
            if p_win[j] > p_win[i]:
                better += 1
        out_rank[i] = better + 1
