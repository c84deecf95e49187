"""The Elo-MMR reference implementation (EbTech/Elo-MMR, through its Rust bindings ``elo-mmr-py``) as a test
oracle for the contest systems: the rating and sd of every participant after every contest.

``elo-mmr-py`` is a test-only dependency (pyproject's ``test`` extra): a test that needs it fails, never
skips, when it is missing.
"""

from __future__ import annotations

import polars as pl


def reference_ratings(results: pl.DataFrame, system: str, mu_noob: float = 1500.0, sig_noob: float = 350.0):
    """``{(contest_id, player): (mu, sig)}`` after each contest, rated by the reference's ``system`` (``cfsys``,
    ``tcsys``, ``trueskill``, ``mmr``, ...) over one league's ``results`` in (played_at, contest_id) order;
    standings in (rank, player) order, a tie group sharing its 0-based first and last place."""
    from elo_mmr_py import Contest, Rater

    rater = Rater(system, mu_noob=mu_noob, sig_noob=sig_noob)
    ratings = {}
    for (contest_id,), part in results.sort("played_at", "contest_id", "rank", "player").group_by(
        ["contest_id"], maintain_order=True
    ):
        names = part["player"].to_list()
        ranks = part["rank"].to_list()
        first, last = {}, {}
        for place, rank in enumerate(ranks):
            first.setdefault(rank, place)
            last[rank] = place
        rater.add(Contest([(name, first[r], last[r]) for name, r in zip(names, ranks)], name=str(contest_id)))
        snapshot = rater.ratings
        for name in names:
            ratings[(contest_id, name)] = (snapshot[name].mu, snapshot[name].sig)
    return ratings
