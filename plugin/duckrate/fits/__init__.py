"""Batch fits over a whole matches table (Bradley-Terry): numba kernels + a Polars wrapper."""

from duckrate.fits.bradley_terry import bt_fit
from duckrate.fits.bradley_terry.solve import bt_theta

__all__ = ["bt_fit", "bt_theta"]
