"""scipy.stats.norm's ``cdf``, ``pdf`` and ``ppf`` for one number, without the per-call argument handling of
scipy's distribution objects (about 25 µs a call, half of the trueskill package's time in the agreement tests).

They compute exactly what ``scipy.stats.norm`` computes for a standard normal (its private ``_norm_cdf``,
``_norm_pdf`` and ``_norm_ppf``: ``special.ndtr``, ``exp(-x²/2)/√(2π)`` and ``special.ndtri``), so
``trueskill.TrueSkill(backend=SCIPY_NORM)`` is the package's scipy backend, bit for bit
(``tests/unit/test_scipy_normal.py``)."""

from __future__ import annotations

import numpy as np
from scipy import special

_ROOT_TWO_PI = np.sqrt(2 * np.pi)


# Each on a one-element array, as scipy evaluates them (numpy's scalar and array paths of exp may differ in the
# last bit).


def cdf(x):
    return special.ndtr(np.array([x], dtype=np.float64))[0]


def pdf(x):
    x = np.array([x], dtype=np.float64)
    return (np.exp(-(x**2) / 2.0) / _ROOT_TWO_PI)[0]


def ppf(q):
    return special.ndtri(np.array([q], dtype=np.float64))[0]


#: A ``backend`` for ``trueskill.TrueSkill``: the scipy backend's functions, faster.
SCIPY_NORM = (cdf, pdf, ppf)
