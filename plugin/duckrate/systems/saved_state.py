"""Saved replay state: continue a replay from where the last run stopped, with the result of a full replay.

A warehouse receives matches daily. Rather than replaying its whole history, a replay can start from the
*state* a previous run saved and rate only the new matches; the rows it returns (``seq`` included) and the
state it saves are exactly those of one replay over all the matches.

The state is a plain table (one per system and parameter set), :data:`STATE_SCHEMA`:

- one ``league`` row per league (``player`` NULL): the system, its parameters (JSON), ``seq`` (matches whose
  effect is final), the key of the last of them (``last_time_key``, ``time_unit``, ``last_match_id``), the
  number of distinct players so far, and for the periodic systems (Glicko and Glicko-2 with rating periods)
  ``resume_period``, the league's last rating period, still open: its games are rated together, so the
  next run must be passed them again (their ids are in ``pending_ids``) and re-rates them with the new ones;
- one ``player`` row per league and player: ``value`` holds the system's per-player state (rating,
  deviation, volatility, last period, grid posterior, vectors...; the layout is the system's own);
- ``pair`` rows (``player``, ``opponent``) for systems that keep per-pair counts.

A continuation refuses (:class:`RebuildRequired`) rather than guess: a match older than the saved state
(a late arrival), other parameters than the saved ones, a periodic league whose open period's matches are
not all passed again, or a system-specific reason (a decaying schedule whose N, the league's player count,
would change). The dbt materialization then replays the whole history instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.contests import PlayerRows
from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import PreparedMatches

STATE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "league": pl.Utf8,
    "kind": pl.Utf8,
    "player": pl.Utf8,
    "opponent": pl.Utf8,
    "value": pl.List(pl.Float64),
    "system": pl.Utf8,
    "params": pl.Utf8,
    "seq": pl.Int64,
    "n_players": pl.Int64,
    "last_time_key": pl.Int64,
    "time_unit": pl.Utf8,
    "last_match_id": pl.Utf8,
    "resume_period": pl.Int64,
    "pending_ids": pl.List(pl.Utf8),
}
STATE_COLUMNS = tuple(STATE_SCHEMA)
_EXACT_FLOAT = 2.0**53  # integers stored in ``value`` must be exact in a float64


class RebuildRequired(DuckrateInputError):
    """The saved state cannot be continued with these matches: replay the whole history instead."""


@dataclass(frozen=True)
class StateField:
    """One named part of a system's state: ``width`` float64 values per player (or league, or pair); a
    callable width is computed from the resolved parameters (e.g. Elo2k's 2·dim)."""

    name: str
    width: int | Callable[[dict], int] = 1

    def size(self, params: dict) -> int:
        return self.width(params) if callable(self.width) else int(self.width)


@dataclass
class StartState:
    """What a system's run starts from, by state slot of the matches it is given.

    ``known[slot]``: the player has saved state, in ``player[name][slot]`` (one array per declared player
    field, shape ``(n_states,)`` for width 1 else ``(n_states, width)``); other slots start as newcomers.
    ``league_known[league]`` likewise for ``league[name]``. ``seq[league]`` counts the matches already
    replayed (the next one is ``seq + 1``); ``n_players[league]`` is the league's player count over the
    saved state and these matches (None on a fresh start: :func:`league_players` counts it then),
    ``saved_players[league]`` the count the state was saved with. ``pairs``: saved pair rows among these players, ``(slot_a, slot_b,
    values)`` with ``values`` of shape ``(n, width)`` in the order of the declared pair fields.
    """

    known: np.ndarray
    player: dict[str, np.ndarray]
    league_known: np.ndarray
    league: dict[str, np.ndarray]
    seq: np.ndarray
    n_players: np.ndarray | None
    saved_players: np.ndarray
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 0)))
    )

    def overlay(self, states: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """``states`` (newcomer values per slot) with the known slots' saved values written over them."""
        for name, values in states.items():
            if name in self.player and self.known.any():
                values[self.known] = self.player[name][self.known]
        return states


@dataclass
class EndState:
    """What a run leaves: per-slot arrays for every declared player field (all slots; only the slots
    that were known or played are saved), per-league arrays for the league fields, and pair rows."""

    player: dict[str, np.ndarray]
    league: dict[str, np.ndarray] = field(default_factory=dict)
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None


def fresh_start(prepared: PreparedMatches, player_fields, league_fields, params: dict) -> StartState:
    """The start of a replay with no saved state."""
    return StartState(
        known=np.zeros(prepared.n_states, dtype=np.bool_),
        player={f.name: _empty(prepared.n_states, f.size(params)) for f in player_fields},
        league_known=np.zeros(prepared.n_leagues, dtype=np.bool_),
        league={f.name: _empty(prepared.n_leagues, f.size(params)) for f in league_fields},
        seq=np.zeros(prepared.n_leagues, dtype=np.int64),
        n_players=None,
        saved_players=np.zeros(prepared.n_leagues, dtype=np.int64),
    )


def league_players(prepared: PreparedMatches, start: StartState) -> np.ndarray:
    """Each league's player count over the saved state and these matches (a decaying schedule's N)."""
    return start.n_players if start.n_players is not None else prepared.players_per_league()


def _empty(n: int, width: int) -> np.ndarray:
    """Values of the slots without saved state: NaN for a scalar field; a wider field (the chance
    system's grid posterior, 1001 values per slot) is zero-allocated instead, so its pages cost no
    memory until a known slot is written (only the known slots are ever read)."""
    if width == 1:
        return np.full(n, np.nan, dtype=np.float64)
    return np.zeros((n, width), dtype=np.float64)


def used_slots(prepared: PreparedMatches, order: np.ndarray | None = None) -> np.ndarray:
    """Slots of the players in the rows of ``order`` (all rows when None)."""
    used = np.zeros(prepared.n_states, dtype=np.bool_)
    rows = prepared.order if order is None else order
    used[prepared.state_a[rows]] = True
    used[prepared.state_b[rows]] = True
    return used


def subset(prepared: PreparedMatches, rows_in: np.ndarray) -> PreparedMatches:
    """The same encoded matches replaying only the rows where ``rows_in`` (a mask by input row) holds:
    slots, names and row arrays are shared, so states pass between the two parts unchanged."""
    from dataclasses import replace

    return replace(prepared, order=prepared.order[rows_in[prepared.order]])


# ---------------------------------------------------------------------------------------------------
# State table <-> slots


def params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def state_frame(state) -> pl.DataFrame:
    """A state argument (Polars frame, or a mapping of Arrow columns from SQL) as a frame of
    :data:`STATE_SCHEMA` (missing optional columns are NULL); checks the columns' presence."""
    if isinstance(state, pl.DataFrame):
        frame = state
    else:
        frame = cast(pl.DataFrame, pl.from_arrow(pa.table({name: array for name, array in state.items()})))
    missing = [name for name in ("league", "kind", "player", "value") if name not in frame.columns]
    if missing:
        raise DuckrateInputError(
            f"state: missing column(s) {', '.join(missing)}; expected a table saved by <system>_state "
            f"({', '.join(STATE_COLUMNS)})"
        )
    frame = frame.with_columns(
        pl.lit(None, dtype=kind).alias(name) for name, kind in STATE_SCHEMA.items() if name not in frame.columns
    )
    return frame.select(pl.col(name).cast(kind) for name, kind in STATE_SCHEMA.items())


def league_index(prepared: PreparedMatches | PlayerRows) -> dict:
    return {name: index for index, name in enumerate(prepared.league_names)}


def slot_table(prepared: PreparedMatches | PlayerRows, used: np.ndarray) -> pl.DataFrame:
    """(league, player, slot) of the used slots."""
    slots = np.flatnonzero(used)
    names = pl.Series("player", prepared.players.take(pa.array(prepared.state_player[slots])).cast(pa.large_string()))
    leagues = pl.Series("league", [prepared.league_names[i] for i in prepared.state_league[slots]], dtype=pl.Utf8)
    return pl.DataFrame({"league": leagues, "player": names.cast(pl.Utf8), "slot": slots})


def _values_matrix(values: pl.Series, width: int, what: str) -> np.ndarray:
    lengths = values.list.len().to_numpy()
    bad = np.flatnonzero(lengths != width)
    if bad.size:
        raise RebuildRequired(
            f"state: a {what} row holds {int(lengths[bad[0]])} values; expected {width} (saved by another version or parameters)"
        )
    flat = values.explode().to_numpy().astype(np.float64)
    return flat.reshape(len(values), width) if width else np.zeros((len(values), 0))


def _split_fields(matrix: np.ndarray, fields, params: dict) -> dict[str, np.ndarray]:
    """Each field's columns of ``matrix`` (views: the callers copy them into the slots they fill)."""
    out, column = {}, 0
    for f in fields:
        width = f.size(params)
        part = matrix[:, column : column + width]
        out[f.name] = part[:, 0] if width == 1 else part
        column += width
    return out


def field_values(values: pl.Series, fields, params: dict, what: str) -> dict[str, np.ndarray]:
    """The ``value`` lists of some state rows split into the declared ``fields`` (one array per field, one
    row per state row; a field of width 1 as a vector); ``what`` names the rows' kind in the error a list of
    the wrong length gets (:class:`RebuildRequired`)."""
    width = sum(f.size(params) for f in fields)
    return {
        name: np.array(part)
        for name, part in _split_fields(_values_matrix(values, width, what), fields, params).items()
    }


def start_from_state(system, prepared: PreparedMatches, params: dict, state: pl.DataFrame) -> StartState:
    """The saved state mapped onto the slots of ``prepared`` (players absent from it keep their rows in
    the state and are not touched); raises :class:`RebuildRequired` when it cannot be continued."""
    start = fresh_start(prepared, system.player_state, system.league_state, params)
    start.n_players = prepared.players_per_league()
    leagues = state.filter(pl.col("kind") == "league")
    if leagues.height == 0:
        return start
    check_league_rows(system, params, leagues)
    used = used_slots(prepared)
    slots = slot_table(prepared, used)
    index = league_index(prepared)

    league_of = {row["league"]: row for row in leagues.iter_rows(named=True)}
    for name, row in league_of.items():
        if name in index:
            start.league_known[index[name]] = True
            start.seq[index[name]] = row["seq"]
            start.saved_players[index[name]] = row["n_players"] or 0
    league_width = sum(f.size(params) for f in system.league_state)
    if league_width:
        present = leagues.filter(_in(pl.col("league"), list(prepared.league_names)))
        if present.height:
            matrix = _values_matrix(present["value"], league_width, "league")
            rows = np.array([index[name] for name in present["league"].to_list()], dtype=np.int64)
            for name, values in _split_fields(matrix, system.league_state, params).items():
                start.league[name][rows] = values

    # matched by key alone; the values of the matched rows are gathered once (a grid state is 8 KB a player)
    players = state.select("kind", "league", "player").with_row_index("state_row").filter(pl.col("kind") == "player")
    matched = players.join(slots, on=["league", "player"], how="inner", nulls_equal=True)
    width = sum(f.size(params) for f in system.player_state)
    if matched.height:
        matrix = _values_matrix(state["value"].gather(matched["state_row"]), width, "player")
        rows = matched["slot"].to_numpy()
        start.known[rows] = True
        for name, values in _split_fields(matrix, system.player_state, params).items():
            start.player[name][rows] = values

    # the league's player count over the saved state and these matches (a league row's n_players counts
    # its player rows in the whole saved state: with_player_counts, or the SQL macros' count before they
    # pass only the rows these matches need)
    saved = leagues.select("league", pl.col("n_players").fill_null(0).alias("len"))
    new_players = slots.join(players.select("league", "player"), on=["league", "player"], how="anti", nulls_equal=True)
    counts = saved.join(
        new_players.group_by("league").len().rename({"len": "new"}),
        on="league",
        how="full",
        coalesce=True,
        nulls_equal=True,
    ).fill_null(0)
    for row in counts.iter_rows(named=True):
        if row["league"] in index:
            start.n_players[index[row["league"]]] = row["len"] + row["new"]

    pair_width = sum(f.size(params) for f in system.pair_state)
    pair_rows = state.filter(pl.col("kind") == "pair").select("league", "player", "opponent", "value")
    if pair_width and pair_rows.height:
        joined = pair_rows.join(
            slots.rename({"slot": "slot_a"}), on=["league", "player"], how="inner", nulls_equal=True
        ).join(
            slots.rename({"player": "opponent", "slot": "slot_b"}),
            on=["league", "opponent"],
            how="inner",
            nulls_equal=True,
        )
        start.pairs = (
            joined["slot_a"].to_numpy(),
            joined["slot_b"].to_numpy(),
            _values_matrix(joined["value"], pair_width, "pair") if joined.height else np.zeros((0, pair_width)),
        )
    return start


def check_league_rows(system, params: dict, leagues: pl.DataFrame) -> None:
    systems = set(leagues["system"].to_list())
    if systems != {system.name}:
        raise RebuildRequired(f"state: saved by {', '.join(sorted(map(str, systems)))}; expected a {system.name} state")
    for row in leagues.iter_rows(named=True):
        saved = json.loads(row["params"]) if row["params"] else None
        if saved != json.loads(params_json(params)):
            raise RebuildRequired(
                f"state: league {row['league']!r} was replayed with parameters {row['params']}; these are "
                f"{params_json(params)}: a replay with other parameters starts from scratch"
            )


def check_continuation(
    system, columns: dict, prepared: PreparedMatches, params: dict, periods, state: pl.DataFrame
) -> None:
    """Reject matches a saved state cannot be continued with: older than the state (non-periodic: at or
    before the last final match in (played_at, match_id) order; periodic: in a period before the open
    one), or a periodic league whose open period's saved matches are not all passed again."""
    leagues = state.filter(pl.col("kind") == "league")
    if leagues.height:
        check_league_rows(system, params, leagues)  # another system or other parameters: say that first
    index = league_index(prepared)
    match_ids = columns["match_id"]
    for row in leagues.iter_rows(named=True):
        if row["league"] not in index:
            continue
        league = index[row["league"]]
        rows = np.flatnonzero(prepared.league == league)
        if row["time_unit"] != prepared.time_unit:  # also periodic: period_length counts in played_at's units
            raise RebuildRequired(
                f"state: played_at was {row['time_unit']} when the state was saved, now {prepared.time_unit}; expected the same type"
            )
        if row["resume_period"] is not None:
            if periods is None:
                raise RebuildRequired(
                    f"state: league {row['league']!r} was replayed in rating periods; these matches have none"
                )
            late = rows[periods[rows] < row["resume_period"]]
            if late.size:
                _late(
                    row,
                    match_ids,
                    int(late[0]),
                    f"its period {int(periods[late[0]])} is before the open period {row['resume_period']}",
                )
            pending = set(row["pending_ids"] or [])
            if pending:
                passed = {
                    str(v)
                    for v in pc.take(match_ids, pa.array(rows[periods[rows] == row["resume_period"]])).to_pylist()
                }
                missing = sorted(pending - passed)
                if missing:
                    raise RebuildRequired(
                        f"state: league {row['league']!r} has an open rating period {row['resume_period']}: its matches are "
                        f"re-rated with the new ones, so pass them again (missing match_id {missing[0]!r} and {len(missing) - 1} more)"
                    )
            continue
        if periods is not None:
            raise RebuildRequired(
                f"state: league {row['league']!r} was replayed without rating periods; these matches have them"
            )
        last_time = row["last_time_key"]
        times = prepared.time_key[rows]
        late = rows[times < last_time]
        tied = rows[times == last_time]
        if tied.size:
            late = np.concatenate([late, tied[ids_at_or_before(match_ids, tied, row["last_match_id"])]])
        if late.size:
            _late(row, match_ids, int(late.min()), "it is not after the last match of the saved state")


def ids_at_or_before(match_ids: pa.Array, rows: np.ndarray, last_id: str) -> np.ndarray:
    values = pc.take(match_ids, pa.array(rows))
    if pa.types.is_integer(values.type):
        return np.asarray(values, dtype=np.int64) <= int(last_id)
    series = cast(pl.Series, pl.from_arrow(values))
    try:
        last = pl.Series([last_id]).cast(series.dtype)
    except Exception as error:  # the id's type changed since the state was saved
        raise RebuildRequired(
            f"state: its last match_id {last_id!r} does not compare with match_id of type {series.dtype}"
        ) from error
    return (series <= last[0]).to_numpy()


def _late(row: dict, match_ids: pa.Array, at: int, why: str) -> None:
    raise RebuildRequired(
        f"state: match_id {match_ids[at].as_py()!r} arrived late for league {row['league']!r}: {why} "
        f"(saved up to seq {row['seq']}); replay the whole history"
    )


def end_frame(
    system,
    prepared: PreparedMatches,
    params: dict,
    end: EndState,
    saved_slots: np.ndarray,
    league_rows: dict[int, dict],
    old_state: pl.DataFrame | None,
    ordered: bool = True,
) -> pl.DataFrame:
    """The state table after a run: the saved slots' values and the given league rows, plus every row of
    ``old_state`` for players and leagues these matches did not touch; sorted by kind, league, player and
    opponent unless not ``ordered`` (the SQL macros merge it into a table, where rows have no order)."""
    slots = slot_table(prepared, saved_slots)
    players = slots.select("league", "player").with_columns(
        pl.lit("player").alias("kind"),
        _value_lists(_player_values(end.player, system.player_state, params, slots["slot"].to_numpy())),
    )
    frames = [players]
    if end.pairs is not None and system.pair_state:
        slot_a, slot_b, values = end.pairs
        names = prepared.players.cast(pa.large_string())
        leagues = pl.Series("league", prepared.league_names, dtype=pl.Utf8)
        frames.append(
            pl.DataFrame(
                {
                    "league": leagues.gather(prepared.state_league[slot_a]),
                    "kind": "pair",
                    "player": pl.from_arrow(names.take(pa.array(prepared.state_player[slot_a]))).cast(pl.Utf8),
                    "opponent": pl.from_arrow(names.take(pa.array(prepared.state_player[slot_b]))).cast(pl.Utf8),
                    "value": _value_lists(np.asarray(values, dtype=np.float64)),
                }
            )
        )
    league_values = _player_values(
        end.league, system.league_state, params, np.array(sorted(league_rows), dtype=np.int64)
    ).tolist()
    frames.append(
        pl.DataFrame(
            [
                dict(league_rows[i], league=prepared.league_names[i], kind="league", value=league_values[k])
                for k, i in enumerate(sorted(league_rows))
            ],
            schema={**STATE_SCHEMA},
        )
    )
    new = pl.concat([conform_state(f) for f in frames], how="vertical")
    if old_state is not None and old_state.height:
        keep_players, keep_leagues = untouched_rows(old_state, slots, [prepared.league_names[i] for i in league_rows])
        touched_pairs = new.filter(pl.col("kind") == "pair").select("league", "player", "opponent")
        keep_pairs = old_state.filter(pl.col("kind") == "pair").join(
            touched_pairs, on=["league", "player", "opponent"], how="anti", nulls_equal=True
        )
        new = pl.concat([new, keep_players, keep_pairs, keep_leagues], how="vertical")
    return new.sort(["kind", "league", "player", "opponent"], nulls_last=True) if ordered else new


def untouched_rows(
    old_state: pl.DataFrame, slots: pl.DataFrame, touched_leagues: list
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The player rows of ``old_state`` for players not among ``slots`` (league, player), and its league
    rows of leagues not in ``touched_leagues``: what a run leaves as it was saved."""
    keep_players = old_state.filter(pl.col("kind") == "player").join(
        slots.select("league", "player"), on=["league", "player"], how="anti", nulls_equal=True
    )
    keep_leagues = old_state.filter((pl.col("kind") == "league") & ~_in(pl.col("league"), touched_leagues))
    return keep_players, keep_leagues


def with_player_counts(state: pl.DataFrame) -> pl.DataFrame:
    """``state`` with each league row's ``n_players`` set to its league's number of player rows."""
    counts = state.filter(pl.col("kind") == "player").group_by("league").len()
    return (
        state.join(counts.rename({"len": "counted"}), on="league", how="left", nulls_equal=True)
        .with_columns(
            pl.when(pl.col("kind") == "league").then(pl.col("counted").fill_null(0)).cast(pl.Int64).alias("n_players")
        )
        .drop("counted")
    )


def _in(column: pl.Expr, values: list) -> pl.Expr:
    """``column`` is one of ``values`` (None matching NULL); never NULL itself."""
    named = [v for v in values if v is not None]
    expr = column.is_in(named).fill_null(False) if named else pl.lit(False)
    return expr | column.is_null() if None in values else expr


def conform_state(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.lit(None, dtype=kind).alias(name) for name, kind in STATE_SCHEMA.items() if name not in frame.columns
    ).select(pl.col(name).cast(kind) for name, kind in STATE_SCHEMA.items())


def _value_lists(matrix: np.ndarray) -> pl.Series:
    """The rows of a 2-D float64 matrix as the ``value`` column (one list per row), without Python lists."""
    rows, width = matrix.shape
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float64).reshape(-1))
    offsets = pa.array(np.arange(rows + 1, dtype=np.int64) * width)
    return pl.Series("value", pl.from_arrow(pa.LargeListArray.from_arrays(offsets, flat))).cast(pl.List(pl.Float64))


def _player_values(arrays: dict[str, np.ndarray], fields, params: dict, rows: np.ndarray) -> np.ndarray:
    """The ``rows`` of each field's array side by side, one matrix row per row (written in place: a grid
    state is 0.8 GB at 100k players, and every extra copy costs as much)."""
    sizes = [f.size(params) for f in fields]
    matrix = np.empty((len(rows), sum(sizes)), dtype=np.float64)
    column = 0
    for f, size in zip(fields, sizes):
        values = np.asarray(arrays[f.name], dtype=np.float64).reshape(-1, size)
        np.take(values, rows, axis=0, out=matrix[:, column : column + size], mode="clip")  # rows are valid slots
        column += size
    if any(f.name in ("last_period", "period") for f in fields):  # (a pass over a grid state costs seconds)
        big = np.isfinite(matrix) & (np.abs(matrix) >= _EXACT_FLOAT) & (matrix == np.round(matrix))
        if big.any():
            raise DuckrateInputError(
                "state: a rating period beyond 2^53 cannot be saved exactly; expected smaller period numbers"
            )
    return matrix


STATE_KEY = ["kind", "league", "player", "opponent"]  # what identifies a row of the state table


@dataclass
class CarriedState:
    """The state a replay in chunks hands from one chunk to the next in memory (the dbt materialization),
    instead of merging it into a state table after every chunk.

    ``frame``: the rows the runs so far left (partial-state rows, see ``run_replay``: what each run wrote,
    plus the rows of its start it did not touch); ``new_players``: per league (``league``, ``n``), how many
    of its player rows the saved state the build continues does not have.
    """

    frame: pl.DataFrame
    new_players: pl.DataFrame

    def start(self, saved: pl.DataFrame | None) -> pl.DataFrame:
        """What the next chunk starts from: these rows, plus the rows of ``saved`` (the saved state's rows
        the chunk reads, its league rows' ``n_players`` counted over the whole saved state) with other keys;
        each league row's ``n_players`` is the league's count over the saved state and these rows, as when
        the state is merged into the table after every chunk."""
        if saved is None or not saved.height:
            saved = pl.DataFrame(schema=STATE_SCHEMA)
        rows = pl.concat(
            [self.frame, saved.join(self.frame.select(STATE_KEY), on=STATE_KEY, how="anti", nulls_equal=True)]
        )
        counts = (
            saved.filter(pl.col("kind") == "league")
            .select("league", pl.col("n_players").fill_null(0).alias("saved"))
            .join(self.new_players, on="league", how="full", coalesce=True, nulls_equal=True)
        )
        return (
            rows.join(counts, on="league", how="left", nulls_equal=True)
            .with_columns(
                pl.when(pl.col("kind") == "league")
                .then(pl.col("saved").fill_null(0) + pl.col("n").fill_null(0))
                .otherwise(pl.col("n_players"))
                .cast(pl.Int64)
                .alias("n_players")
            )
            .select(STATE_COLUMNS)
        )

    @classmethod
    def after(cls, start: pl.DataFrame | None, left: pl.DataFrame, before: CarriedState | None) -> CarriedState:
        """What a run that started from ``start`` and left ``left`` carries to the next chunk (``before``:
        what it was handed, None for the first chunk)."""
        known = (start if start is not None else pl.DataFrame(schema=STATE_SCHEMA)).filter(pl.col("kind") == "player")
        new = (
            left.filter(pl.col("kind") == "player")
            .join(known.select("league", "player"), on=["league", "player"], how="anti", nulls_equal=True)
            .group_by("league")
            .len()
            .rename({"len": "n"})
        )
        if before is not None:
            new = pl.concat([before.new_players, new.cast({"n": pl.Int64})]).group_by("league").agg(pl.col("n").sum())
        return cls(frame=left, new_players=new.cast({"n": pl.Int64}))
