"""TrueSkill Through Time (Dangauthier et al. 2007; Landfried & Mocskos' ``trueskillthroughtime``): a batch fit.

- :mod:`.fit`: ``ttt_fit`` and :data:`TTT_FIT` (parameters, validation, output rows);
- :mod:`.team_fit`: ``ttt_team_fit`` and :data:`TTT_TEAM_FIT`, the same over team results;
- time steps: :mod:`duckrate.fits.whole_history.periods`, shared with WHR;
- :mod:`.layout`: one league's history as CSR arrays: batches of games, their teams and players, a skill slot
  per player and step;
- :mod:`.passes`: the forward-backward message passing and its iterations to convergence;
- :mod:`.game`: one game's messages to its players' skills (two players, or teams), with draws;
- :mod:`.gaussian`: the normal numerics (``erfc``, its inverse, the truncated moments) as the package has them.
"""

from duckrate.fits.through_time.fit import TTT_FIT, ttt_fit
from duckrate.fits.through_time.team_fit import TTT_TEAM_FIT, ttt_team_fit
from duckrate.fits.whole_history.rows import COLUMNS as OUTPUT_COLUMNS

__all__ = ["OUTPUT_COLUMNS", "TTT_FIT", "TTT_TEAM_FIT", "ttt_fit", "ttt_team_fit"]
