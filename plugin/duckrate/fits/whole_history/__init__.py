"""Whole-History Rating (Coulom 2008) as a batch fit, matching the ``whr`` package (2.2.0):

- :mod:`.fit`: ``whr_fit`` and :data:`WHR_FIT` (parameters, validation, output rows);
- :mod:`.periods`: time steps from ``played_at`` (days, weeks, months, years, or integer values);
- :mod:`.days`: the player-days and their games in a compressed layout, ordered canonically;
- :mod:`.whr`: the model, the per-player Newton steps (Thomas algorithm) swept Gauss-Seidel, and the sd;
- :mod:`.newton`: Newton's method on a league's ratings at once (CG preconditioned by the players' blocks);
- :mod:`.leagues`: every league by the chosen solver, side by side.
"""

from duckrate.fits.whole_history.fit import WHR_FIT, whr_fit

__all__ = ["WHR_FIT", "whr_fit"]
