"""Batch fits over a whole matches table (Bradley-Terry): numba kernels + a Polars wrapper."""

from ._bt_solve import bt_theta
from .bradley_terry import bt_fit

__all__ = ["bt_fit", "bt_theta"]
