"""The permutation test's random orders (duckrate.fits.random_orders) and the splitmix64 stream under them:
the published splitmix64 values, the same orders as a plain transcription of the procedure kept here, and
every order of a few records equally likely (chi-square over many seeds, fixed, so the test cannot flake)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from duckrate.core.jit import kernel
from duckrate.core.splitmix import splitmix_below, splitmix_next
from duckrate.fits.random_orders import BUCKET_RECORDS, MAX_BUCKET_BITS, bucket_bits, shuffle_into

MASK = 2**64 - 1


def reference_next(state: int) -> tuple[int, int]:
    """splitmix64 as Steele, Lea & Flood give it, in Python integers."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def reference_below(state: int, bound: int) -> tuple[int, int]:
    """Lemire's unbiased bounded draw on the high 32 bits, as his paper's Algorithm 5 states it."""
    while True:
        state, z = reference_next(state)
        product = (z >> 32) * bound
        if (product & 0xFFFFFFFF) >= bound or (product & 0xFFFFFFFF) >= (2**32 - bound) % bound:
            return state, product >> 32


def reference_order(t: int, seed: int, bits: int) -> list[int]:
    """Rao-Sandelius: a bucket per row in input order, buckets laid out in order, each in the order of an
    inside-out Fisher-Yates shuffle, every draw from one stream."""
    state, buckets = seed, [[] for _ in range(1 << bits)]
    if bits:
        for row in range(t):
            state, z = reference_next(state)
            buckets[z >> (64 - bits)].append(row)
        state = seed
        for _ in range(t):  # the placing pass replays the same draws
            state, _z = reference_next(state)
    else:  # one bucket: a plain Fisher-Yates shuffle
        buckets[0] = list(range(t))
    order = []
    for bucket in buckets:
        shuffled = bucket[:1]
        for i in range(1, len(bucket)):  # inside-out: row i to position j <= i, whose row moves to i
            state, j = reference_below(state, i + 1)
            shuffled.append(bucket[i])
            shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
        order += shuffled
    return order


@kernel
def _draws(state, count, bound):
    out = np.empty(count, np.uint64)
    for k in range(count):
        if bound == 0:
            state, out[k] = splitmix_next(state)
        else:
            state, value = splitmix_below(state, bound)
            out[k] = np.uint64(value)
    return out


def kernel_order(t: int, seed: int, bits: int) -> list[int]:
    records = np.column_stack([np.arange(t, dtype=np.float64), np.zeros(t)])
    out = np.empty_like(records)
    shuffle_into(records, np.uint64(seed), bits, out, np.empty(1 << bits, np.int64))
    assert np.array_equal(np.sort(out[:, 0]), records[:, 0])
    return out[:, 0].astype(np.int64).tolist()


def test_splitmix_gives_the_published_values():
    # Vigna's splitmix64.c started at 1234567
    expected = [6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431]
    assert _draws(np.uint64(1234567), 4, 0).tolist() == expected


@pytest.mark.parametrize("bound", [1, 2, 3, 1000, 3 * 2**30, 2**32 - 1])
def test_bounded_draws_equal_the_reference(bound):
    state, expected = 987654321, []
    for _ in range(2000):
        state, value = reference_below(state, bound)
        expected.append(value)
    got = _draws(np.uint64(987654321), 2000, bound).tolist()
    assert got == expected
    assert max(got) < bound


@pytest.mark.parametrize(("t", "bits"), [(1, 0), (2, 0), (1000, 0), (1000, 3), (5000, 7), (300, 9)])
def test_orders_equal_the_reference(t, bits):
    for seed in (0, 1, 2**63 + 12345):
        assert kernel_order(t, seed, bits) == reference_order(t, seed, bits)


@pytest.mark.parametrize(("t", "bits"), [(4, 0), (4, 1), (4, 3), (5, 2)])
def test_every_order_is_equally_likely(t, bits):
    orders = list(itertools.permutations(range(t)))
    runs = 400 * len(orders)
    counts = dict.fromkeys(orders, 0)
    for seed in range(runs):
        counts[tuple(kernel_order(t, seed * 7919 + 1, bits))] += 1
    assert stats.chisquare(list(counts.values())).pvalue > 1e-4


def test_bucket_bits():
    assert bucket_bits(0) == bucket_bits(BUCKET_RECORDS) == 0
    assert bucket_bits(BUCKET_RECORDS + 1) == 1
    assert bucket_bits(10_000_000) == 9  # 19,531 records a bucket on average
    assert bucket_bits(2**40) == MAX_BUCKET_BITS
