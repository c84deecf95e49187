"""``duckrate report``: one self-contained HTML page of a warehouse's marts (docs/report.md).

:func:`write_report` reads the marts (:mod:`.tables`, a read-only connection), draws the charts as inline
SVG (:mod:`.svg`) and writes the page (:mod:`.html`). The page loads nothing from the network and runs no
script; the numbers in it are the marts' own, each marked with its mart, column and exact value.
"""

from __future__ import annotations

from pathlib import Path

from duckrate.report.html import page
from duckrate.report.tables import read_marts

__all__ = ["page", "read_marts", "write_report"]


def write_report(warehouse: Path, out: Path) -> Path:
    """Write the report of ``warehouse`` (a DuckDB file built by the duckrate dbt package) to ``out``."""
    warehouse = Path(warehouse)
    if not warehouse.exists():
        raise SystemExit(f"no warehouse at {warehouse}")
    marts = read_marts(warehouse)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(marts, title=f"duckrate report: {warehouse.name}"), encoding="utf-8")
    return out
