"""The luck-aware grid system (Cowan, "Paired comparisons for games of chance"): each player's whole
posterior on a grid.

- :mod:`.replay`: the replay (``chance``, :data:`CHANCE`), waves of independent matches on both cores;
- :mod:`.grid`: the grid, the luck function Λ and the display scale;
- :mod:`.lowrank`: Λ's low-rank factorisation (cross approximation) and the fast update;
- :mod:`.laplace`: the paper's O(n) Algorithms 4.5 and 4.6 for the Laplace sigmoid and kernel;
- :mod:`.drift`: the drift between matches (Gaussian or Laplace kernel);
- :mod:`.naive`: the paper's O(n²) reference update.
"""

from duckrate.systems.chance.replay import CHANCE, chance, posteriors

__all__ = ["CHANCE", "chance", "posteriors"]
