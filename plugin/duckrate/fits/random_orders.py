"""Uniform random orders of many records, cache-friendly: the Rao-Sandelius shuffle.

Rao (1961, "Generation of random permutations of given number of elements using random sampling
numbers", Sankhyā A 23) and Sandelius (1962, "A simple randomization procedure", JRSS B 24): give every
record an independent uniform bucket among ``2^bits``, lay the buckets out one after another (records
keep their input order within a bucket), then put each bucket in a uniform random order. Every order of
the records comes out with the same probability, as from one Fisher-Yates shuffle of them all, but the
random accesses stay inside a bucket that fits the processor's cache; the rest is one counting pass and
one copy in sequence. A bucket is ordered by Durstenfeld's "inside-out" Fisher-Yates into a scratch
buffer (record i goes to a uniform position j ≤ i, whose record moves to i), which reads its input in
sequence and never reads back what it has just written. For 10M two-value records: about 0.11 s against
0.35 s for one in-place Fisher-Yates shuffle over main memory (BENCHMARKS.md, bt_lr_test).

Every draw comes from one splitmix64 stream started at the run's seed: the buckets of the records in
input order (drawn twice, once to count and once to place: the stream is replayed, not stored), then
the positions, bucket after bucket.
"""

from __future__ import annotations

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.core.splitmix import splitmix_below, splitmix_next

#: Records per bucket aimed at, at most: 32,768 records of 16-24 bytes (0.5-0.8 MB, a core's L2 cache;
#: measured fastest at 10M games with 20k-40k records a bucket: more, smaller buckets slow the copy).
BUCKET_RECORDS = 32_768
#: At most 2^16 buckets, so that the copy writes to few enough places at once.
MAX_BUCKET_BITS = 16
#: Positions are drawn below 2^32 (:func:`~duckrate.core.splitmix.splitmix_below`).
MAX_RECORDS = 2**32 - 1


def bucket_bits(records: int) -> int:
    """How many bits of bucket a shuffle of ``records`` rows uses: buckets of at most
    :data:`BUCKET_RECORDS` on average (one bucket, a plain Fisher-Yates shuffle, up to that size)."""
    bits = 0
    while bits < MAX_BUCKET_BITS and (records >> bits) > BUCKET_RECORDS:
        bits += 1
    return bits


@inlined_kernel
def lay_out_buckets(records, state, bits, out, ends):
    """Copy the rows of ``records`` into ``out`` bucket by bucket, each row's bucket drawn from the stream
    at ``state`` (input order kept within a bucket); ``ends[k]`` becomes where bucket k ends (``ends``
    holds ``2^bits`` int64s). Returns the stream's state after the draws."""
    t, width = records.shape
    if bits == 0:
        ends[0] = t
        out[:] = records
        return state
    shift = np.uint64(64 - bits)
    ends[:] = 0
    seed = state
    for _ in range(t):  # count: ends[k] = rows in bucket k
        state, z = splitmix_next(state)
        ends[np.int64(z >> shift)] += 1
    total = 0
    for k in range(ends.shape[0]):  # ends[k] = where bucket k starts
        size = ends[k]
        ends[k] = total
        total += size
    state = seed
    for row in range(t):  # place, replaying the same draws; ends[k] = where bucket k ends
        state, z = splitmix_next(state)
        k = np.int64(z >> shift)
        position = ends[k]
        ends[k] = position + 1
        for c in range(width):
            out[position, c] = records[row, c]
    return state


@inlined_kernel
def shuffle_bucket(source, first, last, target, state):
    """Rows ``first..last-1`` of ``source`` into rows ``0..last-first-1`` of ``target`` in a uniform random
    order (inside-out Fisher-Yates, positions from the stream at ``state``). Returns the stream's state."""
    width = source.shape[1]
    if last > first:
        for c in range(width):
            target[0, c] = source[first, c]
    for i in range(1, last - first):
        state, j = splitmix_below(state, i + 1)
        for c in range(width):
            target[i, c] = target[j, c]
            target[j, c] = source[first + i, c]
    return state


@inlined_kernel
def largest_bucket(ends):
    """Rows in the largest bucket laid out by :func:`lay_out_buckets` (``ends`` as it leaves them)."""
    largest = ends[0] if ends.shape[0] > 0 else 0
    for k in range(1, ends.shape[0]):
        largest = max(largest, ends[k] - ends[k - 1])
    return largest


@kernel
def shuffle_into(records, state, bits, out, ends):
    """Write the rows of ``records`` into ``out`` (same shape) in the uniform random order drawn from the
    splitmix64 stream at ``state`` with ``2^bits`` buckets (``ends``: scratch of ``2^bits`` int64s): the
    order in which the permutation test's runs read their games, bucket after bucket."""
    state = lay_out_buckets(records, state, bits, out, ends)
    scratch = np.empty((largest_bucket(ends), records.shape[1]))
    first = 0
    for k in range(ends.shape[0]):
        last = ends[k]
        state = shuffle_bucket(out, first, last, scratch, state)
        out[first:last] = scratch[: last - first]
        first = last
