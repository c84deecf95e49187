"""One two-player game's likelihood messages to its players' skills, with draws.

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
winner's part. A game that tells nothing (``sigma_t == sigma_d``) sends the uniform message. The quotients
are taken in terms of ``v`` and ``w`` (``delta - mu_d = sigma_d v / w``, ``theta^2 = sigma_d^2 (1 - w) / w``),
which is the package's algebra with fewer square roots and without the cancellation in
``sigma_d^2 - sigma_t^2``: the results differ from the package's by rounding.

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
def _messages(mu_w, var_w, mu_l, var_l, beta2, margin, tie):
    """(tau, pi) of the messages to the winner's and the loser's skill (side A's and B's in a draw)."""
    var_d = (var_w + beta2) + (var_l + beta2)
    sigma_d = math.sqrt(var_d)
    mu_d = mu_w - mu_l
    v, w = v_w(mu_d, sigma_d, margin, tie)
    if not w > 0.0:  # the truncation left d's variance as it was: the game tells nothing
        return 0.0, 0.0, 0.0, 0.0
    # mu_t = mu_d + sigma_d v and sigma_t^2 = sigma_d^2 (1 - w), so delta - mu_d = sigma_d v / w and
    # theta^2 = sigma_d^2 (1 - w) / w: the package's quotients without their cancellation
    shift = sigma_d * v / w
    theta2 = var_d * (1.0 - w) / w
    pi_w = 1.0 / (theta2 + var_d - var_w)
    pi_l = 1.0 / (theta2 + var_d - var_l)
    return (mu_w + shift) * pi_w, pi_w, (mu_l - shift) * pi_l, pi_l


@inlined_kernel
def game_messages(mu_a, var_a, mu_b, var_b, outcome, beta2, margin):
    """Natural parameters ``(tau_a, pi_a, tau_b, pi_b)`` of the messages of one game to side A's and side
    B's skills, given each side's skill belief without this game (mean and variance) and the ``outcome``
    (:data:`A_WINS`, :data:`DRAW` or :data:`B_WINS`); ``beta2`` is the performance variance, ``margin`` the
    draw margin (:func:`~.gaussian.draw_margin`)."""
    if outcome == B_WINS:
        tau_b, pi_b, tau_a, pi_a = _messages(mu_b, var_b, mu_a, var_a, beta2, margin, False)
        return tau_a, pi_a, tau_b, pi_b
    return _messages(mu_a, var_a, mu_b, var_b, beta2, margin, outcome == DRAW)
