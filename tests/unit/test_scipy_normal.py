"""The agreement tests' fast stand-in for scipy.stats.norm (helpers.scipy_normal) gives its results bit for bit."""

from __future__ import annotations

import numpy as np
from helpers.scipy_normal import SCIPY_NORM
from scipy.stats import norm


def test_cdf_pdf_and_ppf_are_scipys_bit_for_bit():
    rng = np.random.default_rng(7)
    xs = np.concatenate(
        [
            rng.normal(0.0, 3.0, 4000),
            rng.uniform(-40.0, 40.0, 2000),
            [0.0, -0.0, 1e-300, -1e-300, 37.5, -37.5, 38.5, -38.5, 1e300, -1e300, np.inf, -np.inf, np.nan],
        ]
    )
    qs = np.concatenate([rng.uniform(0.0, 1.0, 4000), [0.0, 1.0, 1e-300, 1 - 1e-16, 0.5, -0.1, 1.1, np.nan]])
    cdf, pdf, ppf = SCIPY_NORM
    for fast, scipys, values in ((cdf, norm.cdf, xs), (pdf, norm.pdf, xs), (ppf, norm.ppf, qs)):
        for value in values:
            with np.errstate(over="ignore"):  # pdf(±1e300): x² overflows to inf in both, as it should
                ours, theirs = fast(float(value)), scipys(float(value))
            same = np.isnan(ours) and np.isnan(theirs) or np.asarray(ours).tobytes() == np.asarray(theirs).tobytes()
            assert same, (fast.__name__, value, ours, theirs)
