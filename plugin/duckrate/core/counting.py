"""A stable counting sort: the order of items by small integer keys, in O(items + keys)."""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import kernel


@kernel
def counting_order(keys, n_keys):
    """The indices of ``keys`` (integers in ``0 .. n_keys - 1``) sorted by key, equal keys in index order."""
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        start[keys[i] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    order = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        order[start[keys[i]]] = i
        start[keys[i]] += 1
    return order
