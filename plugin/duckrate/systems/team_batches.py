"""The matches of a team replay as the kernels read them: waves of matches that share no player, one match's
rows gathered into local arrays and written back, and the plan that rates big waves on several threads.

A match's update reads and writes only its own players' ratings, so matches that share no player can be
rated side by side. :func:`match_waves` puts each match in the first wave after every wave holding an
earlier match of one of its players; rating the waves in order, the matches of a wave in any order or on
any number of threads, gives every match the ratings a one-by-one replay in (played_at, match_id) order
gives it, bit for bit.

:func:`rate_in_waves` runs a system's kernel over the waves: a wave of at least :data:`PARALLEL_FROM` matches
is split between threads (Python threads calling the kernel, which releases the GIL), and the small waves in
between run in one call on one thread. Measured on 2 vCPUs: a numba ``prange`` region per wave cost about 7 ms
with the OpenMP threading layer (numba's default where libgomp exists), more than the wave's work; a Python
thread handing over half a wave costs about 0.1 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from duckrate.core.borrowed import borrowed
from duckrate.core.jit import inlined_kernel, kernel

#: Waves with at least this many matches are split between threads.
PARALLEL_FROM = 256


@kernel
def _wave_of_each(order, team_start, match_teams, slot, n_states):
    n_matches = len(match_teams) - 1
    last = np.zeros(n_states, dtype=np.int64)  # the wave of the player's latest match, 0 = none yet
    wave = np.empty(n_matches, dtype=np.int64)
    for m in range(n_matches):
        first, stop = team_start[match_teams[m]], team_start[match_teams[m + 1]]
        w = 0
        for r in range(first, stop):
            w = max(w, last[slot[order[r]]])
        w += 1
        for r in range(first, stop):
            last[slot[order[r]]] = w
        wave[m] = w
    return wave


def match_waves(order, team_start, match_teams, slot, n_states) -> tuple[np.ndarray, np.ndarray]:
    """``(wave_start, wave_matches)``: the matches of wave w are ``wave_matches[wave_start[w]:wave_start[w +
    1]]``, in replay order; ``slot`` is each input row's state slot."""
    wave = _wave_of_each(order, team_start, match_teams, slot, n_states)
    wave_matches = np.argsort(wave, kind="stable").astype(np.int64)
    counts = np.bincount(wave, minlength=1)[1:] if len(wave) else np.zeros(0, dtype=np.int64)
    wave_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=wave_start[1:])
    return wave_start, wave_matches


@inlined_kernel
def gather_match(
    m, order, team_start, match_teams, slot, weight, mu, sigma, rows, local_mu, local_sigma, local_weight, bounds
):
    """Match ``m``'s rows in replay order (teams best first, each team's players together) into ``rows``,
    ``local_mu``, ``local_sigma``, ``local_weight`` (the input row, rating, sd and weight of each; one entry
    per row of the match) and each team's offsets into ``bounds`` (one more entry than teams)."""
    t0, t1 = match_teams[m], match_teams[m + 1]
    first = team_start[t0]
    for i in range(team_start[t1] - first):
        row = order[first + i]
        rows[i] = row
        local_mu[i] = mu[slot[row]]
        local_sigma[i] = sigma[slot[row]]
        local_weight[i] = weight[row]
    for t in range(t0, t1 + 1):
        bounds[t - t0] = team_start[t] - first


@kernel
def gathered_match(m, order, team_start, match_teams, slot, weight, mu, sigma):
    """:func:`gather_match` into new arrays: ``(rows, local_mu, local_sigma, local_weight, bounds)``."""
    t0, t1 = match_teams[m], match_teams[m + 1]
    n = team_start[t1] - team_start[t0]
    rows = np.empty(n, dtype=np.int64)
    local_mu = np.empty(n)
    local_sigma = np.empty(n)
    local_weight = np.empty(n)
    bounds = np.empty(t1 - t0 + 1, dtype=np.int64)
    gather_match(
        m, order, team_start, match_teams, slot, weight, mu, sigma, rows, local_mu, local_sigma, local_weight, bounds
    )
    return rows, local_mu, local_sigma, local_weight, bounds


@inlined_kernel
def borrowed_matches(matches):
    """The kernel arrays of :meth:`duckrate.systems.team.TeamMatches.kernel_arrays` as borrowed views
    (:mod:`duckrate.core.borrowed`): a span borrows its arguments once, so rating a match costs no
    reference counts."""
    wave_start, wave_matches, order, team_start, match_teams, team_rank, team_score, has_score, weight, slot = matches
    return (
        borrowed(wave_start),
        borrowed(wave_matches),
        borrowed(order),
        borrowed(team_start),
        borrowed(match_teams),
        borrowed(team_rank),
        borrowed(team_score),
        borrowed(has_score),
        borrowed(weight),
        borrowed(slot),
    )


@inlined_kernel
def borrowed_outputs(outputs):
    """The output columns a span writes (:func:`write_match`) as borrowed views."""
    before_mu, before_sd, after_mu, after_sd, p_win, rank, p_draw = outputs
    return (
        borrowed(before_mu),
        borrowed(before_sd),
        borrowed(after_mu),
        borrowed(after_sd),
        borrowed(p_win),
        borrowed(rank),
        borrowed(p_draw),
    )


@inlined_kernel
def uses_weights(weight):
    """Whether a match is rated with weights: some player took part for less than the whole match."""
    for value in weight:  # noqa: SIM110  (a loop numba compiles)
        if value != 1.0:
            return True
    return False


@inlined_kernel
def write_match(
    rows, bounds, before_mu, before_sigma, after_mu, after_sigma, p_win, ranks, p_draw, slot, mu, sigma, outputs
):
    """Write one match's results: each row's ratings around the match and its team's forecast into ``outputs``
    (:data:`duckrate.systems.team.KERNEL_COLUMNS`, by input row), and the new ratings into ``mu``/``sigma``."""
    out_before_mu, out_before_sd, out_after_mu, out_after_sd, out_p_win, out_rank, out_draw = outputs
    for t in range(len(bounds) - 1):
        for i in range(bounds[t], bounds[t + 1]):
            row = rows[i]
            out_before_mu[row] = before_mu[i]
            out_before_sd[row] = before_sigma[i]
            out_after_mu[row] = after_mu[i]
            out_after_sd[row] = after_sigma[i]
            out_p_win[row] = p_win[t]
            out_rank[row] = ranks[t]
            out_draw[row] = p_draw
            mu[slot[row]] = after_mu[i]
            sigma[slot[row]] = after_sigma[i]


def wave_plan(wave_start: np.ndarray, threads: int) -> list[list[tuple[int, int]]]:
    """The calls of :func:`rate_in_waves`, in order: each step a list of ``(first, stop)`` spans of
    ``wave_matches`` rated at once (one span: on the calling thread; several: one per thread). Consecutive
    small waves make one span."""
    steps: list[list[tuple[int, int]]] = []
    pending = None  # the first match of a run of small waves not yet planned
    for w in range(len(wave_start) - 1):
        first, stop = int(wave_start[w]), int(wave_start[w + 1])
        if threads > 1 and stop - first >= PARALLEL_FROM:
            if pending is not None:
                steps.append([(pending, first)])
                pending = None
            cuts = [first + (stop - first) * k // threads for k in range(threads + 1)]
            steps.append([(cuts[k], cuts[k + 1]) for k in range(threads)])
        elif pending is None:
            pending = first
    if pending is not None:
        steps.append([(pending, int(wave_start[-1]))])
    return steps


def rate_in_waves(wave_start: np.ndarray, rate_span: Callable[[int, int], None], threads: int | None = None) -> None:
    """Rate every match: ``rate_span(first, stop)`` rates ``wave_matches[first:stop]`` in that order (a kernel
    call that releases the GIL); big waves are split between ``threads`` threads (default: numba's thread
    count)."""
    threads = max(1, numba.get_num_threads() if threads is None else threads)
    steps = wave_plan(wave_start, threads)
    if all(len(step) == 1 for step in steps):
        for ((first, stop),) in steps:
            rate_span(first, stop)
        return
    with ThreadPoolExecutor(max_workers=threads - 1) as pool:
        for step in steps:
            others = [pool.submit(rate_span, first, stop) for first, stop in step[1:]]
            rate_span(*step[0])
            for other in others:
                other.result()
