"""Print pip constraints pinning each of pyproject.toml's dependencies to its declared lower bound
(``name>=x`` -> ``name==x``): the oldest versions duckrate says it supports, for ``make test-oldest``."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def lower_bounds(pyproject: Path = PYPROJECT) -> list[str]:
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = []
    for requirement in dependencies:
        found = re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?\s*(.*)$", requirement)
        if found is None:
            raise SystemExit(f"cannot read the requirement {requirement!r} in {pyproject}")
        name, specifiers = found.groups()
        lower = [s.strip()[2:].strip() for s in specifiers.split(",") if s.strip().startswith(">=")]
        if len(lower) != 1:
            raise SystemExit(f"{pyproject}: {requirement!r} needs exactly one lower bound (>=)")
        pins.append(f"{name}=={lower[0]}")
    return pins


if __name__ == "__main__":
    sys.stdout.write("".join(f"{pin}\n" for pin in lower_bounds()))
