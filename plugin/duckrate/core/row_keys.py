"""64-bit row keys: where each key of a batch sits in a table of distinct keys.

One job, used on both sides of the DuckDB bridge and by the match preparation: an open-addressing table
over distinct ``uint64`` keys (DuckDB ``hash()`` values), and a lookup that first tries the slot right
after the previous hit. A table macro scans its input twice (once to pack it for the computation, once to
stream the results back), and both scans meet the rows in the same order chunk by chunk, so nearly every
key is found by that guess and its result read sequentially.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel


@kernel
def _build_key_table(keys, size):
    slots = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    for code in range(keys.shape[0]):
        slot = keys[code] & mask
        while slots[slot] != -1:
            slot = (slot + np.uint64(1)) & mask
        slots[slot] = code
    return slots


@kernel
def _lookup_keys(values, keys, slots):
    mask = np.uint64(slots.shape[0] - 1)
    codes = np.empty(values.shape[0], dtype=np.int64)
    for i in range(values.shape[0]):
        slot = values[i] & mask
        while True:
            code = slots[slot]
            if code == -1 or keys[code] == values[i]:
                break
            slot = (slot + np.uint64(1)) & mask
        codes[i] = code
    return codes


def key_table(keys: np.ndarray) -> np.ndarray:
    """The open-addressing slots of ``keys`` (distinct uint64), for :func:`codes_of_keys` and :func:`key_positions`."""
    size = 1 << max(4, int(2 * max(len(keys), 1) - 1).bit_length())
    return _build_key_table(keys, size)


def codes_of_keys(values: np.ndarray, keys: np.ndarray, slots: np.ndarray | None = None) -> np.ndarray:
    """Position of each value in ``keys`` (distinct uint64 hash keys), -1 where absent."""
    return _lookup_keys(np.ascontiguousarray(values), keys, key_table(keys) if slots is None else slots)


def anchor_table(keys: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The keys at ``starts`` (where each chunk the input arrived in begins: where a scan's chunk usually
    begins too), their positions, and their key table."""
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    anchor_keys = np.ascontiguousarray(keys[starts])
    return anchor_keys, starts, key_table(anchor_keys)


@kernel
def _find(value, keys, anchor_keys, anchor_positions, anchors, slots):
    """Position of ``value`` in ``keys`` through the anchor table, then the full table (when built, i.e.
    non-empty); -1 if neither has it, -2 if only the full table could tell and it is not built."""
    code = -1
    mask = np.uint64(anchors.shape[0] - 1)
    slot = value & mask
    while True:
        code = anchors[slot]
        if code == -1 or anchor_keys[code] == value:
            break
        slot = (slot + np.uint64(1)) & mask
    if code != -1:
        return anchor_positions[code]
    if slots.shape[0] == 0:
        return -2
    mask = np.uint64(slots.shape[0] - 1)
    slot = value & mask
    while True:
        code = slots[slot]
        if code == -1 or keys[code] == value:
            return code
        slot = (slot + np.uint64(1)) & mask


@kernel
def key_positions(values, keys, hint, anchor_keys, anchor_positions, anchors, slots):
    """Position of each value in ``keys``: the slot right after the previous value's (the first value's
    guess is ``hint``), else :func:`_find`. Returns the positions (-1 where a value is not a key) and the
    index of the first value that needs the full table while it is not built (-1 when none did)."""
    n = values.shape[0]
    positions = np.empty(n, dtype=np.int64)
    guess = hint
    for i in range(n):
        value = values[i]
        if 0 <= guess < keys.shape[0] and keys[guess] == value:
            found = guess
        else:
            found = _find(value, keys, anchor_keys, anchor_positions, anchors, slots)
            if found == -2:
                return positions, i
        positions[i] = found
        guess = found + 1 if found >= 0 else -1
    return positions, -1
