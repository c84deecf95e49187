"""Tuning: each system's parameters chosen by a protocol from the papers (:mod:`.tune`), over grids
(:mod:`.grids`), scored per league (:mod:`.scores`)."""

from duckrate.tuning.grids import parameter_sets
from duckrate.tuning.tune import TUNING_COLUMNS, tune

__all__ = ["TUNING_COLUMNS", "parameter_sets", "tune"]
