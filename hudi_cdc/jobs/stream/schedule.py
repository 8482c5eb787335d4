"""Which tables' rounds `stream --all` starts next (issue 38), and what each table has landed unapplied.

The pick is a pure function of each table's state (`pick`): a table is due when it is not in a round,
not backing off nor past its interval, and has landed files its last commit has not applied. Due
tables go oldest wait first, a table's wait counting from the later of its oldest unapplied landed file
and the end of its last round. So a trickling table whose one file landed a minute ago goes before a hot
table whose round just ended (whatever the hot table's backlog: after a round it waits its turn behind
every table that was waiting when that round ended), and no table waits for more than about one round
of each other waiting table, shared over the parallel rounds. A table with nothing landed is never due:
no round, no commit, no file.

What a table has landed is known without listing its folder on every look (`Landing`): a local landing
folder is listed again only when its folder's or a partition folder's modification time changed (or is
too recent to be trusted: a file landed in the same clock tick as the listing); an s3:// landing is
listed at most every `relist_seconds`.

Light on purpose: stdlib only (the job's rules, jobs/streamer.py).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hudi_cdc.common import s3, storage

RACY_SECONDS = 2.0  # a folder changed this close to its listing may hold a file the listing missed
HELD_S3_SECONDS = 10.0  # an s3:// landing held back for a cut is looked at again after this
MAX_AUTO_PARALLEL = 8


@dataclass(frozen=True)
class Waiting:
    """One table as the pick sees it (times in seconds of one clock)."""

    key: str
    pending_since: float | None  # the oldest landed file not applied yet (None: nothing pending)
    last_finished: float = 0.0  # its last round's end (0: none yet)
    ready_at: float = 0.0  # not before: its interval since the last round's start, or its backoff
    running: bool = False
    done: bool = False  # given up, or past its rounds

    @property
    def waiting_since(self) -> float:
        assert self.pending_since is not None
        return max(self.pending_since, self.last_finished)


def pick(tables: Sequence[Waiting], now: float, free: int) -> list[str]:
    """The keys of up to `free` tables whose rounds start now, the longest waiting first (ties: the oldest
    pending file, then the key). Never a table in a round, backing off, done or with nothing pending."""
    due = [w for w in tables if not w.running and not w.done and w.pending_since is not None and w.ready_at <= now]
    due.sort(key=lambda w: (w.waiting_since, w.pending_since, w.key))
    return [w.key for w in due[:max(0, free)]]


def next_ready(tables: Sequence[Waiting], now: float) -> float | None:
    """When the next table with something pending leaves its interval or backoff (None: none waits so)."""
    later = [w.ready_at for w in tables
             if not w.running and not w.done and w.pending_since is not None and w.ready_at > now]
    return min(later, default=None)


def parallel_rounds(setting: int, cores: int | None) -> int:
    """Rounds at once: the setting, or (0: from the cores) one per core, at least 2 (a small round is
    mostly the driver's waits, not the executors' CPU) and at most MAX_AUTO_PARALLEL."""
    if setting > 0:
        return setting
    return max(2, min(MAX_AUTO_PARALLEL, cores or 2))


class Landing:
    """One table's landing folder: the modification times (ms) of its files, listed again only when it may
    have changed; what is pending after a checkpoint."""

    def __init__(self, root: str, relist_seconds: float = 5.0, clock: Callable[[], float] | None = None,
                 walk: Callable[[str], list] = storage.walk_files, cuts: str | None = None):
        """`cuts`: capture's transaction cuts folder (a file held back for a cut is taken once a cut lands
        there: a held table looks at that folder too)."""
        import time

        self.root, self.relist_seconds = root, relist_seconds
        self.cuts = None if cuts is None or s3.is_s3(cuts) else storage.local(cuts)
        self.clock = clock or time.time
        self.walk = walk
        self.s3 = s3.is_s3(root)
        self.local = root if self.s3 else storage.local(root)
        self.sig: object = None
        self.mtimes: list[int] = []
        self.listed_at: float | None = None
        self.listings = 0
        # the listing a round found nothing to take from (cuts held it back): (signature, cuts signature, until)
        self.held: tuple[object, int | None, float | None] | None = None

    def _signature(self) -> tuple | None:
        """The folder's and its partition folders' modification times (ns); None: no folder."""
        try:
            sig = [os.stat(self.local).st_mtime_ns]
            with os.scandir(self.local) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False) and not e.name.startswith(storage.IGNORED_PREFIXES):
                        sig.append(e.stat(follow_symlinks=False).st_mtime_ns)
        except FileNotFoundError:
            return None
        return tuple(sig)

    def _refresh(self) -> None:
        now = self.clock()
        if self.s3:
            if self.listed_at is not None and now - self.listed_at < self.relist_seconds:
                return
            files = self.walk(self.root)
            self.sig = (len(files), files[-1][1] if files else 0, files[-1][0] if files else "")
        else:
            sig = self._signature()
            trusted = (self.listed_at is not None and sig == self.sig
                       and (sig is None or max(sig) / 1e9 < self.listed_at - RACY_SECONDS))
            if trusted:
                return
            self.sig = sig
            files = self.walk(self.local) if sig is not None else []
        self.mtimes = sorted(f[1] for f in files)
        self.listed_at = now
        self.listings += 1

    def pending_since(self, checkpoint: str | None) -> float | None:
        """The modification time (s) of the oldest file after `checkpoint` (ms), None when none is."""
        self._refresh()
        if self.held is not None:
            sig, cuts, until = self.held
            if (sig, cuts) == (self.sig, self._cuts_sig()) and (until is None or self.clock() < until):
                return None
            self.held = None
        last = int(checkpoint) if checkpoint not in (None, "") else -1
        i = bisect.bisect_right(self.mtimes, last)
        return self.mtimes[i] / 1000.0 if i < len(self.mtimes) else None

    def seen(self) -> tuple:
        """What a round about to start will look at: the folder's and the cuts folder's signatures, and when.
        Taken before the round, so that a cut landing while the round runs is not held against it."""
        return (self.sig, self._cuts_sig(), self.clock())

    def hold(self, seen: tuple | None = None) -> None:
        """A round took nothing from what is landed (an open transaction held back): nothing is pending
        until the folder or the cuts folder changes from what the round saw (`seen`, taken before it: a cut
        written during the round releases the files at once), and not held while their times are too recent
        to tell a change by. An s3:// landing is held for HELD_S3_SECONDS at most (its cuts are not watched)."""
        sig, cuts, at = seen if seen is not None else self.seen()
        if self.s3:
            self.held = (sig, None, self.clock() + HELD_S3_SECONDS)
            return
        times = [*(sig if isinstance(sig, tuple) else ()), cuts or 0]
        recent = max(times) / 1e9 >= at - RACY_SECONDS
        self.held = None if recent else (sig, cuts, None)

    def _cuts_sig(self) -> int | None:
        if self.cuts is None:
            return None
        try:
            return os.stat(self.cuts).st_mtime_ns
        except FileNotFoundError:
            return None
