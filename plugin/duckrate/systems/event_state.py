"""Saved state of a replay over events with one row per player (ranked contests, team matches): continue
from where the last run stopped.

The same table as the two-player replays (:data:`.saved_state.STATE_SCHEMA`), with three kinds of rows:

- ``league`` (one per league): ``system``, ``params``, ``seq`` (events replayed), ``n_players``, the key
  of its last event in replay order (``last_time_key`` and ``time_unit`` for ``played_at``,
  ``last_match_id`` for its ``contest_id`` or ``match_id`` as text); ``value`` empty;
- ``player`` (one per league and player): ``value`` holds the player's row (its layout is the system's own);
- for contests, one per replayed contest (kind ``contest``): its ``seq``, ``last_time_key``/``time_unit`` (its
  ``played_at``) and ``last_match_id`` (its key), so a contest passed again is recognised as such. Team
  matches keep no such rows (:attr:`~duckrate.core.contests.PlayerRows.keeps_event_rows`: a history of
  millions of matches would make the state as long), so a match passed again is refused as late.

Events are replayed in (``played_at``, key) order per league, so a continuation refuses
(:class:`.saved_state.RebuildRequired`) an event not after the league's last saved one (a late arrival), an
event key the league has already replayed, other parameters, another system's state, or another
``played_at`` type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.contests import PlayerRows
from duckrate.systems.saved_state import (
    RebuildRequired,
    check_league_rows,
    conform_state,
    ids_at_or_before,
    league_index,
    params_json,
    slot_table,
    untouched_rows,
    with_player_counts,
)

STATE_ORDER = ["kind", "league", "player", "opponent", "seq"]  # a unique key of every row


@dataclass
class EventStart:
    """What a replay starts from: ``seq[league]`` events already replayed, and the saved player rows of the
    players in these events (their ``slots`` and ``values``)."""

    seq: np.ndarray
    slots: np.ndarray
    values: pl.Series


def fresh_start(prepared: PlayerRows) -> EventStart:
    return EventStart(
        np.zeros(prepared.n_leagues, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        pl.Series("value", [], dtype=pl.List(pl.Float64)),
    )


def event_ids(columns: dict, prepared: PlayerRows) -> pa.Array:
    """The key (``contest_id``, ``match_id``) of each event, in replay order."""
    return pc.take(columns[prepared.event_key], pa.array(prepared.event_first_rows))


def continue_events(system, columns: dict, prepared: PlayerRows, params: dict, state: pl.DataFrame) -> EventStart:
    """The saved ``state`` mapped onto ``prepared``'s slots, after checking these events continue it;
    raises :class:`RebuildRequired` otherwise."""
    check_continuation(system, columns, prepared, params, state)
    start = fresh_start(prepared)
    index = league_index(prepared)
    for row in state.filter(pl.col("kind") == "league").iter_rows(named=True):
        if row["league"] in index:
            start.seq[index[row["league"]]] = row["seq"]
    slots = slot_table(prepared, np.ones(prepared.n_states, dtype=np.bool_))
    matched = (
        state.filter(pl.col("kind") == "player")
        .select("league", "player", "value")
        .join(slots, on=["league", "player"], how="inner", nulls_equal=True)
    )
    start.slots, start.values = matched["slot"].to_numpy().astype(np.int64), matched["value"]
    return start


def check_continuation(system, columns: dict, prepared: PlayerRows, params: dict, state: pl.DataFrame) -> None:
    """Refuse events the saved state cannot be continued with (see the module docstring)."""
    leagues = state.filter(pl.col("kind") == "league")
    if not leagues.height:
        return
    check_league_rows(system, params, leagues)
    index = league_index(prepared)
    ids = event_ids(columns, prepared)
    id_text = [str(v) for v in ids.to_pylist()]
    replayed: dict = {}
    key, noun = prepared.event_key, prepared.event_kind
    event_rows = state.filter(pl.col("kind") == noun).select("league", "last_match_id", "seq")
    for league, event_id, seq in event_rows.iter_rows():
        replayed.setdefault(league, {})[event_id] = seq
    first_rows = prepared.event_first_rows
    for row in leagues.iter_rows(named=True):
        if row["league"] not in index:
            continue
        events = np.flatnonzero(prepared.event_league == index[row["league"]])
        if row["time_unit"] != prepared.time_unit:
            raise RebuildRequired(
                f"state: played_at was {row['time_unit']} when the state was saved, now {prepared.time_unit}; expected the same type"
            )
        seen = replayed.get(row["league"], {})
        again = [c for c in events.tolist() if id_text[c] in seen]
        if again:
            raise RebuildRequired(
                f"state: {key} {ids[again[0]].as_py()!r} of league {row['league']!r} was already replayed (seq "
                f"{seen[id_text[again[0]]]}); a replayed {noun} cannot be passed again: replay the whole history"
            )
        times = prepared.event_time_key[events]
        late = events[times < row["last_time_key"]]
        tied = events[times == row["last_time_key"]]
        if tied.size:
            late = np.concatenate([late, tied[ids_at_or_before(columns[key], first_rows[tied], row["last_match_id"])]])
        if late.size:
            raise RebuildRequired(
                f"state: {key} {ids[int(late.min())].as_py()!r} arrived late for league {row['league']!r}: it is not "
                f"after the last {noun} of the saved state ({key} {row['last_match_id']!r}, seq {row['seq']}); "
                f"each league replays in (played_at, {key}) order: replay the whole history"
            )


def event_state_frame(
    system,
    columns: dict,
    prepared: PlayerRows,
    params: dict,
    start: EventStart,
    values: pl.Series,
    old: pl.DataFrame | None,
) -> pl.DataFrame:
    """The state after these events: ``values`` (the player rows of every slot of ``prepared``, in slot
    order), an event row per event, the league rows of the leagues played, and every row of ``old``
    these events leave as it was."""
    slots = slot_table(prepared, np.ones(prepared.n_states, dtype=np.bool_))
    players = slots.select("league", "player").with_columns(
        pl.lit("player").alias("kind"), values.gather(slots["slot"].to_numpy()).alias("value")
    )
    seq = prepared.event_seq + start.seq[prepared.event_league]
    ids = [str(v) for v in event_ids(columns, prepared).to_pylist()]
    names = pl.Series("league", [prepared.league_names[i] for i in prepared.event_league], dtype=pl.Utf8)
    events = pl.DataFrame(
        {
            "league": names,
            "kind": prepared.event_kind,
            "seq": seq,
            "last_time_key": prepared.event_time_key,
            "time_unit": prepared.time_unit,
            "last_match_id": pl.Series(ids, dtype=pl.Utf8),
        }
    ).with_columns(pl.lit([], dtype=pl.List(pl.Float64)).alias("value"))
    last = (
        events.sort("seq")
        .group_by("league", maintain_order=True)
        .last()
        .with_columns(
            pl.lit("league").alias("kind"),
            pl.lit(system.name).alias("system"),
            pl.lit(params_json(params)).alias("params"),
        )
    )
    kept = (players, events, last) if prepared.keeps_event_rows else (players, last)
    new = pl.concat([conform_state(frame) for frame in kept], how="vertical")
    if old is not None and old.height:
        keep_players, keep_leagues = untouched_rows(old, slots, list(set(names.to_list())))
        old_events = old.filter(pl.col("kind") == prepared.event_kind)
        new = pl.concat([new, keep_players, keep_leagues, old_events], how="vertical")
    return with_player_counts(new).sort(STATE_ORDER, nulls_last=True)


def fixed_values(fields: tuple[np.ndarray, ...]) -> pl.Series:
    """The saved player rows of a system whose row is a fixed list of numbers: row s is
    ``[fields[0][s], fields[1][s], ...]``."""
    flat = np.column_stack([np.asarray(field, dtype=np.float64) for field in fields]).ravel()
    array = pa.FixedSizeListArray.from_arrays(pa.array(flat), len(fields))
    return pl.Series("value", array).cast(pl.List(pl.Float64))


def restore_fixed(system: str, names: tuple[str, ...], fields: tuple[np.ndarray, ...], start: EventStart) -> None:
    """Write the saved player rows of ``start`` (:func:`fixed_values` of ``names``) into ``fields`` at their
    slots. Raises :class:`RebuildRequired` when a row is not such a list."""
    if not len(start.slots):
        return
    lengths = start.values.list.len().to_numpy()
    if (lengths != len(names)).any():
        raise RebuildRequired(
            f"state: a {system} player row holds {int(lengths[lengths != len(names)][0])} values, not "
            f"[{', '.join(names)}]: saved by another system or version"
        )
    flat = start.values.explode().to_numpy().astype(np.float64).reshape(-1, len(names))
    for column, field in enumerate(fields):
        field[start.slots] = flat[:, column]
