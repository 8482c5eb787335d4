"""Rounds aligned on capture's cuts under `stream --all` (and so `run`): the tables' rounds end on the same
transaction cut, so the pipeline keeps reaching consistent points (query/consistent.py) while it streams.

Each round ends on the newest cut at *its* start (cuts.py); under a steady load the tables' rounds start at
different moments and end on different cuts, and no cut has every table exactly at a commit: the newest
consistent point stayed where the last quiet moment left it. Here the dispatcher works in generations: a
generation's ceiling is the newest cut when it began; every table with landed files gets a round ending on
the newest cut no newer than the ceiling (a round cut short by the source limit gets another); a table
with nothing landed, or whose round failed, is through. When every table is through and no round runs,
the next generation takes the newest cut. A table waits at most for one generation, which is what the
longest-waiting-first pick gives a busy pipeline anyway; what alignment adds is that a hot table does not
start a second round while a slow one is still in its first. `stream.align_cuts: false` turns it off.
A landing without cuts (a Kafka Connect sink's) is not aligned.

Stdlib only: the Spark job imports it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from hudi_cdc.common import s3, storage
from hudi_cdc.jobs.stream import cuts

RELOOK_SECONDS = 5.0  # a cuts folder on S3 (no modification time to go by) is listed at most this often


class Generations:
    def __init__(self, folders: dict[str, str | None], clock: Callable[[], float] = time.time):
        """`folders`: each table's (loop key's) cuts folder, None when its landing has none."""
        self.folders = folders
        self.clock = clock
        self.generation = 0
        self.ceilings: dict[str, int | None] = {}
        self.through: dict[str, int] = {}  # key -> the generation it is through
        self._looked: dict[str, tuple[object, float]] = {}
        self._lock = threading.Lock()
        self._advance()

    def _changed(self, folder: str) -> bool:
        """The folder may hold a newer cut than its ceiling (its modification time moved; S3: every few s)."""
        now = self.clock()
        try:
            sig: object = os.stat(storage.local(folder)).st_mtime_ns if not s3.is_s3(folder) else None
        except FileNotFoundError:
            sig = None
        last = self._looked.get(folder)
        if last is not None and sig is not None and last[0] == sig:
            return False
        if last is not None and sig is None and now - last[1] < RELOOK_SECONDS:
            return False
        self._looked[folder] = (sig, now)
        return True

    def _advance(self) -> bool:
        moved = False
        for folder in {f for f in self.folders.values() if f is not None}:
            if not self._changed(folder) and folder in self.ceilings:
                continue
            numbers = cuts.cut_numbers(folder)
            newest = numbers[-1] if numbers else None
            moved |= newest != self.ceilings.get(folder)
            self.ceilings[folder] = newest
        if moved:
            self.generation += 1
        return moved

    def ceiling(self, key: str) -> int | None:
        folder = self.folders.get(key)
        return self.ceilings.get(folder) if folder is not None else None

    def eligible(self, key: str) -> bool:
        """The table may start a round in this generation."""
        return self.ceiling(key) is None or self.through.get(key, -1) < self.generation

    def finished(self, key: str, ended_on: int | None, taken: bool, failed: bool = False) -> None:
        """A round of the table ended: on cut `ended_on` (None: no cut), having taken files or not."""
        with self._lock:
            ceiling = self.ceiling(key)
            if failed or not taken or ceiling is None or ended_on is None or ended_on >= ceiling:
                self.through[key] = self.generation

    def next_generation(self, idle: Callable[[str], bool], running: int) -> bool:
        """When no round runs and every table is through or has nothing pending, the newest cut becomes the
        ceiling (a new generation). `idle(key)`: the table has nothing landed to take."""
        with self._lock:
            if running or any(not idle(k) and self.through.get(k, -1) < self.generation
                              for k, f in self.folders.items() if f is not None):
                return False
            return self._advance()
