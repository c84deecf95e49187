"""Seeded random starting states that depend only on (seed, player name), never on row order.

A system that starts players from random values (Elo2k's U, V ~ Uniform[0, 0.1]) must give every player
the same start however the table is ordered, whether it arrives through SQL (players keyed by DuckDB
hashes, listed in no fixed order) or from Python, and whichever other players are present. So each
player's stream is a splitmix64 sequence started from a keyed BLAKE2b digest of the name and the seed.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

from duckrate.core.jit import kernel
from duckrate.core.splitmix import TWO_TO_MINUS_53, splitmix_next


def player_digests(players: pa.Array, seed: int) -> np.ndarray:
    """A uint64 per player name: BLAKE2b-64 of the UTF-8 name keyed by the seed (stable across runs,
    machines and library versions)."""
    key = int(seed).to_bytes(8, "little", signed=True)
    digests = np.empty(len(players), dtype=np.uint64)
    for code, name in enumerate(players.to_pylist()):
        digest = hashlib.blake2b(name.encode("utf-8"), digest_size=8, key=key).digest()
        digests[code] = int.from_bytes(digest, "little")
    return digests


@kernel
def uniform_rows(digest_of_slot, width, high):
    """``(len(digest_of_slot), width)`` floats in ``[0, high)``: row s is the splitmix64 stream of
    ``digest_of_slot[s]``, so a slot's values depend only on its player's digest."""
    out = np.empty((digest_of_slot.shape[0], width), dtype=np.float64)
    for slot in range(digest_of_slot.shape[0]):
        state = digest_of_slot[slot]
        for column in range(width):
            state, z = splitmix_next(state)
            out[slot, column] = high * (float(z >> np.uint64(11)) * TWO_TO_MINUS_53)
    return out
