"""One game's likelihood messages to its players' skills: two players, or any number of teams of any size, with
draws (ties).

The factor graph of a game (Herbrich et al. 2006, TrueSkill's factor graph; Dangauthier et al. 2007): each skill
``s_i`` (the player's belief within its time step, less this game's own message: the package's
``within_prior``) makes a performance ``p_i ~ N(s_i, beta^2)``; the difference ``d = p_winner - p_loser`` is
observed ``> margin`` (a win) or ``|d| <= margin`` (a draw). With ``d ~ N(mu_d, sigma_d^2)``,
``mu_d = mu_w - mu_l`` and ``sigma_d^2 = sigma_w^2 + sigma_l^2 + 2 beta^2``, the truncated Gaussian
``N(mu_t, sigma_t^2)`` (``mu_t = mu_d + sigma_d v``, ``sigma_t^2 = sigma_d^2 (1 - w)``, :func:`~.gaussian.v_w`) divided by the prior of ``d`` is the message to ``d``:
precision ``1/theta^2 = 1/sigma_t^2 - 1/sigma_d^2`` and mean ``delta = (sigma_d^2 mu_t - sigma_t^2 mu_d) /
(sigma_d^2 - sigma_t^2)``. Passed back through the sums (Landfried & Mocskos, the likelihood messages of a game; the package's
``likelihood_analitico``) it gives the winner ``N(mu_w + delta - mu_d, theta^2 + sigma_d^2 - sigma_w^2)``
and the loser ``N(mu_l - delta + mu_d, theta^2 + sigma_d^2 - sigma_l^2)``. In a draw, side A plays the
winner's part (between teams, the first in the layout's order). A game that tells nothing (``sigma_t == sigma_d``) sends the uniform message. The quotients
are taken in terms of ``v`` and ``w`` (``delta - mu_d = sigma_d v / w``, ``theta^2 = sigma_d^2 (1 - w) / w``),
which is the package's algebra with fewer square roots and without the cancellation in
``sigma_d^2 - sigma_t^2``: the results differ from the package's by rounding.

Teams (Herbrich et al. 2006; Landfried & Mocskos, the team games of ``trueskillthroughtime``): a team's
performance is the sum of its players' performances, each weighted by the player's share of the game
``w`` (``N(w mu, w^2 (sigma^2 + beta^2))``). Two teams without partial play are the game above with the team
sums in place of the two players (:func:`difference_message`: every player of the winning team gets
``N(mu_i + delta - mu_d, theta^2 + sigma_d^2 - sigma_i^2)``, of the losing one ``N(mu_i - (delta - mu_d), ...)``,
``sigma_d^2`` the variance of the difference of the team performances, as the package's
``likelihood_analitico``). More teams, or partial play, take the package's ``likelihood_teams``
(:func:`team_likelihoods`): the teams in order of place (best first; tied teams in
the layout's order) form a chain of differences of neighbours, each
observed ``> margin`` or, for tied neighbours, ``|d| <= margin``; expectation propagation runs along the
chain forward and back until no message to a team performance moves by more than 1e-6 (at most 10 rounds),
and each player's message is then the team's message less the rest of the team
(:func:`~.passes.batch_pass`). The draw margin of two teams grows with the square root of their number of
players (the package's ``compute_margin`` of ``sqrt(sum of their beta^2)``).

The messages are returned in natural parameters (``tau = mu / sigma^2``, ``pi = 1 / sigma^2``), which is how
the message passing stores them.
"""

from __future__ import annotations

import math

from duckrate.core.jit import inlined_kernel
from duckrate.fits.through_time.gaussian import v_w

#: Game outcomes as the layout codes them, from side A's point of view.
A_WINS, DRAW, B_WINS = 1, 0, -1


@inlined_kernel
def difference_message(mu_d, var_d, margin, tie):
    """``(delta - mu_d, theta^2)`` of the message the observed difference ``d ~ N(mu_d, var_d)`` of two
    teams' performances (the winner's less the loser's; ``tie``: within the margin) sends back (the module
    docstring); ``theta^2`` is ``inf`` when the game tells nothing."""
    sigma_d = math.sqrt(var_d)
    v, w = v_w(mu_d, sigma_d, margin, tie)
    if not w > 0.0:
        return 0.0, math.inf
    return sigma_d * v / w, var_d * (1.0 - w) / w


@inlined_kernel
def team_margin(margin, n_players):
    """The draw margin of two teams of ``n_players`` players together, from ``margin``, that of two players:
    the margin scales with the sd of the difference of the performances, ``sqrt(n_players) beta``."""
    if n_players == 2:
        return margin
    return margin * math.sqrt(n_players * 0.5)


@inlined_kernel
def _natural(mu, var):
    """(tau, pi) of ``N(mu, var)``; ``var`` inf is the uniform (0, 0)."""
    if var == math.inf:
        return 0.0, 0.0
    return mu / var, 1.0 / var


@inlined_kernel
def _moments(tau, pi):
    """(mu, var) of ``(tau, pi)``; the uniform (``pi`` <= 0) is ``(0, inf)``, as the package's ``mu_sigma``."""
    if pi > 0.0:
        return tau / pi, 1.0 / pi
    return 0.0, math.inf


@inlined_kernel
def _product(mu_a, var_a, mu_b, var_b):
    """(mu, var) of the product of two Gaussians given as (mu, var)."""
    tau_a, pi_a = _natural(mu_a, var_a)
    tau_b, pi_b = _natural(mu_b, var_b)
    return _moments(tau_a + tau_b, pi_a + pi_b)


@inlined_kernel
def _truncation_message(mu, var, margin, tie):
    """(mu, var) of the moment-matched truncation of ``N(mu, var)`` (``> margin``, or ``|d| <= margin`` when
    ``tie``) divided by ``N(mu, var)`` (the package's ``approx(d.prior, margin, tie) / d.prior``), in a
    form without the cancellation of the two precisions."""
    sigma = math.sqrt(var)
    v, w = v_w(mu, sigma, margin, tie)
    if not w > 0.0:
        return 0.0, math.inf
    scale = var * (1.0 - w)  # the truncated variance
    return _moments((mu * w + sigma * v) / scale, w / scale)


@inlined_kernel
def _moved(step_mu, step_sigma, old_mu, old_var, new_mu, new_var):
    """The package's ``max_tuple(step, old.delta(new))``: a NaN change (inf - inf) is no change."""
    d_mu = abs(old_mu - new_mu)
    d_sigma = abs(math.sqrt(old_var) - math.sqrt(new_var))
    return (d_mu if d_mu > step_mu else step_mu), (d_sigma if d_sigma > step_sigma else step_sigma)


#: A game of several teams: its chain of differences is iterated to this change, at most this many rounds
#: (the package's ``likelihood_teams``).
TEAM_EPSILON = 1e-6
TEAM_ITERATIONS = 10
# columns of the per-team work array of team_likelihoods
PRIOR_MU, PRIOR_VAR, PLAYERS, LOSE_MU, LOSE_VAR, WIN_MU, WIN_VAR, DIFF_MU, DIFF_VAR, RANK, TEAM = range(11)
TEAM_COLUMNS = 11


@inlined_kernel
def sort_teams(work, n_teams):
    """Sort the first ``n_teams`` rows of ``work`` by ``RANK``, stably (tied teams stay in their order): the
    order the package takes the teams in (``sortperm(result, reverse=True)``)."""
    for i in range(1, n_teams):
        j = i
        while j > 0 and work[j - 1, RANK] > work[j, RANK]:
            for c in range(TEAM_COLUMNS):
                work[j - 1, c], work[j, c] = work[j, c], work[j - 1, c]
            j -= 1


@inlined_kernel
def team_likelihoods(work, n_teams, margin):
    """The messages of a game of ``n_teams`` teams, best first, to their performances (the package's
    ``likelihood_teams``, Landfried & Mocskos). ``work[e]`` holds team ``e``'s performance without the game
    (``PRIOR_MU``, ``PRIOR_VAR``), its number of players (``PLAYERS``) and its place (``RANK``; teams ``e`` and
    ``e + 1`` tie when equal), the rows in order of place (:func:`sort_teams`); ``margin`` is the draw margin of two players. On return ``work[e, WIN_*]`` and
    ``work[e, LOSE_*]`` are the messages from the difference above and below team ``e`` (mean, variance);
    their product is the message to the team."""
    last = n_teams - 1  # the number of differences
    for e in range(n_teams):
        work[e, LOSE_MU] = 0.0
        work[e, LOSE_VAR] = math.inf
        work[e, WIN_MU] = 0.0
        work[e, WIN_VAR] = math.inf
        work[e, DIFF_MU] = 0.0
        work[e, DIFF_VAR] = math.inf
    step_mu = math.inf
    step_sigma = math.inf
    rounds = 0
    while (step_mu > TEAM_EPSILON or step_sigma > TEAM_EPSILON) and rounds < TEAM_ITERATIONS:
        step_mu = 0.0
        step_sigma = 0.0
        for e in range(last - 1):  # forward: the messages to the losers' performances
            win_mu, win_var = _product(work[e, PRIOR_MU], work[e, PRIOR_VAR], work[e, LOSE_MU], work[e, LOSE_VAR])
            lose_mu, lose_var = _product(
                work[e + 1, PRIOR_MU], work[e + 1, PRIOR_VAR], work[e + 1, WIN_MU], work[e + 1, WIN_VAR]
            )
            m = team_margin(margin, int(work[e, PLAYERS] + work[e + 1, PLAYERS]))
            d_mu, d_var = _truncation_message(
                win_mu - lose_mu, win_var + lose_var, m, work[e, RANK] == work[e + 1, RANK]
            )
            work[e, DIFF_MU] = d_mu
            work[e, DIFF_VAR] = d_var
            new_mu, new_var = win_mu - d_mu, win_var + d_var
            step_mu, step_sigma = _moved(
                step_mu, step_sigma, work[e + 1, LOSE_MU], work[e + 1, LOSE_VAR], new_mu, new_var
            )
            work[e + 1, LOSE_MU] = new_mu
            work[e + 1, LOSE_VAR] = new_var
        for e in range(last - 1, 0, -1):  # backward: the messages to the winners' performances
            win_mu, win_var = _product(work[e, PRIOR_MU], work[e, PRIOR_VAR], work[e, LOSE_MU], work[e, LOSE_VAR])
            lose_mu, lose_var = _product(
                work[e + 1, PRIOR_MU], work[e + 1, PRIOR_VAR], work[e + 1, WIN_MU], work[e + 1, WIN_VAR]
            )
            m = team_margin(margin, int(work[e, PLAYERS] + work[e + 1, PLAYERS]))
            d_mu, d_var = _truncation_message(
                win_mu - lose_mu, win_var + lose_var, m, work[e, RANK] == work[e + 1, RANK]
            )
            work[e, DIFF_MU] = d_mu
            work[e, DIFF_VAR] = d_var
            new_mu, new_var = lose_mu + d_mu, lose_var + d_var
            step_mu, step_sigma = _moved(step_mu, step_sigma, work[e, WIN_MU], work[e, WIN_VAR], new_mu, new_var)
            work[e, WIN_MU] = new_mu
            work[e, WIN_VAR] = new_var
        rounds += 1
    if last == 1:  # two teams (with partial play): the one difference
        win_mu, win_var = _product(work[0, PRIOR_MU], work[0, PRIOR_VAR], work[0, LOSE_MU], work[0, LOSE_VAR])
        lose_mu, lose_var = _product(work[1, PRIOR_MU], work[1, PRIOR_VAR], work[1, WIN_MU], work[1, WIN_VAR])
        m = team_margin(margin, int(work[0, PLAYERS] + work[1, PLAYERS]))
        work[0, DIFF_MU], work[0, DIFF_VAR] = _truncation_message(
            win_mu - lose_mu, win_var + lose_var, m, work[0, RANK] == work[1, RANK]
        )
    lose_mu, lose_var = _product(work[1, PRIOR_MU], work[1, PRIOR_VAR], work[1, WIN_MU], work[1, WIN_VAR])
    work[0, WIN_MU] = lose_mu + work[0, DIFF_MU]
    work[0, WIN_VAR] = lose_var + work[0, DIFF_VAR]
    e = last - 1
    win_mu, win_var = _product(work[e, PRIOR_MU], work[e, PRIOR_VAR], work[e, LOSE_MU], work[e, LOSE_VAR])
    work[last, LOSE_MU] = win_mu - work[e, DIFF_MU]
    work[last, LOSE_VAR] = win_var + work[e, DIFF_VAR]


@inlined_kernel
def team_message(work, e, mu, var, weight):
    """(tau, pi) of the message of the game to a player of team ``e`` (after :func:`team_likelihoods`) whose
    skill without the game is ``N(mu, var)`` and whose share of the game is ``weight``: the team's message
    less the rest of the team (its performance less ``weight`` times the skill), scaled by ``1 / weight``
    (the package's ``compute_likelihoods``)."""
    team_mu, team_var = _product(work[e, WIN_MU], work[e, WIN_VAR], work[e, LOSE_MU], work[e, LOSE_VAR])
    if team_var == math.inf:
        return 0.0, 0.0
    rest_mu = work[e, PRIOR_MU] - weight * mu
    rest_var = work[e, PRIOR_VAR] - weight * weight * var
    scale = 1.0 / weight
    message_var = (team_var + rest_var) * (scale * scale)
    pi = 1.0 / message_var
    return (team_mu - rest_mu) * scale * pi, pi
