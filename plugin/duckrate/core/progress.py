"""Progress of long work (a chunked replay, a tuning grid) on the terminal: work done, rate, time left.

A :class:`Progress` writes one line to stderr at most every ``every`` seconds, the first only once the work
has run that long (short work stays quiet), and a last line when the work ends after having reported.
``DUCKRATE_PROGRESS=0`` in the environment silences it. dbt builds report their chunks through dbt's own
log instead (the replay materialization).
"""

from __future__ import annotations

import os
import sys
import threading
import time

EVERY_SECONDS = 3.0


def _enabled() -> bool:
    return os.environ.get("DUCKRATE_PROGRESS", "1") not in ("0", "false", "no", "off")


class Progress:
    """``advance(n)`` after each piece of ``total`` units of work; thread-safe."""

    def __init__(self, label: str, total: int, unit: str, every: float | None = None, stream=None, clock=None):
        self.label, self.total, self.unit = label, int(total), unit
        self.every = EVERY_SECONDS if every is None else every
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.last_report = self.started
        self.done = 0
        self.reported = False
        self.enabled = _enabled()
        self._lock = threading.Lock()

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        share = self.done / self.total if self.total else 1.0
        text = (
            f"duckrate: {self.label}: {self.done:,}/{self.total:,} {self.unit} ({share:.0%}), {rate:,.1f} {self.unit}/s"
        )
        if self.done < self.total and rate > 0:
            text += f", about {(self.total - self.done) / rate:,.0f} s left"
        return text + f" ({elapsed:,.0f} s so far)"

    def advance(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            now = self.clock()
            finished = self.done >= self.total
            if self.enabled and (now - self.last_report >= self.every or (finished and self.reported)):
                print(self.line(now), file=self.stream, flush=True)
                self.last_report = now
                self.reported = True
