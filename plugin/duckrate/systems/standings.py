"""A contest's standings as the contest kernels read them: the tie range of each participant."""

from __future__ import annotations

from .._numba import kernel


@kernel
def tie_ranges(order, first, n, rank, first_place, last_place):
    """For the ``n`` rows ``order[first:first + n]`` of one contest (in rank order), write each row's tie group
    as 0-based places: ``first_place[k]`` and ``last_place[k]`` (the first and the last place of the
    participants sharing its rank)."""
    k = 0
    while k < n:
        stop = k + 1
        while stop < n and rank[order[first + stop]] == rank[order[first + k]]:
            stop += 1
        for j in range(k, stop):
            first_place[j] = k
            last_place[j] = stop - 1
        k = stop
