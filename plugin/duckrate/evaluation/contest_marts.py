"""The contest mart computed in Python (over a contest replay: one row per contest and player, as written
by ``elo_mmr``), called by both engines: the predictive metrics of Ebtekar & Liu 2021, Section 6.2 (by default as the authors'
reference implementation computes them for the paper's Table 2, ``definition='reference'``; the earlier
per-(contest, player) average as ``definition='all_contests'``).

A contest replay has ``league``, ``seq`` (the contest's 1-based position in its league), ``contest_id``,
``played_at``, ``player``, ``rank``, ``rating_before``, ``rating_after``, ``sd_after`` and optionally
``system``; its row order carries no meaning.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from numba import prange

from duckrate.core.errors import DuckrateInputError
from duckrate.core.jit import kernel, parallel_kernel
from duckrate.core.parameters import Parameter
from duckrate.evaluation.replay_rows import GROUP_KEYS, require_columns

CONTEST_METRICS_COLUMNS = ("league", "system", "pair_inversion", "rank_deviation", "n")


def _with_keys(replay: pl.DataFrame) -> pl.DataFrame:
    if "system" not in replay.columns:
        replay = replay.with_columns(pl.lit(None, dtype=pl.Utf8).alias("system"))
    return replay.with_columns(pl.col("league").cast(pl.Utf8), pl.col("system").cast(pl.Utf8))


@kernel
def contest_pair_metrics(contest_start, rating, rank, included, pair_inversion, rank_deviation):
    """Per row (NaN where not ``included`` or alone in its contest), the ``'all_contests'`` definition:

    * pair inversion: the share of the other participants j for which the prior ratings predicted the
      pair right, i.e. the higher-rated of the two finished ahead or tied (equal ratings: a tie in rank
      counts 1, anything else ½);
    * rank deviation: |actual place - predicted place| / (|P| - 1), places taken as ranges (tied ranks
      span a range of places, equal ratings a range of predicted places) and the distance between the
      two ranges used, so a tie is read at the place nearest the prediction.
    """
    for c in range(contest_start.shape[0] - 1):
        first = contest_start[c]
        stop = contest_start[c + 1]
        n = stop - first
        for i in range(first, stop):
            if not included[i] or n < 2:
                pair_inversion[i] = np.nan
                rank_deviation[i] = np.nan
                continue
            correct = 0.0
            higher = 0
            same_rating = 0
            ahead = 0
            same_rank = 0
            for j in range(first, stop):
                if rating[j] > rating[i]:
                    higher += 1
                elif rating[j] == rating[i]:
                    same_rating += 1
                if rank[j] < rank[i]:
                    ahead += 1
                elif rank[j] == rank[i]:
                    same_rank += 1
                if j == i:
                    continue
                if rating[i] > rating[j]:
                    correct += 1.0 if rank[i] <= rank[j] else 0.0
                elif rating[i] < rating[j]:
                    correct += 1.0 if rank[j] <= rank[i] else 0.0
                else:
                    correct += 1.0 if rank[i] == rank[j] else 0.5
            pair_inversion[i] = correct / (n - 1)
            predicted_low = higher + 1
            predicted_high = higher + same_rating
            actual_low = ahead + 1
            actual_high = ahead + same_rank
            gap = 0
            if actual_high < predicted_low:
                gap = predicted_low - actual_high
            elif predicted_high < actual_low:
                gap = actual_low - predicted_high
            rank_deviation[i] = gap / (n - 1)


MIN_CONTESTS = Parameter(
    "min_contests",
    5,
    "an integer number of contests >= 0 (definition 'all_contests' only)",
    lambda v: v >= 0,
    integer=True,
)
CONTEST_WARMUP = Parameter(
    "warmup", 0.1, "a share in [0, 1) of each league's contests (paper: 10%)", lambda v: 0 <= v < 1
)
CONTEST_METRIC_DEFINITIONS = ("reference", "all_contests")
CONTEST_METRIC_DEFINITION = Parameter(
    "definition",
    "reference",
    "one of 'reference', 'all_contests'",
    choices=CONTEST_METRIC_DEFINITIONS,
)
MIN_HISTORY = Parameter(
    "min_history",
    5,
    "an integer number of earlier contests >= 0 (paper: 5; definition 'reference' only)",
    lambda v: v >= 0,
    integer=True,
)
CONTEST_TOP = Parameter(
    "top",
    None,
    "an integer number of places >= 1, or NULL for every place (definition 'reference' only)",
    lambda v: v >= 1,
    integer=True,
    nullable=True,
)
CONTEST_METRIC_PARAMETERS = (MIN_CONTESTS, CONTEST_WARMUP, CONTEST_METRIC_DEFINITION, MIN_HISTORY, CONTEST_TOP)
_NO_TOP = 2**62  # above any number of places or contests (the kernel's integers are 64-bit)


def _empty_metrics() -> pl.DataFrame:
    return pl.DataFrame(
        schema={
            "league": pl.Utf8,
            "system": pl.Utf8,
            "pair_inversion": pl.Float64,
            "rank_deviation": pl.Float64,
            "n": pl.Int64,
        }
    )


def contest_metrics(
    replay: pl.DataFrame,
    min_contests: int = MIN_CONTESTS.default,
    warmup: float = CONTEST_WARMUP.default,
    definition: str = CONTEST_METRIC_DEFINITION.default,
    min_history: int = MIN_HISTORY.default,
    top: int | None = CONTEST_TOP.default,
) -> pl.DataFrame:
    """Pair inversion and rank deviation (Ebtekar & Liu 2021, Section 6.2) of the prior ratings
    (``rating_before``), per ``(league, system)``.

    Parameters
    ----------
    replay : contest replay with ``league``, ``seq``, ``player``, ``rank``, ``rating_before`` (optional ``system``).
    min_contests : ``'all_contests'`` only: only players with at least this many contests in the whole replay
        count (their opponents are every participant).
    warmup : the first ``floor(warmup · number of contests)`` contests of each league (``seq`` at most that)
        are not scored (paper: 10%); they still count as the players' earlier contests.
    definition : ``'reference'`` (default): the metric of the Elo-MMR reference implementation
        (EbTech/Elo-MMR, ``metrics.rs``), behind the paper's Table 2, see :func:`_reference_metrics`;
        ``'all_contests'``: a per-(contest, player) average, see
        :func:`_all_contests_metrics`.
    min_history : ``'reference'`` only: a participant counts when the player has at least this many earlier
        contests (rows with a smaller ``seq`` in the same league and system) and at least one (a player's
        first contest never counts, as in the reference, where an unseen player has no rating yet).
    top : ``'reference'`` only: None (every place), or only the participants whose place among those
        counted is below ``top`` (0-based, a tie taken at its best place: the reference's ``top_k``).

    Returns
    -------
    DataFrame ``league, system, pair_inversion, rank_deviation, n``: both metrics as fractions in [0, 1]
    (the paper prints percentages; higher pair inversion and lower rank deviation are better), ``n`` the
    number of (contest, player) rows scored; a ``(league, system)`` with nothing scored has no row.
    """
    require_columns(replay, ("league", "seq", "player", "rank", "rating_before"), caller="contest_metrics")
    min_contests = MIN_CONTESTS.check("contest_metrics", min_contests)
    warmup = CONTEST_WARMUP.check("contest_metrics", warmup)
    definition = CONTEST_METRIC_DEFINITION.check("contest_metrics", definition)
    min_history = MIN_HISTORY.check("contest_metrics", min_history)
    top = CONTEST_TOP.check("contest_metrics", top)
    if definition == "all_contests":
        return _all_contests_metrics(_with_keys(replay), min_contests, warmup)
    top = _NO_TOP if top is None else min(top, _NO_TOP)
    return _reference_metrics(_with_keys(replay), warmup, min(min_history, _NO_TOP), top)


@kernel
def _merge_sort_descending(keys, payload, key_buffer, payload_buffer, first, stop):
    """Stable sort of ``keys[first:stop]`` in descending order, ``payload`` moved alongside (bottom-up merge
    sort, O(n log n)); returns the number of inversions, the pairs i < j with ``keys[i] < keys[j]``."""
    n = stop - first
    inversions = 0
    width = 1
    while width < n:
        start = first
        while start < stop:
            middle = min(start + width, stop)
            end = min(start + 2 * width, stop)
            left = start
            right = middle
            out = start
            while left < middle and right < end:
                if keys[left] >= keys[right]:
                    key_buffer[out] = keys[left]
                    payload_buffer[out] = payload[left]
                    left += 1
                else:
                    key_buffer[out] = keys[right]
                    payload_buffer[out] = payload[right]
                    right += 1
                    inversions += middle - left
                out += 1
            while left < middle:
                key_buffer[out] = keys[left]
                payload_buffer[out] = payload[left]
                left += 1
                out += 1
            while right < end:
                key_buffer[out] = keys[right]
                payload_buffer[out] = payload[right]
                right += 1
                out += 1
            start = end
        for i in range(first, stop):
            keys[i] = key_buffer[i]
            payload[i] = payload_buffer[i]
        width *= 2
    return inversions


@parallel_kernel
def reference_contest_counts(contest_start, scored, rating, rank, history, min_history, top, weight, inversions, error):
    """Per contest ``c`` (rows ``contest_start[c]:contest_start[c + 1]`` in standings order, i.e. by rank), the
    reference implementation's counts, before the contest's update:

    * the participants kept: ``history >= min_history`` (callers pass at least 1), in standings order, each
      with its tie range ``[lo, hi]`` re-normalised among them (0-based positions of the first and the last
      kept participant of its rank), then only those with ``lo < top``;
    * ``weight[c]``: their number n, or 0 when the contest is not ``scored``, keeps nobody or only one tie;
    * ``inversions[c]``: with each tie pre-sorted by rating (descending), the pairs i < j whose ratings are
      strictly increasing (the lower-rated placed ahead);
    * ``error[c]``: sorted by rating descending (stable: equal ratings in standings order), the sum over
      positions i of ``|i - clamp(i, lo, hi)|``.

    Each contest writes only its own outputs, so the result does not depend on the thread count.
    """
    for c in prange(contest_start.shape[0] - 1):
        weight[c] = 0
        inversions[c] = 0
        error[c] = 0
        if not scored[c]:
            continue
        first = contest_start[c]
        stop = contest_start[c + 1]
        kept = 0
        for i in range(first, stop):
            if history[i] >= min_history:
                kept += 1
        if kept < 2:
            continue
        keys = np.empty(kept)
        ranks = np.empty(kept, dtype=np.int64)
        k = 0
        for i in range(first, stop):
            if history[i] >= min_history:
                keys[k] = rating[i]
                ranks[k] = rank[i]
                k += 1
        lo = np.empty(kept, dtype=np.int64)
        hi = np.empty(kept, dtype=np.int64)
        for k in range(kept):
            lo[k] = k if k == 0 or ranks[k] != ranks[k - 1] else lo[k - 1]
        for k in range(kept - 1, -1, -1):
            hi[k] = k if k == kept - 1 or ranks[k] != ranks[k + 1] else hi[k + 1]
        n = kept
        while n > 0 and lo[n - 1] >= top:  # lo is non-decreasing: the places below top are a prefix
            n -= 1
        if n == 0 or hi[0] + 1 >= n:
            continue
        payload = np.arange(n)
        key_buffer = np.empty(n)
        payload_buffer = np.empty(n, dtype=np.int64)
        k = 0
        while k < n:  # pre-sort each tie by rating: the order within a tie counts as predicted
            end = hi[k] + 1
            if end - k > 1:
                _merge_sort_descending(keys, payload, key_buffer, payload_buffer, k, end)
            k = end
        # The stable sort of that sequence orders equal ratings in standings order (ties pre-sorted stably),
        # as the reference's rank deviation sorts the standings themselves.
        inversions[c] = _merge_sort_descending(keys, payload, key_buffer, payload_buffer, 0, n)
        total = 0
        for i in range(n):
            j = payload[i]
            closest = min(max(i, lo[j]), hi[j])
            total += abs(i - closest)
        error[c] = total
        weight[c] = n


def _require_complete(frame: pl.DataFrame) -> None:
    """The columns the reference definition reads, without nulls (and ``rating_before`` without NaN)."""
    for name in ("seq", "player", "rank", "rating_before"):
        nulls = frame[name].null_count()
        nans = int(frame[name].is_nan().sum()) if name == "rating_before" else 0
        if nulls or nans:
            found = f"{nulls} null" + (f" and {nans} NaN value(s)" if name == "rating_before" else " value(s)")
            without = "nulls or NaN" if name == "rating_before" else "nulls"
            raise DuckrateInputError(f"contest_metrics: expected {name} without {without}, found {found}")


def _reference_metrics(replay: pl.DataFrame, warmup: float, min_history: int, top: int) -> pl.DataFrame:
    """The Elo-MMR reference implementation's metrics (EbTech/Elo-MMR ``multi-skill/src/metrics.rs``,
    ``pairwise_metric`` and ``percentile_distance_metric`` over ``get_participant_ratings(…, min_history)`` and
    its ``top_k``; the paper's Table 2): per contest with n participants kept (see
    :func:`reference_contest_counts`), pair inversion ``1 - 2·inversions / (n(n-1))`` and rank deviation
    ``error / (n(n-1))``, each averaged over the scored contests with weight n (sums over weights)."""
    frame = (
        replay.lazy()
        .select(
            *GROUP_KEYS,
            pl.col("seq").cast(pl.Int64),
            pl.col("player"),
            pl.col("rank").cast(pl.Int64),
            pl.col("rating_before").cast(pl.Float64),
        )
        .collect()
    )
    _require_complete(frame)
    if frame.height == 0:
        return _empty_metrics()
    # sorted first: the window below runs about twice as fast over rows already grouped by contest
    frame = frame.sort([*GROUP_KEYS, "seq", "rank", "player"], nulls_last=False).with_columns(
        # earlier contests of the player in this league and system (rows with a smaller seq)
        (pl.col("seq").rank("min").over([*GROUP_KEYS, "player"]).cast(pl.Int64) - 1).alias("history")
    )
    seq = frame["seq"].to_numpy()
    new_group = np.empty(frame.height, dtype=np.bool_)
    new_group[0] = True
    new_group[1:] = (
        frame.select(pl.any_horizontal(pl.col(key).ne_missing(pl.col(key).shift(1)) for key in GROUP_KEYS).slice(1))
        .to_series()
        .to_numpy()
    )
    new_contest = new_group.copy()
    new_contest[1:] |= seq[1:] != seq[:-1]
    row_start = np.flatnonzero(new_contest)
    contest_start = np.append(row_start, frame.height).astype(np.int64)
    contest_group = np.cumsum(new_group)[row_start] - 1  # each contest's (league, system), 0-based
    group_first_contest = np.flatnonzero(np.diff(contest_group, prepend=-1))
    group_last_contest = np.append(group_first_contest[1:], len(row_start)) - 1
    contests_in_group = seq[row_start[group_last_contest]]  # the largest seq of each (league, system)
    cutoff = np.floor(contests_in_group * warmup)
    scored = seq[row_start] > cutoff[contest_group]
    n_contests = len(row_start)
    weight = np.empty(n_contests, dtype=np.int64)
    inversions = np.empty(n_contests, dtype=np.int64)
    error = np.empty(n_contests, dtype=np.int64)
    reference_contest_counts(
        contest_start,
        scored,
        frame["rating_before"].to_numpy(),
        frame["rank"].to_numpy(),
        frame["history"].to_numpy(),
        max(min_history, 1),
        top,
        weight,
        inversions,
        error,
    )
    counted = weight > 0
    others = np.where(counted, weight - 1, 1)
    # per contest, weighted by n: n · (1 - 2 inv / (n(n-1))) = n - 2 inv / (n-1) and n · err / (n(n-1)) = err / (n-1)
    pair_sum = np.where(counted, weight - inversions * 2.0 / others, 0.0)
    error_sum = np.where(counted, error / others, 0.0)
    total_weight = np.add.reduceat(weight, group_first_contest)
    total_pair = np.add.reduceat(pair_sum, group_first_contest)
    total_error = np.add.reduceat(error_sum, group_first_contest)
    keys = frame.select(GROUP_KEYS)[row_start[group_first_contest]]
    present = total_weight > 0
    return (
        keys.filter(pl.Series(present))
        .with_columns(
            pl.Series("pair_inversion", total_pair[present] / total_weight[present], dtype=pl.Float64),
            pl.Series("rank_deviation", total_error[present] / total_weight[present], dtype=pl.Float64),
            pl.Series("n", total_weight[present], dtype=pl.Int64),
        )
        .select(CONTEST_METRICS_COLUMNS)
    )


def _all_contests_metrics(replay: pl.DataFrame, min_contests: int, warmup: float) -> pl.DataFrame:
    """The ``'all_contests'`` definition: :func:`contest_pair_metrics` per (contest, player) row of the players
    with at least ``min_contests`` contests in the whole replay, after the warm-up, averaged per
    ``(league, system)`` over those rows."""
    frame = (
        replay.select(
            *GROUP_KEYS, "seq", "player", pl.col("rank").cast(pl.Int64), pl.col("rating_before").cast(pl.Float64)
        )
        .with_columns(
            pl.len().over([*GROUP_KEYS, "player"]).alias("played"),
            pl.col("seq").max().over(GROUP_KEYS).alias("n_contests"),
        )
        .with_columns(
            ((pl.col("played") >= min_contests) & (pl.col("seq") > (pl.col("n_contests") * warmup).floor())).alias(
                "included"
            )
        )
        .sort([*GROUP_KEYS, "seq", "rank", "player"], nulls_last=False)
    )
    if frame.height == 0:
        return _empty_metrics()
    contest = frame.select(pl.struct(*GROUP_KEYS, "seq").rle_id()).to_series().to_numpy()
    new = np.ones(frame.height, dtype=np.bool_)
    new[1:] = contest[1:] != contest[:-1]
    starts = np.append(np.flatnonzero(new), frame.height).astype(np.int64)
    pair = np.empty(frame.height)
    deviation = np.empty(frame.height)
    contest_pair_metrics(
        starts,
        frame["rating_before"].to_numpy().copy(),
        frame["rank"].to_numpy().copy(),
        frame["included"].to_numpy().copy(),
        pair,
        deviation,
    )
    scored = frame.with_columns(pl.Series("pair_inversion", pair), pl.Series("rank_deviation", deviation))
    return (
        scored.filter(pl.col("pair_inversion").is_not_nan())
        .group_by(GROUP_KEYS)
        .agg(pl.col("pair_inversion").mean(), pl.col("rank_deviation").mean(), pl.len().cast(pl.Int64).alias("n"))
        .sort(GROUP_KEYS, nulls_last=False)
        .select(CONTEST_METRICS_COLUMNS)
    )
