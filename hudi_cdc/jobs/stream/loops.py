"""`stream --all`: every target of the job in ONE Spark application, each in a loop of its own.

Each target (table and type) runs its rounds in its own thread, in its own pool of Spark's FAIR
scheduler (``spark.scheduler.pool`` = the target), so one table's long round does not hold the
others' behind it. At most ``max_parallel`` rounds run at once (memory: each round holds at most
``--source-limit`` bytes of landed files). A round that fails is logged with its cause, recorded in
the table's failure file (what ``hudi-cdc status`` shows) and the table backs off exponentially
(``backoff`` doubling up to ``backoff_max``) while the others go on; a table with more than
``max_failures`` failures within ``window`` seconds is given up until the application restarts. The
job ends when every table is given up (the last failure's error), when the JVM is gone, or on the
stop file (each loop finishes its round in flight, starts none).

Light on purpose: stdlib + pyspark (the job's rules, jobs/streamer.py).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hudi_cdc.common.causes import root_cause
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.errors import DiskFull, JobInputError, disk_full_in_round, is_disk_full
from hudi_cdc.jobs.stream.round import RoundResult
from hudi_cdc.jobs.stream.typed import raise_if_conversion_failed

SUFFIX = {"COPY_ON_WRITE": "cow", "MERGE_ON_READ": "mor"}
LABEL = "stream-all"
FAIR = {"spark.scheduler.mode": "FAIR"}
IDLE_MARK = ": no new files under "  # what round.py says of a round with nothing to read


def target_key(t: Target) -> str:
    """A target's name in the job: its FAIR pool and its failure file (`<table>_<cow|mor>`)."""
    return f"{t.target_table.rpartition('.')[2]}_{SUFFIX.get(t.table_type, t.table_type)}"


@dataclass
class LoopSettings:
    backoff: float = 5.0
    backoff_max: float = 300.0
    max_failures: int = 5
    window: float = 3600.0
    max_parallel: int = 2
    status_dir: str | None = None  # local folder of the per-table failure files (`hudi-cdc status` reads them)


@dataclass
class TableLoop:
    """One target's loop state, and what the job reports about it at the end."""

    target: Target
    rounds: int = 0
    commits: int = 0
    records_written: int = 0
    failures: list[float] = field(default_factory=list)  # monotonic times of failed rounds
    consecutive: int = 0
    consecutive_before: int = 0  # the failed rounds a success ended
    idle_said: bool = False
    retry_at: float = 0.0
    state: str = "running"  # running | backing_off | given_up | stopped
    last_error: str | None = None
    last_kind: str | None = None
    last_commit: str | None = None
    checkpoint: str | None = None

    @property
    def name(self) -> str:
        return self.target.target_table.rpartition(".")[2]

    @property
    def key(self) -> str:
        return target_key(self.target)

    def as_dict(self) -> dict:
        return {"table": self.target.target_table, "base_path": self.target.target_base_path,
                "operation": self.target.op, "state": self.state, "rounds": self.rounds, "commits": self.commits,
                "records_written": self.records_written, "failures": len(self.failures),
                "last_error": self.last_error, "kind": self.last_kind, "commit": self.last_commit,
                "checkpoint": self.checkpoint, "skipped": self.commits == 0}


class FairSlots:
    """At most `n` holders at once, granted in the order asked (a table whose rounds are short cannot
    take the slot again ahead of one that has waited): a FIFO semaphore, usable as a context manager."""

    def __init__(self, n: int):
        self.free = max(1, n)
        self.queue: deque[object] = deque()
        self.cond = threading.Condition()

    def __enter__(self) -> FairSlots:
        me = object()
        with self.cond:
            self.queue.append(me)
            while self.queue[0] is not me or self.free == 0:
                self.cond.wait()
            self.queue.popleft()
            self.free -= 1
            self.cond.notify_all()
        return self

    def __exit__(self, *exc: object) -> None:
        with self.cond:
            self.free += 1
            self.cond.notify_all()


class JvmGone(Exception):
    """The Spark driver's JVM is unreachable: no table can go on; the supervisor restarts the job."""


def _is_jvm_gone(exc: BaseException) -> bool:
    try:
        from py4j.protocol import Py4JNetworkError  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - pyspark brings py4j
        return False
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, Py4JNetworkError | ConnectionRefusedError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def classify(exc: BaseException, t: Target) -> tuple[str, str]:
    """(kind, one-line message) of a failed round, as jobs/stream/main.py reports them."""
    try:
        raise_if_conversion_failed(exc)
    except JobInputError as conv:
        exc = conv
    if isinstance(exc, JobInputError):
        return exc.kind, str(exc)
    if is_disk_full(exc):
        return DiskFull.kind, str(disk_full_in_round(t.target_table, t.target_base_path, exc))
    return "job", f"{t.target_table}: {root_cause(exc, 600)}"


def _write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(payload))
    tmp.replace(path)


class AllTables:
    """The loops of one `stream --all` job."""

    def __init__(self, spark, targets: list[Target], props: dict[int, dict[str, str]], settings: LoopSettings,
                 run_round: Callable, stop_requested: Callable[[], bool], log: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.monotonic):
        self.spark, self.settings, self.run_round = spark, settings, run_round
        self.stop_requested, self.log, self.clock = stop_requested, log, clock
        self.loops = [TableLoop(t) for t in targets]
        self.props = props
        self.slots = FairSlots(settings.max_parallel)
        self.fatal: BaseException | None = None
        self._wake = threading.Event()  # set on a fatal error: every loop leaves its wait
        self._lock = threading.Lock()

    # ---- the loops --------------------------------------------------------------------------
    def run(self) -> list[dict]:
        threads = [threading.Thread(target=self._loop, args=(lp,), name=f"hudi-cdc-{lp.key}", daemon=True)
                   for lp in self.loops]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if self.fatal is not None:
            raise self.fatal
        return [lp.as_dict() for lp in self.loops]

    def _stopping(self) -> bool:
        return self.fatal is not None or self.stop_requested()

    def _wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, in steps of at most 1 s; False when the job is stopping."""
        end = self.clock() + seconds
        while True:
            if self._stopping():
                return False
            left = end - self.clock()
            if left <= 0:
                return True
            self._wake.wait(min(1.0, left))

    def _loop(self, lp: TableLoop) -> None:
        t = lp.target
        pool = lp.key
        interval = t.min_sync_interval_seconds
        while not self._stopping():
            started = self.clock()
            with self.slots:
                if self._stopping():
                    break
                self._set_pool(pool)
                try:
                    result = self.run_round(self.spark, t, self.props[id(t)], self._log_for(lp))
                except Exception as exc:  # noqa: BLE001 - one table's failure must not stop the others
                    if _is_jvm_gone(exc):
                        self._fail_all(JvmGone(f"{t.target_table}: the Spark driver is gone ({root_cause(exc, 300)})"))
                        break
                    self._failed(lp, exc)
                    if lp.state == "given_up":
                        self._check_all_given_up(lp)
                        return
                    wait = lp.retry_at - self.clock()
                else:
                    self._succeeded(lp, result)
                    wait = interval - (self.clock() - started)
            if t.max_rounds is not None and lp.rounds >= t.max_rounds:
                break
            if not self._wait(max(0.0, wait)):
                break
        if lp.state != "given_up":
            lp.state = "stopped"

    def _set_pool(self, pool: str) -> None:
        sc = getattr(self.spark, "sparkContext", None)
        if sc is not None:
            sc.setLocalProperty("spark.scheduler.pool", pool)

    def _log_for(self, lp: TableLoop) -> Callable[[str], None]:
        """The round's log, less the repeats of an idle table: "no new files" once until the table
        writes again (50 idle tables would otherwise say it every interval)."""
        def log(message: str) -> None:
            if IDLE_MARK in message:
                if lp.idle_said:
                    return
                lp.idle_said = True
                message += " (said once until new files land)"
            else:
                lp.idle_said = False
            self.log(message)

        return log

    def _succeeded(self, lp: TableLoop, result: RoundResult) -> None:
        lp.rounds += 1
        lp.consecutive_before, lp.consecutive = lp.consecutive, 0
        lp.state = "running"
        if result.commit:
            lp.commits += 1
            lp.last_commit = result.commit
            lp.records_written += result.records_written
        lp.checkpoint = result.checkpoint or lp.checkpoint
        if lp.last_error is not None:  # its failure is history: `status` stops showing it
            self.log(f"{lp.target.target_table}: recovered after {lp.consecutive_before} failed round(s)"
                     + (f", committed {result.commit}" if result.commit else " (nothing new to write)"))
            lp.last_error = None
            self._clear(lp)

    def _failed(self, lp: TableLoop, exc: BaseException) -> None:
        s = self.settings
        now = self.clock()
        kind, message = classify(exc, lp.target)
        lp.rounds += 1
        lp.consecutive += 1
        lp.failures = [f for f in lp.failures if now - f <= s.window] + [now]
        lp.last_error, lp.last_kind = message, kind
        if len(lp.failures) > s.max_failures:
            lp.state = "given_up"
            self.log(f"{lp.target.target_table}: round failed ({message}); given up after {len(lp.failures)} "
                     f"failures within {s.window:.0f}s (stream.max_restarts={s.max_failures}); the other tables go on")
            self._record(lp, message, None)
            return
        wait = min(s.backoff_max, s.backoff * (2 ** (lp.consecutive - 1)))
        lp.retry_at = now + wait
        lp.state = "backing_off"
        self.log(f"{lp.target.target_table}: round failed ({message}); failure {len(lp.failures)} "
                 f"(at most {s.max_failures} within {s.window:.0f}s), retrying in {wait:.0f}s; the other tables go on")
        self._record(lp, message, wait)

    def _record(self, lp: TableLoop, message: str, wait: float | None) -> None:
        """The table's failure file (status.py's format, plus the loop's state): `hudi-cdc status` shows
        it until a later commit of the table."""
        if not self.settings.status_dir:
            return
        path = Path(self.settings.status_dir) / f"{lp.key}.json"
        payload = {"label": LABEL, "message": message, "at": time.time(), "kind": lp.last_kind,
                   "state": lp.state, "failures": len(lp.failures), "pid": os.getpid(),
                   "retry_at": None if wait is None else time.time() + wait}
        try:
            _write_json(path, payload)
        except OSError as exc:  # the status file is a report: its loss must not stop the table
            self.log(f"{lp.target.target_table}: could not record the failure in {path}: {exc}")

    def _clear(self, lp: TableLoop) -> None:
        if self.settings.status_dir:
            path = Path(self.settings.status_dir) / f"{lp.key}.json"
            try:
                if json.loads(path.read_text()).get("label") == LABEL:  # ours, not another command's
                    path.unlink()
            except (OSError, ValueError):
                pass  # no file (or not readable): nothing of ours to clear

    def _fail_all(self, exc: BaseException) -> None:
        with self._lock:
            if self.fatal is None:
                self.fatal = exc
        self._wake.set()

    def _check_all_given_up(self, last: TableLoop) -> None:
        with self._lock:
            if all(lp.state == "given_up" for lp in self.loops) and self.fatal is None:
                self.fatal = AllGivenUp(last.last_kind or "job", f"{LABEL}: every table given up; last failure: "
                                        f"{last.last_error}")
        if self.fatal is not None:
            self._wake.set()


class AllGivenUp(Exception):
    """Every table of the job failed more than its bound: the job ends with the last table's kind."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
