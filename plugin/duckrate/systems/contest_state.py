"""Saved state of a contest replay (Elo-MMR): continue from where the last run stopped.

The same table as the two-player replays (:data:`._state.STATE_SCHEMA`), with three kinds of rows:

- ``league`` (one per league): ``system``, ``params``, ``seq`` (contests replayed), ``n_players``, the key
  of its last contest in replay order (``last_time_key`` and ``time_unit`` for ``played_at``,
  ``last_match_id`` for its ``contest_id`` as text); ``value`` empty;
- ``player`` (one per league and player): ``value`` holds the player's whole belief (layout in
  :mod:`._mmr_beliefs`);
- ``contest`` (one per replayed contest): its ``seq``, ``last_time_key``/``time_unit`` (its
  ``played_at``) and ``last_match_id`` (its ``contest_id``), so a contest passed again is recognised.

Contests are replayed in (``played_at``, ``contest_id``) order per league, so a continuation refuses
(:class:`._state.RebuildRequired`) a contest not after the league's last saved one (a late arrival), a
contest id the league has already replayed, other parameters, another system's state, or another
``played_at`` type.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.contests import PreparedContests
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
class ContestStart:
    """What a contest replay starts from: ``seq[league]`` contests already replayed, and the saved player
    rows of the players in these contests (their ``slots`` and ``values``)."""

    seq: np.ndarray
    slots: np.ndarray
    values: pl.Series


def fresh_contest_start(prepared: PreparedContests) -> ContestStart:
    return ContestStart(
        np.zeros(prepared.n_leagues, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        pl.Series("value", [], dtype=pl.List(pl.Float64)),
    )


def contest_ids(columns: dict, prepared: PreparedContests) -> pa.Array:
    """The ``contest_id`` of each contest, in replay order."""
    return pc.take(columns["contest_id"], pa.array(prepared.order[prepared.contest_start[:-1]]))


def continue_contests(
    system, columns: dict, prepared: PreparedContests, params: dict, state: pl.DataFrame
) -> ContestStart:
    """The saved ``state`` mapped onto ``prepared``'s slots, after checking these contests continue it;
    raises :class:`RebuildRequired` otherwise."""
    check_contest_continuation(system, columns, prepared, params, state)
    start = fresh_contest_start(prepared)
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


def check_contest_continuation(
    system, columns: dict, prepared: PreparedContests, params: dict, state: pl.DataFrame
) -> None:
    """Refuse contests the saved state cannot be continued with (see the module docstring)."""
    leagues = state.filter(pl.col("kind") == "league")
    if not leagues.height:
        return
    check_league_rows(system, params, leagues)
    index = league_index(prepared)
    ids = contest_ids(columns, prepared)
    id_text = [str(v) for v in ids.to_pylist()]
    replayed: dict = {}
    contest_rows = state.filter(pl.col("kind") == "contest").select("league", "last_match_id", "seq")
    for league, contest_id, seq in contest_rows.iter_rows():
        replayed.setdefault(league, {})[contest_id] = seq
    first_rows = prepared.order[prepared.contest_start[:-1]]
    for row in leagues.iter_rows(named=True):
        if row["league"] not in index:
            continue
        contests = np.flatnonzero(prepared.contest_league == index[row["league"]])
        if row["time_unit"] != prepared.time_unit:
            raise RebuildRequired(
                f"state: played_at was {row['time_unit']} when the state was saved, now {prepared.time_unit}; expected the same type"
            )
        seen = replayed.get(row["league"], {})
        again = [c for c in contests.tolist() if id_text[c] in seen]
        if again:
            raise RebuildRequired(
                f"state: contest_id {ids[again[0]].as_py()!r} of league {row['league']!r} was already replayed (seq "
                f"{seen[id_text[again[0]]]}); a replayed contest cannot be passed again: replay the whole history"
            )
        times = prepared.contest_time_key[contests]
        late = contests[times < row["last_time_key"]]
        tied = contests[times == row["last_time_key"]]
        if tied.size:
            late = np.concatenate(
                [late, tied[ids_at_or_before(columns["contest_id"], first_rows[tied], row["last_match_id"])]]
            )
        if late.size:
            raise RebuildRequired(
                f"state: contest_id {ids[int(late.min())].as_py()!r} arrived late for league {row['league']!r}: it is not "
                f"after the last contest of the saved state (contest_id {row['last_match_id']!r}, seq {row['seq']}); "
                "contests replay in (played_at, contest_id) order: replay the whole history"
            )


def contest_state_frame(
    system,
    columns: dict,
    prepared: PreparedContests,
    params: dict,
    start: ContestStart,
    values: pl.Series,
    old: pl.DataFrame | None,
) -> pl.DataFrame:
    """The state after these contests: ``values`` (the player rows of every slot of ``prepared``, in slot
    order), a contest row per contest, the league rows of the leagues played, and every row of ``old``
    these contests leave as it was."""
    slots = slot_table(prepared, np.ones(prepared.n_states, dtype=np.bool_))
    players = slots.select("league", "player").with_columns(
        pl.lit("player").alias("kind"), values.gather(slots["slot"].to_numpy()).alias("value")
    )
    seq = prepared.contest_seq + start.seq[prepared.contest_league]
    ids = [str(v) for v in contest_ids(columns, prepared).to_pylist()]
    names = pl.Series("league", [prepared.league_names[i] for i in prepared.contest_league], dtype=pl.Utf8)
    contests = pl.DataFrame(
        {
            "league": names,
            "kind": "contest",
            "seq": seq,
            "last_time_key": prepared.contest_time_key,
            "time_unit": prepared.time_unit,
            "last_match_id": pl.Series(ids, dtype=pl.Utf8),
        }
    ).with_columns(pl.lit([], dtype=pl.List(pl.Float64)).alias("value"))
    last = (
        contests.sort("seq")
        .group_by("league", maintain_order=True)
        .last()
        .with_columns(
            pl.lit("league").alias("kind"),
            pl.lit(system.name).alias("system"),
            pl.lit(params_json(params)).alias("params"),
        )
    )
    new = pl.concat([conform_state(frame) for frame in (players, contests, last)], how="vertical")
    if old is not None and old.height:
        keep_players, keep_leagues = untouched_rows(old, slots, list(set(names.to_list())))
        new = pl.concat([new, keep_players, keep_leagues, old.filter(pl.col("kind") == "contest")], how="vertical")
    return with_player_counts(new).sort(STATE_ORDER, nulls_last=True)
