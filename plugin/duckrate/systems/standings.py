"""What every contest kernel does around its system's update: the tie range of each participant, the size of
the largest contest, and writing a contest's rows and its players' new states."""

from __future__ import annotations

from duckrate.core.jit import kernel


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


@kernel
def largest_contest(contest_start):
    """The most participants of any contest (the size of a kernel's per-contest scratch arrays)."""
    largest = 0
    for c in range(contest_start.shape[0] - 1):
        largest = max(largest, contest_start[c + 1] - contest_start[c])
    return largest


@kernel
def record_contest(order, first, n, state, before, after, performance_values, players, outputs):
    """Write one contest's output rows (``outputs``: n_players, performance, rating and sd before and after,
    by input row) and its players' new rating and sd (``players``, by slot) from the per-participant arrays
    ``before`` = (rating, sd), ``after`` = (rating, sd) and ``performance_values``."""
    rating_in, sd_in = before
    rating_out, sd_out = after
    rating, sd = players
    n_players, performance, rating_before, sd_before, rating_after, sd_after = outputs
    for k in range(n):
        row = order[first + k]
        s = state[row]
        n_players[row] = n
        performance[row] = performance_values[k]
        rating_before[row] = rating_in[k]
        sd_before[row] = sd_in[k]
        rating[s] = rating_out[k]
        sd[s] = sd_out[k]
        rating_after[row] = rating_out[k]
        sd_after[row] = sd_out[k]
