"""The matches of a team replay as the kernels read them: the order that lets matches be rated side by side,
one match's rows gathered into local arrays and written back, and the threads that rate them.

A match's update reads and writes only its own players' ratings, so a match can be rated as soon as the
previous match of each of its players has been (:func:`match_waves` finds that previous match for every row).
:func:`rate_in_waves` splits the matches between threads, each rating its share in wave order (a match's wave
is one more than the latest wave among its players' earlier matches), and a thread about to rate a match
waits, spinning on a flag per match, until the other threads have rated the previous matches of its players
(:func:`ready`). Every match thus sees exactly the ratings a one-by-one replay in (played_at, match_id) order
gives it: the same bits on any number of threads.

Measured on 2 vCPUs (1M 5v5 matches, about 1 us of work each): a numba ``prange`` region per wave cost about
7 ms with the OpenMP threading layer, and handing each wave's half to a Python thread about 0.25 ms, both more
than a wave's work; threads that run the whole history once and wait only where a dependency is not yet
rated cost one handover per replay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numba
import numpy as np

from duckrate.core.borrowed import borrowed
from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.sync import wait_for


@kernel
def _waves_and_previous(order, team_start, match_teams, slot, n_states):
    n_matches = len(match_teams) - 1
    last_wave = np.zeros(n_states, dtype=np.int64)  # the wave of the player's latest match, 0 = none yet
    last_match = np.full(n_states, -1, dtype=np.int64)
    wave = np.empty(n_matches, dtype=np.int64)
    previous = np.empty(len(order), dtype=np.int64)
    for m in range(n_matches):
        first, stop = team_start[match_teams[m]], team_start[match_teams[m + 1]]
        w = 0
        for r in range(first, stop):
            player = slot[order[r]]
            w = max(w, last_wave[player])
            previous[r] = last_match[player]
        w += 1
        for r in range(first, stop):
            last_wave[slot[order[r]]] = w
            last_match[slot[order[r]]] = m
        wave[m] = w
    return wave, previous


def match_waves(order, team_start, match_teams, slot, n_states) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(wave_start, wave_matches, previous)``: the matches of wave w are ``wave_matches[wave_start[w]:
    wave_start[w + 1]]``, in replay order; ``previous[r]`` is the match before this one of the player at
    position r of ``order`` (-1 for the player's first). ``slot`` is each input row's state slot."""
    wave, previous = _waves_and_previous(order, team_start, match_teams, slot, n_states)
    wave_matches = np.argsort(wave, kind="stable").astype(np.int64)
    counts = np.bincount(wave, minlength=1)[1:] if len(wave) else np.zeros(0, dtype=np.int64)
    wave_start = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=wave_start[1:])
    return wave_start, wave_matches, previous


def thread_sequences(wave_start: np.ndarray, wave_matches: np.ndarray, threads: int) -> list[np.ndarray]:
    """Each thread's matches in the order it rates them: every wave cut into ``threads`` contiguous parts,
    thread t taking part t of each wave, waves in order."""
    if threads == 1:
        return [wave_matches]
    sizes = np.diff(wave_start)
    position = np.arange(len(wave_matches), dtype=np.int64) - np.repeat(wave_start[:-1], sizes)
    share = position * threads // np.repeat(np.maximum(sizes, 1), sizes)
    return [wave_matches[share == t] for t in range(threads)]


@inlined_kernel
def ready(m, team_start, match_teams, previous, done):
    """Wait until the previous match of each player of match ``m`` is rated (``done``: a flag per match and
    an abort flag last); False if another thread failed."""
    abort = done.shape[0] - 1
    for r in range(team_start[match_teams[m]], team_start[match_teams[m + 1]]):
        if previous[r] >= 0 and not wait_for(done, previous[r], abort):
            return False
    return True


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
    (:mod:`duckrate.core.borrowed`): a kernel borrows its arguments once, so rating a match costs no
    reference counts."""
    previous, order, team_start, match_teams, team_rank, team_score, has_score, weight, slot = matches
    return (
        borrowed(previous),
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


def rate_in_waves(
    matches,
    rate_sequence: Callable[[np.ndarray, np.ndarray], None],
    threads: int | None = None,
) -> None:
    """Rate every match of ``matches`` (a :class:`duckrate.systems.team.TeamMatches`):
    ``rate_sequence(sequence, done)`` rates the matches ``sequence`` in that order, waiting with
    :func:`ready` before each and setting its flag in ``done`` after (a kernel call that releases the GIL).
    The matches are split between ``threads`` threads (default: numba's thread count), each one call."""
    threads = max(1, numba.get_num_threads() if threads is None else threads)
    done = np.zeros(len(matches.match_teams), dtype=np.int64)  # a flag per match, then the abort flag
    sequences = thread_sequences(matches.wave_start, matches.wave_matches, threads)
    if len(sequences) == 1:
        rate_sequence(sequences[0], done)
        return
    failures: list[BaseException] = []

    def rate(sequence: np.ndarray) -> None:
        try:
            rate_sequence(sequence, done)
        except BaseException as error:
            failures.append(error)
            done[-1] = 1  # the others stop waiting

    workers = [threading.Thread(target=rate, args=(sequence,)) for sequence in sequences[1:]]
    for worker in workers:
        worker.start()
    rate(sequences[0])
    for worker in workers:
        worker.join()
    if failures:
        raise failures[0]
