"""Every forecast between two players that ``win_probability`` and ``win_matrix`` can use, found on the
registries: each registered system's :class:`~duckrate.core.forecast.Forecast` under its name, and each
fit's under its ``forecast_name`` (``bt``: a ``bt_fit`` result / ``bt_ratings``). Asked at call time, so a
system registered at run time forecasts like the built-in ones.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import polars as pl

from duckrate.core.forecast import Forecast, Players, Probabilities
from duckrate.core.parameters import Parameter, Signature
from duckrate.core.registry import FITS, SYSTEMS


@dataclass(frozen=True)
class NamedForecast:
    """A forecast with the name it is asked for by (``system := ...``) and its owner's declarations."""

    name: str
    owner: Signature
    forecast: Forecast

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return self.forecast.declarations(self.owner)

    @property
    def from_state(self) -> bool:
        return self.forecast.from_state

    @property
    def state_holds(self) -> str:
        return self.forecast.state_holds

    def compute(self, players: Players, a: np.ndarray, b: np.ndarray, params: dict) -> Probabilities:
        return self.forecast.compute(players, a, b, params)

    def read_state(self, state: pl.DataFrame, saved_params: str) -> Players:
        """The players of a saved state, with the parameters (JSON) it was saved with, resolved by the owner."""
        assert self.forecast.read_state is not None
        return self.forecast.read_state(state, self.owner.resolve(json.loads(saved_params)))


def forecasts() -> dict[str, NamedForecast]:
    """Every forecast by the name ``system := ...`` takes: the systems' and the fits'."""
    found = {fit.forecast_name: NamedForecast(fit.forecast_name, fit, fit.forecast) for fit in FITS if fit.forecast}
    for system in SYSTEMS:
        if system.forecast is not None:
            found[system.name] = NamedForecast(system.name, system, system.forecast)
    return found


def fit_forecast_names() -> tuple[str, ...]:
    """The names of the fits' forecasts (a table of ratings with a ``method`` column is a fit's)."""
    return tuple(fit.forecast_name for fit in FITS if fit.forecast is not None)
