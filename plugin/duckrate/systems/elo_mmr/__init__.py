"""Elo-MMR (Ebtekar & Liu, "Elo-MMR: A Rating System for Massive Multiplayer Competitions", 2021), the first
contest system (:mod:`duckrate.systems.contest`).

- :mod:`.replay`: the replay (``elo_mmr``, :data:`ELO_MMR`), its parameters and saved state;
- :mod:`.phase1`: the tie groups' roots of Q (Theorem 3.2), exactly or through series, and opponent
  subsampling;
- :mod:`.fast`: the fast phase 1 of the logistic model (one shared function per contest, Chebyshev fits);
- :mod:`.gaussian_series`: the fast phase 1 of the Gaussian model (Chebyshev series of block sums);
- :mod:`.history`: phase 2, the robust average over each player's history and the pseudodiffusion;
- :mod:`.beliefs`: the players' beliefs, kept in the saved state.
"""

from duckrate.systems.elo_mmr.replay import BETA, DRIFT, ELO_MMR, contest_scales, elo_mmr

__all__ = ["BETA", "DRIFT", "ELO_MMR", "contest_scales", "elo_mmr"]
