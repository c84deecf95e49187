"""The registry of rating systems: every system, of every input shape, by name.

Each system module declares one :class:`~duckrate.core.protocol.System` entry and
``duckrate/systems/__init__.py`` adds it here (one line). Everything that needs "every system" or "the
system called X" asks this registry at the time it needs it (the SQL macros when a connection is
registered, ``tune``, ``win_probability``, the Spark replays, the warm-up, the generated docs and dbt
lists), so a system added at run time is served like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any, Generic, TypeVar

from duckrate.core.errors import DuckrateInputError
from duckrate.core.parameters import Signature
from duckrate.core.protocol import Fit, InputShape, System

Entry = TypeVar("Entry", bound=Signature)


class Registry(Generic[Entry]):
    """Entries (a :class:`~duckrate.core.parameters.Signature` each) by name, in the order they were added."""

    def __init__(self, kind: type[Any]) -> None:
        self._kind = kind
        self._entries: dict[str, Entry] = {}

    def add(self, entry: Entry) -> Entry:
        """Register ``entry``; its name must be new. Returns it."""
        if not isinstance(entry, self._kind):
            raise TypeError(f"expected a duckrate {self._kind.__name__}, got {type(entry).__name__}")
        if entry.name in self._entries:
            raise ValueError(f"a {self._kind.__name__} named {entry.name!r} is registered already")
        self._entries[entry.name] = entry
        return entry

    def remove(self, name: str) -> Entry:
        """Take an entry out of the registry (one registered for a while, as the tests do)."""
        return self._entries.pop(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(tuple(self._entries.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __len__(self) -> int:
        return len(self._entries)


class SystemRegistry(Registry[System]):
    """Systems by name, in the order they were added."""

    def __init__(self) -> None:
        super().__init__(System)
        self._aliases: dict[str, str] = {}

    def alias(self, alias: str, name: str) -> None:
        """Serve the registered system ``name`` under a second name too (its SQL macros and lookups by
        name); "every system" lists it once, under ``name``."""
        if alias in self._entries or alias in self._aliases:
            raise ValueError(f"a System named {alias!r} is registered already")
        if name not in self._entries:
            raise ValueError(f"no System named {name!r} to alias")
        self._aliases[alias] = name

    def aliases(self, shape: InputShape | None = None) -> tuple[System, ...]:
        """Each alias as a copy of its system under the alias's name (of input ``shape`` when given)."""
        copies = (replace(self._entries[name], name=alias) for alias, name in self._aliases.items())
        return tuple(system for system in copies if shape is None or system.input == shape)

    def get(self, name: str, caller: str = "duckrate", shape: InputShape | None = None) -> System:
        """The system called ``name`` (or aliased so; of input ``shape`` when given); an error naming
        ``caller`` and the systems there are otherwise."""
        name = self._aliases.get(name, name) if isinstance(name, str) else name
        system = self._entries.get(name) if isinstance(name, str) else None
        if system is None or (shape is not None and system.input != shape):
            over = f" over {shape.name}" if shape is not None else ""
            raise DuckrateInputError(
                f"{caller}: unknown system {name!r}{over}; expected one of {', '.join(self.names(shape))}"
            )
        return system

    def of(self, shape: InputShape) -> tuple[System, ...]:
        """Every system that rates tables of ``shape``, in registry order."""
        return tuple(system for system in self._entries.values() if system.input == shape)

    def names(self, shape: InputShape | None = None) -> tuple[str, ...]:
        return tuple(system.name for system in (self._entries.values() if shape is None else self.of(shape)))

    def shapes(self) -> tuple[InputShape, ...]:
        """The input shapes of the registered systems, in order of first appearance."""
        return tuple(dict.fromkeys(system.input for system in self._entries.values()))


#: Every registered rating system.
SYSTEMS = SystemRegistry()
#: Every registered batch fit (``bt_fit``).
FITS: Registry[Fit] = Registry(Fit)
#: Every registered model test (``bt_lr_test``).
TESTS: Registry[Signature] = Registry(Signature)
