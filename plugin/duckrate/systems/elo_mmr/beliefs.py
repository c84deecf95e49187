"""Elo-MMR players' beliefs as kernel arrays, and as the ``value`` lists of a saved state.

What the Elo-MMR kernel keeps per state slot (a league's player): the rating ``mu`` and its ``sig``, the
Gaussian factor (``normal_mu``, ``normal_sig``), whether the player has been seen and the day of their
last contest (drift per day), and the list of logistic factors ``(centre, arg_scale, out_scale)``, one
per remembered performance, oldest first (Section 3.2, eq. 5; see :mod:`._mmr_history`). The lists live
in one pool of slabs; the layout of the pool carries no meaning, the order of a player's factors does
(the robust average and the weight sums run over them in that order), so it is kept exactly.

A saved player row holds, in order (``value``, DOUBLE[] of length 6 + 3n)::

    [mu, sig, normal_mu, normal_sig, last_day, n, c_1, a_1, o_1, ..., c_n, a_n, o_n]

with the n factors oldest first. A saved player has been seen (``seen`` is not stored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from duckrate.systems.saved_state import RebuildRequired

HEADER = ("mu", "sig", "normal_mu", "normal_sig", "last_day", "n")
SPARE_POOL = 1024  # room the pool has beyond the restored factors before its first growth


@dataclass
class Beliefs:
    """The kernel's per-slot arrays (all updated in place by :func:`~.elo_mmr.elo_mmr_kernel`) and the
    pool of logistic factors: slot s uses ``[slab[s] + head[s], slab[s] + head[s] + length[s])`` of the
    pool arrays; ``pool_used`` slots of the pool are allocated."""

    mu: np.ndarray
    sig: np.ndarray
    normal_mu: np.ndarray
    normal_sig: np.ndarray
    seen: np.ndarray
    last_day: np.ndarray
    slab: np.ndarray
    head: np.ndarray
    length: np.ndarray
    capacity: np.ndarray
    centres: np.ndarray
    arg_scales: np.ndarray
    out_scales: np.ndarray
    pool_used: int = 0

    def kernel_arrays(self) -> tuple:
        """The arguments of the kernel, in its order (``mu`` ... ``pool_used``)."""
        return (
            self.mu,
            self.sig,
            self.normal_mu,
            self.normal_sig,
            self.seen,
            self.last_day,
            self.slab,
            self.head,
            self.length,
            self.capacity,
            self.centres,
            self.arg_scales,
            self.out_scales,
            self.pool_used,
        )


def fresh_beliefs(mu: np.ndarray, sig: np.ndarray) -> Beliefs:
    """Every slot a newcomer with prior N(mu, sig²): no factors yet."""
    n = mu.shape[0]
    pool = 4 * n + SPARE_POOL
    return Beliefs(
        mu=np.ascontiguousarray(mu, dtype=np.float64),
        sig=np.ascontiguousarray(sig, dtype=np.float64),
        normal_mu=np.array(mu, dtype=np.float64),
        normal_sig=np.array(sig, dtype=np.float64),
        seen=np.zeros(n, dtype=np.bool_),
        last_day=np.zeros(n),
        slab=np.zeros(n, dtype=np.int64),
        head=np.zeros(n, dtype=np.int64),
        length=np.zeros(n, dtype=np.int64),
        capacity=np.zeros(n, dtype=np.int64),
        centres=np.empty(pool),
        arg_scales=np.empty(pool),
        out_scales=np.empty(pool),
    )


def restore_beliefs(beliefs: Beliefs, slots: np.ndarray, values: pl.Series) -> Beliefs:
    """``beliefs`` with the saved player rows ``values`` (layout in the module docstring) written into
    ``slots``: those players are seen, and their factors are packed into a new pool, order kept.

    Raises :class:`RebuildRequired` when a row does not have that layout."""
    if not len(slots):
        return beliefs
    lengths = values.list.len().to_numpy().astype(np.int64)
    flat = values.explode().to_numpy().astype(np.float64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    width = len(HEADER)
    counts = np.full(len(slots), -1.0)
    has_header = lengths >= width
    counts[has_header] = flat[starts[has_header] + width - 1]
    n = counts.astype(np.int64)
    bad = np.flatnonzero(~has_header | (counts != np.floor(counts)) | (counts < 0) | (lengths != width + 3 * n))
    if bad.size:
        raise RebuildRequired(
            f"state: an elo_mmr player row holds {int(lengths[bad[0]])} values, not [mu, sig, normal_mu, normal_sig, "
            "last_day, n] and n factors (centre, arg_scale, out_scale): saved by another system or version"
        )
    header = flat[starts[:, None] + np.arange(width)]
    beliefs.mu[slots], beliefs.sig[slots] = header[:, 0], header[:, 1]
    beliefs.normal_mu[slots], beliefs.normal_sig[slots] = header[:, 2], header[:, 3]
    beliefs.last_day[slots] = header[:, 4]
    beliefs.seen[slots] = True

    in_factors = np.ones(flat.shape[0], dtype=np.bool_)
    in_factors[(starts[:, None] + np.arange(width)).ravel()] = False
    factors = flat[in_factors].reshape(-1, 3)  # every restored factor, player by player, oldest first
    total = factors.shape[0]
    pool = total + 4 * beliefs.mu.shape[0] + SPARE_POOL
    centres, arg_scales, out_scales = np.empty(pool), np.empty(pool), np.empty(pool)
    centres[:total], arg_scales[:total], out_scales[:total] = factors[:, 0], factors[:, 1], factors[:, 2]
    beliefs.centres, beliefs.arg_scales, beliefs.out_scales = centres, arg_scales, out_scales
    beliefs.slab[:] = 0
    beliefs.head[:] = 0
    beliefs.length[:] = 0
    beliefs.capacity[:] = 0
    beliefs.slab[slots] = np.cumsum(n) - n
    beliefs.length[slots] = n
    beliefs.capacity[slots] = n
    beliefs.pool_used = total
    return beliefs


def belief_values(beliefs: Beliefs, slots: np.ndarray) -> pl.Series:
    """The saved ``value`` list of each slot in ``slots`` (layout in the module docstring)."""
    slots = np.asarray(slots, dtype=np.int64)
    n = beliefs.length[slots]
    first = beliefs.slab[slots] + beliefs.head[slots]
    offsets_in = np.cumsum(n) - n
    index = np.repeat(first - offsets_in, n) + np.arange(int(n.sum()), dtype=np.int64)
    width = len(HEADER)
    sizes = width + 3 * n
    ends = np.cumsum(sizes)
    starts = ends - sizes
    flat = np.empty(int(sizes.sum()))
    for column, values in enumerate(
        (
            beliefs.mu[slots],
            beliefs.sig[slots],
            beliefs.normal_mu[slots],
            beliefs.normal_sig[slots],
            beliefs.last_day[slots],
            n.astype(np.float64),
        )
    ):
        flat[starts + column] = values
    factor_at = np.repeat(starts + width - 3 * offsets_in, n) + 3 * np.arange(int(n.sum()), dtype=np.int64)
    flat[factor_at] = beliefs.centres[index]
    flat[factor_at + 1] = beliefs.arg_scales[index]
    flat[factor_at + 2] = beliefs.out_scales[index]
    offsets = pa.array(np.concatenate([[0], ends]).astype(np.int64), pa.int64())
    return pl.Series("value", pa.LargeListArray.from_arrays(offsets, pa.array(flat, pa.float64())))
