"""One pass over a team table's rows, match by match (:func:`match_groups`): what
:func:`duckrate.core.teams.prepare_team_results` checks of each match and team, each team's place, and the rows
in replay order.

Rows come in as integer codes (league, match, team, player; the match and team codes in their keys' sort
order), ``played_at`` keys, and ``rank`` / ``score`` with NaN where NULL. A match is one (league, match) pair.
Its rows need not be adjacent, but usually nearly are (a table sorted by match, or DuckDB chunks of one in any
order), so the rows are cut into runs of one match in input order, and only the runs are sorted by (league,
match), and only when they are not in that order already. Each match's rows are then sorted by (team, player)
in a buffer allocated once per call. The kernel finds, for each check, the rows that break it
(:class:`Problems`); it raises nothing, so the caller reports the first problem in its own order with the
table's own values, as the error messages need.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from duckrate.core.jit import kernel

NO_ROW = np.iinfo(np.int64).max
#: A match of up to this many rows (a match's teams, up to this many) is sorted by insertion, a larger one by
#: merge sort.
INSERTION_SORT_MAX = 48


@kernel
def _runs(league, match, starts):
    """Runs of one match's rows (equal ``league`` and ``match``) in input order: their ``n_runs + 1`` starts
    (written to ``starts``), ``n_runs``, and whether the runs' (league, match) strictly increase (then every match
    is one run, and the runs are in (league, match) order)."""
    n = len(league)
    n_runs = 0
    increasing = True
    for i in range(n):
        if i == 0 or league[i] != league[i - 1] or match[i] != match[i - 1]:
            if i > 0 and (league[i] < league[i - 1] or (league[i] == league[i - 1] and match[i] < match[i - 1])):
                increasing = False
            starts[n_runs] = i
            n_runs += 1
    starts[n_runs] = n
    return n_runs, increasing


@kernel
def _matches_of_runs(run_order, run_start, league, match, time):
    """The matches of runs taken in ``run_order`` (sorted by (league, match), runs of one match in input order):
    each match's runs (``n_matches + 1`` offsets into ``run_order``), its league, match and ``played_at`` key
    (of its first row), and the most rows a match has."""
    n_runs = len(run_order)
    bounds = np.empty(n_runs + 1, dtype=np.int64)
    match_league = np.empty(n_runs, dtype=np.int64)
    match_key = np.empty(n_runs, dtype=np.int64)
    match_time = np.empty(n_runs, dtype=np.int64)
    n_matches = 0
    largest, size, previous = 0, 0, 0
    for k in range(n_runs):
        row = run_start[run_order[k]]
        if k == 0 or league[row] != league[previous] or match[row] != match[previous]:
            largest = max(largest, size)
            size = 0
            bounds[n_matches] = k
            match_league[n_matches] = league[row]
            match_key[n_matches] = match[row]
            match_time[n_matches] = time[row]
            n_matches += 1
        size += run_start[run_order[k] + 1] - row
        previous = row
    largest = max(largest, size)
    bounds[n_matches] = n_runs
    return (
        bounds[: n_matches + 1].copy(),
        match_league[:n_matches].copy(),
        match_key[:n_matches].copy(),
        match_time[:n_matches].copy(),
        largest,
    )


@kernel
def _increasing(first, second, third):
    """Whether the triples ``(first[k], second[k], third[k])`` strictly increase with ``k``."""
    for k in range(1, len(first)):
        if first[k] != first[k - 1]:
            if first[k] < first[k - 1]:
                return False
        elif second[k] != second[k - 1]:
            if second[k] < second[k - 1]:
                return False
        elif third[k] <= third[k - 1]:
            return False
    return True


@kernel
def _sort_rows(rows, team_key, player_key, m):
    """Sort the first ``m`` entries of ``rows`` (with their ``team_key`` and ``player_key``) by (team, player),
    stably."""
    if m <= INSERTION_SORT_MAX:
        for k in range(1, m):
            row, t, p = rows[k], team_key[k], player_key[k]
            j = k - 1
            while j >= 0 and (team_key[j] > t or (team_key[j] == t and player_key[j] > p)):
                rows[j + 1], team_key[j + 1], player_key[j + 1] = rows[j], team_key[j], player_key[j]
                j -= 1
            rows[j + 1], team_key[j + 1], player_key[j + 1] = row, t, p
        return
    by_player = np.argsort(player_key[:m], kind="mergesort")
    by_team = by_player[np.argsort(team_key[:m][by_player], kind="mergesort")]
    rows[:m] = rows[:m][by_team]
    team_key[:m] = team_key[:m][by_team]
    player_key[:m] = player_key[:m][by_team]


@kernel
def _stable_order(keys, n, out):
    """``out[:n]``: the indices ``0 .. n - 1`` sorted by ``keys`` (ascending; equal keys in index order)."""
    if n <= INSERTION_SORT_MAX:
        for k in range(n):
            j = k - 1
            while j >= 0 and keys[out[j]] > keys[k]:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = k
        return
    out[:n] = np.argsort(keys[:n], kind="mergesort")


@kernel
def _dense_places(keys, by_key, n, places):
    """``places[:n]``: dense places (1 = best = the lowest key) of ``keys`` taken in their sorted order ``by_key``."""
    current = 0
    for k in range(n):
        if k == 0 or keys[by_key[k]] != keys[by_key[k - 1]]:
            current += 1
        places[by_key[k]] = current


@kernel
def _match_pass(
    order,
    team_start,
    team_rank,
    team_score,
    match_order,
    bounds,
    run_order,
    run_start,
    league,
    team,
    player,
    time,
    rank,
    score,
    has_rank,
    has_score,
    n_players,
    n_leagues,
    largest,
):
    """Each match, taken in ``match_order``: its checks, and its rows, teams and places written in replay order
    (``order``, and the first ``n_teams`` (+ 1) entries of ``team_start``, ``team_rank``, ``team_score``, all
    sized for a team per row; the other :class:`Replay` arrays returned), then ``n_teams`` and the
    :class:`Problems` rows (``NO_ROW`` for none) as one array."""
    n = len(league)
    n_matches = len(match_order)
    match_teams = np.empty(n_matches + 1, dtype=np.int64)
    match_has_score = np.empty(n_matches, dtype=np.bool_)
    match_league = np.empty(n_matches, dtype=np.int64)
    match_seq = np.empty(n_matches, dtype=np.int64)
    match_time_key = np.empty(n_matches, dtype=np.int64)
    counters = np.zeros(n_leagues, dtype=np.int64)
    # each player's last match (its place in match_order): who is in a match twice
    seen_match = np.full(n_players, -1, dtype=np.int64)
    # scratch for one match: its rows, their team and player codes, its teams' bounds and outcomes
    rows = np.empty(largest, dtype=np.int64)
    team_key = np.empty(largest, dtype=np.int64)
    player_key = np.empty(largest, dtype=np.int64)
    team_bounds = np.empty(largest + 1, dtype=np.int64)
    by_rank = np.empty(largest, dtype=np.float64)
    by_score = np.empty(largest, dtype=np.float64)  # minus the score: lower is better, like a rank
    team_first = np.empty(largest, dtype=np.int64)
    ranked = np.empty(largest, dtype=np.int64)
    scored = np.empty(largest, dtype=np.int64)
    places = np.empty(largest, dtype=np.int64)
    from_scores = np.empty(largest, dtype=np.int64)
    # each check's candidates: (first row, other row) per offending group; NO_ROW when none
    twice_row = -1
    time_first, time_other = NO_ROW, NO_ROW
    rank_first, rank_other = NO_ROW, NO_ROW
    score_first, score_other = NO_ROW, NO_ROW
    single_row = NO_ROW
    partial_rank, partial_score = NO_ROW, NO_ROW
    disagree_row = NO_ROW
    at = 0
    n_teams_out = 0
    for position in range(n_matches):
        g = match_order[position]
        m = 0
        for k in range(bounds[g], bounds[g + 1]):
            run = run_order[k]
            for r in range(run_start[run], run_start[run + 1]):
                rows[m] = r
                team_key[m] = team[r]
                player_key[m] = player[r]
                m += 1
        # the runs of a match are in input order, so its rows are ascending: rows[0] is its first row
        first = rows[0]
        # a player twice in the match: the last row of any such player (the caller reports it), a row after
        # the player's first, as the rows are ascending
        for k in range(m):
            p = player_key[k]
            if seen_match[p] == position:
                twice_row = max(twice_row, rows[k])
            seen_match[p] = position
        # played_at: the match's first row (input order) against the others
        if first < time_first:
            for k in range(1, m):
                if time[rows[k]] != time[first]:
                    time_first, time_other = first, rows[k]
                    break
        _sort_rows(rows, team_key, player_key, m)
        # the teams
        n_teams = 0
        team_bounds[0] = 0
        for k in range(1, m):
            if team_key[k] != team_key[k - 1]:
                n_teams += 1
                team_bounds[n_teams] = k
        n_teams += 1
        team_bounds[n_teams] = m
        if n_teams < 2 and first < single_row:
            single_row = first
        ranks_given, scores_given = 0, 0
        min_null_rank, min_null_score = NO_ROW, NO_ROW
        for t in range(n_teams):
            lead = NO_ROW
            for k in range(team_bounds[t], team_bounds[t + 1]):
                r = rows[k]
                lead = min(lead, r)
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
            team_first[t] = lead
            if has_rank:
                by_rank[t] = rank[lead]
                if lead < rank_first:
                    other = NO_ROW
                    for k in range(team_bounds[t], team_bounds[t + 1]):
                        r = rows[k]
                        if not (rank[r] == rank[lead] or (np.isnan(rank[r]) and np.isnan(rank[lead]))):
                            other = min(other, r)
                    if other != NO_ROW:
                        rank_first, rank_other = lead, other
            if has_score:
                by_score[t] = -score[lead]
                if lead < score_first:
                    other = NO_ROW
                    for k in range(team_bounds[t], team_bounds[t + 1]):
                        r = rows[k]
                        if not (score[r] == score[lead] or (np.isnan(score[r]) and np.isnan(score[lead]))):
                            other = min(other, r)
                    if other != NO_ROW:
                        score_first, score_other = lead, other
        if 0 < ranks_given < m:
            partial_rank = min(partial_rank, min_null_rank)
        if 0 < scores_given < m:
            partial_score = min(partial_score, min_null_score)
        # places: by the ranks when every row has one, else by the scores when every row has one
        use_rank = has_rank and ranks_given == m
        use_score = has_score and scores_given == m
        if use_score:
            _stable_order(by_score, n_teams, scored)
            _dense_places(by_score, scored, n_teams, from_scores)
        if use_rank:
            _stable_order(by_rank, n_teams, ranked)
            _dense_places(by_rank, ranked, n_teams, places)
            if use_score:
                for t in range(n_teams):
                    if places[t] != from_scores[t] and team_first[t] < disagree_row:
                        disagree_row = team_first[t]
        elif use_score:
            for t in range(n_teams):
                ranked[t] = scored[t]
                places[t] = from_scores[t]
        else:
            for t in range(n_teams):  # no outcome: reported by the caller's checks
                ranked[t] = t
                places[t] = 1
        # the match in replay order: teams by place, tied teams by their key; players by code
        match_teams[position] = n_teams_out
        all_scored = True
        for j in range(n_teams):
            t = ranked[j]
            team_start[n_teams_out] = at
            team_rank[n_teams_out] = places[t]
            value = score[rows[team_bounds[t]]] if has_score else np.nan
            team_score[n_teams_out] = value
            all_scored = all_scored and not np.isnan(value)
            n_teams_out += 1
            for k in range(team_bounds[t], team_bounds[t + 1]):
                order[at] = rows[k]
                at += 1
        lg = league[first]
        counters[lg] += 1
        match_league[position] = lg
        match_seq[position] = counters[lg]
        match_time_key[position] = time[order[at - m]]
        match_has_score[position] = all_scored
    match_teams[n_matches] = n_teams_out
    team_start[n_teams_out] = n
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
            NO_ROW if twice_row < 0 else twice_row,
        ],
        dtype=np.int64,
    )
    return match_teams, match_has_score, match_league, match_seq, match_time_key, n_teams_out, problems


@dataclass(frozen=True)
class Problems:
    """The rows breaking each check (None when none does): the last row whose player is in its match twice, a
    match whose rows disagree on ``played_at`` (its first row, a row that differs), a team whose rows disagree on
    its rank or its score (likewise), the first row of a match with one team, the first row with no rank (no
    score) in a match that gives one on some rows only, and the first row of a team whose rank and score order
    it differently in its match."""

    twice: int | None
    time: tuple[int, int] | None
    rank: tuple[int, int] | None
    score: tuple[int, int] | None
    single_team: int | None
    partial_rank: int | None
    partial_score: int | None
    rank_score_disagree: int | None


@dataclass(frozen=True)
class Replay:
    """The rows in replay order, valid once the :class:`Problems` are ruled out: matches by (played_at, match,
    league), within each its teams by place then key, players by code; ``order``, ``team_start``,
    ``match_teams``, ``team_rank``, ``team_score``, ``match_has_score``, ``match_league``, ``match_seq`` and
    ``match_time_key`` as in :class:`duckrate.core.teams.PreparedTeams`."""

    order: np.ndarray
    team_start: np.ndarray
    match_teams: np.ndarray
    team_rank: np.ndarray
    team_score: np.ndarray
    match_has_score: np.ndarray
    match_league: np.ndarray
    match_seq: np.ndarray
    match_time_key: np.ndarray


def match_groups(league, match, team, player, time, rank, score, n_players: int, n_leagues: int):
    """The :class:`Replay` and the :class:`Problems` of the table, rows in any order; ``rank`` and ``score`` are
    float64 with NaN for NULL, or None when the table has no such column; player codes are below ``n_players``,
    league codes below ``n_leagues``."""
    n = len(league)
    # The row-sized arrays come from NumPy, which maps them in huge pages; the kernels' own allocations of this
    # size fault in every 4 KB page (about 0.05 s of 0.33 s on 10M rows, measured).
    run_start = np.empty(n + 1, dtype=np.int64)
    n_runs, increasing = _runs(league, match, run_start)
    run_start = run_start[: n_runs + 1]
    if increasing:
        run_order = np.arange(n_runs, dtype=np.int64)
    else:  # stable: the runs of one match stay in input order
        first = run_start[:-1]
        run_order = np.lexsort((match[first], league[first])).astype(np.int64)
    bounds, league_of, match_of, time_of, largest = _matches_of_runs(run_order, run_start, league, match, time)
    if _increasing(time_of, match_of, league_of):
        match_order = np.arange(len(match_of), dtype=np.int64)
    else:
        match_order = np.lexsort((league_of, match_of, time_of)).astype(np.int64)
    order = np.empty(n, dtype=np.int64)
    team_start = np.empty(n + 1, dtype=np.int64)
    team_rank = np.empty(n, dtype=np.int64)
    team_score = np.empty(n, dtype=np.float64)
    none = np.zeros(0, dtype=np.float64)
    *per_match, n_teams, found = _match_pass(
        order,
        team_start,
        team_rank,
        team_score,
        match_order,
        bounds,
        run_order,
        run_start,
        league,
        team,
        player,
        time,
        rank if rank is not None else none,
        score if score is not None else none,
        rank is not None,
        score is not None,
        n_players,
        n_leagues,
        largest,
    )
    match_teams, match_has_score, match_league, match_seq, match_time_key = per_match
    replay = Replay(
        order,
        team_start[: n_teams + 1].copy(),
        match_teams,
        team_rank[:n_teams].copy(),
        team_score[:n_teams].copy(),
        match_has_score,
        match_league,
        match_seq,
        match_time_key,
    )

    def row(k: int) -> int | None:
        return None if found[k] == NO_ROW else int(found[k])

    def pair(k: int) -> tuple[int, int] | None:
        return None if found[k] == NO_ROW else (int(found[k]), int(found[k + 1]))

    problems = Problems(row(10), pair(0), pair(2), pair(4), row(6), row(7), row(8), row(9))
    return replay, problems
