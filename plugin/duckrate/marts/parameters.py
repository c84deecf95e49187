"""The marts' parameters (their defaults serve the Python API, the SQL macros, Spark and the dbt models
alike), their checks on the Python side (the Python API and Spark check a call's values before any query
runs; the SQL macros check theirs in SQL), and the exact arithmetic the marts sum in."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from numbers import Integral, Real
from typing import Any

import pyarrow as pa

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Parameter
from duckrate.core.registry import SYSTEMS
from duckrate.core.scales import ELO_DISPLAY

#: Exact sums: a value in [0, 1] rounded to 1e-20; 18 digits left for the total. (precision, scale)
EXACT_DIGITS = (38, 20)
EXACT = "DECIMAL({}, {})".format(*EXACT_DIGITS)

BINS = Parameter("bins", 10, "an integer number of bins >= 1", lambda v: v >= 1, integer=True)
MIN_GAMES = Parameter("min_games", 10, "an integer number of earlier games >= 0", lambda v: v >= 0, integer=True)
MAX_SD = Parameter("max_sd", None, "an sd bound > 0 (per system), or NULL for none", nullable=True)
WARMUP = Parameter("warmup", 0.0, "a share in [0, 1) of each league's matches", lambda v: 0 <= v < 1)
POINTS = Parameter("points", 200, "an integer number of checkpoints >= 1", lambda v: v >= 1, integer=True)

DEFAULT_BIN_WIDTH: float = ELO_DISPLAY.gap_bin_width
"""``loss_by_gap``'s bin width when none is given: 50 rating points on the Elo display scale (400/ln 10
points per natural unit: Elo, Glicko, Glicko-2, Elo2K, the pairwise and chance systems), about 7 points of
win probability between even players."""


def system_bin_widths() -> dict[str, float]:
    """Default bin widths of the registered systems on another scale than the display scale (TrueSkill's μ:
    one μ point moves the forecast about as much as 50 Elo points at the default β = 25/6), from each
    system's :class:`~duckrate.core.scales.RatingScale`."""
    return {
        system.name: system.scale.gap_bin_width for system in SYSTEMS if system.scale.gap_bin_width != DEFAULT_BIN_WIDTH
    }


BIN_WIDTH = Parameter(
    "bin_width",
    None,
    "a bin width > 0 on the rating scale of each system, or NULL for the default (50; TrueSkill 1)",
    lambda v: math.isfinite(v) and v > 0,
    nullable=True,
)


def _positive_integer(mart: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < 1:
        raise DuckrateInputError(f"{mart}: expected {name} to be a positive integer, got {value!r}")
    return int(value)


def _valid_max_sd(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, Real) and not math.isnan(value) and float(value) >= 0


def _summary_options(min_games, max_sd, warmup) -> dict:
    if isinstance(min_games, bool) or not isinstance(min_games, Integral) or min_games < 0:
        raise DuckrateInputError(
            f"calibration_summary: expected min_games to be a non-negative integer, got {min_games!r}"
        )
    if isinstance(max_sd, Mapping):
        bad = {
            system: value for system, value in max_sd.items() if not isinstance(system, str) or not _valid_max_sd(value)
        }
        if bad:
            raise DuckrateInputError(
                f"calibration_summary: expected max_sd to map system names to non-negative numbers, got {bad!r}"
            )
        max_sd = {system: float(value) for system, value in max_sd.items()}
    elif max_sd is not None:
        if not _valid_max_sd(max_sd):
            raise DuckrateInputError(
                "calibration_summary: expected max_sd to be None, a non-negative number, or a mapping "
                f"from system to such a number, got {max_sd!r}"
            )
        max_sd = float(max_sd)
    if isinstance(warmup, bool) or not isinstance(warmup, Real) or math.isnan(warmup) or not 0.0 <= float(warmup) < 1.0:
        raise DuckrateInputError(f"calibration_summary: expected warmup to be a share in [0, 1), got {warmup!r}")
    return {"min_games": int(min_games), "max_sd": max_sd, "warmup": float(warmup)}


def _bin_width(bin_width) -> float | None:
    if bin_width is None:
        return None
    if (
        isinstance(bin_width, bool)
        or not isinstance(bin_width, Real)
        or not (math.isfinite(bin_width) and float(bin_width) > 0)
    ):
        raise DuckrateInputError(f"loss_by_gap: parameter bin_width = {bin_width!r}; expected {BIN_WIDTH.expected}")
    return float(bin_width)


_CHECKS: dict[str, Callable[..., dict[str, Any]]] = {
    "calibration_bins": lambda bins: {"bins": _positive_integer("calibration_bins", "bins", bins)},
    "loss_curve": lambda points: {"points": _positive_integer("loss_curve", "points", points)},
    "calibration_summary": _summary_options,
    "loss_by_gap": lambda bin_width: {"bin_width": _bin_width(bin_width)},
}


def checked_values(mart, given: dict) -> dict:
    """A call's parameters of ``mart`` (a :class:`duckrate.marts.Mart`): its defaults overlaid with ``given``,
    each checked and converted (an int, a float, a mapping of floats or None). An unknown name or a bad
    value raises :class:`DuckrateInputError` naming it."""
    known = {parameter.name: parameter.default for parameter in mart.parameters}
    unknown = sorted(set(given) - set(known))
    if unknown:
        expected = f"expected some of {', '.join(known)}" if known else "it takes none"
        raise DuckrateInputError(f"{mart.name}: unknown parameter(s) {', '.join(unknown)}; {expected}")
    values = {**known, **given}
    if mart.name in _CHECKS:
        return _CHECKS[mart.name](**values)
    return {parameter.name: parameter.check(mart.name, values[parameter.name]) for parameter in mart.parameters}


def number_parameter(mart: str, name: str, value) -> float:
    """A mart parameter as a float; a NULL, text or boolean value is a DuckrateInputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected a number")
    return float(value)


def count_parameter(mart: str, name: str, value, minimum: int) -> int:
    """A mart parameter that must be a whole number >= ``minimum``."""
    number = number_parameter(mart, name, value)
    if not (number.is_integer() and number >= minimum):
        raise DuckrateInputError(f"{mart}: parameter {name} = {value!r}; expected an integer >= {minimum}")
    return int(number)


# Fields the marts read, by kind: names pass as they are, counters must be integers, the rest numbers.
_NAME_FIELDS = ("system", "league", "player", "player_a", "player_b", "team", "match_id")  # any type: keys
_INTEGER_FIELDS = ("seq", "rank", "predicted_rank")


def check_column_types(mart: str, schema: pa.Schema) -> None:
    """Raise :class:`DuckrateInputError` naming the first column of ``schema`` (a replay table's, or the
    fields of it a mart reads) whose type a mart cannot read: names pass as they are, counters must be
    integers, the rest numbers. A column of untyped NULLs (a field the table lacks) passes."""
    for name in schema.names:
        kind = schema.field(name).type
        if pa.types.is_null(kind) or name in _NAME_FIELDS:
            continue
        numeric = pa.types.is_integer(kind) or (
            name not in _INTEGER_FIELDS and (pa.types.is_floating(kind) or pa.types.is_decimal(kind))
        )
        if not numeric:
            expected = "an integer" if name in _INTEGER_FIELDS else "a number (DOUBLE)"
            raise DuckrateInputError(
                f"{mart}: column '{name}' has type {kind}; expected {expected} (a replay table's column)"
            )
