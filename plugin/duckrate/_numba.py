"""One place that decides how duckrate's kernels are compiled.

Kernels are compiled with ``cache=True`` so a second process reloads them in a fraction of a second.
Where numba's cache directory cannot be written (a read-only site-packages, say) caching is switched
off instead of failing at import; ``NUMBA_CACHE_DIR`` is honoured as numba documents.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numba


def _cache_is_writable() -> bool:
    configured = os.environ.get("NUMBA_CACHE_DIR")
    target = Path(configured) if configured else Path(__file__).parent / "__pycache__"
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target):
            pass
    except OSError:
        return False
    return True


CACHE = _cache_is_writable()


def kernel(function):
    """Compile ``function`` in nopython mode, without the GIL, cached where possible."""
    return numba.njit(cache=CACHE, nogil=True, error_model="numpy")(function)
