"""One writer per table: an OS file lock (``filelock``, fcntl ``flock``) next to the table, with the
holder (pid, host, since) recorded beside it for the refusal message.

Where: ``<lake root>/.hudi-cdc-locks/<table>_<cow|mor>.lock`` (+ ``.json`` holder). Next to the
table, so every pipeline file writing that table path contends on the same lock (a lock in a
pipeline's work dir would not see a second pipeline file aimed at the same lake); outside the table
folder, so neither Hudi (which owns ``.hoodie/``, and a first bootstrap that finds a ``.hoodie``
without ``hoodie.properties``) nor ``bootstrap --force`` (which moves the table folder aside) touches
it.

Staleness: the kernel drops a ``flock`` when the last descriptor of it closes, i.e. when the holder
dies however it dies (SIGKILL, OOM); the next writer simply gets the lock, and says whose lock it took
over when the recorded holder is gone. The local runner passes the descriptor to its spark-submit
child, so a job that outlives a killed ``hudi-cdc`` still holds the table until it ends.
Local tables only: for S3 tables Hudi's own lock providers apply (docs/operations.md).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from hudi_cdc.common.text import log_progress
from hudi_cdc.config import TYPE_SUFFIX, Pipeline, uri_to_path
from hudi_cdc.errors import TableLocked

LOCK_DIR = ".hudi-cdc-locks"

# descriptors of the locks this process holds: the local runner hands them to its child job
_held: dict[str, int] = {}


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    since: float
    command: str = ""

    def alive(self) -> bool:
        """False only when the holder is known gone: same host and no such process."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def describe(self, now: float | None = None) -> str:
        age = max(0.0, (now or time.time()) - self.since)
        what = f" ({self.command})" if self.command else ""
        return f"pid {self.pid} on {self.host}{what}, for {_age(age)}"


def _age(seconds: float) -> str:
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    if s < 7200:
        return f"{s // 60}m"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


ICEBERG = "ICEBERG"  # the Iceberg copy of a table (hudi-cdc apply --engine iceberg) has a lock of its own


def lock_path(pipeline: Pipeline, table: str, table_type: str) -> Path:
    suffix = "iceberg" if table_type == ICEBERG else TYPE_SUFFIX[table_type]
    return uri_to_path(pipeline.lake_root) / LOCK_DIR / f"{table}_{suffix}.lock"


def _holder_path(path: Path) -> Path:
    return path.with_suffix(".json")


def read_holder(path: Path) -> Holder | None:
    try:
        data = json.loads(_holder_path(path).read_text())
        return Holder(int(data["pid"]), str(data["host"]), float(data["since"]), str(data.get("command", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class LockState:
    """Whether a writer holds a table, seen from outside (``probe``), and who it says it is."""

    held: bool
    holder: Holder | None
    lock: str

    def as_dict(self, now: float | None = None) -> dict:
        h = self.holder if self.held else None
        age = None if h is None else round(max(0.0, (now or time.time()) - h.since), 3)
        return {"held": self.held, "pid": h.pid if h else None, "host": h.host if h else None,
                "command": h.command if h else None, "age_seconds": age}

    def describe(self, now: float | None = None) -> str:
        if not self.held:
            return ""
        return self.holder.describe(now) if self.holder else "a process that has not recorded itself yet"


def _flocked(path: Path) -> bool | None:
    """Is there a ``flock`` on this file? Read from /proc/locks (Linux), so nothing is locked to find
    out; None where /proc/locks is unavailable."""
    try:
        st = path.stat()
        text = Path("/proc/locks").read_text()
    except FileNotFoundError:
        return False if not path.exists() else None
    except OSError:
        return None
    key = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return any(len(f) > 5 and f[1] == "FLOCK" and f[5] == key
               for f in (line.split() for line in text.splitlines()))


def probe(pipeline: Pipeline, table: str, table_type: str) -> LockState:
    """Whether a writer holds the table, WITHOUT taking its lock (a `status` must never block or
    refuse a writer). On Linux the kernel's lock table says it (also for a spark-submit child that
    inherited the lock from a killed ``hudi-cdc``); elsewhere the recorded holder's process."""
    path = lock_path(pipeline, table, table_type)
    holder = read_holder(path)
    held = _flocked(path)
    if held is None:
        held = holder is not None and holder.alive()
    return LockState(held=held, holder=holder, lock=str(path))


def held_fds() -> list[int]:
    """Descriptors of the table locks this process holds (for a child job to inherit)."""
    return list(_held.values())


@contextmanager
def table_lock(pipeline: Pipeline, table: str, table_type: str, command: str,
               progress: Callable[[str], None] = log_progress) -> Iterator[Path]:
    """Hold the table's writer lock for the block; ``TableLocked`` if another process holds it."""
    path = lock_path(pipeline, table, table_type)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path), timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        holder = read_holder(path)
        who = holder.describe() if holder else "a process that has not recorded itself yet"
        raise TableLocked(f"table {table} ({table_type}) at {pipeline.base_path(table, table_type)} is being "
                          f"written by {who}; one writer per table (lock {path})") from None
    try:
        previous = read_holder(path)
        if previous and previous.pid != os.getpid() and not previous.alive():
            progress(f"taking over the lock of {table} ({table_type}) left by {previous.describe()} "
                     "(that process is gone)")
        _holder_path(path).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                                                  "since": time.time(), "command": command}))
        # a duplicate of the locked descriptor (same open file, same flock) for child jobs: filelock
        # closes its own descriptor in forked children
        fd = getattr(getattr(lock, "_context", None), "lock_file_fd", None)
        if isinstance(fd, int):
            _held[str(path)] = os.dup(fd)
        yield path
    finally:
        dup = _held.pop(str(path), None)
        if dup is not None:
            os.close(dup)
        _holder_path(path).unlink(missing_ok=True)  # a holder file left behind means its writer died
        lock.release()


@contextmanager
def table_locks(pipeline: Pipeline, targets: list[tuple[str, str]], command: str,
                progress: Callable[[str], None] = log_progress) -> Iterator[None]:
    """All targets' locks (local tables only), taken in a fixed order so two commands cannot deadlock."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        for table, tt in sorted(set(targets)):
            if pipeline.base_path(table, tt).startswith("file://"):
                stack.enter_context(table_lock(pipeline, table, tt, command, progress))
        yield
