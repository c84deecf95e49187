"""Scores of one replay's forecasts under the two tuning protocols, per league, in NumPy.

Every sum runs over the matches in replay order (time, then ``match_id``), so a score never depends on the
input's row order. Per match, with p = ``expected_a`` clipped to [1e-15, 1 - 1e-15] for the log and s =
``score_a``: log loss ``-(s ln p + (1 - s) ln(1 - p))``, Brier ``(p - s)²``, and for decisive matches (s 0
or 1) accuracy 1 when the favourite won, ½ at p = ½ (the calibration marts' definitions).

- ``holdout`` (Ebtekar & Liu 2021, Section 6): the first ``train_share`` of each league's matches train:
  the criterion is their mean log loss; the reported scores are over the rest.
- ``cumulative`` (Tang, Wang & Jin, Appendix F.2): the criterion is the mean, over the loss curve's
  checkpoints t (:func:`checkpoint_steps`), of the cumulative mean log loss of the first t matches; the
  reported scores are over every match.
"""

from __future__ import annotations

import numpy as np

from duckrate.evaluation.replay_rows import PROBABILITY_CLIP

PROTOCOLS = ("holdout", "cumulative")


def checkpoint_steps(total: int, points: int) -> np.ndarray:
    """The loss curve's checkpoints of a league with ``total`` matches (the ``loss_curve`` mart's rule):
    every t in 1..total when total <= points, else ``points`` steps evenly spaced from 1 to total (halves
    rounded up)."""
    if total <= points:
        return np.arange(1, total + 1, dtype=np.int64)
    if points == 1:
        return np.array([total], dtype=np.int64)
    k = np.arange(points, dtype=np.int64)
    return 1 + (2 * (total - 1) * k + (points - 1)) // (2 * (points - 1))


class LeagueSplit:
    """The matches in replay order, grouped by league: ``rows`` (input rows, league by league, each in
    replay order), ``starts`` (each league's first position in ``rows``, plus the end)."""

    def __init__(self, order: np.ndarray, league: np.ndarray, n_leagues: int):
        in_order = league[order]
        by_league = np.argsort(in_order, kind="stable")
        self.rows = order[by_league]
        counts = np.bincount(in_order, minlength=n_leagues)
        self.starts = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)


def match_scores(expected: np.ndarray, score: np.ndarray):
    """Per-match log loss, Brier score and accuracy (NaN for a draw or other fractional score)."""
    p = np.clip(expected, PROBABILITY_CLIP, 1.0 - PROBABILITY_CLIP)
    log_loss = -(score * np.log(p) + (1.0 - score) * np.log1p(-p))
    brier = (expected - score) ** 2
    decisive = (score == 0.0) | (score == 1.0)
    correct = np.where(expected > 0.5, score, np.where(expected < 0.5, 1.0 - score, 0.5))
    return log_loss, brier, np.where(decisive, correct, np.nan)


def _mean(values: np.ndarray) -> float:
    kept = values[~np.isnan(values)]
    return float(kept.sum() / kept.size) if kept.size else float("nan")


def league_scores(split: LeagueSplit, expected, score, protocol: str, train_share: float, points: int) -> list[dict]:
    """One dict per league (in league order): ``log_loss``, ``brier``, ``accuracy``, ``n`` (matches
    scored) and ``criterion`` (lower is better)."""
    out = []
    for league in range(split.starts.size - 1):
        rows = split.rows[split.starts[league] : split.starts[league + 1]]
        log_loss, brier, correct = match_scores(expected[rows], score[rows])
        if protocol == "holdout":
            cut = int(np.floor(train_share * rows.size))
            criterion = _mean(log_loss[:cut])
            log_loss, brier, correct = log_loss[cut:], brier[cut:], correct[cut:]
        else:
            steps = checkpoint_steps(rows.size, points)
            running = np.cumsum(log_loss)
            criterion = float((running[steps - 1] / steps).sum() / steps.size) if steps.size else float("nan")
        out.append(
            {
                "log_loss": _mean(log_loss),
                "brier": _mean(brier),
                "accuracy": _mean(correct),
                "n": int(log_loss.size),
                "criterion": criterion,
            }
        )
    return out


def team_league_scores(matches, protocol: str, train_share: float, points: int) -> dict:
    """One league's scores of a team replay: ``matches`` the per-match scores of
    :func:`duckrate.evaluation.team_metrics.match_scores` in ``seq`` order; the criterion is the winner's log
    loss under ``protocol`` (as :func:`league_scores`); reported ``log_loss`` (the winner's), ``accuracy``,
    ``pair_inversion``, ``rank_deviation`` and ``n``."""
    log_loss = matches["winner_log_loss"].to_numpy()
    others = {name: matches[name].to_numpy() for name in ("accuracy", "pair_inversion", "rank_deviation")}
    if protocol == "holdout":
        cut = int(np.floor(train_share * log_loss.size))
        criterion = _mean(log_loss[:cut])
        log_loss, others = log_loss[cut:], {name: values[cut:] for name, values in others.items()}
    else:
        steps = checkpoint_steps(log_loss.size, points)
        running = np.cumsum(log_loss)
        criterion = float((running[steps - 1] / steps).sum() / steps.size) if steps.size else float("nan")
    return {
        "log_loss": _mean(log_loss),
        **{name: _mean(values) for name, values in others.items()},
        "n": int(log_loss.size),
        "criterion": criterion,
    }
