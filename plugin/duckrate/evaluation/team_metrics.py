"""How well a team system forecast its matches, whatever the number of teams: ``team_metrics``.

Per match (from the forecast made before it, in the replay's own columns):

- the winner's log loss ``-ln P(winner)``: ``P`` is the winning team's ``p_team_win``, or ``p_draw`` when the
  first place is shared (no team won outright), clipped to [1e-15, 1 - 1e-15];
- accuracy (matches with one winner): 1 when the winner is the one team predicted first, ``1/k`` when it is
  one of k teams sharing the first predicted place, else 0;
- pair inversion: over the pairs of teams that placed differently, the share the predicted places order the
  same way (½ for a pair predicted level): higher is better, 1 for a perfect forecast (as the contest metric);
- rank deviation: the mean over teams of ``|predicted_rank - rank| / n_teams``: lower is better.

Each is averaged over the matches of a (league, system) in ``seq`` order after the first ``warmup`` share
(the averages of the pair inversion and rank deviation weigh each match once).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from duckrate.core.parameters import Parameter
from duckrate.evaluation.replay_rows import GROUP_KEYS, PROBABILITY_CLIP, require_columns

TEAM_WARMUP = Parameter(
    "warmup",
    0.0,
    "a share in [0, 1) of each league's first matches left unscored",
    lambda value: 0.0 <= value < 1.0,
)
TEAM_METRICS_COLUMNS = {
    "league": pl.Utf8,
    "system": pl.Utf8,
    "n": pl.Int64,
    "winner_log_loss": pl.Float64,
    "accuracy": pl.Float64,
    "pair_inversion": pl.Float64,
    "rank_deviation": pl.Float64,
}
NEEDED = ("league", "seq", "team", "rank", "p_team_win", "predicted_rank", "p_draw")


def match_scores(replay: pl.DataFrame) -> pl.DataFrame:
    """One row per match (``league``, ``system``, ``seq``) with its four scores (see the module docstring)."""
    require_columns(replay, NEEDED, caller="team_metrics")
    if "system" not in replay.columns:
        replay = replay.with_columns(pl.lit(None, dtype=pl.Utf8).alias("system"))
    keys = [*GROUP_KEYS, "seq"]
    teams = (
        replay.with_columns(
            pl.col("league").cast(pl.Utf8), pl.col("system").cast(pl.Utf8), pl.col("team").cast(pl.Utf8)
        )
        .group_by([*keys, "team"])
        .agg(pl.col("rank", "predicted_rank", "p_team_win", "p_draw").first())
        .sort([*keys, "team"], nulls_last=False)
    )
    rows = []
    for key, match in teams.group_by(keys, maintain_order=True):
        place = match["rank"].to_numpy()
        predicted = match["predicted_rank"].to_numpy()
        p_win = match["p_team_win"].to_numpy()
        first = place == place.min()
        outright = int(first.sum()) == 1
        p = float(p_win[first][0]) if outright else float(match["p_draw"][0])
        p = min(max(p, PROBABILITY_CLIP), 1.0 - PROBABILITY_CLIP)
        favourites = predicted == predicted.min()
        accuracy = (float(favourites[first][0]) / int(favourites.sum())) if outright else float("nan")
        i, j = np.triu_indices(len(place), k=1)
        decided = place[i] != place[j]
        agree = np.sign(place[i] - place[j]) * np.sign(predicted[i] - predicted[j])
        concordance = np.where(agree > 0, 1.0, np.where(agree < 0, 0.0, 0.5))[decided]
        rows.append(
            (
                *key,
                -np.log(p),
                accuracy,
                float(concordance.mean()) if concordance.size else float("nan"),
                float(np.abs(predicted - place).mean() / len(place)),
            )
        )
    schema = {
        "league": pl.Utf8,
        "system": pl.Utf8,
        "seq": pl.Int64,
        "winner_log_loss": pl.Float64,
        "accuracy": pl.Float64,
        "pair_inversion": pl.Float64,
        "rank_deviation": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def _mean(column: str) -> pl.Expr:
    kept = pl.col(column).filter(pl.col(column).is_not_nan())
    return (kept.sum() / kept.len().cast(pl.Float64)).alias(column)


def team_metrics(replay: pl.DataFrame, warmup: float = TEAM_WARMUP.default) -> pl.DataFrame:
    """Per ``(league, system)``: ``n`` (matches scored), ``winner_log_loss``, ``accuracy``, ``pair_inversion``
    and ``rank_deviation`` (see the module docstring) over a team replay (``league``, ``seq``, ``team``,
    ``rank``, ``p_team_win``, ``predicted_rank``, ``p_draw``, optional ``system``), leaving out the first
    ``warmup`` share of each league's matches."""
    warmup = TEAM_WARMUP.check("team_metrics", warmup)
    scores = match_scores(replay)
    counted = scores.with_columns(pl.len().over(GROUP_KEYS).alias("_matches")).filter(
        pl.col("seq").rank("ordinal").over(GROUP_KEYS) > (pl.col("_matches") * warmup).floor()
    )
    return (
        counted.sort([*GROUP_KEYS, "seq"], nulls_last=False)
        .group_by(GROUP_KEYS, maintain_order=True)
        .agg(
            pl.len().cast(pl.Int64).alias("n"),
            *(_mean(name) for name in ("winner_log_loss", "accuracy", "pair_inversion", "rank_deviation")),
        )
        .select(list(TEAM_METRICS_COLUMNS))
    )
