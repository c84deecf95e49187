"""duckrate.core.borrowed: views without a reference count read and write the memory they borrow."""

from __future__ import annotations

import numba
import numpy as np

from duckrate.core.borrowed import borrowed, borrowed_row, borrowed_slice


@numba.njit
def _views(vector, matrix, row, length, start, stop):
    whole = borrowed(vector)
    part = borrowed_slice(vector, start, stop)
    line = borrowed_row(matrix, row, length)
    line[:] = -1.0
    part[0] = 100.0
    return whole.sum(), part.copy(), line.copy()


def test_borrowed_views_equal_slices_and_write_through():
    vector = np.arange(10.0)
    matrix = np.arange(12.0).reshape(3, 4)
    total, part, line = _views(vector, matrix, 1, 3, 2, 6)
    assert total == 45.0 - 2.0 + 100.0  # summed after the write through the slice
    assert np.array_equal(part, [100.0, 3.0, 4.0, 5.0]) and vector[2] == 100.0
    assert np.array_equal(line, [-1.0, -1.0, -1.0])
    assert np.array_equal(matrix, [[0, 1, 2, 3], [-1, -1, -1, 7], [8, 9, 10, 11]])


def test_borrowed_views_of_integer_arrays_and_empty_lengths():
    @numba.njit
    def lengths(vector, matrix):
        return borrowed_slice(vector, 3, 3).shape[0], borrowed_row(matrix, 2, 0).shape[0], borrowed(vector)[4]

    assert lengths(np.arange(5, dtype=np.int64), np.zeros((3, 2), dtype=np.int64)) == (0, 0, 4)
