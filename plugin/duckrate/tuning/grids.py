"""Parameter grids for tuning: the expansion of a user's grid, or of the system's default grid.

A grid is either a mapping ``{parameter: [values...]}`` (every combination is tried, in the order the
parameters and values are given) or a list of mappings (each one parameter set). Parameters a grid does
not name keep their defaults (or the values passed as ``fixed``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence

from duckrate.core.errors import DuckrateInputError
from duckrate.core.protocol import System
from duckrate.core.registry import SYSTEMS


def parameter_sets(system: str | System, grid, fixed: Mapping | None = None) -> list[dict]:
    """The grid's parameter sets (each merged over ``fixed``), in grid order; ``grid`` None: the system's
    default grid (its registry entry's ``grid``, around the paper's defaults); a JSON text is parsed first.
    ``system``: a registered system's name or its entry. Raises on an empty grid or a malformed one."""
    if grid is None:
        entry = SYSTEMS.get(system, "tune") if isinstance(system, str) else system
        if not entry.grid:
            raise DuckrateInputError(f"tune: no default grid for system {entry.name!r}; pass grid := ...")
        grid = {name: list(values) for name, values in entry.grid.items()}
    if isinstance(grid, str):
        try:
            grid = json.loads(grid)
        except json.JSONDecodeError as error:
            raise DuckrateInputError(f"tune: grid {grid!r} is not valid JSON ({error})") from None
    fixed = dict(fixed or {})
    if isinstance(grid, Mapping):
        names = list(grid)
        values = []
        for name in names:
            options = grid[name]
            if isinstance(options, (str, bytes)) or not isinstance(options, Sequence) or not options:
                raise DuckrateInputError(
                    f"tune: grid entry {name!r} = {options!r}; expected a non-empty list of values"
                )
            values.append(list(options))
        sets = [dict(zip(names, combination)) for combination in itertools.product(*values)]
    elif isinstance(grid, Sequence) and grid and all(isinstance(entry, Mapping) for entry in grid):
        sets = [dict(entry) for entry in grid]
    else:
        raise DuckrateInputError(
            f"tune: grid = {grid!r}; expected {{parameter: [values, ...]}} or a non-empty list of {{parameter: value}}"
        )
    return [{**fixed, **entry} for entry in sets]
