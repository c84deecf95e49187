"""Turn a ``team_results`` table into the arrays the team replays run on.

One job: validate the canonical columns (``match_id``, ``played_at``, ``team``, ``player``, and ``rank`` or
``score``; optional ``weight``, ``league``), encode players and leagues as dense integers, and order the rows:
matches by ``played_at`` then ``match_id`` (a match is one ``(league, match_id)``), teams within a match best
first (rank 1, or the highest score; equal ranks or scores tie; tied teams by their key), players within a
team by name. Errors name the column, the row key ``(match_id, team, player)`` and the value, like
:mod:`duckrate.core.contests`.

Individual contests (teams of one) and two-player matches (two teams of one) are valid team results too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.contests import PlayerRows, league_codes, player_codes, row_error, state_slots
from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import encode_runs, is_absent, single_chunk, time_key_of, time_unit_of
from duckrate.core.protocol import InputShape
from duckrate.core.team_groups import match_groups

REQUIRED_COLUMNS = ("match_id", "played_at", "team", "player")
#: A match's outcome: a rank (1 = best) or a score (higher is better) per row; at least one of the two.
OUTCOME_COLUMNS = ("rank", "score")
OPTIONAL_COLUMNS = (*OUTCOME_COLUMNS, "weight", "league")
#: The team input: one row per player per match.
TEAM_RESULTS = InputShape("team_results", "match_id", REQUIRED_COLUMNS, OPTIONAL_COLUMNS, "team matches")


@dataclass(frozen=True)
class PreparedTeams(PlayerRows):
    """Validated, encoded team results.

    Row arrays (``state``, ``weight``, ``league``) are in input order; ``order`` lists the input rows in replay
    order (match by match, team by team, best first). Match m's teams are ``match_teams[m]`` to
    ``match_teams[m + 1]``; team t's rows are ``order[team_start[t]:team_start[t + 1]]`` (so match m's rows are
    ``order[team_start[match_teams[m]]:team_start[match_teams[m + 1]]]``).

    Attributes
    ----------
    order : int64, input row indices in replay order.
    team_start : int64, ``n_teams + 1`` offsets into ``order``; match_teams : int64, ``n_matches + 1`` offsets
        into the teams.
    team_rank : int64 per team, its place in its match: 1 = best, tied teams share a place, the next place
        follows on (1, 1, 2); team_score : float64 per team (the ``score`` column; NaN where none);
        match_has_score : bool per match, whether every team of it has a score (the match is then given by its
        scores, which a margin reads; otherwise by its ranks).
    match_league : int64 league index of each match; match_seq its 1-based position in its league;
        match_time_key : int64 ``played_at`` of each match (``time_unit`` units since 1970, or the integer
        order itself).
    weight : float64 of each row, the player's share of the match in (0, 1] (1 when absent or NULL); the
        slots and leagues: :class:`~duckrate.core.contests.PlayerRows`.
    """

    n_rows: int
    order: np.ndarray
    team_start: np.ndarray
    match_teams: np.ndarray
    team_rank: np.ndarray
    team_score: np.ndarray
    match_has_score: np.ndarray
    match_league: np.ndarray
    match_seq: np.ndarray
    match_time_key: np.ndarray
    weight: np.ndarray

    @property
    def n_matches(self) -> int:
        return len(self.match_teams) - 1

    event_kind: ClassVar[str] = "match"
    event_key: ClassVar[str] = "match_id"
    keeps_event_rows: ClassVar[bool] = False  # millions of matches: the state keeps its players and leagues only

    @property
    def n_teams(self) -> int:
        return len(self.team_start) - 1

    @property
    def event_first_rows(self) -> np.ndarray:
        return self.order[self.team_start[self.match_teams[:-1]]]

    @property
    def event_league(self) -> np.ndarray:
        return self.match_league

    @property
    def event_seq(self) -> np.ndarray:
        return self.match_seq

    @property
    def event_time_key(self) -> np.ndarray:
        return self.match_time_key

    @property
    def event_sizes(self) -> np.ndarray:
        return np.diff(self.team_start[self.match_teams])


_fail = partial(row_error, ("match_id", "team", "player"))


def _numbers(columns: dict, table: str, name: str, what: str) -> np.ndarray:
    """A numeric column as float64; a type that is not a number is an error naming it."""
    array = columns[name]
    if not (pa.types.is_floating(array.type) or pa.types.is_integer(array.type) or pa.types.is_decimal(array.type)):
        raise DuckrateInputError(f"{table}: column '{name}' has type {array.type}; expected {what}")
    return np.array(pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64, copy=True)


def _null_rows(array: pa.Array) -> np.ndarray:
    if not array.null_count:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(~np.asarray(array.is_valid(), dtype=np.bool_))


def _outcome(columns: dict, table: str, name: str) -> np.ndarray | None:
    """The ``rank`` (whole numbers >= 1) or ``score`` (finite numbers) column, NaN where NULL; None when absent
    (which rows may be NULL is :func:`prepare_team_results`' business)."""
    if is_absent(columns, name):
        return None
    nulls = _null_rows(columns[name])
    if name == "rank":
        values = _numbers(columns, table, name, "an integer rank (1 = best)")
        values[nulls] = np.nan
        ok = np.isfinite(values) & (values == np.floor(values)) & (values >= 1) & (values < 2.0**62)
        ok[nulls] = True  # NULL is not a bad rank
        bad = np.flatnonzero(~ok)
        if bad.size:
            _fail(columns, table, name, int(bad[0]), columns[name][int(bad[0])].as_py(), "a whole-number rank >= 1")
        return values
    values = _numbers(columns, table, name, "a numeric score (higher is better)")
    values[nulls] = np.nan
    ok = np.isfinite(values)
    ok[nulls] = True
    bad = np.flatnonzero(~ok)
    if bad.size:
        _fail(columns, table, name, int(bad[0]), float(values[bad[0]]), "a finite score (higher is better)")
    return values


def _weights(columns: dict, table: str, n_rows: int) -> np.ndarray:
    if is_absent(columns, "weight"):
        return np.ones(n_rows, dtype=np.float64)
    weight = _numbers(columns, table, "weight", "a number (DOUBLE) in (0, 1]")
    weight[_null_rows(columns["weight"])] = 1.0
    bad = np.flatnonzero(~((weight > 0.0) & (weight <= 1.0)))
    if bad.size:
        expected = "a weight in (0, 1], the player's share of the match (NULL means 1)"
        _fail(columns, table, "weight", int(bad[0]), float(weight[bad[0]]), expected)
    return weight


def _keys(columns: dict, table: str, name: str, what: str) -> pa.Array:
    """A key column (``match_id``, ``team``) as int64 or large strings."""
    array = columns[name]
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_integer(array.type):
        return pc.cast(array, pa.int64())
    try:
        return pc.cast(array, pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise DuckrateInputError(f"{table}: column '{name}' has type {array.type}; expected {what}") from None


def _sorted_codes(keys: pa.Array) -> np.ndarray:
    """int64 codes of a key column in the keys' own sort order: integer keys as they are, text by the dense
    rank of its bytes."""
    if pa.types.is_int64(keys.type):
        return np.asarray(keys, dtype=np.int64)
    codes, dictionary = encode_runs(keys)  # a match's rows, and a team's, mostly adjacent
    by_text = pc.array_sort_indices(dictionary).to_numpy()
    code_of = np.empty(len(by_text), dtype=np.int64)
    code_of[by_text] = np.arange(len(by_text), dtype=np.int64)
    return code_of[codes]


def prepare_team_results(columns: dict[str, pa.Array], table: str = "team_results") -> PreparedTeams:
    """Validate and encode a team results table.

    Parameters
    ----------
    columns : mapping of column name to a pyarrow array, all of one length.
    table : name used in error messages.

    Raises
    ------
    DuckrateInputError
        On a missing column (neither ``rank`` nor ``score`` is one); a NULL ``match_id``, ``played_at``,
        ``team``, ``player``, ``rank`` or ``score``; an empty player name; a rank that is not a whole number >= 1,
        a score that is not finite; a weight outside (0, 1]; a player listed twice in a match (in one team or
        in two); a match whose rows disagree on ``played_at``; a team whose rows disagree on its rank or score;
        rank and score both given and ordering the teams of a match differently; a match with one team.
    """
    columns = {name: single_chunk(array) for name, array in columns.items()}
    missing = [name for name in REQUIRED_COLUMNS if is_absent(columns, name)]
    if missing or all(is_absent(columns, name) for name in OUTCOME_COLUMNS):
        named = [
            *(repr(m) for m in missing),
            *([] if not all(is_absent(columns, n) for n in OUTCOME_COLUMNS) else ["'rank' or 'score'"]),
        ]
        raise DuckrateInputError(
            f"{table}: missing column(s) {', '.join(named)}; expected columns {', '.join(REQUIRED_COLUMNS)}, a "
            "rank (1 = best) or a score (higher is better), and optionally weight, league"
        )
    for name in REQUIRED_COLUMNS:
        nulls = _null_rows(columns[name])
        if nulls.size:
            _fail(columns, table, name, int(nulls[0]), None, f"a non-NULL {name} (stage the table to drop such rows)")
    n_rows = len(columns["match_id"])
    match = _keys(columns, table, "match_id", "an integer or VARCHAR match id")
    team = _keys(columns, table, "team", "a team key that can be text (unique within the match)")
    player_code, players = player_codes(columns, table, _fail)
    league, league_names = league_codes(columns, n_rows)
    time_key = time_key_of(columns, table)
    rank, score = _outcome(columns, table, "rank"), _outcome(columns, table, "score")
    weight = _weights(columns, table, n_rows)
    neither = np.ones(n_rows, dtype=np.bool_)
    for name, values in (("rank", rank), ("score", score)):
        if values is not None:
            neither &= np.isnan(values) if columns[name].null_count else False
    if neither.any():
        row = int(np.flatnonzero(neither)[0])
        column = "rank" if rank is not None else "score"
        expected = (
            "a rank or a score on every row"
            if rank is not None and score is not None
            else f"a non-NULL {column} on every row"
        )
        _fail(columns, table, column, row, None, expected)

    match_code = _sorted_codes(match)
    team_code = _sorted_codes(team)
    replay, problems = match_groups(
        league, match_code, team_code, player_code, time_key, rank, score, len(players), len(league_names)
    )
    if problems.twice is not None:
        row = problems.twice
        same = (league == league[row]) & (match_code == match_code[row]) & (player_code == player_code[row])
        first = int(np.flatnonzero(same)[0])
        where = "twice in one team" if team_code[first] == team_code[row] else f"also in team {team[first].as_py()!r}"
        _fail(
            columns,
            table,
            "player",
            row,
            players[int(player_code[row])].as_py(),
            f"each player once per match ({where})",
        )
    if problems.time is not None:
        first, other = problems.time
        value, also = columns["played_at"][other].as_py(), columns["played_at"][first].as_py()
        _fail(columns, table, "played_at", other, value, f"one played_at per match (the match also has {also!r})")
    for name, found in (("rank", problems.rank), ("score", problems.score)):
        if found is not None:
            first, other = found
            value, also = columns[name][other].as_py(), columns[name][first].as_py()
            _fail(columns, table, name, other, value, f"one {name} per team (the team also has {also!r})")
    if problems.single_team is not None:
        row = problems.single_team
        _fail(
            columns,
            table,
            "team",
            row,
            columns["team"][row].as_py(),
            "at least two teams per match (the match has one)",
        )
    for name, mixed_row in (("rank", problems.partial_rank), ("score", problems.partial_score)):
        if mixed_row is not None:
            _fail(
                columns,
                table,
                name,
                mixed_row,
                None,
                f"a {name} on every row of a match or on none (the match mixes them)",
            )
    if problems.rank_score_disagree is not None:
        row = problems.rank_score_disagree
        value = columns["rank"][row].as_py()
        expected = f"ranks that order the match's teams as their scores do (this team's score is {columns['score'][row].as_py()!r})"
        _fail(columns, table, "rank", row, value, expected)

    state, n_states, state_league, state_player = state_slots(league, player_code, len(players), len(league_names))
    return PreparedTeams(
        n_rows=n_rows,
        order=replay.order,
        team_start=replay.team_start,
        match_teams=replay.match_teams,
        team_rank=replay.team_rank,
        team_score=replay.team_score,
        match_has_score=replay.match_has_score,
        match_league=replay.match_league,
        match_seq=replay.match_seq,
        match_time_key=replay.match_time_key,
        state=np.ascontiguousarray(state, dtype=np.int64),
        weight=np.ascontiguousarray(weight),
        league=np.ascontiguousarray(league, dtype=np.int64),
        league_names=league_names,
        n_states=int(n_states),
        state_league=np.asarray(state_league, dtype=np.int64),
        state_player=np.asarray(state_player, dtype=np.int64),
        players=players,
        time_unit=time_unit_of(columns["played_at"].type),
    )
