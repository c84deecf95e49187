"""Starting states from a ``player_priors`` table (contract: ``player``, ``rating``, optional ``sd``,
``volatility``, ``league``), mapped onto the state slots of :class:`~duckrate.core.matches.PreparedMatches`.

A prior row with a NULL or absent ``league`` applies to the player in every league; a row naming a
league applies there only and wins over a league-less row. Priors for players absent from the matches
are ignored (they have no row to appear in).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from duckrate.core.contests import PlayerRows
from duckrate.core.errors import DuckrateInputError
from duckrate.core.matches import PreparedMatches, columns_from_polars, single_chunk


def prior_columns(priors) -> dict[str, pa.Array] | None:
    """Normalise a priors argument (None, a Polars DataFrame, or a mapping of Arrow arrays)."""
    if priors is None:
        return None
    if isinstance(priors, pl.DataFrame):
        return columns_from_polars(priors, table="player_priors")
    return {name: single_chunk(array) for name, array in priors.items()}


def initial_states(
    prepared: PreparedMatches | PlayerRows, priors: dict[str, pa.Array] | None, defaults: dict[str, float]
) -> dict[str, np.ndarray]:
    """One float64 array per state field (``defaults`` keys), filled from the priors where given.

    Parameters
    ----------
    prepared : the encoded matches (or contests).
    priors : columns of the priors table, or None.
    defaults : newcomer value per field, e.g. ``{"rating": 1500.0}`` or ``{"rating": 1500.0, "sd": 350.0}``.
    """
    states = {field: np.full(prepared.n_states, value, dtype=np.float64) for field, value in defaults.items()}
    if priors is None or len(next(iter(priors.values()), [])) == 0:
        return states
    table = "player_priors"
    for required in ("player", "rating"):
        if required not in priors:
            raise DuckrateInputError(
                f"{table}: missing column '{required}'; expected player, rating and optionally sd, volatility, league"
            )
    n = len(priors["player"])
    for name in ("player", "rating"):
        if priors[name].null_count == n:
            raise DuckrateInputError(
                f"{table}: column '{name}' is NULL on every row (is it missing from the priors table?); "
                "expected columns player, rating and optionally sd, volatility, league"
            )
        if priors[name].null_count:
            row = int(np.flatnonzero(~np.asarray(priors[name].is_valid(), dtype=np.bool_))[0])
            raise DuckrateInputError(
                f"{table}: column '{name}' is NULL at row {row + 1} (player={priors['player'][row].as_py()!r}); expected a value"
            )
    players = pc.cast(priors["player"], pa.large_string())
    player_code = np.asarray(pc.index_in(players, value_set=prepared.players).fill_null(-1), dtype=np.int64)
    if "league" in priors and priors["league"].null_count < n:
        league_values = pc.cast(priors["league"], pa.large_string())
        known = pa.array([name for name in prepared.league_names if name is not None], pa.large_string())
        league_code = np.asarray(pc.index_in(league_values, value_set=known).fill_null(-2), dtype=np.int64)
        league_code[~np.asarray(league_values.is_valid(), dtype=np.bool_)] = -1  # -1: every league
    else:
        league_code = np.full(n, -1, dtype=np.int64)

    # rows for players or leagues absent from the matches (codes -1 / -2) cannot apply anywhere: ignored
    frame = pl.DataFrame({"player": player_code, "league": league_code})
    duplicated = frame.select(pl.struct("player", "league").is_duplicated()).to_series().to_numpy()
    duplicated &= (player_code >= 0) & (league_code != -2)
    if duplicated.any():
        row = int(np.flatnonzero(duplicated)[-1])
        raise DuckrateInputError(
            f"{table}: player {players[row].as_py()!r} has more than one prior row for the same league (row {row + 1}); expected one"
        )

    values = {}
    for field in defaults:
        if field in priors and priors[field].null_count < n:
            _check_numeric(priors[field], field)
            column = pc.cast(priors[field], pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
            bad = np.flatnonzero(~np.isfinite(column) & np.asarray(priors[field].is_valid(), dtype=np.bool_))
            if bad.size:
                raise DuckrateInputError(
                    f"{table}: column '{field}' has {float(column[bad[0]])!r} for player {players[int(bad[0])].as_py()!r}; expected a finite number"
                )
            values[field] = column

    slot_of = _slot_lookup(prepared)

    def apply(rows: np.ndarray, leagues: np.ndarray) -> None:
        slots = slot_of(leagues, player_code[rows])
        for field, column in values.items():
            take = (slots >= 0) & ~np.isnan(column[rows])
            states[field][slots[take]] = column[rows][take]

    every_league = np.flatnonzero((player_code >= 0) & (league_code == -1))
    for league_index in range(prepared.n_leagues):
        apply(every_league, np.full(every_league.size, league_index, dtype=np.int64))
    one_league = np.flatnonzero((player_code >= 0) & (league_code >= 0))
    apply(one_league, league_code[one_league])  # a league's own prior wins over a league-less one
    return states


def _check_numeric(column: pa.Array, name: str) -> None:
    if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type) or pa.types.is_decimal(column.type)):
        raise DuckrateInputError(f"player_priors: column '{name}' has type {column.type}; expected a number (DOUBLE)")


def _slot_lookup(prepared: PreparedMatches | PlayerRows):
    """A function mapping (league index, player code) arrays to state slots, -1 where the pair never played."""
    n_players = len(prepared.players)
    key = prepared.state_league * n_players + prepared.state_player
    used = np.zeros(prepared.n_states, dtype=np.bool_)
    used[prepared.state_a] = True
    used[prepared.state_b] = True
    keys = key[used]
    slots = np.flatnonzero(used)
    sorter = np.argsort(keys)
    keys, slots = keys[sorter], slots[sorter]

    def slot_of(league: np.ndarray, player: np.ndarray) -> np.ndarray:
        wanted = league * n_players + player
        if len(keys) == 0:
            return np.full(len(wanted), -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
        return np.where(keys[position] == wanted, slots[position], -1)

    return slot_of


def check_positive_priors(priors, fields: tuple[str, ...], system: str) -> None:
    """Reject a prior ``sd`` or ``volatility`` that is not > 0, naming the player and the value."""
    if priors is None or "player" not in priors:
        return
    for name in fields:
        if name not in priors or priors[name].null_count == len(priors[name]):
            continue
        column = priors[name]
        _check_numeric(column, name)
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
        valid = np.asarray(column.is_valid(), dtype=np.bool_)
        bad = np.flatnonzero(valid & ~(values > 0.0))
        if bad.size:
            row = int(bad[0])
            raise DuckrateInputError(
                f"player_priors: column '{name}' has {float(values[row])!r} for player {priors['player'][row].as_py()!r}; "
                f"expected {name} > 0 ({system})"
            )


def reject_priors(priors, system: str) -> None:
    """Systems without a scalar starting state cannot take a ``priors`` table: say so rather than ignore it."""
    if priors is not None and len(next(iter(priors.values()), [])) > 0:
        raise DuckrateInputError(
            f"{system}: a player_priors table was given, but {system} has no scalar starting state a prior "
            "rating could set; expected no priors (or an empty table)"
        )
