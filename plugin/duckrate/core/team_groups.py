"""One pass over a team table's rows grouped by match, then team, then player (:func:`match_groups`): what
:func:`duckrate.core.teams.prepare_team_results` checks of each match and team, and each team's place.

Rows come in as dense integer codes (league, match, team, player; the match and team codes in their keys'
sort order), ``played_at`` keys, and ``rank`` / ``score`` with NaN where NULL. The kernel finds, for each
check, the rows that break it (:class:`Problems`); it raises nothing, so the caller reports the first problem
in its own order with the table's own values, as the error messages need.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel

NO_ROW = np.iinfo(np.int64).max


@kernel
def _same(a, b):
    """Equal, NaN (NULL) equal to NaN only."""
    return (a == b) or (np.isnan(a) and np.isnan(b))


@kernel
def _places(values, descending):
    """Dense places (1 = best) of per-team values: ascending ranks, or descending scores."""
    n = len(values)
    keys = -values if descending else values.copy()
    order = np.argsort(keys, kind="mergesort")
    place = np.empty(n, dtype=np.int64)
    current = 0
    for k in range(n):
        if k == 0 or keys[order[k]] != keys[order[k - 1]]:
            current += 1
        place[order[k]] = current
    return place


@kernel
def _match_groups(g, league, match, team, player, time, rank, score, has_rank, has_score):
    n = len(g)
    place = np.zeros(n, dtype=np.int64)
    twice = np.zeros(n, dtype=np.bool_)
    within = np.empty(n, dtype=np.int64)  # each match's rows, teams by place then key, players by code
    starts = np.empty(n + 1, dtype=np.int64)
    n_groups = 0
    # each check's candidates: (first row, other row) per offending group; NO_ROW when none
    time_first, time_other = NO_ROW, NO_ROW
    rank_first, rank_other = NO_ROW, NO_ROW
    score_first, score_other = NO_ROW, NO_ROW
    single_row = NO_ROW
    partial_rank, partial_score = NO_ROW, NO_ROW
    disagree_row = NO_ROW
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and league[g[stop]] == league[g[start]] and match[g[stop]] == match[g[start]]:
            stop += 1
        rows = g[start:stop]
        m = stop - start
        # a player twice in the match
        players = player[rows].copy()
        by_player = np.argsort(players, kind="mergesort")
        for k in range(1, m):
            if players[by_player[k]] == players[by_player[k - 1]]:
                twice[rows[by_player[k]]] = True
                twice[rows[by_player[k - 1]]] = True
        # played_at: the match's first row (input order) against the others
        first = rows.min()
        if first < time_first:
            other = NO_ROW
            for r in rows:
                if time[r] != time[first] and r < other:
                    other = r
            if other != NO_ROW:
                time_first, time_other = first, other
        # the teams
        team_bounds = [0]
        for k in range(1, m):
            if team[rows[k]] != team[rows[k - 1]]:
                team_bounds.append(k)
        team_bounds.append(m)
        n_teams = len(team_bounds) - 1
        if n_teams < 2 and first < single_row:
            single_row = first
        team_rank = np.empty(n_teams)
        team_score = np.empty(n_teams)
        team_first = np.empty(n_teams, dtype=np.int64)
        ranks_given, scores_given = 0, 0
        min_null_rank, min_null_score = NO_ROW, NO_ROW
        for t in range(n_teams):
            members = rows[team_bounds[t] : team_bounds[t + 1]]
            lead = members.min()
            team_first[t] = lead
            team_rank[t] = rank[lead]
            team_score[t] = score[lead]
            for r in members:
                if has_rank:
                    if np.isnan(rank[r]):
                        min_null_rank = min(min_null_rank, r)
                    else:
                        ranks_given += 1
                if has_score:
                    if np.isnan(score[r]):
                        min_null_score = min(min_null_score, r)
                    else:
                        scores_given += 1
            if has_rank and lead < rank_first:
                other = NO_ROW
                for r in members:
                    if not _same(rank[r], rank[lead]) and r < other:
                        other = r
                if other != NO_ROW:
                    rank_first, rank_other = lead, other
            if has_score and lead < score_first:
                other = NO_ROW
                for r in members:
                    if not _same(score[r], score[lead]) and r < other:
                        other = r
                if other != NO_ROW:
                    score_first, score_other = lead, other
        if 0 < ranks_given < m:
            partial_rank = min(partial_rank, min_null_rank)
        if 0 < scores_given < m:
            partial_score = min(partial_score, min_null_score)
        by_rank = has_rank and ranks_given == m
        by_score = has_score and scores_given == m
        if by_rank:
            places = _places(team_rank, False)
            if by_score:
                from_scores = _places(team_score, True)
                for t in range(n_teams):
                    if places[t] != from_scores[t] and team_first[t] < disagree_row:
                        disagree_row = team_first[t]
        elif by_score:
            places = _places(team_score, True)
        else:
            places = np.ones(n_teams, dtype=np.int64)  # no outcome: reported by the caller's checks
        for t in range(n_teams):
            for k in range(team_bounds[t], team_bounds[t + 1]):
                place[rows[k]] = places[t]
        at = start
        for t in np.argsort(places, kind="mergesort"):  # teams by place, tied teams by their key
            for k in range(team_bounds[t], team_bounds[t + 1]):
                within[at] = rows[k]
                at += 1
        starts[n_groups] = start
        n_groups += 1
        start = stop
    starts[n_groups] = n
    problems = np.array(
        [
            time_first,
            time_other,
            rank_first,
            rank_other,
            score_first,
            score_other,
            single_row,
            partial_rank,
            partial_score,
            disagree_row,
        ],
        dtype=np.int64,
    )
    return place, twice, problems, within, starts[: n_groups + 1]


@kernel
def _matches_in_order(within, starts, match_order):
    """The rows of the matches taken in ``match_order`` (indices into the groups of ``starts``)."""
    order = np.empty(len(within), dtype=np.int64)
    at = 0
    for m in match_order:
        for k in range(starts[m], starts[m + 1]):
            order[at] = within[k]
            at += 1
    return order


@dataclass(frozen=True)
class Problems:
    """The rows breaking each check (None when none does): a match whose rows disagree on ``played_at``
    (its first row, a row that differs), a team whose rows disagree on its rank or its score (likewise), the
    first row of a match with one team, the first row with no rank (no score) in a match that gives one on
    some rows only, and the first row of a team whose rank and score order it differently in its match."""

    twice: np.ndarray  # bool per input row: the player is in the match twice
    time: tuple[int, int] | None
    rank: tuple[int, int] | None
    score: tuple[int, int] | None
    single_team: int | None
    partial_rank: int | None
    partial_score: int | None
    rank_score_disagree: int | None


@dataclass(frozen=True)
class Groups:
    """What :func:`match_groups` finds: each input row's team ``place``, and the rows in replay order once the
    :class:`Problems` are ruled out (:meth:`replay_order`)."""

    place: np.ndarray
    within: np.ndarray
    starts: np.ndarray

    def replay_order(self, time: np.ndarray, match: np.ndarray, league: np.ndarray) -> np.ndarray:
        """The input rows in replay order: matches by (played_at, match, league), within each its teams by
        place then key, players by code. Valid only when no match disagrees on ``played_at``."""
        first = self.within[self.starts[:-1]]
        match_order = np.lexsort((league[first], match[first], time[first])).astype(np.int64)
        return _matches_in_order(self.within, self.starts, match_order)


def match_groups(g, league, match, team, player, time, rank, score) -> tuple[Groups, Problems]:
    """The :class:`Groups` and the :class:`Problems` of the table; ``g`` lists the input rows sorted by
    (league, match, team, player); ``rank`` and ``score`` are float64 with NaN for NULL, or None when the
    table has no such column."""
    n = len(league)
    place, twice, found, within, starts = _match_groups(
        g,
        league,
        match,
        team,
        player,
        time,
        rank if rank is not None else np.full(n, np.nan),
        score if score is not None else np.full(n, np.nan),
        rank is not None,
        score is not None,
    )

    def row(k: int) -> int | None:
        return None if found[k] == NO_ROW else int(found[k])

    def pair(k: int) -> tuple[int, int] | None:
        return None if found[k] == NO_ROW else (int(found[k]), int(found[k + 1]))

    groups = Groups(place, within, starts)
    return groups, Problems(twice, pair(0), pair(2), pair(4), row(6), row(7), row(8), row(9))
