"""A continuous stream's MoR compaction beside its rounds, in the same Spark application (opt-in).

Inline (the default), the round whose commit reaches ``hoodie.compact.inline.max.delta.commits``
rewrites every file group with logs before it returns: at 10M rows that round takes 50-77 s more.
With ``hoodie.streamer.hudi_cdc.compaction: async`` a continuous stream (`stream` without ``--once``,
`stream --all`, `run`) only schedules the compaction in that commit (``hoodie.compact.schedule.inline``)
and a thread of this application executes the plan (Hudi's ``run_compaction`` procedure,
``op => 'execute'``) in a FAIR pool of its own while the next rounds go on, as HoodieStreamer's
``--continuous`` mode does. Rounds get every freed task slot before it (rounds_first).

Not the default, because it did not pay on the 2-core machine the project measures on
(benchmarks/results/2026-11-24-async-compaction.md): the compaction's tasks (one file group each,
~7 s) hold both cores, Spark does not preempt them, and every stage of a round beside it waits for one
to end, so that round took as long as the compaction (~70 s) and p95 freshness at 2,000 events/s into
10M rows was 82.5 s against 62.9 s inline. It is for executors with cores to spare beside the rounds.

Rounds write into file groups while their compaction runs (Hudi logs those changes against the new
slice, and logkeys.py reads them while it is pending); the writer and the compaction share Hudi's
in-process lock, which guards the metadata table (the writer's own ``hoodie.write.lock.*`` settings,
when the pipeline sets a lock provider, go to both). At most one compaction per table at a time; a
failed one is logged with its cause and Hudi rolls it back and runs it again after the next round (a
compaction never changes what readers see, only how many log files they merge). A stopping stream
waits for the compaction in flight.

A run that ends (``--once``) always compacts inline, and so does a table that does not compact here
at all (``hoodie.compact.inline: false``) or whose lock or compaction settings hold a value with ','
or '=' (the procedure's ``options`` list cannot carry it, e.g. a ZooKeeper ensemble
``host1:2181,host2:2181``).
"""

from __future__ import annotations

import calendar
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from xml.sax.saxutils import quoteattr

from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.instants import COMPLETED, table_instants
from hudi_cdc.common.properties import local_path

TRIGGER_PROP = "hoodie.compact.inline.trigger.strategy"
MAX_SECONDS_PROP = "hoodie.compact.inline.max.delta.seconds"
MODE_PROP = "hoodie.streamer.hudi_cdc.compaction"  # inline (default) | async (continuous streams only)
IN_PROCESS_LOCK = "org.apache.hudi.client.transaction.lock.InProcessLockProvider"
LOCK_PROVIDER = "hoodie.write.lock.provider"
# writer settings the compaction's write client must share (the lock, the table version: without it the
# procedure's write client would upgrade a version-6 table to its own default) or that shape its execution
_SHARED = ("hoodie.write.lock.", "hoodie.write.concurrency.mode", "hoodie.memory.", "hoodie.compaction.",
           "hoodie.metadata.enable", "hoodie.write.table.version", "hoodie.write.auto.upgrade")


def is_async(continuous: bool, table_type: str, props: dict[str, str]) -> bool:
    """Whether this target's compaction runs beside its rounds (module docstring)."""
    compacts = (props.get("hoodie.compact.inline") or "false").strip().lower() == "true"
    mode = (props.get(MODE_PROP) or "inline").strip().lower()
    return (continuous and table_type == "MERGE_ON_READ" and compacts and mode == "async"
            and not _unpassable(props) and not on_version_6(props))


def on_version_6(props: dict[str, str]) -> bool:
    """Table version 6 compacts inline only: measured, a round written into a v6 file group while its
    compaction was pending beside it lost an update once the compaction completed (a log appended under
    the slice being compacted; tests/jobs/test_async_compaction.py runs on 9), so async is not offered there."""
    return (props.get("hoodie.write.table.version") or "").strip() == "6"


def _unpassable(opts: dict[str, str]) -> list[str]:
    """Shared settings whose value run_compaction's `options` (k=v,k=v) cannot carry: such a table
    compacts inline."""
    return [k for k, v in sorted(opts.items()) if k.startswith(_SHARED) and ("," in v or "=" in v)]


def pool_of(target_pool: str) -> str:
    """The FAIR pool a target's compaction runs in (beside its rounds' pool)."""
    return f"{target_pool}_compaction"


def rounds_first(round_pools: Iterable[str]) -> dict[str, str]:
    """Spark settings giving rounds a free core before any compaction: each round pool (``default``
    and those named) gets a minimum share larger than the application's cores, so the FAIR scheduler
    hands every freed slot to a round with tasks waiting; compaction pools (unlisted: weight 1, no
    minimum share) take the rest. Spark does not preempt: a round waits at most for one compaction
    task (one file group) to end. With equal shares a 2-core driver gave a round beside a 10M-row
    compaction a single slot and the round took as long as the compaction (benchmarks/results)."""
    pools = "".join(f"<pool name={quoteattr(name)}><schedulingMode>FIFO</schedulingMode><weight>1</weight>"
                    f"<minShare>10000</minShare></pool>" for name in sorted({"default", *round_pools}))
    with tempfile.NamedTemporaryFile("w", prefix="hudi-cdc-pools-", suffix=".xml", delete=False) as fh:
        fh.write(f'<?xml version="1.0"?><allocations>{pools}</allocations>')
    return {"spark.scheduler.mode": "FAIR", "spark.scheduler.allocation.file": fh.name}


def writer_options(opts: dict[str, str]) -> None:
    """The round's writer: schedule the compaction in the commit, do not run it there; the lock it
    shares with the compaction (Hudi's in-process one unless the pipeline names a provider)."""
    opts["hoodie.compact.inline"] = "false"
    opts["hoodie.compact.schedule.inline"] = "true"
    opts.setdefault(LOCK_PROVIDER, IN_PROCESS_LOCK)


def pending(base_path: str) -> list[str]:
    """Requested times of the table's compactions not completed yet (requested or in flight)."""
    return pending_in(table_instants(local_path(base_path)))


def pending_in(instants) -> list[str]:
    """`pending` of a timeline already listed (a completed compaction keeps its plan's files)."""
    done = {i.requested_time for i in instants if i.state == COMPLETED}
    return sorted({i.requested_time for i in instants if i.is_compaction and i.requested_time not in done})


def procedure_sql(base_path: str, opts: dict[str, str], op: str = "execute",
                  extra: dict[str, str] | None = None) -> str:
    """The Spark SQL call that executes the table's pending compactions (`op` scheduleAndExecute: plans
    one first) with the writer's shared settings (`options` is Hudi's k=v,k=v list: a value holding a
    comma cannot go through it)."""
    shared = {k: v for k, v in sorted(opts.items()) if k.startswith(_SHARED)} | (extra or {})
    bad = _unpassable(shared)
    if bad:
        raise ValueError(f"{bad[0]} holds ',' or '=', which run_compaction's options cannot carry")
    quoted = base_path.replace("'", "\\'")
    text = ",".join(f"{k}={v}" for k, v in shared.items()).replace("'", "\\'")
    return f"CALL run_compaction(op => '{op}', path => '{quoted}', options => '{text}')"


def _instant_epoch(instant: str) -> float:
    digits = instant[:14]
    stamp = time.strptime(digits, "%Y%m%d%H%M%S")
    return calendar.timegm(stamp) + (int(instant[14:17]) / 1000.0 if len(instant) >= 17 else 0.0)


def overdue(base_path: str, props: dict[str, str], now: float | None = None) -> str | None:
    """The oldest delta commit a quiet MoR table's compaction is overdue for, else None: with a time
    trigger (``compaction_max_seconds``: Hudi's NUM_OR_TIME), Hudi checks it only when a round writes,
    so the last changes before a quiet spell would wait for the next write; a round that finds no new
    file compacts them once they waited that long (none while a compaction is pending)."""
    if props.get(TRIGGER_PROP, "").upper() not in ("NUM_OR_TIME", "TIME_ELAPSED"):
        return None
    seconds = int(props.get(MAX_SECONDS_PROP) or 0)
    if seconds <= 0:
        return None
    instants = table_instants(local_path(base_path))
    done = {i.requested_time for i in instants if i.state == COMPLETED}
    compactions = [i.requested_time for i in instants if i.is_compaction]
    if any(c not in done for c in compactions):
        return None  # one is pending: executing it is the compactor's (or the next write's) work
    since = max(compactions, default="")
    waiting = sorted(i.requested_time for i in instants
                     if i.action == "deltacommit" and i.state == COMPLETED and i.requested_time > since)
    if not waiting:
        return None
    now = time.time() if now is None else now
    return waiting[0] if now - _instant_epoch(waiting[0]) >= seconds else None


def look_every(table_type: str, props: dict[str, str]) -> float | None:
    """How often `stream --all` looks whether a quiet table's compaction is `overdue` (None: never, the
    table has no time trigger): a tenth of the bound, between 5 s and a minute."""
    if table_type != "MERGE_ON_READ" or props.get(TRIGGER_PROP, "").upper() not in ("NUM_OR_TIME", "TIME_ELAPSED"):
        return None
    seconds = int(props.get(MAX_SECONDS_PROP) or 0)
    return None if seconds <= 0 else max(5.0, min(60.0, seconds / 10))


def after_empty_round(spark, t, props: dict[str, str], existing: bool, result, log: Callable[[str], None]):
    """A round that found no new file (a `Target`, its `RoundResult` returned as it is): a quiet MoR
    table's overdue compaction runs."""
    if existing and t.table_type == "MERGE_ON_READ":
        compact_overdue(spark, t.target_table, t.target_base_path, props, log)
    return result


def compact_overdue(spark, table: str, base_path: str, props: dict[str, str], log: Callable[[str], None]) -> bool:
    """Compact a quiet table whose logs waited past ``compaction_max_seconds`` (see `overdue`)."""
    oldest = overdue(base_path, props)
    if oldest is None:
        return False
    log(f"{table}: logs since delta commit {oldest} waited past {props.get(MAX_SECONDS_PROP)} s: compacting")
    # the procedure's scheduling asks Hudi's trigger again, which counts this table's time from the last
    # compaction: a plan now whatever it says
    now_trigger = {TRIGGER_PROP: "NUM_COMMITS", "hoodie.compact.inline.max.delta.commits": "1"}
    spark.sql(procedure_sql(base_path, props, "scheduleAndExecute", now_trigger)).collect()
    return True


class Compactor:
    """The compaction threads of one application: one at a time per table."""

    def __init__(self, spark, log: Callable[[str], None] = print):
        self.spark, self.log = spark, log
        self._running: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self.failures: dict[str, str] = {}  # base path -> the last failure's cause (until one succeeds)

    def after_round(self, table: str, base_path: str, opts: dict[str, str], pool: str) -> None:
        """Start executing the table's pending compaction unless one runs already."""
        with self._lock:
            th = self._running.get(base_path)
            if th is not None and th.is_alive():
                return
            instants = pending(base_path)
            if not instants:
                return
            th = threading.Thread(target=self._execute, args=(table, base_path, opts, pool, instants),
                                  name=f"hudi-cdc-compaction-{pool}", daemon=True)
            self._running[base_path] = th
            th.start()

    def _execute(self, table: str, base_path: str, opts: dict[str, str], pool: str, instants: list[str]) -> None:
        started = time.monotonic()
        sc = getattr(self.spark, "sparkContext", None)
        if sc is not None:
            sc.setLocalProperty("spark.scheduler.pool", pool)
        self.log(f"{table}: compacting {', '.join(instants)} beside the rounds")
        try:
            self.spark.sql(procedure_sql(base_path, opts)).collect()
        except Exception as exc:  # noqa: BLE001 - logged; Hudi rolls it back and it runs again after the next round
            self.failures[base_path] = root_cause(exc, 400)
            self.log(f"{table}: compaction {', '.join(instants)} failed ({self.failures[base_path]}); "
                     "the table stays exact (readers merge its logs), it is tried again after the next round")
            return
        self.failures.pop(base_path, None)
        self.log(f"{table}: compacted {', '.join(instants)} in {time.monotonic() - started:.1f} s")

    def wait(self) -> None:
        """Until every compaction in flight has ended (a stopping stream leaves none half done)."""
        with self._lock:
            threads = [th for th in self._running.values() if th.is_alive()]
        if threads:
            self.log(f"waiting for {len(threads)} compaction(s) in flight to finish")
        for th in threads:
            th.join()
