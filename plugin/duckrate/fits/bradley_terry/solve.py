"""One entry point for every Bradley-Terry fit on integer-coded data, without the table machinery.

:func:`fit_pairs` checks that the optimum exists and runs the chosen solver; :func:`bt_theta` is the
array-level API later fits (e.g. the likelihood-ratio tests' ridge fit, λ = 10) call directly.
"""

from __future__ import annotations

import numpy as np

from duckrate.fits.bradley_terry.existence import Existence, check_existence
from duckrate.fits.bradley_terry.mm import mm_fit
from duckrate.fits.bradley_terry.newton import newton_fit
from duckrate.fits.bradley_terry.pairs import Pairs, pairs_from_rows
from duckrate.fits.bradley_terry.solution import Runaway, Solution

DEFAULT_MAX_ITER = {"newton": 100, "mm": 100_000}


#: A fitted |θ_a - θ_b + α| beyond this (odds of 1e13 to 1) means the plain MLE runs off to infinity
#: along a direction the connectivity check cannot see (only possible with the order effect).
MAX_FITTED_GAP = 30.0


class NoFiniteOptimum(ArithmeticError):
    """Plain MLE without Zermelo's condition (``existence`` says which players break it), or a runaway
    order effect (``existence`` is None, ``reason`` says why)."""

    def __init__(self, existence: Existence | None, reason: str = "the ratings or the side-A effect run to infinity"):
        super().__init__("no finite maximum-likelihood Bradley-Terry fit")
        self.existence = existence
        self.reason = reason


def fit_pairs(
    pairs: Pairs,
    precision: np.ndarray,
    mu: np.ndarray,
    use_alpha: bool = False,
    method: str = "newton",
    tol: float = 1e-9,
    max_iter: int | None = None,
    theta0: np.ndarray | None = None,
    alpha0: float = 0.0,
) -> Solution:
    """Minimise the penalised negative log-likelihood of :mod:`._bt_model` over ``pairs``.

    Raises :class:`NoFiniteOptimum` when the plain MLE (all ``precision`` zero) does not exist or the
    iterates run away.
    """
    mle = not np.any(precision > 0.0)
    if mle:
        existence = check_existence(pairs)
        if not existence.exists:
            raise NoFiniteOptimum(existence)
    if use_alpha:  # α has no prior: it is finite only if side A both scored and conceded something
        if not pairs.wins.sum() > 0.0:
            raise NoFiniteOptimum(None, "side A never scored, so the side-A effect runs to -infinity")
        if not pairs.losses.sum() > 0.0:
            raise NoFiniteOptimum(None, "side A won every game, so the side-A effect runs to +infinity")
    solver = {"newton": newton_fit, "mm": mm_fit}[method]
    try:
        with np.errstate(divide="ignore"):
            solution = solver(
                pairs,
                precision,
                mu,
                use_alpha,
                tol,
                DEFAULT_MAX_ITER[method] if max_iter is None else max_iter,
                theta0,
                alpha0,
            )
    except Runaway as runaway:
        raise NoFiniteOptimum(None) from runaway
    if mle and pairs.n_pairs:
        played = (pairs.wins + pairs.losses) > 0.0
        gap = np.abs(solution.theta[pairs.a] - solution.theta[pairs.b] + solution.alpha)[played]
        if gap.size and gap.max() > MAX_FITTED_GAP:
            raise NoFiniteOptimum(None)
    return solution


def bt_theta(
    player_a: np.ndarray,
    player_b: np.ndarray,
    score: np.ndarray,
    n_players: int,
    weight: np.ndarray | None = None,
    ridge: float = 0.0,
    home_advantage: bool = False,
    method: str = "newton",
    tol: float = 1e-9,
    max_iter: int | None = None,
) -> Solution:
    """Fit θ from integer-coded games: ``player_a``/``player_b`` in ``0..n_players-1`` (side A first),
    ``score`` = side A's score in [0, 1], optional positive ``weight``; ``ridge`` = λ of the penalty
    ``(λ/2)‖θ‖²`` (natural units; 0 = plain MLE, then θ is mean-zero). Returns a :class:`Solution`
    (``theta``, ``alpha``, ``converged``, ``iterations``, ``gradient_norm``).
    """
    pairs = pairs_from_rows(player_a, player_b, score, weight, n_players)
    precision = np.full(n_players, float(ridge))
    return fit_pairs(pairs, precision, np.zeros(n_players), home_advantage, method, tol, max_iter)
