"""Progress lines: throttled, quiet for short work, with work done, rate and time left; silenced by
DUCKRATE_PROGRESS=0; long chunked replays and tuning grids report through it."""

from __future__ import annotations

import io
import re

import duckrate
from duckrate.core.progress import Progress
from duckrate.synthetic import generate_matches


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_reports_at_most_every_few_seconds_with_rate_and_time_left():
    clock, stream = Clock(), io.StringIO()
    progress = Progress("replay", 1000, "rows", every=3.0, stream=stream, clock=clock)
    clock.now += 1.0
    progress.advance(100)
    assert stream.getvalue() == ""  # short work stays quiet
    clock.now += 2.5
    progress.advance(250)  # 350 rows in 3.5 s
    clock.now += 1.0
    progress.advance(50)  # within 3 s of the last line: quiet
    lines = stream.getvalue().splitlines()
    assert lines == ["duckrate: replay: 350/1,000 rows (35%), 100.0 rows/s, about 6 s left (4 s so far)"]
    clock.now += 2.0
    progress.advance(600)  # the end, after having reported: a last line
    assert stream.getvalue().splitlines()[-1] == "duckrate: replay: 1,000/1,000 rows (100%), 153.8 rows/s (6 s so far)"


def test_quiet_when_disabled(monkeypatch):
    monkeypatch.setenv("DUCKRATE_PROGRESS", "0")
    clock, stream = Clock(), io.StringIO()
    progress = Progress("replay", 10, "rows", every=0.0, stream=stream, clock=clock)
    clock.now += 10
    progress.advance(10)
    assert stream.getvalue() == ""


def test_chunked_replays_and_tuning_report(monkeypatch, capsys):
    monkeypatch.setattr("duckrate.core.progress.EVERY_SECONDS", 0.0)
    matches = generate_matches(400, 30, seed=1)
    duckrate.elo(matches, chunk_size=100)
    err = capsys.readouterr().err
    assert re.search(r"duckrate: replay in \d+ chunks: 400/400 rows \(100%\)", err), err
    duckrate.tune(matches, "elo", {"k": [10.0, 20.0]}, threads=1)
    assert "duckrate: tune elo: 2/2 parameter sets (100%)" in capsys.readouterr().err
