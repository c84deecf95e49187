"""Parameters of every computation (replays, contest replays, fits, tests, marts): one declaration each.

A :class:`Parameter` holds a parameter's name, its default, what is expected (the text of the error a bad
value gets) and its check; a :class:`Signature` is a computation's name and parameter list. The Python
functions, the SQL macros (their ``name := default`` list, from :attr:`Parameter.sql_default`), the dbt
models and the reference in docs/ all take their defaults from these declarations.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, make_dataclass
from decimal import Decimal
from functools import cache
from typing import Any, Generic, TypeVar

import numpy as np

from duckrate.core.errors import DuckrateInputError


def positive(value: float) -> bool:
    """A ``Parameter.valid`` check: finite and > 0."""
    return math.isfinite(value) and value > 0


def nonnegative(value: float) -> bool:
    """A ``Parameter.valid`` check: finite and >= 0."""
    return math.isfinite(value) and value >= 0


#: The type of a parameter's default, so that ``def f(points: int = POINTS.default)`` type-checks.
Default = TypeVar("Default", bound=float | str | bool | tuple | None)


@dataclass(frozen=True)
class Parameter(Generic[Default]):
    """A named parameter: its default (None = NULL), what is expected, and a validity check.

    A number by default (passed on as a float, or an int when ``integer``); with ``choices``, one of those
    strings (matched case-insensitively, passed in lower case); a ``boolean`` (NULL means the default);
    ``text`` (any string, e.g. a player's name); ``names`` (a list of distinct non-empty strings, e.g.
    column names, passed on as a tuple; NULL and ``[]`` mean none; one string is a list of one); or ``bounds``
    (a list of two numbers ``[low, high]``, each passing ``valid``, with low <= high; passed on as a tuple).
    """

    name: str
    default: Default
    expected: str
    valid: Callable[[float], bool] = field(default=lambda value: math.isfinite(value))
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    integer: bool = False
    boolean: bool = False
    text: bool = False
    names: bool = False
    bounds: bool = False

    @property
    def python_type(self) -> Any:
        """The type of the resolved value: a tuple of names, a bool, a str, an int or a float, or None
        when it may be NULL."""
        kind: Any = (
            tuple[float, float]
            if self.bounds
            else tuple[str, ...]
            if self.names
            else bool
            if self.boolean
            else str
            if self.text or self.choices is not None
            else int
            if self.integer
            else float
        )
        return kind | None if self.nullable or (self.text and self.default is None) else kind

    @property
    def sql_default(self) -> str:
        """The default as a SQL literal, for a macro's ``name := default``."""
        value = self.default
        if value is None:
            return (
                "NULL::VARCHAR[]"
                if self.names
                else "NULL::DOUBLE[]"
                if self.bounds
                else "NULL::VARCHAR"
                if self.text
                else "NULL"
            )
        if isinstance(value, tuple):  # bounds
            return "[" + ", ".join(repr(float(v)) for v in value) + "]::DOUBLE[]"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        if isinstance(value, float) and not math.isfinite(value):
            return f"'{value}'::DOUBLE"
        return repr(value)

    def check(self, owner: str, value):
        """``value`` (None = NULL) checked against this declaration and converted; raises
        :class:`DuckrateInputError` naming ``owner``."""
        if self.names:
            return self._check_names(owner, value)
        if self.bounds and value is not None:
            return self._check_bounds(owner, value)
        if value is None:
            if self.boolean:
                return self.default
            if not self.nullable:
                raise DuckrateInputError(f"{owner}: parameter {self.name} is NULL; expected {self.expected}")
            return None
        if self.boolean:
            if not isinstance(value, (bool, np.bool_)):
                raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
            return bool(value)
        if self.text:
            if not isinstance(value, str):
                raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
            return value
        if self.choices is not None:
            if not isinstance(value, str) or value.lower() not in self.choices:
                raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
            return value.lower()
        if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, np.integer, np.floating)):
            raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
        given_value, value = value, float(value)
        if not self.valid(value) or (self.integer and not value.is_integer()):
            shown = given_value if isinstance(given_value, (int, np.integer)) else value
            raise DuckrateInputError(f"{owner}: parameter {self.name} = {shown!r}; expected {self.expected}")
        return int(value) if self.integer else value

    def _check_bounds(self, owner: str, value) -> tuple[float, float]:
        numbers = (int, float, Decimal, np.integer, np.floating)
        pair = list(value) if isinstance(value, (list, tuple, np.ndarray)) else None
        if (
            pair is None
            or len(pair) != 2
            or not all(isinstance(v, numbers) and not isinstance(v, bool) for v in pair)
            or not all(self.valid(float(v)) for v in pair)
            or float(pair[0]) > float(pair[1])
        ):
            raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
        return float(pair[0]), float(pair[1])

    def _check_names(self, owner: str, value) -> tuple[str, ...]:
        if value is None:
            return ()
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(item, str) and item for item in items):
            raise DuckrateInputError(f"{owner}: parameter {self.name} = {value!r}; expected {self.expected}")
        seen = set()
        for item in items:
            if item in seen:
                raise DuckrateInputError(
                    f"{owner}: parameter {self.name} names {item!r} twice; expected {self.expected}"
                )
            seen.add(item)
        return tuple(items)


def resolve_parameters(owner: str, parameters: tuple[Parameter, ...], given: dict) -> dict:
    """``parameters``' defaults overlaid with ``given``, each value checked against its declaration;
    raises :class:`DuckrateInputError` naming ``owner`` on an unknown name or a bad value."""
    known = {p.name: p for p in parameters}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise DuckrateInputError(
            f"{owner}: unknown parameter(s) {', '.join(unknown)}; expected some of {', '.join(known)}"
        )
    return {name: parameter.check(owner, given.get(name, parameter.default)) for name, parameter in known.items()}


def sql_parameter_list(parameters: tuple[Parameter, ...]) -> str:
    """``a := 1, b := 'x', ...``: a table macro's named parameters with their defaults."""
    return ", ".join(f"{p.name} := {p.sql_default}" for p in parameters)


@dataclass(frozen=True, kw_only=True)
class Signature:
    """A computation's name and parameters, with a check of the resolved values as a whole."""

    name: str
    parameters: tuple[Parameter, ...]
    check: Callable[[dict], None] = field(default=lambda params: None)
    # One or two sentences on what it computes, with its source (the generated docs and dbt yml show it).
    summary: str = ""

    @property
    def defaults(self) -> dict[str, Any]:  # each a float, str, bool or None, by name
        return {p.name: p.default for p in self.parameters}

    def resolve(self, given: dict) -> dict:
        """Defaults overlaid with ``given``, each value checked; raises on unknown or bad values."""
        params = resolve_parameters(self.name, self.parameters, given)
        self.check(params)
        return params

    @property
    def params_type(self) -> type:
        """The parameters as a typed, frozen dataclass derived from the :class:`Parameter` list (one field per
        parameter, in order, typed as :meth:`Parameter.python_type`, defaulting to its default)."""
        return _params_type(self.name, self.parameters)

    def typed(self, **given: Any) -> Any:
        """``given`` resolved and checked as :meth:`resolve` does, as an instance of :attr:`params_type`
        (``ELO.typed(k=24).k``)."""
        return self.params_type(**self.resolve(given))


@cache
def _params_type(name: str, parameters: tuple[Parameter, ...]) -> type:
    fields = [
        (p.name, p.python_type, field(default=tuple(p.default) if isinstance(p.default, list) else p.default))
        for p in parameters
    ]
    title = "".join(part.capitalize() for part in name.split("_"))
    kind = make_dataclass(f"{title}Params", fields, frozen=True, kw_only=True)
    kind.__module__ = __name__
    return kind
