"""Turn a ``contest_results`` table into the arrays the contest replays (Elo-MMR) run on.

One job: validate the canonical columns (``contest_id``, ``played_at``, ``player``, ``rank``; optional
``league``, ``weight``), encode players and leagues as dense integers, and order the rows: contests by
``played_at`` then ``contest_id`` (a contest is one ``(league, contest_id)``), rows within a contest by
``rank`` (1 = best; equal ranks are ties). Errors name the column, the row key ``(contest_id, player)``
and the value, like :mod:`duckrate.core.matches`.

Input is a mapping of column name to a pyarrow array (what a DuckDB Arrow UDF receives) or a Polars
DataFrame (the Python API).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import ClassVar, cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import (
    columns_from_polars,
    encode_column,
    encode_runs,
    is_absent,
    single_chunk,
    time_key_of,
    time_unit_of,
)
from duckrate.core.protocol import InputShape

REQUIRED_COLUMNS = ("contest_id", "played_at", "player", "rank")
OPTIONAL_COLUMNS = ("league", "weight")
#: The ranked-contest input: one row per (contest, participant).
CONTEST_RESULTS = InputShape("contest_results", "contest_id", REQUIRED_COLUMNS, OPTIONAL_COLUMNS, "ranked contests")


@dataclass(frozen=True)
class PlayerRows:
    """What every input with one row per player (contest results, team results) encodes alike: each row's state
    slot (one per league and player) and league, and the slots' leagues and players.

    Attributes
    ----------
    state : int64, state slot of each row; league : int64, league index of each row.
    n_states, state_league, state_player, players, league_names, time_unit : as in
        :class:`~duckrate.core.matches.PreparedMatches`.
    """

    state: np.ndarray
    league: np.ndarray
    league_names: list
    n_states: int
    state_league: np.ndarray
    state_player: np.ndarray
    players: pa.Array
    time_unit: str

    @property
    def n_leagues(self) -> int:
        return len(self.league_names)

    # The events (contests, team matches) in replay order, as the saved state (duckrate.systems.event_state)
    # reads them: each subclass names its event kind and key column and gives the four arrays below.
    event_kind: ClassVar[str] = ""
    event_key: ClassVar[str] = ""
    # Whether the saved state keeps a row per replayed event (so a continuation passing one again says so);
    # without them the state stays the size of the player table, and such an event is refused as late.
    keeps_event_rows: ClassVar[bool] = True

    @property
    def event_first_rows(self) -> np.ndarray:
        """The input row of each event's first row in replay order."""
        raise NotImplementedError

    @property
    def event_league(self) -> np.ndarray:
        """The league index of each event."""
        raise NotImplementedError

    @property
    def event_seq(self) -> np.ndarray:
        """Each event's 1-based position in its league."""
        raise NotImplementedError

    @property
    def event_time_key(self) -> np.ndarray:
        """Each event's ``played_at`` key (int64)."""
        raise NotImplementedError

    @property
    def event_sizes(self) -> np.ndarray:
        """The number of rows of each event."""
        raise NotImplementedError

    # The priors helpers (duckrate.core.priors) read a player's slots through these two names.
    @property
    def state_a(self) -> np.ndarray:
        return self.state

    @property
    def state_b(self) -> np.ndarray:
        return self.state


@dataclass(frozen=True)
class PreparedContests(PlayerRows):
    """Validated, encoded contest results.

    Row arrays (``state``, ``rank``) are in input order; ``order`` lists the input rows in replay order
    (contest by contest, best rank first) and ``contest_start`` delimits the contests in it (contest c is
    ``order[contest_start[c]:contest_start[c + 1]]``).

    Attributes
    ----------
    order : int64, input row indices in replay order.
    contest_start : int64, ``n_contests + 1`` offsets into ``order``.
    contest_league : int64, league index of each contest; ``contest_seq`` its 1-based position in its league.
    contest_time : float64, ``played_at`` of each contest as a number (``time_unit`` units since 1970 or the
        integer order itself): ``contest_time_key`` (int64, exact) as a float; ``contest_weight`` float64,
        the contest's weight (1 when absent).
    rank : int64 of each row; the slots and leagues: :class:`PlayerRows`.
    """

    n_rows: int
    order: np.ndarray
    contest_start: np.ndarray
    contest_league: np.ndarray
    contest_seq: np.ndarray
    contest_time: np.ndarray
    contest_time_key: np.ndarray
    contest_weight: np.ndarray
    rank: np.ndarray

    event_kind: ClassVar[str] = "contest"
    event_key: ClassVar[str] = "contest_id"

    @property
    def n_contests(self) -> int:
        return len(self.contest_start) - 1

    @property
    def event_first_rows(self) -> np.ndarray:
        return self.order[self.contest_start[:-1]]

    @property
    def event_league(self) -> np.ndarray:
        return self.contest_league

    @property
    def event_seq(self) -> np.ndarray:
        return self.contest_seq

    @property
    def event_time_key(self) -> np.ndarray:
        return self.contest_time_key

    @property
    def event_sizes(self) -> np.ndarray:
        return np.diff(self.contest_start)


def contest_columns_from_polars(frame: pl.DataFrame, table: str = "contest_results") -> dict[str, pa.Array]:
    """The frame's columns as Arrow arrays, keyed by name."""
    return columns_from_polars(frame, table)


def row_error(keys: tuple[str, ...], columns: dict, table: str, column: str, row: int, value, expected: str):
    """Raise the error of a bad value: the column, the row by its ``keys`` (``(contest_id=..., player=...)``)
    and the value."""
    key = ", ".join(f"{name}={columns[name][row].as_py() if name in columns else None!r}" for name in keys)
    raise DuckrateInputError(f"{table}: column '{column}' has {value!r} at ({key}); expected {expected}")


_fail = partial(row_error, ("contest_id", "player"))


def names_column(columns: dict, table: str, name: str) -> pa.Array:
    """A column of names (text, or integers as text) as large strings; another type is an error naming it."""
    array = columns[name]
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type) or pa.types.is_string_view(array.type):
        return array.cast(pa.large_string())
    if pa.types.is_integer(array.type):
        return pc.cast(array, pa.large_string())
    raise DuckrateInputError(
        f"{table}: column '{name}' has type {array.type}; expected VARCHAR (or integer) {name} names"
    )


def _ranks(columns: dict, table: str) -> np.ndarray:
    array = columns["rank"]
    kind = array.type
    if pa.types.is_integer(kind):
        rank = np.asarray(pc.cast(array, pa.int64()), dtype=np.int64)
    elif pa.types.is_floating(kind) or pa.types.is_decimal(kind):
        values = np.asarray(pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        bad = np.flatnonzero(~(np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < 2.0**62)))
        if bad.size:
            _fail(columns, table, "rank", int(bad[0]), float(values[bad[0]]), "a whole-number rank >= 1 (1 = best)")
        rank = values.astype(np.int64)
    else:
        raise DuckrateInputError(f"{table}: column 'rank' has type {kind}; expected an integer rank (1 = best)")
    bad = np.flatnonzero(rank < 1)
    if bad.size:
        _fail(columns, table, "rank", int(bad[0]), int(rank[bad[0]]), "a rank >= 1 (1 = best; equal ranks are ties)")
    return rank


def league_codes(columns: dict, n_rows: int) -> tuple[np.ndarray, list]:
    """Each row's league index and the league names (None for rows without a league, or no league column)."""
    if "league" not in columns or columns["league"].null_count == n_rows:
        return np.zeros(n_rows, dtype=np.int64), [None]
    league, dictionary = encode_runs(pc.cast(columns["league"], pa.large_string()))
    names = dictionary.to_pylist()
    if (league < 0).any():
        league = np.where(league < 0, len(names), league)
        names.append(None)
    return league, names


def player_codes(columns: dict, table: str, fail) -> tuple[np.ndarray, pa.Array]:
    """Each row's player code and the distinct names, codes in name order (so nothing, neither state slots nor
    the order of tied rows, depends on the input row order); an empty name is ``fail(columns, table, column,
    row, value, expected)``."""
    player_code, players = encode_column(names_column(columns, table, "player"))
    by_name = np.asarray(pc.sort_indices(players), dtype=np.int64)
    name_rank = np.empty_like(by_name)
    name_rank[by_name] = np.arange(by_name.size)
    player_code, players = name_rank[player_code], players.take(pa.array(by_name))
    empty = pc.index(players, "").as_py()
    if empty >= 0:
        fail(columns, table, "player", int(np.flatnonzero(player_code == empty)[0]), "", "a non-empty player name")
    return player_code, players


def state_slots(league: np.ndarray, player_code: np.ndarray, n_players: int, n_leagues: int):
    """One state slot per (league, player) that has rows: ``(slot per row, n_states, state_league,
    state_player)``."""
    if n_leagues == 1:
        n_states = n_players
        return player_code, n_states, np.zeros(n_states, dtype=np.int64), np.arange(n_states, dtype=np.int64)
    unique_keys, state = np.unique(league * n_players + player_code, return_inverse=True)
    return state, len(unique_keys), unique_keys // n_players, unique_keys % n_players


def prepare_contests(columns: dict[str, pa.Array], table: str = "contest_results") -> PreparedContests:
    """Validate and encode a contest results table.

    Parameters
    ----------
    columns : mapping of column name to a pyarrow array, all of one length.
    table : name used in error messages.

    Raises
    ------
    DuckrateInputError
        On a missing column; a NULL ``contest_id``, ``played_at``, ``player`` or ``rank``; an empty player
        name; a rank that is not a whole number >= 1; a player listed twice in one contest; a contest whose
        rows disagree on ``played_at`` or ``weight``; a weight that is not finite and > 0.
    """
    columns = {name: single_chunk(array) for name, array in columns.items()}
    missing = [name for name in REQUIRED_COLUMNS if is_absent(columns, name)]
    if missing:
        raise DuckrateInputError(
            f"{table}: missing column(s) {', '.join(repr(m) for m in missing)}; expected columns "
            f"{', '.join(REQUIRED_COLUMNS)} and optionally {', '.join(OPTIONAL_COLUMNS)}"
        )
    for name in REQUIRED_COLUMNS:
        if columns[name].null_count:
            row = int(np.flatnonzero(~np.asarray(columns[name].is_valid(), dtype=np.bool_))[0])
            _fail(columns, table, name, row, None, f"a non-NULL {name} (stage the table to drop or repair such rows)")
    n_rows = len(columns["contest_id"])
    rank = _ranks(columns, table)
    player_code, players = player_codes(columns, table, _fail)
    league, league_names = league_codes(columns, n_rows)
    time_key = time_key_of(columns, table)

    contest_id = columns["contest_id"]
    if pa.types.is_dictionary(contest_id.type):
        contest_id = contest_id.dictionary_decode()
    if not (
        pa.types.is_integer(contest_id.type)
        or pa.types.is_string(contest_id.type)
        or pa.types.is_large_string(contest_id.type)
        or pa.types.is_string_view(contest_id.type)
    ):
        raise DuckrateInputError(
            f"{table}: column 'contest_id' has type {contest_id.type}; expected an integer or VARCHAR id"
        )
    frame = pl.DataFrame(
        {
            "row": np.arange(n_rows, dtype=np.int64),
            "league": league,
            "contest": pl.from_arrow(contest_id),
            "time": time_key,
            "player": player_code,
            "rank": rank,
        }
    )
    if n_rows:
        duplicated = frame.select(pl.struct("league", "contest", "player").is_duplicated()).to_series().to_numpy()
        if duplicated.any():
            row = int(np.flatnonzero(duplicated)[-1])
            _fail(
                columns,
                table,
                "player",
                row,
                players[int(player_code[row])].as_py(),
                "each player at most once per contest (the player is listed twice)",
            )
    weight = None
    if "weight" in columns and columns["weight"].null_count < n_rows:
        array = columns["weight"]
        if not (pa.types.is_floating(array.type) or pa.types.is_integer(array.type) or pa.types.is_decimal(array.type)):
            raise DuckrateInputError(f"{table}: column 'weight' has type {array.type}; expected a number (DOUBLE)")
        weight = np.array(pc.cast(array, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64, copy=True)
        weight[~np.asarray(array.is_valid(), dtype=np.bool_)] = 1.0
        bad = np.flatnonzero(~((weight > 0.0) & np.isfinite(weight)))
        if bad.size:
            _fail(
                columns,
                table,
                "weight",
                int(bad[0]),
                float(weight[bad[0]]),
                "a finite contest weight > 0 (NULL means 1)",
            )
        frame = frame.with_columns(weight=weight)

    # One contest = one (league, contest_id); its rows must agree on played_at (and weight).
    per_contest = ["league", "contest"]
    for column, name in (("time", "played_at"),) + ((("weight", "weight"),) if weight is not None else ()):
        spread = frame.group_by(per_contest).agg(pl.col(column).n_unique().alias("values"), pl.col("row").min())
        bad_rows = spread.filter(pl.col("values") > 1)
        if bad_rows.height:
            first = cast(int, bad_rows["row"].min())  # an int: the frame has rows
            contest_rows = frame.filter(
                (pl.col("league") == frame["league"][first]) & (pl.col("contest") == frame["contest"][first])
            )
            other = int(contest_rows.filter(pl.col(column) != frame[column][first])["row"][0])
            _fail(
                columns,
                table,
                name,
                other,
                columns[name][other].as_py(),
                f"one {name} per contest (contest_id={columns['contest_id'][first].as_py()!r} also has "
                f"{columns[name][first].as_py()!r})",
            )

    ordered = frame.sort(["time", "contest", "league", "rank", "player"])
    order = ordered["row"].to_numpy().astype(np.int64)
    keys = ordered.select("league", "contest")
    if n_rows:
        new_contest = np.ones(n_rows, dtype=np.bool_)
        new_contest[1:] = ~(
            (keys["league"][1:] == keys["league"][:-1]).to_numpy()
            & (keys["contest"][1:] == keys["contest"][:-1]).to_numpy()
        )
        starts = np.flatnonzero(new_contest)
    else:
        starts = np.zeros(0, dtype=np.int64)
    contest_start = np.append(starts, n_rows).astype(np.int64)
    first_rows = order[starts]
    contest_league = league[first_rows].astype(np.int64)
    contest_seq = np.empty(len(starts), dtype=np.int64)
    counters = np.zeros(len(league_names), dtype=np.int64)
    for c, lg in enumerate(contest_league):
        counters[lg] += 1
        contest_seq[c] = counters[lg]
    contest_time = time_key[first_rows].astype(np.float64)
    contest_weight = weight[first_rows] if weight is not None else np.ones(len(starts), dtype=np.float64)

    state, n_states, state_league, state_player = state_slots(league, player_code, len(players), len(league_names))
    return PreparedContests(
        n_rows=n_rows,
        order=np.ascontiguousarray(order),
        contest_start=contest_start,
        contest_league=np.ascontiguousarray(contest_league),
        contest_seq=contest_seq,
        contest_time=np.ascontiguousarray(contest_time),
        contest_time_key=np.ascontiguousarray(time_key[first_rows], dtype=np.int64),
        contest_weight=np.ascontiguousarray(contest_weight, dtype=np.float64),
        state=np.ascontiguousarray(state, dtype=np.int64),
        rank=np.ascontiguousarray(rank),
        league=np.ascontiguousarray(league, dtype=np.int64),
        league_names=league_names,
        n_states=int(n_states),
        state_league=np.asarray(state_league, dtype=np.int64),
        state_player=np.asarray(state_player, dtype=np.int64),
        players=players,
        time_unit=time_unit_of(columns["played_at"].type),
    )
