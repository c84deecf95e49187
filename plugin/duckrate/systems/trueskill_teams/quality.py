"""Match quality of TrueSkill with teams, as ``trueskill`` 0.4.5's ``TrueSkill.quality``.

Herbrich, Minka & Graepel, "TrueSkill™: A Bayesian Skill Rating System" (NIPS 2006), the matchmaking
criterion: the likelihood that all teams draw, relative to the same for equally skilled teams. The package
builds the (n × (k-1)) matrix A whose column j holds +w_i for team j's players and -w_i for team j+1's,
and returns

    q = exp(-½ μᵀA (β² AᵀA + AᵀΣA)⁻¹ Aᵀμ) · sqrt(det(β² AᵀA) / det(β² AᵀA + AᵀΣA)),

Σ = diag(σ_i²). A maps independent team performances T_l = Σ_i w_i p_i, of mean m_l = Σ w_i μ_i and variance
V_l = Σ w_i² (β² + σ_i²), to their consecutive differences, so both matrices are covariances of differences
of independent variables, whose determinants and quadratic forms have closed forms (Cauchy–Binet: each
(k-1)-minor of the difference operator is ±1):

    det(Aᵀ diag(v) A) = Π_l V_l · Σ_l 1/V_l,      μᵀA M⁻¹ Aᵀμ = Σ_l (m_l - m̄)² / V_l,

m̄ = Σ (m_l/V_l) / Σ (1/V_l), the precision-weighted mean. The kernel evaluates these in O(n) (with
W_l = Σ w_i², β² AᵀA gives β² W_l for V_l) instead of the package's Gaussian elimination and cofactor inverse;
the tests check the two agree to 1e-9.

As the package does, quality uses σ without the dynamics τ, the weights as given (``rate`` raises them to
``min_delta``; ``quality`` does not), and any team order (the ranks play no part).
"""

from __future__ import annotations

import math

from duckrate.core.jit import kernel
from duckrate.systems.trueskill_teams.factor_graph import S_BETA


@kernel
def match_quality(settings, mu, sigma, team_bounds, weight):
    """The draw likelihood of a match relative to equal teams (Herbrich, Minka & Graepel, NIPS 2006), in (0, 1]:
    ``trueskill.TrueSkill(beta=settings[S_BETA]).quality(groups, weights)`` for the teams
    ``team_bounds[j]:team_bounds[j+1]`` of ``mu``, ``sigma`` (without τ) and ``weight``."""
    beta2 = settings[S_BETA] * settings[S_BETA]
    n_teams = team_bounds.shape[0] - 1
    if n_teams < 2:
        raise ValueError("a match needs at least two teams")
    log_ratio = 0.0  # log det(β² AᵀA) - log det(M), accumulated as Σ log(β² W_l / V_l) + the two sums
    inv_v_sum = 0.0
    inv_b_sum = 0.0
    weighted_mean = 0.0
    for j in range(n_teams):
        mean, var, w2 = _team(beta2, mu, sigma, team_bounds[j], team_bounds[j + 1], weight)
        b = beta2 * w2
        log_ratio += math.log(b / var)
        inv_v_sum += 1.0 / var
        inv_b_sum += 1.0 / b
        weighted_mean += mean / var
    weighted_mean /= inv_v_sum
    chi2 = 0.0
    for j in range(n_teams):
        mean, var, _ = _team(beta2, mu, sigma, team_bounds[j], team_bounds[j + 1], weight)
        chi2 += (mean - weighted_mean) * (mean - weighted_mean) / var
    log_ratio += math.log(inv_b_sum) - math.log(inv_v_sum)
    return math.exp(-0.5 * chi2 + 0.5 * log_ratio)


@kernel
def _team(beta2, mu, sigma, first, end, weight):
    """(Σ w μ, Σ w² (β² + σ²), Σ w²) over the rows first..end-1."""
    mean = 0.0
    var = 0.0
    w2 = 0.0
    for row in range(first, end):
        ww = weight[row] * weight[row]
        mean += weight[row] * mu[row]
        var += ww * (beta2 + sigma[row] * sigma[row])
        w2 += ww
    return mean, var, w2
