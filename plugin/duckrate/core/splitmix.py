"""splitmix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): the
seeded stream behind duckrate's own random draws inside kernels, and bounded integers drawn from it
without bias (Lemire, "Fast random integer generation in an interval", ACM TOMACS 2019).

A stream is a uint64 ``state``; each draw advances it by the golden-ratio increment and mixes it, so a
stream depends only on its start, never on a thread or a row order.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import inlined_kernel

GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_LOW_32 = np.uint64(0xFFFFFFFF)
_TWO_TO_32 = np.uint64(1 << 32)

#: ``float(z >> 11) * TWO_TO_MINUS_53`` is a uniform double in [0, 1) from a 64-bit draw ``z``.
TWO_TO_MINUS_53 = 1.0 / 9007199254740992.0


@inlined_kernel
def splitmix_next(state):
    """The next draw of the stream at ``state``: ``(new state, 64-bit value)``."""
    state = state + GOLDEN_GAMMA
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@inlined_kernel
def splitmix_below(state, bound):
    """A uniform integer in ``[0, bound)`` for ``1 <= bound < 2^32``: ``(new state, value)``. Lemire's
    multiply-and-reject on the draw's high 32 bits: exact (no modulo bias); a draw is rejected with
    probability below ``bound / 2^32`` and the next one taken."""
    bound64 = np.uint64(bound)
    while True:
        state, z = splitmix_next(state)
        product = (z >> np.uint64(32)) * bound64
        low = product & _LOW_32
        if low >= bound64 or low >= (_TWO_TO_32 - bound64) % bound64:
            return state, np.int64(product >> np.uint64(32))
