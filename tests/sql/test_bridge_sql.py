"""The bridge's lifetimes and its gate, in real DuckDB: a fit's rows are read back in pieces by position and
freed once read; a query that stops early leaves them to the idle eviction; computations on several threads
of one process run one at a time (``DUCKRATE_COMPUTATIONS`` sets another count) and give the same rows; a
UDF's rows from a table with or without rows."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import polars as pl
import pyarrow as pa
import pytest

import duckrate
from duckrate.sql import bridge
from duckrate.sql._lists import struct_rows
from duckrate.sql.registry import use_shared_macros
from duckrate.synthetic import generate_matches

WHR_FIT = "SELECT * FROM whr_fit('games', w2 := 150.0)"


@pytest.fixture(scope="module")
def frame() -> pl.DataFrame:
    games = generate_matches(3000, 60, n_leagues=2, seed=11, seconds_between_matches=3 * 3600.0)
    return games.select("match_id", "played_at", "league", "player_a", "player_b", "score_a")


@pytest.fixture
def games(con, frame):
    con.register("frame_view", frame)
    con.execute("CREATE TABLE games AS SELECT * FROM frame_view")
    con.unregister("frame_view")
    return con


def test_a_fit_is_read_back_in_pieces_and_freed(games, frame):
    rows = games.sql(WHR_FIT).pl()
    assert rows.height > 2 * 2048  # more than one of DuckDB's chunks: several fetch calls
    assert rows.equals(duckrate.whr_fit(frame, w2=150.0))  # in the fit's own order, bit for bit
    assert len(bridge.TABLES) == 0


def test_a_fit_read_in_part_is_freed_when_idle(games):
    assert len(games.execute(f"{WHR_FIT} LIMIT 5").fetchall()) == 5
    assert len(bridge.TABLES) == 1  # the rest waits for a reader
    bridge.STORE.evict_idle(0.0)
    assert len(bridge.TABLES) == 0


def test_computations_run_one_at_a_time():
    running, most = [0], [0]
    lock = threading.Lock()

    def work(_):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return 1

    gated = bridge.one_at_a_time(work)
    with ThreadPoolExecutor(4) as pool:
        assert sum(pool.map(gated, range(8))) == 8
    assert most[0] == 1


def test_fits_on_two_threads_wait_for_each_other_and_agree(_instance, games):
    """Two connections fit at once (as dbt's threads do): neither blocks the other for ever, and each gets
    the rows of the fit run alone."""
    database = games.execute("SELECT current_database()").fetchall()[0][0]
    queries = [f"SELECT * FROM whr_fit('{database}.games', w2 := {w2})" for w2 in (150.0, 90.0)]

    def run(query):
        cursor = _instance.cursor()
        try:
            use_shared_macros(cursor)
            return cursor.sql(query).pl()
        finally:
            cursor.close()

    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(run, queries))
    alone = [run(query) for query in queries]
    assert all(a.equals(b) for a, b in zip(together, alone))
    assert not together[0].equals(together[1])


@pytest.mark.parametrize(("value", "expected"), [("2", "2"), ("0", "must be an integer >= 1"), ("x", "got 'x'")])
def test_the_count_of_computations_at_once_is_set_by_the_environment(value, expected):
    environment = {**os.environ, bridge.COMPUTATIONS_VARIABLE: value}
    probe = "import duckrate.sql.bridge as b; print(b._GATE._value)"
    done = subprocess.run([sys.executable, "-c", probe], env=environment, capture_output=True, text=True)
    assert expected in (done.stdout if done.returncode == 0 else done.stderr)
    assert (done.returncode == 0) == (expected == "2")
    if done.returncode:
        assert bridge.COMPUTATIONS_VARIABLE in done.stderr


@pytest.mark.parametrize(("rows", "chunks"), [(0, 0), (0, 1), (3, 1)])
def test_struct_rows_of_a_table_with_or_without_rows(rows, chunks):
    """``to_struct_array`` of a table without rows (with no chunks, or one empty chunk, as an empty polars
    frame converts to) fails in pyarrow before 18: the UDFs' rows come out as an empty struct array of the
    table's fields instead."""
    schema = pa.schema([("player", pa.string()), ("rating", pa.float64())])
    table = pl.DataFrame({"player": ["a", "b", "c"][:rows], "rating": [1.0, 2.0, 3.0][:rows]}).to_arrow().cast(schema)
    if chunks == 0:
        table = pa.Table.from_batches([], schema)
    structs = struct_rows(table)
    assert structs.type == pa.struct(list(schema))
    assert structs.to_pylist() == [{"player": p, "rating": r} for p, r in zip("abc"[:rows], [1.0, 2.0, 3.0])]
