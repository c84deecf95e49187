"""Batch fits over a whole matches table (Bradley-Terry): numba kernels + a Polars wrapper."""

from .bradley_terry import bt_fit
from .bradley_terry.solve import bt_theta

__all__ = ["bt_fit", "bt_theta"]
