"""What every sequential replay shares: its parameter list, its output columns, and the Polars wrapper.

A system module declares a :class:`ReplaySystem` (name, parameters with defaults and checks, and a
``run`` function from prepared matches to output arrays). The Python API and the SQL layer are both
built from that one declaration, so a parameter's default or check lives in one place.
"""

from __future__ import annotations

import math
from decimal import Decimal
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import polars as pl
import pyarrow as pa

from .._numba import kernel
from ..errors import DuckrateInputError
from ..matches import PreparedMatches, columns_from_polars, prepare_matches
from ..priors import prior_columns

# Columns of one replay row, in the contract's order. The first seven come from the input table.
PASSTHROUGH_COLUMNS = ("league", "match_id", "played_at", "player_a", "player_b", "score_a")
COMPUTED_COLUMNS = (
    "seq",
    "expected_a",
    "rating_a_before",
    "rating_b_before",
    "sd_a_before",
    "sd_b_before",
    "rating_a_after",
    "rating_b_after",
    "sd_a_after",
    "sd_b_after",
)
OUTPUT_COLUMNS = (
    "league", "seq", "match_id", "played_at", "player_a", "player_b", "score_a", "expected_a",
    "rating_a_before", "rating_b_before", "sd_a_before", "sd_b_before",
    "rating_a_after", "rating_b_after", "sd_a_after", "sd_b_after",
)
SD_COLUMNS = ("sd_a_before", "sd_b_before", "sd_a_after", "sd_b_after")
NAME_COLUMNS = ("league_name", "player_a_name", "player_b_name")


def new_outputs(n_rows: int, has_sd: bool = True) -> dict[str, np.ndarray | None]:
    """Uninitialised output arrays of a run, indexed by input row, for every computed column in order
    (``seq`` int64, the rest float64; the sd columns None without ``has_sd``). Kernels take them, in
    this order, as ``*kernel_outputs(outputs)``."""
    return {
        name: None if not has_sd and name in SD_COLUMNS else np.empty(n_rows, np.int64 if name == "seq" else np.float64)
        for name in COMPUTED_COLUMNS
    }


def kernel_outputs(outputs: dict[str, np.ndarray | None]) -> list[np.ndarray]:
    """The arrays of :func:`new_outputs` a kernel writes, in column order."""
    return [values for values in outputs.values() if values is not None]


def computed_arrow_type(has_sd: bool) -> pa.StructType:
    """The UDF's per-row struct: computed columns (sd only where the system has it), the score as a
    DOUBLE, and the names."""
    numeric = [name for name in COMPUTED_COLUMNS if has_sd or name not in SD_COLUMNS]
    return pa.struct(
        [(name, pa.int64() if name == "seq" else pa.float64()) for name in numeric]
        + [("score_a", pa.float64())]
        + [(name, pa.string()) for name in NAME_COLUMNS]
    )


@dataclass(frozen=True)
class Parameter:
    """A named replay parameter: its default (None = NULL), what is expected, and a validity check.

    A number by default (passed to the system as a float, or an int when ``integer``); with ``choices``,
    one of those strings (matched case-insensitively, passed in lower case).
    """

    name: str
    default: float | str | None
    expected: str
    valid: Callable[[float], bool] = field(default=lambda value: math.isfinite(value))
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    integer: bool = False


def resolve_parameters(owner: str, parameters: tuple[Parameter, ...], given: dict) -> dict:
    """``parameters``' defaults overlaid with ``given``, each value checked against its declaration;
    raises :class:`DuckrateInputError` naming ``owner`` on an unknown name or a bad value."""
    known = {p.name: p for p in parameters}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise DuckrateInputError(f"{owner}: unknown parameter(s) {', '.join(unknown)}; expected some of {', '.join(known)}")
    params = {}
    for name, parameter in known.items():
        value = given.get(name, parameter.default)
        if value is None:
            if not parameter.nullable:
                raise DuckrateInputError(f"{owner}: parameter {name} is NULL; expected {parameter.expected}")
            params[name] = None
            continue
        if parameter.choices is not None:
            if not isinstance(value, str) or value.lower() not in parameter.choices:
                raise DuckrateInputError(f"{owner}: parameter {name} = {value!r}; expected {parameter.expected}")
            params[name] = value.lower()
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, np.integer, np.floating)):
            raise DuckrateInputError(f"{owner}: parameter {name} = {value!r}; expected {parameter.expected}")
        given_value, value = value, float(value)
        if not parameter.valid(value) or (parameter.integer and not value.is_integer()):
            shown = given_value if isinstance(given_value, (int, np.integer)) else value
            raise DuckrateInputError(f"{owner}: parameter {name} = {shown!r}; expected {parameter.expected}")
        params[name] = int(value) if parameter.integer else value
    return params


@dataclass(frozen=True)
class ReplaySystem:
    """A rating system replayed over matches in time order."""

    name: str
    parameters: tuple[Parameter, ...]
    run: Callable[[PreparedMatches, dict | None, dict], dict[str, np.ndarray | None]]
    check: Callable[[dict], None] = field(default=lambda params: None)
    has_sd: bool = True  # False: the sd_* columns are NULL (the SQL macro writes them, the UDF skips them)
    # Checks the matches against the system's own model (e.g. TrueSkill's win/draw/loss) with the raw
    # columns at hand, so errors can name the match_id: (columns, prepared, table) -> None or raise.
    check_matches: Callable[[dict, PreparedMatches, str], None] = field(default=lambda columns, prepared, table: None)

    @property
    def defaults(self) -> dict[str, float | None]:
        return {p.name: p.default for p in self.parameters}

    def resolve(self, given: dict) -> dict:
        """Defaults overlaid with ``given``, each value checked; raises on unknown or bad values."""
        params = resolve_parameters(self.name, self.parameters, given)
        self.check(params)
        return params

    def compute(
        self, columns: dict[str, pa.Array], priors, params: dict, table: str = "matches"
    ) -> tuple[PreparedMatches, dict[str, np.ndarray | None]]:
        """The prepared matches and the output arrays in input row order (``None``: an all-NULL column)."""
        params = self.resolve(params)
        prepared = prepare_matches(columns, table)
        self.check_matches(columns, prepared, table)
        return prepared, self.run(prepared, prior_columns(priors), params)


def replay_frame(system: ReplaySystem, matches: pl.DataFrame, priors=None, **params) -> pl.DataFrame:
    """Run ``system`` over a Polars matches frame; one output row per match in replay order."""
    columns = columns_from_polars(matches)
    _, computed = system.compute(columns, priors, params)
    out = matches.select([name for name in PASSTHROUGH_COLUMNS if name in matches.columns])
    if "league" not in out.columns:
        out = out.with_columns(pl.lit(None, dtype=pl.Utf8).alias("league"))
    out = out.with_columns(
        pl.Series(name, values) if values is not None else pl.lit(None, dtype=pl.Float64).alias(name)
        for name, values in computed.items()
    )
    return out.select(OUTPUT_COLUMNS).sort("league", "seq", nulls_last=True)


@kernel
def _name_indices(league, state_a, state_b, state_player):
    """int32 dictionary indices of each row's league and players (one pass, no temporaries)."""
    n = league.shape[0]
    league_index = np.empty(n, dtype=np.int32)
    player_a_index = np.empty(n, dtype=np.int32)
    player_b_index = np.empty(n, dtype=np.int32)
    for row in range(n):
        league_index[row] = league[row]
        player_a_index[row] = state_player[state_a[row]]
        player_b_index[row] = state_player[state_b[row]]
    return league_index, player_a_index, player_b_index


def computed_struct(prepared: PreparedMatches, computed: dict[str, np.ndarray | None], has_sd: bool) -> pa.StructArray:
    """Computed columns, the score, and league and player names (dictionary-encoded) as one Arrow struct.

    Numeric arrays are passed zero-copy; names go back as dictionary arrays, far cheaper for DuckDB to
    import than one string per row. Without ``has_sd`` the sd columns are left out.
    """
    n = prepared.n_rows
    arrow_type = computed_arrow_type(has_sd)
    arrays = []
    all_null = pa.nulls(n, pa.float64())  # one buffer shared by every all-NULL column
    for name in COMPUTED_COLUMNS:
        if not has_sd and name in SD_COLUMNS:
            continue
        values = computed[name]
        kind = pa.int64() if name == "seq" else pa.float64()
        arrays.append(all_null if values is None else pa.array(values, kind))
    arrays.append(pa.array(prepared.score, pa.float64()))
    players = prepared.players.cast(pa.string())
    league_index, player_a_index, player_b_index = _name_indices(
        prepared.league, prepared.state_a, prepared.state_b, prepared.state_player
    )
    unnamed = [i for i, name in enumerate(prepared.league_names) if name is None]
    leagues = pa.array(prepared.league_names, pa.string())
    league_array = pa.DictionaryArray.from_arrays(
        pa.array(league_index, mask=(league_index == unnamed[0]) if unnamed else None), leagues
    )
    arrays.append(league_array)
    arrays.append(pa.DictionaryArray.from_arrays(player_a_index, players))
    arrays.append(pa.DictionaryArray.from_arrays(player_b_index, players))
    return pa.StructArray.from_arrays(arrays, names=arrow_type.names)  # names: dictionary arrays
