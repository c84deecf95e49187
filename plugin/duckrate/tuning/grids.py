"""Parameter grids for tuning: each system's default grid, and the expansion of a user's grid.

A grid is either a mapping ``{parameter: [values...]}`` (every combination is tried, in the order the
parameters and values are given) or a list of mappings (each one parameter set). Parameters a grid does
not name keep their defaults (or the values passed as ``fixed``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence

from duckrate.core.errors import DuckrateInputError

# Default grids, around each paper's defaults: what a user gets from tune(system, ...) without a grid.
DEFAULT_GRIDS: dict[str, dict[str, list]] = {
    "elo": {"k": [8.0, 12.0, 16.0, 20.0, 24.0, 32.0, 40.0, 48.0, 64.0]},
    "glicko": {"c": [0.0, 10.0, 20.0, 34.6, 50.0, 70.0]},
    "glicko2": {"tau": [0.3, 0.5, 0.8, 1.2], "volatility": [0.03, 0.06, 0.09]},
    "trueskill": {"beta": [25 / 12, 25 / 6, 25 / 3], "tau": [0.0, 25 / 300, 25 / 100]},
    "chance": {"beta": [0.6, 0.8, 1.0], "drift_sd": [0.01, 0.03, 0.06]},
    "elo2k": {"eta": [0.05, 0.1, 0.18420680743952367, 0.3]},
    "pairwise": {"prior_games": [2.0, 5.0, 10.0, 20.0, 40.0]},
    "elo_mmr": {"beta": [150.0, 200.0, 250.0], "drift": [20.0, 34.914862437758785, 50.0]},
    # the Codeforces system's ratings scale with beta around the initial rating: their order (all its metrics
    # see) does not change, so its grid is over the update's weight
    "codeforces": {"weight": [0.5, 0.75, 1.0, 1.5, 2.0]},
    "topcoder": {"weight_limit": [0.12, 0.18, 0.24], "weight_noob": [0.4, 0.6, 0.8]},
    "trueskill_contest": {"beta": [125.0, 175.0, 225.0], "drift": [20.0, 35.0, 50.0]},
    "glicko_contest": {"beta": [200.0, 315.08922206661885, 400.0], "drift": [20.0, 35.0, 50.0]},
    "bar": {"beta": [200.0, 315.08922206661885, 400.0], "drift": [20.0, 35.0, 50.0]},
}


def parameter_sets(system: str, grid, fixed: Mapping | None = None) -> list[dict]:
    """The grid's parameter sets (each merged over ``fixed``), in grid order; ``grid`` None: the system's
    default grid; a JSON text is parsed first. Raises on an empty grid or a malformed one."""
    if grid is None:
        if system not in DEFAULT_GRIDS:
            raise DuckrateInputError(f"tune: no default grid for system {system!r}; pass grid := ...")
        grid = DEFAULT_GRIDS[system]
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
