"""Whole-History Rating by Newton's method on all of a league's ratings at once: the fixed point of the
per-player sweeps of :mod:`.whr` (every gradient zero), reached in about ten Newton steps instead of
hundreds of sweeps.

The log-posterior is concave with a sparse Hessian H: each player's own block is tridiagonal (their games
and the Wiener prior, Coulom 2008 section 3.2 and appendix A), and each game couples the two players'
ratings on its step. A Newton step solves ``A δ = g`` (``A = -H``, g the gradient) by conjugate gradients
preconditioned with the players' own blocks, one Thomas solve per player (the LU decomposition of
appendix B): the per-player Newton step of the sweeps, here used inside a global solve. The solve stops at
a relative residual ``η = min(0.5, sqrt(‖g‖/‖g₀‖))`` (Eisenstat-Walker: loose far away, superlinear
near the optimum); the step is halved (Armijo) until it raises the log-posterior. The log-posterior, the
gradient, A's blocks and their factors are computed in one pass at each trial point (one ``exp`` and one
``log`` per game side), so an accepted trial point is not evaluated again.

Coarse correction: the players' own blocks leave one kind of error to the conjugate gradients, a shift
of every rating in a stretch of time (an era) at once, which costs almost nothing in the log-posterior (both
sides of each game move together; only the Wiener links into and out of the era and the first steps'
virtual games resist it) and so converges slowest, more so the longer the history. With virtual games (the
coarse matrix is then positive definite) the preconditioner adds, to each player's Thomas solve, the exact
solve on the space of era shifts: ``z = M⁻¹ res + Z (Zᵀ A Z)⁻¹ Zᵀ res`` with Z each day's indicator of its
era (up to :data:`ERAS` equal spans of steps; :func:`eras`, :func:`coarse_factor`, :func:`coarse_shift`).
``Zᵀ A Z`` has no game terms (a game's two sides are on one step, in one era): the Wiener links between
eras, constant, plus the virtual games' curvature per era, summed at each Newton step. Measured: 81 -> 53
conjugate-gradient iterations on the tennis-sized history (400k player-days), 203 -> 73 at 10M games
(18M player-days).

Convergence: after a full step ``s`` (the largest change of any rating) following a step ``s'``, the
distance left to the optimum is estimated as ``max(s³/s'², 10·η·s)``: quadratic convergence (``s_next ≈
C s²`` with ``C = s/s'²``) and the inexact solve (:data:`INEXACT`). The fit stops when
:data:`.whr.SAFETY` (10) times that is at most ``tol``. When the solve has reached its η and the step it
has so far would pass the first part of that test but not the second, the conjugate gradients go on to the
η the test asks for (a tenth below it), and that η counts: a few more iterations instead of another Newton
step (measured on synthetic histories of 60k to 200k player-days: 8 Newton steps instead of 9, 20-30% fewer
iterations; on the tennis-sized history one more iteration, and the test passed with room instead of by 3%).

Chunks and threads: the league's days are cut, at player boundaries, into chunks of about
:data:`CHUNK_WORK` days and game sides (:func:`chunk_units`: the cuts depend on the league alone). The
solve is a sequence of phases, each a pass over every chunk: an evaluation, then per conjugate-gradient
iteration a product (``q = A p``) and an update (``x``, the residual, the preconditioner's Thomas solves),
then a trial step. A chunk's work in a phase writes only the chunk's own days (and game sides) and reads
only what earlier phases wrote, and every sum (dot products, norms, the log-posterior) or maximum is taken
within each chunk in a fixed order, then over the chunks in chunk order. So it does not matter which thread
runs which chunk: :func:`newton_solve` opens each phase on a shared counter (:func:`run_phase`), and the
calling thread and any helper threads (:func:`newton_helper`, started by :func:`newton_threaded`) claim
chunks from it with an atomic add until none is left. The result is the same, bit for bit, with any number
of helpers, whatever the machine's load. The solve waits for a helper only to finish a chunk it has
claimed, never for a helper to start: on a machine whose other cores are busy it runs at one thread's speed
instead of stalling at every phase as a parallel region that hands each thread its share does (measured
with the other core busy: 8 ms per ``prange`` region, for passes of 0.2 to 10 ms of work). The dot products
are plain loops (not BLAS, whose threads and blocking would change the rounding).
"""

from __future__ import annotations

import math
import threading

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.sync import fetch_add, load_acquire, relax, store_release, wait_until
from duckrate.fits.whole_history.whr import SAFETY
from duckrate.systems.numerics import cholesky_factor, cholesky_substitute

#: The error a step solved to relative residual η leaves, as a multiple of η times the step (the residual
#: bounds the error only up to the square root of the preconditioned condition number; measured: ~3).
INEXACT = 10.0
#: A chunk holds whole players, about this many days plus game sides (it closes at the first player
#: boundary past it): small enough that the threads finish a phase close together, large enough that a
#: chunk's work (0.03 to 0.2 ms per phase, measured) dwarfs claiming it (two atomic adds).
CHUNK_WORK = 1 << 14
#: At most this many eras of the coarse correction (:func:`eras`): each an equal span of steps.
ERAS = 256


@kernel
def chunk_units(unit_lo, unit_hi, unit_day_start, entry_start):
    """The chunks of units ``unit_lo .. unit_hi - 1``: chunk k holds units ``units[k] .. units[k + 1] - 1``,
    closed at the first unit boundary past :data:`CHUNK_WORK` days and entries."""
    units = np.empty(unit_hi - unit_lo + 1, dtype=np.int64)
    units[0] = unit_lo
    n = 0
    work = 0
    for u in range(unit_lo, unit_hi):
        if work >= CHUNK_WORK:
            n += 1
            units[n] = u
            work = 0
        first = unit_day_start[u]
        stop = unit_day_start[u + 1]
        work += stop - first + entry_start[stop] - entry_start[first]
    n += 1
    units[n] = unit_hi
    return units[: n + 1].copy()


@kernel
def links(unit_lo, unit_hi, unit_day_start, day_step, w2):
    """Per day of units ``unit_lo .. unit_hi - 1`` (index ``d - first day``): the Wiener prior's precision
    ``1/(w²·gap)`` to the player's next day (0 after their last), and whether it is the player's first."""
    day_lo = unit_day_start[unit_lo]
    m = unit_day_start[unit_hi] - day_lo
    link = np.empty(m)
    starts = np.empty(m, dtype=np.bool_)
    for u in range(unit_lo, unit_hi):
        first = unit_day_start[u]
        stop = unit_day_start[u + 1]
        for d in range(first, stop):
            starts[d - day_lo] = d == first
            link[d - day_lo] = 1.0 / (w2 * (day_step[d + 1] - day_step[d])) if d + 1 < stop else 0.0
    return link, starts


@kernel
def eras(unit_lo, unit_hi, unit_day_start, day_step, link):
    """The coarse correction's eras: per day of units ``unit_lo .. unit_hi - 1``, its era (of up to
    :data:`ERAS` equal spans of the league's steps, the empty ones dropped), as int32; and the Wiener prior's
    part of the coarse matrix ``Zᵀ A Z`` (Z: each day's era indicator), whose only other part is the virtual
    games' (the games cancel in it: both sides of a game are on one step, so in one era)."""
    day_lo = unit_day_start[unit_lo]
    m = unit_day_start[unit_hi] - day_lo
    era = np.zeros(m, dtype=np.int32)
    if m == 0:
        return era, np.zeros((0, 0))
    first = day_step[day_lo]
    last = day_step[day_lo]
    for i in range(m):
        first = min(first, day_step[day_lo + i])
        last = max(last, day_step[day_lo + i])
    span = float(last) - float(first) + 1.0
    used = np.zeros(ERAS, dtype=np.int64)
    for i in range(m):
        k = min(ERAS - 1, int((float(day_step[day_lo + i]) - float(first)) / span * ERAS))
        era[i] = k
        used[k] = 1
    dense = np.cumsum(used) - 1
    n_eras = dense[ERAS - 1] + 1
    wiener = np.zeros((n_eras, n_eras))
    for i in range(m):
        era[i] = dense[era[i]]
    for i in range(m - 1):  # link 0 from a player's last day
        if link[i] > 0.0 and era[i] != era[i + 1]:
            e0 = era[i]
            e1 = era[i + 1]
            wiener[e0, e0] += link[i]
            wiener[e1, e1] += link[i]
            wiener[e0, e1] -= link[i]
            wiener[e1, e0] -= link[i]
    return era, wiener


# The chunk kernels below work on views that start at the chunk's first day (or entry) and loop from 0: numba
# then proves the indices non-negative and drops its wraparound test from every access (measured: twice as
# fast as loops from a chunk's first index).


@inlined_kernel
def precondition(inv_pivot, multiplier, res, z):
    """``z = M⁻¹ res`` on one chunk's days with M the players' own blocks: the Thomas solves, run across
    the players in one pass each way (``multiplier`` is 0 on a player's first day, so the forward pass starts
    afresh there, and the backward pass on their last day). Returns ``res·z``."""
    n = res.shape[0]
    if n == 0:
        return 0.0
    z[0] = res[0]
    for i in range(1, n):
        z[i] = res[i] - multiplier[i] * z[i - 1]
    z[n - 1] *= inv_pivot[n - 1]
    total = res[n - 1] * z[n - 1]
    for i in range(n - 2, -1, -1):
        # (z - o·z_next)/pivot, with o/pivot the next day's multiplier
        z[i] = z[i] * inv_pivot[i] - multiplier[i + 1] * z[i + 1]
        total += res[i] * z[i]
    return total


@inlined_kernel
def add_by_era(values, era, row):
    """``row[j]``: the sum of ``values`` over the days of era j. A chunk's days run in eras (a player's days
    in step order), each run summed in a register and then added to its era's total."""
    for j in range(row.shape[0]):
        row[j] = 0.0
    n = values.shape[0]
    if n == 0:
        return
    current = era[0]
    total = 0.0
    for i in range(n):
        if era[i] != current:
            row[current] += total
            current = era[i]
            total = 0.0
        total += values[i]
    row[current] += total


@inlined_kernel
def evaluate_chunk(
    k,
    bounds,
    day_lo,
    e_lo,
    r,
    offsets,
    opp,
    score,
    weight,
    link,
    starts,
    era,
    virtual_games,
    g,
    a,
    o,
    c,
    inv_pivot,
    multiplier,
    z,
    part,
    era_g,
    era_virtual,
):
    """At ``r``, on chunk k (the league's days ``bounds[k] .. bounds[k + 1] - 1``, from the league's first
    day ``day_lo``), per day: the gradient ``g``, the players' own blocks of ``A = -H`` (``a`` on the
    diagonal, ``o`` to the player's next day, 0 after their last) and their LU factors (``inv_pivot``, and
    ``multiplier`` ``o[k-1]/pivot[k-1]``, 0 on a player's first day), the preconditioned gradient
    ``z = M⁻¹g``; per entry (from the league's first entry ``e_lo``) the coupling ``c = w·p(1 - p)`` between
    the two sides of a game. Into ``part[k]``: the chunk's part of the log-posterior (up to a constant;
    section 3.1: the games, the virtual draws on each player's first step, the Wiener prior between
    consecutive steps), of ``g·g`` and of ``g·z``; into ``era_g[k]`` and ``era_virtual[k]`` (when they have
    columns: the coarse correction is on) the chunk's sums of g and of the virtual games' curvature per era."""
    lo = bounds[k]
    n = bounds[k + 1] - lo
    own_r = r[day_lo + lo : day_lo + lo + n]
    first_entry = offsets[lo]
    ends = offsets[lo + 1 : lo + n + 1]
    n_entries = offsets[lo + n] - first_entry
    opponent = opp[first_entry : first_entry + n_entries]
    sc = score[e_lo + first_entry : e_lo + first_entry + n_entries]
    weighted = weight.shape[0] > 1
    wt = weight[e_lo + first_entry : e_lo + first_entry + n_entries] if weighted else weight[0:1]
    cv = c[first_entry : first_entry + n_entries]
    lk = link[lo : lo + n]
    st = starts[lo : lo + n]
    gv = g[lo : lo + n]
    av = a[lo : lo + n]
    ov = o[lo : lo + n]
    ipv = inv_pivot[lo : lo + n]
    mv = multiplier[lo : lo + n]
    zv = z[lo : lo + n]
    ev = era[lo : lo + n]
    coarse = era_g.shape[1] > 0
    if coarse:
        for j in range(era_virtual.shape[1]):
            era_virtual[k, j] = 0.0
    opponent_r = np.empty(n_entries)  # the opponents' ratings first (see product_chunk)
    for e in range(n_entries):
        opponent_r[e] = r[day_lo + opponent[e]]
    games = 0.0
    prior = 0.0
    e = 0
    for i in range(n):
        own = own_r[i]
        gd = 0.0
        ad = 0.0
        stop = ends[i] - first_entry
        while e < stop:
            # x = own - opponent: P(win) = σ(x) = 1/(1 + ex) or ex/(1 + ex), log σ(x) = min(x, 0) - log(1 + ex)
            x = own - opponent_r[e]
            ex = math.exp(-abs(x))
            inv = 1.0 / (1.0 + ex)
            win = inv if x >= 0.0 else ex * inv
            w = wt[e] if weighted else 1.0
            curvature = w * (ex * inv * inv)
            gd += w * (sc[e] - win)
            ad += curvature
            cv[e] = curvature
            # s·log σ(x) + (1 - s)·log σ(-x), the same from both sides of the game
            games += w * (min(x, 0.0) - math.log(1.0 + ex) - (1.0 - sc[e]) * x)
            e += 1
        if st[i] and virtual_games > 0.0:
            ex = math.exp(-abs(own))
            inv = 1.0 / (1.0 + ex)
            win = inv if own >= 0.0 else ex * inv
            gd += virtual_games * (0.5 - win)
            ad += virtual_games * (ex * inv * inv)
            if coarse:
                era_virtual[k, ev[i]] += virtual_games * (ex * inv * inv)
            prior += virtual_games * (min(own, 0.0) - math.log(1.0 + ex) - 0.5 * own)
        gv[i] = gd
        av[i] = ad
    for i in range(n - 1):  # the Wiener prior (link 0 from a player's last day to the next player's first)
        change = own_r[i + 1] - own_r[i]
        pull = change * lk[i]
        prior -= 0.5 * change * pull
        gv[i] += pull
        gv[i + 1] -= pull
        av[i] += lk[i]
        av[i + 1] += lk[i]
        ov[i] = -lk[i]
    if n > 0:
        ov[n - 1] = 0.0
        # LU of the players' tridiagonal blocks (appendix B), across the players as in precondition
        mv[0] = 0.0
        ipv[0] = 1.0 / av[0]
    for i in range(1, n):
        mv[i] = ov[i - 1] * ipv[i - 1]
        ipv[i] = 1.0 / (av[i] - mv[i] * ov[i - 1])
    gg = 0.0
    for i in range(n):
        gg += gv[i] * gv[i]
    if coarse:
        add_by_era(gv, ev, era_g[k])
    part[k, 0] = 0.5 * games + prior
    part[k, 1] = gg
    part[k, 2] = precondition(ipv, mv, gv, zv)


@inlined_kernel
def product_chunk(k, bounds, offsets, opp, era, coarse, first, beta, a, o, c, z, y, p, q, part):
    """The next search direction on chunk k: ``p = z' + β p`` and ``q = A p``, as ``A z' + β q`` (``p = z'``,
    ``q = A z'`` on the ``first``), so that ``z`` is the only vector read across chunks; ``z' = z + Z y``
    with the ``coarse`` correction (``y`` per era), else ``z``. Into ``part[k, 0]``: the chunk's part of
    ``p·q``."""
    lo = bounds[k]
    n = bounds[k + 1] - lo
    first_entry = offsets[lo]
    ends = offsets[lo + 1 : lo + n + 1]
    n_entries = offsets[lo + n] - first_entry
    opponent = opp[first_entry : first_entry + n_entries]
    cv = c[first_entry : first_entry + n_entries]
    av = a[lo : lo + n]
    ov = o[lo : lo + n]
    zv = z[lo : lo + n]
    pv = p[lo : lo + n]
    qv = q[lo : lo + n]
    ev = era[lo : lo + n]
    # the opponents' days first, in a loop that does nothing else: many of these scattered reads are then in
    # flight at once (measured on 10M games: whr_fit 64.7 s -> 44.9 s; 33.2 s with the same in evaluate_chunk)
    opponent_z = np.empty(n_entries)
    for e in range(n_entries):
        opponent_z[e] = z[opponent[e]]
    total = 0.0
    e = 0
    # each day's shift y[era] is looked up once (as the next day's, then its own, then the previous day's)
    shift_before = 0.0
    shift_next = y[ev[0]] if coarse and n > 0 else 0.0
    for i in range(n):
        # an opponent's day is on the same step as day i, so in its era: one shift for all of them
        shift = shift_next
        if coarse and i + 1 < n:
            shift_next = y[ev[i + 1]]
        zi = zv[i] + shift
        v = av[i] * zi
        if i > 0:  # o is 0 across a chunk's ends (a player's last day)
            v += ov[i - 1] * (zv[i - 1] + shift_before)
        if i + 1 < n:
            v += ov[i] * (zv[i + 1] + shift_next)
        shift_before = shift
        stop = ends[i] - first_entry
        while e < stop:
            v -= cv[e] * (opponent_z[e] + shift)
            e += 1
        if first:
            pv[i] = zi
            qv[i] = v
        else:
            pv[i] = zi + beta * pv[i]
            qv[i] = v + beta * qv[i]
        total += pv[i] * qv[i]
    part[k, 0] = total


@inlined_kernel
def update_chunk(k, bounds, era, first, alpha, g, p, q, x, res, inv_pivot, multiplier, z, part, era_res):
    """One conjugate-gradient update on chunk k: ``x += α p``, ``res -= α q`` (from ``x = 0``, ``res = g`` on
    the ``first``), then ``z = M⁻¹ res``. Into ``part[k]``: the chunk's parts of ``res·res`` and ``res·z``,
    and its ``max |x|``; into ``era_res[k]`` (when it has columns) its sums of ``res`` per era."""
    lo = bounds[k]
    hi = bounds[k + 1]
    pv = p[lo:hi]
    qv = q[lo:hi]
    xv = x[lo:hi]
    rv = res[lo:hi]
    rr = 0.0
    largest = 0.0
    coarse = era_res.shape[1] > 0
    ev = era[lo:hi]
    row = era_res[k]
    if coarse:
        for j in range(row.shape[0]):
            row[j] = 0.0
    current = ev[0] if coarse and hi > lo else 0
    total = 0.0  # the residual's sum over the current run of days in one era (see add_by_era)
    if first:
        gv = g[lo:hi]
        for i in range(hi - lo):
            xv[i] = alpha * pv[i]
            rv[i] = gv[i] - alpha * qv[i]
            rr += rv[i] * rv[i]
            largest = max(largest, abs(xv[i]))
            if coarse:
                if ev[i] != current:
                    row[current] += total
                    current = ev[i]
                    total = 0.0
                total += rv[i]
    else:
        for i in range(hi - lo):
            xv[i] += alpha * pv[i]
            rv[i] -= alpha * qv[i]
            rr += rv[i] * rv[i]
            largest = max(largest, abs(xv[i]))
            if coarse:
                if ev[i] != current:
                    row[current] += total
                    current = ev[i]
                    total = 0.0
                total += rv[i]
    if coarse and hi > lo:
        row[current] += total
    part[k, 0] = rr
    part[k, 2] = largest
    part[k, 1] = precondition(inv_pivot[lo:hi], multiplier[lo:hi], rv, z[lo:hi])


@inlined_kernel
def trial_chunk(k, bounds, day_lo, t, first, g, x, start, r, part):
    """``r = start + t x`` on chunk k; on the ``first`` trial (t = 1) ``start`` is saved from ``r`` first,
    and the chunk's parts of ``g·x`` and ``max |x|`` go into ``part[k, :2]``."""
    lo = bounds[k]
    hi = bounds[k + 1]
    xv = x[lo:hi]
    sv = start[lo:hi]
    rv = r[day_lo + lo : day_lo + hi]
    if first:
        gv = g[lo:hi]
        slope = 0.0
        largest = 0.0
        for i in range(hi - lo):
            sv[i] = rv[i]
            rv[i] = sv[i] + xv[i]
            slope += gv[i] * xv[i]
            largest = max(largest, abs(xv[i]))
        part[k, 0] = slope
        part[k, 1] = largest
    else:
        for i in range(hi - lo):
            rv[i] = sv[i] + t * xv[i]


# The phases of a Newton solve, each run on every chunk, and the slots of the int64 array ``sync`` that threads
# share: the phase's number (upper 32 bits) and next unclaimed chunk (lower), the chunks done, the phase's kind,
# a flag never set (for wait_until), and the chunks the helpers ran (for the tests).
EVALUATE, PRODUCT, UPDATE, TRIAL, STOP = 0, 1, 2, 3, 4
CLAIM, DONE, KIND, NEVER, HELPED = 0, 1, 2, 3, 4
CHUNK_MASK = (1 << 32) - 1


@kernel
def workspace(unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, w2, coarse):
    """The arrays of one league's Newton solve (see :func:`run_chunk`), with no phase open. Days and entries
    are numbered from the league's first (``offsets``: each day's first entry, ``opp``: each entry's
    opponent's day), as int32, which halves what a pass reads of them. With ``coarse``, the coarse
    correction's eras and arrays (:func:`eras`, :func:`coarse_shift`); without, they have no columns."""
    day_lo = unit_day_start[unit_lo]
    m = unit_day_start[unit_hi] - day_lo
    units = chunk_units(unit_lo, unit_hi, unit_day_start, entry_start)
    n = units.shape[0] - 1
    bounds = np.empty(n + 1, dtype=np.int64)  # the chunks' first days, from the league's first
    for k in range(n + 1):
        bounds[k] = unit_day_start[units[k]] - day_lo
    link, starts = links(unit_lo, unit_hi, unit_day_start, day_step, w2)
    era, wiener = eras(unit_lo, unit_hi, unit_day_start, day_step, link)
    n_eras = wiener.shape[0] if coarse else 0
    e_lo = entry_start[day_lo]
    n_entries = entry_start[day_lo + m] - e_lo
    offsets = np.empty(m + 1, dtype=np.int32)
    for i in range(m + 1):
        offsets[i] = entry_start[day_lo + i] - e_lo
    opp = np.empty(n_entries, dtype=np.int32)
    for e in range(n_entries):
        opp[e] = opp_day[e_lo + e] - day_lo
    sync = np.zeros(5, dtype=np.int64)
    sync[CLAIM] = n  # phase 0, every chunk claimed
    return (
        bounds,
        link,
        starts,
        np.empty(m),  # g
        np.empty(m),  # a
        np.empty(m),  # o
        np.empty(n_entries),  # c
        np.empty(m),  # inv_pivot
        np.empty(m),  # multiplier
        np.empty(m),  # x
        np.empty(m),  # res
        np.empty(m),  # z
        np.empty(m),  # p
        np.empty(m),  # q
        np.empty(m),  # start
        np.empty((n, 3)),  # part: the chunks' parts of the sums
        sync,
        np.zeros(2),  # the phase's scalar and whether it is the first of its kind in a row
        offsets,
        opp,
        era,  # 20
        wiener,
        np.zeros((n, n_eras)),  # the chunks' sums per era: of g or res
        np.zeros((n, n_eras)),  # of the virtual games' curvature
        np.zeros((n_eras, n_eras)),  # the coarse matrix's Cholesky factor
        np.zeros(n_eras),  # y, the coarse shift per era
        np.zeros(n_eras),  # Zᵀ res
    )


@inlined_kernel
def run_chunk(kind, k, day_lo, e_lo, r, score, weight, virtual_games, work):
    """Chunk k of a phase of ``kind``, with the phase's scalar and flag from ``work``."""
    bounds, link, starts, g, a, o, c, inv_pivot, multiplier, x, res, z, p, q, start, part, _, phase, offsets, opp = (
        work[:20]
    )
    era, _, era_sums, era_virtual, _, y, _ = work[20:]
    coarse = era_sums.shape[1] > 0
    scalar = phase[0]
    first = phase[1] != 0.0
    if kind == EVALUATE:
        evaluate_chunk(
            k,
            bounds,
            day_lo,
            e_lo,
            r,
            offsets,
            opp,
            score,
            weight,
            link,
            starts,
            era,
            virtual_games,
            g,
            a,
            o,
            c,
            inv_pivot,
            multiplier,
            z,
            part,
            era_sums,
            era_virtual,
        )
    elif kind == PRODUCT:
        product_chunk(k, bounds, offsets, opp, era, coarse, first, scalar, a, o, c, z, y, p, q, part)
    elif kind == UPDATE:
        update_chunk(k, bounds, era, first, scalar, g, p, q, x, res, inv_pivot, multiplier, z, part, era_sums)
    elif kind == TRIAL:
        trial_chunk(k, bounds, day_lo, scalar, first, g, x, start, r, part)


@kernel
def run_phase(kind, scalar, first, number, day_lo, e_lo, r, score, weight, virtual_games, work):
    """Open phase ``number`` of ``kind`` to the helpers (:func:`newton_helper`), run the chunks nobody has
    claimed yet, and wait until every chunk is done. Returns the chunks' parts of the sums (``work``'s
    ``part``)."""
    n = work[0].shape[0] - 1
    part = work[15]
    sync = work[16]
    phase = work[17]
    store_release(sync, DONE, 0)
    store_release(sync, KIND, kind)
    phase[0] = scalar
    phase[1] = 1.0 if first else 0.0
    store_release(sync, CLAIM, number << 32)  # publishes the writes above
    while True:
        k = fetch_add(sync, CLAIM, 1) & CHUNK_MASK
        if k >= n:
            break
        run_chunk(kind, k, day_lo, e_lo, r, score, weight, virtual_games, work)
        fetch_add(sync, DONE, 1)
    wait_until(sync, DONE, n, NEVER)
    return part


@kernel
def newton_helper(day_lo, e_lo, r, score, weight, virtual_games, work):
    """A helper thread of :func:`newton_solve` on the same ``work``: claims and runs chunks of each phase it
    opens, until it stops. The solve never waits for a helper but for a chunk the helper has claimed."""
    n = work[0].shape[0] - 1
    sync = work[16]
    exhausted = -1  # the last phase seen with every chunk claimed
    spins = 0
    while load_acquire(sync, KIND) != STOP:
        state = load_acquire(sync, CLAIM)
        if state >> 32 == exhausted or state & CHUNK_MASK >= n:
            spins = relax(spins)
            continue
        claim = fetch_add(sync, CLAIM, 1)
        k = claim & CHUNK_MASK
        if k >= n:
            exhausted = claim >> 32
            continue
        # the phase cannot close before this chunk is done: its kind and scalars stay put
        run_chunk(load_acquire(sync, KIND), k, day_lo, e_lo, r, score, weight, virtual_games, work)
        fetch_add(sync, HELPED, 1)
        fetch_add(sync, DONE, 1)
        spins = 0


@kernel
def coarse_factor(work):
    """The coarse matrix ``Zᵀ A Z`` at the last evaluation (the Wiener prior's part, plus the chunks' sums
    of the virtual games' curvature per era in chunk order), factored in place (Cholesky)."""
    wiener = work[21]
    era_virtual = work[23]
    factor = work[24]
    n_eras = factor.shape[0]
    for i in range(n_eras):
        for j in range(n_eras):
            factor[i, j] = wiener[i, j]
    for k in range(era_virtual.shape[0]):
        for j in range(n_eras):
            factor[j, j] += era_virtual[k, j]
    cholesky_factor(factor)


@kernel
def coarse_shift(work):
    """The coarse correction of the last evaluation's or update's residual: ``y = (Zᵀ A Z)⁻¹ Zᵀ res`` per
    era, from the chunks' sums per era added in chunk order. Returns ``(Zᵀ res)·y``, its part of ``res·z'``."""
    era_sums = work[22]
    factor = work[24]
    y = work[25]
    projected = work[26]
    n_eras = projected.shape[0]
    for j in range(n_eras):
        projected[j] = 0.0
    for k in range(era_sums.shape[0]):
        for j in range(n_eras):
            projected[j] += era_sums[k, j]
    cholesky_substitute(factor, projected, y)
    total = 0.0
    for j in range(n_eras):
        total += projected[j] * y[j]
    return total


@inlined_kernel
def sums(part, columns):
    """The chunks' parts of the first ``columns`` sums added in chunk order."""
    first = 0.0
    second = 0.0
    third = 0.0
    for k in range(part.shape[0]):
        first += part[k, 0]
        if columns > 1:
            second += part[k, 1]
        if columns > 2:
            third += part[k, 2]
    return first, second, third


@kernel
def newton_solve(unit_lo, unit_hi, unit_day_start, entry_start, score, weight, virtual_games, tol, max_iter, r, work):
    """Newton steps on the ratings of units ``unit_lo .. unit_hi - 1`` (one league; ``r`` updated in place)
    until converged (see the module docstring) or after ``max_iter`` steps, every pass chunk by chunk (with
    any helper threads running :func:`newton_helper` on the same ``work``). Stops the helpers at the end.
    Returns (Newton steps, converged, conjugate-gradient iterations)."""
    day_lo = unit_day_start[unit_lo]
    m = unit_day_start[unit_hi] - day_lo
    e_lo = entry_start[day_lo]
    x = work[9]
    start = work[14]
    sync = work[16]
    coarse = work[22].shape[1] > 0
    data = (day_lo, e_lo, r, score, weight, virtual_games, work)
    number = 1
    f, gg, rz = sums(run_phase(EVALUATE, 0.0, True, number, *data), 3)
    g0 = 0.0
    previous = math.inf
    steps = 0
    cg_total = 0
    converged = False
    while steps < max_iter:
        g_norm = math.sqrt(gg)
        if g_norm == 0.0:
            converged = True
            break
        steps += 1
        if g0 == 0.0:
            g0 = g_norm
        eta = min(0.5, math.sqrt(g_norm / g0))
        # preconditioned conjugate gradients on A x = g from x = 0, z = M⁻¹g from the evaluation
        if coarse:
            coarse_factor(work)
            rz += coarse_shift(work)
        solved = 0
        beta = 0.0
        for _ in range(10 * m + 100):
            number += 1
            pq = sums(run_phase(PRODUCT, beta, solved == 0, number, *data), 1)[0]
            if not (pq > 0.0 and rz > 0.0):
                break
            number += 1
            part = run_phase(UPDATE, rz / pq, solved == 0, number, *data)
            rr, rz_next, _ = sums(part, 2)
            if coarse:
                rz_next += coarse_shift(work)
            solved += 1
            if math.sqrt(rr) <= eta * g_norm:
                # Would a full step this long end the fit but for the solve's residual? Then solve on to the
                # residual the stop rule asks for, cheaper than another Newton step.
                step = 0.0
                for k in range(part.shape[0]):
                    step = max(step, part[k, 2])
                if previous == math.inf or step >= previous or SAFETY * step**3 / previous**2 > tol:
                    break
                final = 0.9 * tol / (SAFETY * INEXACT * step)  # a tenth below the rule's bound, for rounding
                if final >= eta:
                    break
                eta = final
            beta = rz_next / rz
            rz = rz_next
        cg_total += solved
        if solved == 0:
            for i in range(m):
                x[i] = 0.0
        # Armijo backtracking: the log-posterior must rise (up to its rounding noise)
        number += 1
        part = run_phase(TRIAL, 1.0, True, number, *data)
        slope = sums(part, 1)[0]
        largest = 0.0
        for k in range(part.shape[0]):
            largest = max(largest, part[k, 1])
        t = 1.0
        accepted = False
        for _ in range(60):
            number += 1
            f_trial, gg, rz = sums(run_phase(EVALUATE, 0.0, True, number, *data), 3)
            if f_trial >= f + 1e-4 * t * slope - 1e-12 * (abs(f) + 1.0):
                accepted = True
                break
            t *= 0.5
            number += 1
            run_phase(TRIAL, t, False, number, *data)
        if not accepted:  # no rise at floating-point resolution: stay put
            for i in range(m):
                r[day_lo + i] = start[i]
            break
        f = f_trial
        largest *= t  # max |t·x|: t is a power of 2
        if largest == 0.0:
            converged = True
            break
        if t == 1.0 and largest < previous:
            remaining = max(largest * largest * largest / (previous * previous), INEXACT * eta * largest)
            if SAFETY * remaining <= tol:
                converged = True
                break
        previous = largest if t == 1.0 else math.inf
    store_release(sync, KIND, STOP)
    return steps, converged, cg_total


@kernel
def newton_league(
    unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, score, weight, w2, virtual_games, tol, max_iter, r
):
    """:func:`newton_solve` on the calling thread alone. Returns (Newton steps, converged, conjugate-gradient
    iterations)."""
    work = workspace(unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, w2, virtual_games > 0.0)
    arrays = (unit_day_start, entry_start, score, weight)
    return newton_solve(unit_lo, unit_hi, *arrays, virtual_games, tol, max_iter, r, work)


def newton_threaded(
    unit_lo: int,
    unit_hi: int,
    arrays: tuple[np.ndarray, ...],
    w2: float,
    virtual_games: float,
    tol: float,
    max_iter: int,
    r: np.ndarray,
    threads: int,
) -> tuple[int, bool, int, int]:
    """:func:`newton_solve` with ``threads - 1`` helper threads (``arrays``: ``unit_day_start, day_step,
    entry_start, opp_day, score, weight``): the same bits as :func:`newton_league`. Returns (Newton steps,
    converged, conjugate-gradient iterations, chunks run by the helpers)."""
    unit_day_start, day_step, entry_start, opp_day, score, weight = arrays
    work = workspace(unit_lo, unit_hi, unit_day_start, day_step, entry_start, opp_day, w2, virtual_games > 0.0)
    day_lo = int(unit_day_start[unit_lo])
    shared = (day_lo, int(entry_start[day_lo]), r, score, weight, virtual_games, work)
    helpers = [threading.Thread(target=newton_helper, args=shared, daemon=True) for _ in range(threads - 1)]
    for helper in helpers:
        helper.start()
    try:
        steps, converged, cg = newton_solve(
            unit_lo, unit_hi, unit_day_start, entry_start, score, weight, virtual_games, tol, max_iter, r, work
        )
    finally:
        work[16][KIND] = STOP  # also when the solve raised
        for helper in helpers:
            helper.join()
    return int(steps), bool(converged), int(cg), int(work[16][HELPED])
