"""`duckrate warm` fills numba's cache by calling every public SQL macro once: a macro added to the
registry but not to the warm-up would leave its first call compiling for seconds."""

from __future__ import annotations

from pathlib import Path

import duckdb

import duckrate
from duckrate.sql.readers import MACROS as READERS
from duckrate.tools.warm import called_macros, warm


def test_warm_calls_every_public_macro_and_runs():
    con = duckrate.register(duckdb.connect())
    public = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'table_macro' "
            "AND NOT internal AND function_name NOT LIKE 'duckrate\\_%' ESCAPE '\\'"
        ).fetchall()
    }
    # the file readers (read_pgn, ...) are plain SQL: no kernel to compile
    missing = {name for name in public if not name.endswith("_resume_check")} - called_macros() - set(READERS)
    # an alias's macros run the kernels of the system it names
    aliases = tuple(f"{system.name}_" for system in duckrate.SYSTEMS.aliases())
    missing = {name for name in missing if not name.startswith(aliases)}
    assert not missing, f"macros warm() never calls: {sorted(missing)}"
    lines = []
    assert warm(log=lines.append) > 0.0
    assert lines and lines[0].startswith("duckrate: kernels compiled and cached")


def test_fresh_clears_the_kernels_of_every_subpackage():
    """``warm --fresh`` must empty the whole package's cache: a kernel of one file recompiled against an older
    cached kernel of another can crash the next process that loads it."""
    from duckrate.core.jit import PACKAGE_ROOT

    assert PACKAGE_ROOT == Path(duckrate.__file__).resolve().parent
    cached = {path.parent.parent.name for path in PACKAGE_ROOT.rglob("__pycache__/*.nbi")}
    assert {"systems", "elo_mmr", "bradley_terry", "core"} <= cached  # compiled by the test above or the install
