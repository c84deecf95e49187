"""The bridge between DuckDB and the kernels: a table in, in parallel chunks; one computed row per input row back.

DuckDB's Python client registers scalar functions only. A whole-table computation (a replay, a fit) used to
receive its input as one packed ``LIST(STRUCT)`` value and return one list that DuckDB unnested on one
thread; building, converting and unnesting those lists cost more time and memory than the maths. Instead,
every table macro runs these steps, each a ``MATERIALIZED`` CTE so it runs once and in this order:

1. ``duckrate_new_token()``: a fresh BIGINT *token* for this query;
2. ``count(duckrate_collect(token, 'input', row))`` over the input rows (each ``row`` a struct of the
   columns the kernel needs, with each row's key ``duckrate_key``, a DuckDB ``hash`` of its key columns):
   DuckDB calls the collect UDF chunk by chunk as it scans, and the chunks wait here (:class:`Collector`);
   the count is the barrier: it is known only once every chunk has arrived. Other tables a computation
   reads (a saved state, priors) are collected the same way under other names;
3. ``<compute>(token, counts, ...)`` takes the collected chunks, runs the kernel, and keeps the computed
   columns under the token in NumPy arrays, in the collected row order, with the rows' keys
   (:class:`ResultStore`); results that are not one row per input row are kept whole: a fit's rows (per
   player and day, say) in :class:`TableStore`, read back in pieces by position (``unnest(range(<row count>))``)
   (``duckrate_fetch_<fit>``), a saved state to be taken once (``duckrate_take_state``);
4. the macro scans its input again and calls ``fetch(token, hash(<key columns>))``, a vectorised scalar
   UDF that DuckDB calls chunk by chunk on all its threads, returning the computed columns of those rows as
   a STRUCT, while the scan itself supplies every input column (names, times, ids) in its own type.

Both scans cut the rows into the same chunks, so :func:`duckrate.core.row_keys._positions` finds a chunk's
first key among the collected chunks' first keys and the rest by guessing the next slot: results are read
sequentially, and a full key table is built only if a chunk starts elsewhere.

Lifetime: collected chunks are freed when the computation takes them; a token's rows as soon as every row
has been fetched once; its other result (a saved state) when taken. A query that stops early (``LIMIT``)
or fails leaves its entry behind: entries idle for ``IDLE_SECONDS`` are freed at the next computation.
Tokens are never reused, so concurrent queries never see each other's results. A row fetched twice means
two input rows share one 64-bit key (a hash collision, or duplicate keys the kernel did not reject): an
error, never a silently shared result.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pyarrow as pa

from duckrate.core import crash_points
from duckrate.core.errors import DuckrateInputError
from duckrate.core.row_keys import anchor_table, key_positions, key_table
from duckrate.sql._lists import lists_of, struct_rows, whole

KEY_FIELD = "duckrate_key"  # the collected field holding each row's 64-bit key (DuckDB hash of its key columns)
IDLE_SECONDS = 300.0  # an entry nobody used for this long belongs to a query that stopped or failed
NEW_TOKEN_UDF = "duckrate_new_token"
COLLECT_UDF = "duckrate_collect"
_EMPTY_SLOTS = np.zeros(0, dtype=np.int64)
_TOKENS = itertools.count(1)


#: The environment variable setting how many computations run at once in one process (:func:`one_at_a_time`).
COMPUTATIONS_VARIABLE = "DUCKRATE_COMPUTATIONS"
DEFAULT_COMPUTATIONS = 1


def _computations() -> int:
    text = os.environ.get(COMPUTATIONS_VARIABLE, str(DEFAULT_COMPUTATIONS))
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(
            f"duckrate: the environment variable {COMPUTATIONS_VARIABLE} must be an integer >= 1 (how many "
            f"computations run at once in one process), got {text!r}"
        )
    return int(text)


_GATE = threading.BoundedSemaphore(_computations())


def one_at_a_time(udf: Callable) -> Callable:
    """``udf`` (a computation: a replay's or fit's run, a test, a tuning, a mart computed in Python) run by
    at most :data:`DEFAULT_COMPUTATIONS` threads of the process at once (``DUCKRATE_COMPUTATIONS`` sets
    another count). dbt runs models on several threads of one process; two large computations side by
    side need twice the memory beside DuckDB's buffer pool, while one at a time keeps the process's peak to
    the largest. Waiting threads hold no lock a computation needs (computations run no SQL), and the
    results do not depend on the order."""

    @functools.wraps(udf)
    def gated(*args):
        with _GATE:
            return udf(*args)

    return gated


def new_token() -> int:
    return next(_TOKENS)


def _fixed_width_dtype(kind: pa.DataType):
    """The NumPy dtype holding the values of a fixed-width Arrow type (integers, floats, times), or None."""
    if pa.types.is_floating(kind):
        return np.dtype(f"float{kind.bit_width}")
    if pa.types.is_unsigned_integer(kind):
        return np.dtype(f"uint{kind.bit_width}")
    if (
        pa.types.is_signed_integer(kind)
        or pa.types.is_timestamp(kind)
        or pa.types.is_date(kind)
        or pa.types.is_time(kind)
        or pa.types.is_duration(kind)
    ):
        return np.dtype(f"int{kind.bit_width}")
    return None


class _Part:
    """One table being collected: fixed-width fields are copied chunk by chunk into arrays allocated once
    for the size the query counted beforehand (so the table is never held twice); other fields (text ids)
    keep their chunks until the end."""

    def __init__(self, struct_type: pa.StructType, size: int):
        self.type, self.size, self.rows = struct_type, size, 0
        self.dtypes = [_fixed_width_dtype(f.type) for f in struct_type]
        # Per field: one array (fixed width) or a list of the chunks' arrays; None once joined.
        self.values: list[Any] = [np.empty(size, dtype) if dtype is not None else [] for dtype in self.dtypes]
        self.valid: list[np.ndarray | None] = [None] * len(self.dtypes)
        self.starts: list[int] = []

    def add(self, chunk: pa.StructArray) -> None:
        if chunk.type != self.type:  # e.g. a text column handed over as string in one chunk, string_view in another
            chunk = chunk.cast(self.type)
        start, n = self.rows, len(chunk)
        if start + n > self.size:
            raise DuckrateInputError(
                f"duckrate: the input has more rows than counted ({self.size}) when the query started: it changed between "
                "the two scans of one query (e.g. a view over random() or a sample); materialise it as a table first"
            )
        for i, dtype in enumerate(self.dtypes):
            field = chunk.field(i)
            if dtype is None:
                self.values[i].append(field)
                continue
            self.values[i][start : start + n] = np.frombuffer(field.buffers()[1], dtype=dtype)[
                field.offset : field.offset + n
            ]
            if field.null_count:
                valid = self.valid[i]
                if valid is None:
                    valid = self.valid[i] = np.ones(self.size, dtype=np.bool_)
                valid[start : start + n] = np.asarray(field.is_valid(), dtype=np.bool_)
        self.starts.append(start)
        self.rows += n

    def join(self) -> pa.StructArray:
        """One struct array of the rows collected, in arrival order (fixed-width fields without a copy)."""
        joined = []
        for i, f in enumerate(self.type):
            values, self.values[i] = self.values[i], None
            if self.dtypes[i] is None:
                joined.append(values[0] if len(values) == 1 else pa.concat_arrays(values))
                continue
            valid = self.valid[i]
            mask = None if valid is None else ~valid[: self.rows]
            joined.append(pa.array(values[: self.rows], type=f.type, mask=mask))
        return pa.StructArray.from_arrays(joined, fields=list(self.type))


class Collector:
    """Input chunks as DuckDB's scan hands them to ``duckrate_collect``, by (token, part)."""

    def __init__(self) -> None:
        self._parts: dict[tuple[int, str], _Part] = {}
        self._last_used: dict[int, float] = {}
        self._lock = threading.Lock()

    def add(self, token: int, part: str, size: int, chunk: pa.StructArray) -> None:
        with self._lock:
            if (token, part) not in self._parts:
                self._parts[(token, part)] = _Part(chunk.type, size)
            self._parts[(token, part)].add(chunk)
            self._last_used[token] = time.monotonic()

    def take(self, token: int, part: str, expected: int) -> tuple[pa.StructArray | None, np.ndarray]:
        """The rows collected for ``part`` (one struct array, chunks concatenated in arrival order, or None
        when none arrived) and where each chunk starts in it; checks that ``expected`` rows arrived."""
        with self._lock:
            collected = self._parts.pop((token, part), None)
            if not any(key[0] == token for key in self._parts):
                self._last_used.pop(token, None)
        rows = collected.rows if collected is not None else 0
        if rows != expected:
            raise RuntimeError(f"duckrate: collected {rows} rows of {part}, expected {expected}; please report this")
        if not expected:
            return None, np.zeros(0, np.int64)
        assert collected is not None  # rows == expected > 0
        return collected.join(), np.asarray(collected.starts, dtype=np.int64)

    def evict_idle(self, limit: float) -> None:
        now = time.monotonic()
        with self._lock:
            stale = {token for token, used in self._last_used.items() if now - used >= limit}
            for key in [key for key in self._parts if key[0] in stale]:
                del self._parts[key]
            for token in stale:
                del self._last_used[token]

    def __len__(self) -> int:
        with self._lock:
            return len(self._parts)


def _no_result(token: int) -> DuckrateInputError:
    return DuckrateInputError(
        f"duckrate: no computed result for token {token}: it was already read in full, or freed after "
        f"{IDLE_SECONDS:.0f} s without being read (a query that stopped early or failed); run the query again"
    )


def _where(positions: np.ndarray) -> tuple[slice | np.ndarray, bool]:
    """The rows at ``positions`` as a slice when they are consecutive (as they nearly always are), else the
    positions themselves; and whether they were consecutive."""
    n = len(positions)
    first, last = int(positions[0]), int(positions[-1])
    consecutive = last - first + 1 == n and (n < 2 or bool(np.all(np.diff(positions) == 1)))
    return (slice(first, last + 1) if consecutive else positions), consecutive


def _deliver(entry, where: slice | np.ndarray, n: int) -> tuple[bool, bool]:
    """Mark ``n`` rows at ``where`` of ``entry`` (an :class:`_Entry` or :class:`_Rows`) fetched: (whether
    one of them was fetched before, whether every row now has been)."""
    with entry.lock:
        entry.last_used = time.monotonic()
        delivered = entry.delivered
        assert delivered is not None  # rows remain
        seen = int(np.count_nonzero(delivered[where]))
        delivered[where] = True
        entry.remaining -= n - seen
        return seen > 0, entry.remaining == 0


@dataclass
class _Entry:
    keys: np.ndarray  # uint64, one per computed row, in the order of ``columns``
    columns: list  # one NumPy array (or None: all NULL) per field of the fetch UDF's struct
    extra: object = None  # a second result taken once (the saved state), or None
    what: str = "row"
    delivered: np.ndarray | None = None  # None once every row was fetched
    remaining: int = 0
    anchor_keys: np.ndarray | None = None
    anchor_positions: np.ndarray | None = None
    anchors: np.ndarray | None = None
    slots: np.ndarray = field(default_factory=lambda: _EMPTY_SLOTS)
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


class ResultStore:
    """Computed results waiting to be fetched, by token (see the module docstring)."""

    def __init__(self) -> None:
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self._hints = threading.local()  # its __dict__: this thread's token -> where the next fetch starts

    def put(
        self,
        token: int,
        keys: np.ndarray | None,
        columns: list,
        starts: np.ndarray | None = None,
        extra=None,
        what: str = "row",
    ) -> int:
        """Keep ``columns`` (row arrays, in the order of ``keys``; ``starts``: where the input's chunks
        began) and ``extra`` under ``token``; returns the token."""
        self.evict_idle()
        entry = _Entry(keys=np.zeros(0, np.uint64), columns=[], extra=extra, what=what)
        if keys is not None and len(keys):
            entry.keys = np.ascontiguousarray(keys, dtype=np.uint64)
            entry.columns = columns
            entry.delivered = np.zeros(len(keys), dtype=np.bool_)
            entry.remaining = len(keys)
            starts = np.zeros(1, np.int64) if starts is None or not len(starts) else starts
            entry.anchor_keys, entry.anchor_positions, entry.anchors = anchor_table(entry.keys, starts)
        with self._lock:
            if entry.remaining or entry.extra is not None:
                self._entries[token] = entry
        return token

    def fetch(self, token: int, keys: np.ndarray) -> list:
        """The computed columns of the rows whose keys are ``keys`` (uint64), from ``token``'s result: each a
        slice (when the rows are consecutive, as they nearly always are) or a gathered copy."""
        entry = self._entry(token)
        if not entry.remaining:
            raise RuntimeError(f"duckrate: the result of token {token} was already fetched in full; please report this")
        hints = cast(dict[int, int], self._hints.__dict__)
        hint = hints.get(token, -1)
        positions, needs_table = key_positions(
            keys, entry.keys, hint, entry.anchor_keys, entry.anchor_positions, entry.anchors, entry.slots
        )
        if needs_table >= 0:
            with entry.lock:
                if entry.slots.shape[0] == 0:
                    entry.slots = key_table(entry.keys)
            positions, _ = key_positions(
                keys, entry.keys, hint, entry.anchor_keys, entry.anchor_positions, entry.anchors, entry.slots
            )
        n = len(positions)
        if positions.min() < 0:
            raise DuckrateInputError(
                f"duckrate: a {entry.what} read back from the input is not among those computed (the input changed "
                "between the two scans of one query, e.g. a view over random() or a sample); materialise it as a table first"
            )
        hints[token] = int(positions[-1]) + 1
        where, consecutive = _where(positions)
        columns = [None if c is None else c[where] for c in entry.columns]
        seen, done = _deliver(entry, where, n)
        if seen or (not consecutive and len(np.unique(positions)) != n):
            raise DuckrateInputError(
                f"duckrate: two {entry.what}s of the input share one 64-bit key (a hash collision of their key "
                "columns, about a 1-in-10^7 event at 10M rows); rename one of their ids"
            )
        if done:
            self._drop_rows(token, entry)
        return columns

    def take_extra(self, token: int):
        """The entry's second result (the saved state), once; the entry is freed when its rows are too."""
        entry = self._entry(token)
        with entry.lock:
            extra, entry.extra = entry.extra, None
            entry.last_used = time.monotonic()
        if not entry.remaining:
            with self._lock:
                self._entries.pop(token, None)
        return extra

    def peek_extra(self, token: int):
        """The entry's second result, left in place (to be taken later)."""
        entry = self._entry(token)
        with entry.lock:
            entry.last_used = time.monotonic()
            return entry.extra

    def _drop_rows(self, token: int, entry: _Entry) -> None:
        entry.columns, entry.slots, entry.anchors, entry.delivered = [], _EMPTY_SLOTS, None, None
        cast(dict[int, int], self._hints.__dict__).pop(token, None)
        if entry.extra is None:
            with self._lock:
                self._entries.pop(token, None)

    def _entry(self, token: int) -> _Entry:
        with self._lock:
            entry = self._entries.get(token)
        if entry is None:
            raise _no_result(token)
        return entry

    def evict_idle(self, idle_seconds: float | None = None) -> int:
        """Free entries (and collected chunks) nobody used for ``idle_seconds`` (default :data:`IDLE_SECONDS`);
        returns how many entries."""
        limit = IDLE_SECONDS if idle_seconds is None else idle_seconds
        COLLECTOR.evict_idle(limit)
        TABLES.evict_idle(limit)
        now = time.monotonic()
        with self._lock:
            stale = [token for token, entry in self._entries.items() if now - entry.last_used >= limit]
            for token in stale:
                del self._entries[token]
        return len(stale)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class TableStore:
    """Computed tables that are not one row per input row (a fit's rows per player and day), by token, read
    back in pieces by position (:func:`make_rows_udf`) so that DuckDB never holds them as one list value."""

    def __init__(self) -> None:
        self._entries: dict[int, _Rows] = {}
        self._lock = threading.Lock()

    def put(self, token: int, table: pa.Table) -> int:
        """Keep ``table`` under ``token`` until each of its rows was fetched once; returns its row count."""
        STORE.evict_idle()
        if table.num_rows:
            with self._lock:
                self._entries[token] = _Rows(table, np.zeros(table.num_rows, dtype=np.bool_), table.num_rows)
        return table.num_rows

    def fetch(self, token: int, positions: np.ndarray) -> pa.StructArray:
        """The rows at ``positions`` (int64) of ``token``'s table, as one struct array: a slice when they are
        consecutive (as the unnested ``range`` hands them over), else gathered."""
        with self._lock:
            entry = self._entries.get(token)
        if entry is None:
            raise _no_result(token)
        n = len(positions)
        where, consecutive = _where(positions)
        rows = entry.table.slice(int(positions[0]), n) if consecutive else entry.table.take(pa.array(positions))
        seen, done = _deliver(entry, where, n)
        if seen or (not consecutive and len(np.unique(positions)) != n):
            raise RuntimeError(f"duckrate: a row of token {token}'s result was fetched twice; please report this")
        if done:
            with self._lock:
                self._entries.pop(token, None)
        return struct_rows(rows)

    def evict_idle(self, limit: float) -> None:
        now = time.monotonic()
        with self._lock:
            for token in [token for token, entry in self._entries.items() if now - entry.last_used >= limit]:
                del self._entries[token]

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


@dataclass
class _Rows:
    table: pa.Table
    delivered: np.ndarray  # one flag per row: fetched already
    remaining: int
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


COLLECTOR = Collector()
STORE = ResultStore()
TABLES = TableStore()


def is_bridge_udf(name: str) -> bool:
    """Whether the UDF ``name`` hands data over through the bridge (token, collect, compute, fetch, take):
    such calls must run exactly once each, so DuckDB must treat them as volatile."""
    return name.endswith("_compute_udf") or name.startswith(
        ("duckrate_fetch_", "duckrate_take_", NEW_TOKEN_UDF, COLLECT_UDF)
    )


def new_token_udf(rows):
    """``duckrate_new_token(0)``: a fresh token per row."""
    return pa.array([new_token() for _ in range(len(rows))], pa.int64())


def _chunk_token(token: pa.Array, call: str) -> int:
    """The one token of a chunk DuckDB handed to a bridge UDF (every row of one call carries the same)."""
    tokens = np.asarray(token, dtype=np.int64)
    if tokens[0] != tokens[-1]:
        raise RuntimeError(f"duckrate: one {call} call received several tokens; please report this")
    return int(tokens[0])


def collect_udf(token, part, size, rows):
    """``duckrate_collect(token, part, size, row)``: keep a chunk of the ``size`` input rows of ``part``;
    TRUE for each."""
    token, part, size, rows = whole(token), whole(part), whole(size), whole(rows)
    if len(rows):
        COLLECTOR.add(_chunk_token(token, "collect"), part[0].as_py(), int(size[0].as_py()), rows)
    return pa.array(np.ones(len(rows), dtype=np.bool_))


def make_fetch_udf(name: str, result_type: pa.StructType):
    """The vectorised UDF ``fetch(token, key)`` returning ``result_type`` (a struct of computed columns,
    whose NumPy arrays the token's entry holds in this field order) for each row's key."""
    kinds = [f.type for f in result_type]

    def fetch_udf(token, key):
        crash_points.reached("replay.fetch")
        token, key = whole(token), whole(key)
        if len(key) == 0:
            return pa.array([], result_type)
        columns = STORE.fetch(_chunk_token(token, "fetch"), np.asarray(key, dtype=np.uint64))
        n = len(key)
        arrays = [
            pa.nulls(n, kind) if values is None else pa.array(values, kind) for values, kind in zip(columns, kinds)
        ]
        return pa.StructArray.from_arrays(arrays, fields=list(result_type))

    fetch_udf.__name__ = name
    return fetch_udf


def make_rows_udf(name: str, result_type: pa.StructType):
    """The vectorised UDF ``rows(token, position)`` returning ``result_type`` (the struct of a kept table's
    columns, :class:`TableStore`) for each position."""

    def rows_udf(token, position):
        token, position = whole(token), whole(position)
        if len(position) == 0:
            return pa.array([], result_type)
        return TABLES.fetch(_chunk_token(token, "rows"), np.asarray(position, dtype=np.int64))

    rows_udf.__name__ = name
    return rows_udf


def make_take_state_udf(state_type: pa.DataType, to_arrow, take: bool = True):
    """The UDF ``take_state(token)``: the saved state a computation kept beside its rows, as one list of
    ``state_type`` structs per token (``to_arrow(extra)`` converts it), taken once (or, without ``take``,
    read and left in place)."""
    read = STORE.take_extra if take else STORE.peek_extra

    def take_state_udf(token):
        token = whole(token)
        results, offsets = [], [0]
        for value in token.to_pylist():
            extra = read(int(value)) if value is not None else None
            array = to_arrow(extra) if extra is not None else pa.array([], state_type)
            results.append(array)
            offsets.append(offsets[-1] + len(array))
        return lists_of(results, offsets, state_type)

    return take_state_udf


# ---------------------------------------------------------------------------------------------------
# SQL


def collected_ctes(parts: dict[str, str]) -> str:
    """The CTEs ``duckrate_token`` (this query's token ``t`` and each part's row count ``size_<part>``, so
    the collected columns are allocated once) and ``duckrate_collected`` (one row with ``n_<part>``: the
    number of rows of each ``part`` collected from its relation, whose rows are passed whole, as structs)."""
    sizes = ", ".join(f"(SELECT count(*) FROM {relation}) AS size_{part}" for part, relation in parts.items())
    counts = ",\n           ".join(
        f"(SELECT count({COLLECT_UDF}(k.t, '{part}', k.size_{part}, r)) FROM {relation} AS r, duckrate_token AS k) AS n_{part}"
        for part, relation in parts.items()
    )
    return (
        f"duckrate_token AS MATERIALIZED (SELECT {NEW_TOKEN_UDF}(0) AS t, {sizes}),\n"
        f"duckrate_collected AS MATERIALIZED (\n    SELECT {counts}\n)"
    )
