"""The normal cdf and quantile the contest kernels use, against scipy's ndtr and ndtri."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from duckrate.systems.numerics import normal_cdf, normal_cdf_fast, normal_cdf_table, normal_quantile


def test_the_interpolated_cdf_is_within_2e_15_of_phi():
    values, slopes = normal_cdf_table()
    rng = np.random.default_rng(1)
    z = np.concatenate([rng.uniform(-10, 10, 200_000), np.linspace(-8.6, 8.6, 20_001)])
    fast = np.array([normal_cdf_fast(x, values, slopes) for x in z])
    assert np.abs(fast - ndtr(z)).max() < 2e-15


def test_the_cdf_keeps_its_relative_accuracy_in_the_tails():
    z = np.linspace(-37, 8, 4_001)
    exact = ndtr(z)
    ours = np.array([normal_cdf(x) for x in z])
    assert (np.abs(ours - exact) <= 1e-13 * exact).all()  # measured: 5.7e-14 at z = -32


def test_the_quantile_inverts_the_cdf_to_full_precision():
    rng = np.random.default_rng(2)
    p = np.concatenate(
        [rng.uniform(0, 1, 20_000), 10 ** -rng.uniform(1, 15, 5_000), 1 - 10 ** -rng.uniform(1, 15, 5_000)]
    )
    ours = np.array([normal_quantile(x) for x in p])
    assert np.abs(ours - ndtri(p)).max() < 5e-15
