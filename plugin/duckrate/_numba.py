"""One place that decides how duckrate's kernels are compiled.

Kernels are compiled in nopython mode, without the GIL, with ``cache=True`` so a second process reloads
them in a fraction of a second. Numba picks its cache directory when the decorator is applied
(``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the module, else a per-user directory) and
raises ``RuntimeError`` there if none is writable: then the kernel is compiled without a cache, which
costs a second or two per process instead of failing at import.
"""

from __future__ import annotations

import numba


def kernel(function):
    """Compile ``function`` with numba (nopython, nogil, NumPy error model), cached where possible."""
    try:
        return numba.njit(cache=True, nogil=True, error_model="numpy")(function)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, error_model="numpy")(function)


def parallel_kernel(function):
    """Like :func:`kernel`, with ``numba.prange`` loops run on several threads. Use it only where each
    iteration writes its own outputs from its own inputs, so results never depend on the thread count."""
    try:
        return numba.njit(cache=True, nogil=True, parallel=True, error_model="numpy")(function)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, parallel=True, error_model="numpy")(function)
