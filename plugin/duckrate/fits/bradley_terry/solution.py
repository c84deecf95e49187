"""What a Bradley-Terry solver returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: |θ| (natural units) beyond which a fit is declared runaway: exp(40) is odds of 2e17 to 1, a gap of
#: ~6950 rating points, which no finite optimum of real data reaches.
RUNAWAY = 40.0


@dataclass
class Solution:
    """θ (natural units, one per player), α (order effect, 0 when not fitted), and how the solver went.

    ``history``: the gradient norm after each iteration (Newton) or the log-posterior ℓ = -f (MM).
    """

    theta: np.ndarray
    alpha: float
    converged: bool
    iterations: int
    gradient_norm: float
    objective: float
    method: str
    history: list = field(default_factory=list)
    inner_iterations: int = 0


class Runaway(ArithmeticError):
    """The iterates run off to infinity: no finite optimum (plain MLE without Zermelo's condition)."""

    def __init__(self, theta, alpha):
        super().__init__("Bradley-Terry fit diverges")
        self.theta = theta
        self.alpha = alpha
