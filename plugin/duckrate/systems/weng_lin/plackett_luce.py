"""Plackett-Luce: Weng & Lin (2011), Algorithm 4, as ``openskill`` 6.2.0's ``PlackettLuce`` computes it.

The k teams of a match, sorted by rank r (best first), are a Plackett-Luce ranking with strengths
``exp(θ_i/c)``, ``c² = Σ_i (σ_i² + β²)`` (Algorithm 4). With ``C_q = {i : r(i) >= r(q)}`` the teams
placed at or below q and ``A_q = |{s : r(s) = r(q)}|`` the size of q's tie,

    Ω_i = σ_i²/c · Σ_{q : r(q) <= r(i)} ([q = i] - e_i/S_q) / A_q,
    Δ_i = γ_i σ_i²/c² · Σ_{q : r(q) <= r(i)} (e_i/S_q)(1 - e_i/S_q) / A_q,

with ``e_i = exp(θ_i/c)``, ``S_q = Σ_{s ∈ C_q} e_s`` (Algorithm 4, the tie-aware form with A_q)
and openskill's default ``γ_i = σ_i/c`` (the paper's suggested γ). Differences from the paper,
kept for agreement: when the match is given as scores and ``margin > 0``, θ_i in ``e_i`` is shifted by the
mean over the teams with a different score of ``(θ_j - θ_i)(log1p(|s_i - s_j|/margin) - 1)`` (zero when
``|s_i - s_j| <= margin``, and the same whether i scored more or less); and the tie averaging that follows
is a no-op (see :mod:`duckrate.systems.weng_lin.common`).
"""

from __future__ import annotations

import math

from duckrate.core.borrowed import borrowed_row
from duckrate.core.jit import inlined_kernel
from duckrate.systems.weng_lin.common import (
    S_BETA,
    S_MARGIN,
    square,
    zeroed_terms,
)
from duckrate.systems.weng_lin.scratch import TEAM_STRENGTH, TEAM_SUM_Q, TEAM_TIED


@inlined_kernel
def plackett_luce_terms(scratch, settings, rank, score, has_score, team_mu, team_sigma_sq):
    """Ω and Δ of each team (in sorted order, best first; views of ``scratch``) for Algorithm 4."""
    team_floats, team_ints = scratch[2], scratch[3]
    n = rank.shape[0]
    beta_squared = square(settings[S_BETA])
    margin = settings[S_MARGIN]
    total = 0.0
    for i in range(n):
        total += team_sigma_sq[i] + beta_squared
    c = math.sqrt(total)

    strength = borrowed_row(team_floats, TEAM_STRENGTH, n)
    for i in range(n):
        adjusted = team_mu[i]
        if has_score:
            adjustment = 0.0
            count = 0
            for j in range(n):
                if j == i:
                    continue
                score_diff = abs(score[i] - score[j])
                if score_diff > 0.0:
                    factor = 1.0
                    if score_diff > margin and margin > 0.0:
                        factor = math.log1p(score_diff / margin)
                    if score[i] > score[j]:
                        adjustment -= (team_mu[i] - team_mu[j]) * (factor - 1.0)
                    else:
                        adjustment += (team_mu[j] - team_mu[i]) * (factor - 1.0)
                    count += 1
            adjusted += adjustment / count if count else adjustment
        strength[i] = math.exp(adjusted / c)

    sum_q = borrowed_row(team_floats, TEAM_SUM_Q, n)
    tied = borrowed_row(team_ints, TEAM_TIED, n)
    sum_q[:] = 0.0
    tied[:] = 0
    for q in range(n):
        for i in range(n):
            if rank[i] >= rank[q]:
                sum_q[q] += strength[i]
            if rank[i] == rank[q]:
                tied[q] += 1

    omega, delta = zeroed_terms(scratch, n)
    for i in range(n):
        om = 0.0
        de = 0.0
        for q in range(n):
            share = strength[i] / sum_q[q]
            if rank[q] <= rank[i]:
                de += share * (1.0 - share) / tied[q]
                if q == i:
                    om += (1.0 - share) / tied[q]
                else:
                    om -= share / tied[q]
        om *= team_sigma_sq[i] / c
        de *= team_sigma_sq[i] / square(c)
        gamma = math.sqrt(team_sigma_sq[i]) / c
        omega[i] = om
        delta[i] = de * gamma
    return omega, delta
