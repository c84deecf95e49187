"""Rating scales: the one definition of the display scale the logistic systems and fits report on.

A logistic model's natural unit θ (``P(A beats B) = σ(θ_a - θ_b)``) is shown to users as Elo points,
``R = 1500 + 400/ln10 · θ``: 400 points are a factor of 10 in the odds (Elo 1978; Glickman's q = ln10/400).
Systems with a ``scale`` parameter use ``ln10/scale`` in place of :data:`NATURAL_PER_POINT`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LN10 = math.log(10.0)
#: The display scale's centre: a newcomer's rating, and the mean of a mean-zero fit.
DISPLAY_CENTER = 1500.0
#: Rating points per factor of 10 in the odds (chess Elo).
ELO_SCALE = 400.0
#: θ per display point, ln10/400 = 0.00575646273... (Glickman's q).
NATURAL_PER_POINT = LN10 / ELO_SCALE
#: Display points per θ, 400/ln10 = 173.717792...
POINTS_PER_NATURAL = ELO_SCALE / LN10


def natural_per_point(scale: float) -> float:
    """θ per rating point of a logistic scale of ``scale`` points per factor of 10 in the odds."""
    return LN10 / scale


def points_per_natural(scale: float) -> float:
    """Rating points per θ of a logistic scale of ``scale`` points per factor of 10 in the odds."""
    return scale / LN10


@dataclass(frozen=True)
class RatingScale:
    """The scale a system reports ratings on, as the marts need it: ``gap_bin_width`` is the default bin width
    of ``loss_by_gap`` (about 7 points of win probability between even players)."""

    name: str
    gap_bin_width: float


#: The Elo display scale (400/ln 10 points per natural unit): Elo, Glicko, Glicko-2, Elo2k, Pairwise, the grid
#: system, the contest systems and the Bradley-Terry fits. 50 points are about 7 points of win probability.
ELO_DISPLAY = RatingScale("elo display", 50.0)
#: TrueSkill's μ: one point moves the forecast about as much as 50 Elo points at the default β = 25/6.
TRUESKILL_MU = RatingScale("TrueSkill mu", 1.0)
#: TrueSkill Through Time's μ at its default β = 1: a gap of 0.25 moves the forecast about as much as 50 Elo points.
TTT_MU = RatingScale("TrueSkill Through Time mu", 0.25)
