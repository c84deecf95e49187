"""One Spark session in local mode for every Spark test, started once per test process (the frames
cross over with :mod:`helpers.spark_frames`).

The tests skip, saying why, only when PySpark (each module's ``importorskip``) or a Java runtime (this
fixture) is missing; ``make test`` installs both: the ``spark`` extra and Debian's openjdk-17-jre-headless.
Every test in this directory is marked ``spark``: ``make test-fast`` leaves them out.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    if shutil.which("java") is None:
        pytest.skip("no java on the PATH: PySpark needs Java 17 (make test installs openjdk-17-jre-headless)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers import duckrate from this environment
    session = (
        SparkSession.builder.master("local[2]")
        .appName("duckrate-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # small data: a JVM that starts fast (C1 only) and plans without code generation or re-planning
        # (measured here: session 16 s -> 8 s, the first jobs about twice as fast)
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.adaptive.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
