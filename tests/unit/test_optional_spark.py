"""The Spark extra is optional: ``import duckrate`` (every kernel, the SQL layer) never imports PySpark."""

from __future__ import annotations

import subprocess
import sys


def test_importing_duckrate_does_not_import_pyspark():
    code = "import sys, duckrate, duckrate.tools.warm; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pyspark'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
