"""`stream --all`: every target of the job in ONE Spark application, rounds picked by a scheduler.

One dispatcher (`AllTables.run`) looks at every table about once a second and starts the rounds the
pick says (schedule.py: the longest waiting table with landed files first, never two rounds of one
table at once) on a pool of `max_parallel` worker threads (`--max-parallel-rounds`, 0: from the cores),
each round in its table's pool of Spark's FAIR scheduler (``spark.scheduler.pool`` = the target), so one
table's long round does not hold the others' behind it. A table with nothing landed since its last
commit has no round (no listing of its folder unless the folder changed, no commit, no file). A round
that fails is logged with its cause, recorded in the table's failure file (what ``hudi-cdc status``
shows) and the table backs off exponentially (``backoff`` doubling up to ``backoff_max``) while the
others go on; a table with more than ``max_failures`` failures within ``window`` seconds is given up
until the application restarts. The job ends when every table is given up (the last failure's error),
when the JVM is gone, or on the stop file (the rounds in flight finish, none starts).

Light on purpose: stdlib + pyspark (the job's rules, jobs/streamer.py).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from hudi_cdc.common.causes import root_cause
from hudi_cdc.jobs.stream.aligned import Generations
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.errors import DiskFull, JobInputError, disk_full_in_round, is_disk_full
from hudi_cdc.jobs.stream.round import RoundResult
from hudi_cdc.jobs.stream.schedule import Landing, Waiting, next_ready, pick
from hudi_cdc.jobs.stream.typed import raise_if_conversion_failed

SUFFIX = {"COPY_ON_WRITE": "cow", "MERGE_ON_READ": "mor"}
LABEL = "stream-all"
FAIR = {"spark.scheduler.mode": "FAIR"}
IDLE_MARK = ": no new files under "  # what round.py says of a round with nothing to read
TICK = 1.0  # seconds between the dispatcher's looks at the tables (sooner when a round ends)


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
    failures: list[float] = field(default_factory=list)  # clock times of failed rounds
    consecutive: int = 0
    consecutive_before: int = 0  # the failed rounds a success ended
    idle_said: bool = False
    retry_at: float = 0.0
    state: str = "running"  # running | backing_off | given_up | stopped
    last_error: str | None = None
    last_kind: str | None = None
    last_commit: str | None = None
    checkpoint: str | None = None
    running: bool = False  # in a round (the dispatcher starts none beside it)
    checked: bool = False  # its checkpoint is known: what is pending is known from the landing
    tried: bool = False  # the dispatcher tried reading its checkpoint (else the first round does)
    ready_at: float = 0.0  # no round before (its interval, its backoff)
    last_finished: float = 0.0
    quiet_look_at: float = 0.0  # when its quiet work (`Quiet`) is looked at next
    quiet_due: float | None = None  # since when its quiet work is due (a round is owed)

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


@dataclass(frozen=True)
class Quiet:
    """Work a table's round does when no file landed (a quiet MoR table's overdue compaction): whether it
    is due now, looked at every `every` seconds while the table has nothing pending."""

    every: float
    due: Callable[[], bool]


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
    """The scheduler and the rounds of one `stream --all` job."""

    def __init__(self, spark, targets: list[Target], props: dict[int, dict[str, str]], settings: LoopSettings,
                 run_round: Callable, stop_requested: Callable[[], bool], log: Callable[[str], None] = print,
                 clock: Callable[[], float] = time.time, landing: Callable[[Target], Landing | None] | None = None,
                 checkpoint: Callable[[Target], str | None] | None = None, quiet: dict[str, Quiet] | None = None,
                 generations: Generations | None = None):
        """`landing`: each target's landing folder (what is pending); without it every table is always due
        (a round per interval, as tests of the loops want). `checkpoint`: a table's checkpoint read without
        a round (else, or when it fails, the table's first round reads it). `generations`: the rounds aligned
        on capture's cuts (aligned.py)."""
        self.spark, self.settings, self.run_round, self.read_checkpoint = spark, settings, run_round, checkpoint
        self.stop_requested, self.log, self.clock = stop_requested, log, clock
        self.loops = [TableLoop(t) for t in targets]
        found = {lp.key: landing(lp.target) for lp in self.loops} if landing else {}
        self.landings = {k: v for k, v in found.items() if v is not None}
        self.props = props
        self.quiet = quiet or {}
        self.parallel = max(1, settings.max_parallel)
        self.fatal: BaseException | None = None
        self._wake = threading.Event()  # a round ended, or a fatal error
        self._lock = threading.Lock()
        self.started_at = clock()
        self.generations = generations

    # ---- the dispatcher ---------------------------------------------------------------------
    def run(self) -> list[dict]:
        by_key = {lp.key: lp for lp in self.loops}
        with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="hudi-cdc-round") as pool:
            while not self._stopping():
                now = self.clock()
                states = [self._waiting(lp) for lp in self.loops]
                running = sum(1 for lp in self.loops if lp.running)
                if self.generations is not None:
                    states = self._aligned(states, running)
                if running == 0 and all(w.done for w in states):
                    break
                for key in pick(states, now, self.parallel - running):
                    lp = by_key[key]
                    lp.running = True
                    if self.generations is not None:
                        lp.target.cut_ceiling = self.generations.ceiling(key)
                    pool.submit(self._one_round, lp)
                ready = next_ready(states, now)
                self._wake.wait(max(0.01, min(TICK, (ready - now) if ready is not None else TICK)))
                self._wake.clear()
        for lp in self.loops:
            if lp.state != "given_up":
                lp.state = "stopped"
        if self.fatal is not None:
            raise self.fatal
        return [lp.as_dict() for lp in self.loops]

    def _aligned(self, states: list[Waiting], running: int) -> list[Waiting]:
        """The next generation when this one is done; tables through this one wait for it (aligned.py)."""
        assert self.generations is not None
        backing = {lp.key for lp in self.loops if lp.state in ("backing_off", "given_up")}  # never waited for
        idle = {w.key: w.pending_since is None or w.key in backing for w in states}
        self.generations.next_generation(idle.__getitem__, running)
        return [w if self.generations.eligible(w.key) else replace(w, pending_since=None) for w in states]

    def _waiting(self, lp: TableLoop) -> Waiting:
        """The table as the pick sees it; its landing looked at only when it is not in a round."""
        t = lp.target
        done = lp.state == "given_up" or (t.max_rounds is not None and lp.rounds >= t.max_rounds)
        pending: float | None = None
        if not lp.running and not done:
            landing = self.landings.get(lp.key)
            if landing is not None and not lp.checked and not lp.tried and self.read_checkpoint is not None:
                lp.tried = True
                try:
                    lp.checkpoint, lp.checked = self.read_checkpoint(t), True
                except Exception:  # noqa: BLE001 - the table's first round reads it again, and says why not
                    pass
            if landing is None or not lp.checked:  # unknown checkpoint: the first round reads it
                pending = lp.last_finished or self.started_at
            else:
                try:
                    pending = landing.pending_since(lp.checkpoint)
                except OSError:
                    pending = self.clock()  # the round reports what is wrong with the folder
            if pending is None:
                pending = self._quiet_due(lp)
        return Waiting(lp.key, pending, lp.last_finished, lp.ready_at, lp.running, done)

    def _quiet_due(self, lp: TableLoop) -> float | None:
        """Since when a table with nothing landed owes a round for its quiet work (None: it does not)."""
        work = self.quiet.get(lp.key)
        now = self.clock()
        if work is None or lp.quiet_due is not None or now < lp.quiet_look_at:
            return lp.quiet_due
        lp.quiet_look_at = now + work.every
        try:
            due = work.due()
        except OSError as exc:  # the timeline could not be read: the next look, or the next round, says
            self.log(f"{lp.target.target_table}: could not look at its compaction ({exc})")
            due = False
        lp.quiet_due = now if due else None
        return lp.quiet_due

    def _stopping(self) -> bool:
        return self.fatal is not None or self.stop_requested()

    def _one_round(self, lp: TableLoop) -> None:
        t = lp.target
        started = self.clock()
        lp.quiet_due = None  # this round does it
        landing = self.landings.get(lp.key)
        seen = landing.seen() if landing is not None else None  # before the round looks (Landing.hold)
        try:
            self._set_pool(lp.key)
            try:
                result = self.run_round(self.spark, t, self.props[id(t)], self._log_for(lp))
            except Exception as exc:  # noqa: BLE001 - one table's failure must not stop the others
                if _is_jvm_gone(exc):
                    self._fail_all(JvmGone(f"{t.target_table}: the Spark driver is gone ({root_cause(exc, 300)})"))
                    return
                self._failed(lp, exc)
                if self.generations is not None:
                    self.generations.finished(lp.key, None, False, failed=True)
                lp.ready_at = lp.retry_at
                if lp.state == "given_up":
                    self._check_all_given_up(lp)
            else:
                self._succeeded(lp, result)
                if self.generations is not None:
                    self.generations.finished(lp.key, result.cut, bool(result.files))
                lp.checked = True
                lp.ready_at = started + t.min_sync_interval_seconds
                if landing is not None and result.skipped and t.cut_ceiling is None:
                    landing.hold(seen)  # nothing taken: nothing pending until a folder changes from what it saw
                # under a generation's ceiling the table is through it instead (aligned.py): its files may end on
                # a cut newer than the ceiling, already written, which no folder change would announce
        except BaseException as exc:  # noqa: BLE001 - a bug in the bookkeeping ends the job, said
            self._fail_all(exc)
        finally:
            lp.last_finished = self.clock()
            lp.running = False
            self._wake.set()

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
