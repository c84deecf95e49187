"""One place that decides how duckrate's kernels are compiled.

Kernels are compiled in nopython mode, without the GIL, with ``cache=True`` so a second process reloads
them in a fraction of a second. Numba picks its cache directory when the decorator is applied
(``NUMBA_CACHE_DIR`` if set, else ``__pycache__`` beside the module, else a per-user directory) and
raises ``RuntimeError`` there if none is writable: then the kernel is compiled without a cache, which
costs a second or two per process instead of failing at import.

A kernel pickles by reference (:func:`_reduce_kernel`): a function shipped to another process (a Spark task)
that calls one finds, there, the module's own kernel, which loads from the cache. Numba's own pickling
rebuilds a new dispatcher without a cache, which compiled every kernel again in every Spark worker process
(measured: a Weng-Lin replay task of 40 matches took 31 s instead of 3 s).
"""

from __future__ import annotations

import copyreg
import importlib
import sys
from pathlib import Path

import numba
from numba.core.registry import CPUDispatcher

#: The package directory: every kernel is cached in a ``__pycache__`` below it.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def kernel(function):
    """Compile ``function`` with numba (nopython, nogil, NumPy error model), cached where possible."""
    try:
        return numba.njit(cache=True, nogil=True, error_model="numpy")(function)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, error_model="numpy")(function)


def inlined_kernel(function):
    """Like :func:`kernel`, inlined into every kernel that calls it (numba's ``inline="always"``). For the
    small steps of a per-event loop that take arrays: a call that is not inlined keeps a reference count on
    each array (or view) it is handed, two atomic operations per array per call, which measured as about
    half the time of a Weng-Lin match; inlined, numba's reference-count pruning removes them."""
    try:
        return numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")(function)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, error_model="numpy", inline="always")(function)


def parallel_kernel(function):
    """Like :func:`kernel`, with ``numba.prange`` loops run on several threads. Use it only where each
    iteration writes its own outputs from its own inputs, so results never depend on the thread count."""
    try:
        return numba.njit(cache=True, nogil=True, parallel=True, error_model="numpy")(function)
    except RuntimeError:
        return numba.njit(cache=False, nogil=True, parallel=True, error_model="numpy")(function)


def clear_cache() -> int:
    """Delete the compiled kernels cached beside duckrate's modules; returns how many files went.

    Numba keys each cached kernel on its own source file only. A kernel recompiled (its file changed)
    while a parallel kernel it calls from another file is loaded from an older cache can be cached
    broken: later processes that load it crash (measured: a segmentation fault on the first call, numba
    0.68). Compiling everything in one process from an empty cache, as ``duckrate warm --fresh`` does at
    install, never leaves such a mix."""
    removed = 0
    for pattern in ("*.nbi", "*.nbc"):
        for path in PACKAGE_ROOT.rglob(f"__pycache__/{pattern}"):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def kernel_named(module: str, name: str):
    """The kernel ``name`` of the module ``module``, imported (what a pickled kernel unpickles to)."""
    return getattr(importlib.import_module(module), name)


def _reduce_kernel(dispatcher):
    """Pickle a kernel of duckrate's modules as its module and name (:func:`kernel_named`) when it is that
    module's attribute of that name; any other dispatcher as numba pickles it (by value)."""
    function = dispatcher.py_func
    module, name = function.__module__, function.__qualname__
    owned = module == "duckrate" or module.startswith("duckrate.")
    if owned and getattr(sys.modules.get(module), name, None) is dispatcher:
        return kernel_named, (module, name)
    return dispatcher.__reduce__()


copyreg.pickle(CPUDispatcher, _reduce_kernel)
