"""``capture_once``: Debezium's PostgreSQL connector lands every change committed so far, then exits.

A snapshot is taken when the pipeline has no offsets yet; after that the slot is read from the
committed offsets (no new snapshot). To know when "everything committed so far" has arrived, the
run writes a transactional logical-decoding message into the WAL (pg_logical_emit_message, with a
prefix of its slot and a content of its run id) and stops when that message comes out of the slot:
every transaction committed before the run started is decoded before it. Until the slot exists
(first run) the message is repeated; only this run's message counts.

Order of durability: records are landed in files (landing.Landing: fsync + rename on a local root,
one PUT of the whole object on an s3:// root) and only then
marked processed; the engine commits offsets after every batch (offset.flush.interval.ms=0) up to
the last record that is in a landed file. A crash can redeliver records (at least once, as Kafka
Connect), never lose them.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hudi_cdc import sources
from hudi_cdc.capture import engine as jvm
from hudi_cdc.capture import signals, tablelife
from hudi_cdc.capture.consumer import Consumer, make_completion, make_java_consumer
from hudi_cdc.capture.decimals import OddDecimals
from hudi_cdc.capture.defaults import NewColumns
from hudi_cdc.capture.landing import Landing
from hudi_cdc.capture.offsets import GoodCopies, guard_offsets, offsets_file, save_good_copy, work_dir
from hudi_cdc.capture.oldkey import OldKeys
from hudi_cdc.capture.pg_arrays import PgArrays
from hudi_cdc.capture.pg_numerics import PgNumerics
from hudi_cdc.capture.registrar import Registrar
from hudi_cdc.capture.specials import SourceValues
from hudi_cdc.capture.textforms import TextForms
from hudi_cdc.capture.txn import Cuts, transaction_topic
from hudi_cdc.capture.unwrap import Unwrap, split_transforms
from hudi_cdc.capture.zerodates import ZeroDates
from hudi_cdc.common import s3, storage
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import HudiCdcError, SourceError
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER
from hudi_cdc.sources import routes
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import CapturePart

Progress = Callable[[str], None]
_LOG = logging.getLogger("hudi_cdc")
DEFAULT_FLUSH_SIZE = 1000


def engine_properties(pipeline: Pipeline, password: str | None) -> dict[str, str]:
    """The embedded engine's configuration (Kafka Connect source connector properties): the source's."""
    return sources.for_pipeline(pipeline).engine_properties(pipeline, password)


@dataclass
class CaptureResult:
    events: int = 0
    files: int = 0
    seconds: float = 0.0
    events_per_second: float = 0.0
    snapshot: bool = False
    topics: dict[str, dict] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def combined(cls, results: list[CaptureResult]) -> CaptureResult:
        """One result for runs one after the other (a continuous capture that restarted its engine)."""
        out = cls(snapshot=any(r.snapshot for r in results))
        for r in results:
            out.events += r.events
            out.files += r.files
            out.seconds = round(out.seconds + r.seconds, 2)
            for topic, t in r.topics.items():
                mine = out.topics.setdefault(topic, {"records": 0, "files": 0, "next_offset": 0})
                mine["records"] += t["records"]
                mine["files"] += t["files"]
                mine["next_offset"] = t["next_offset"]
        out.events_per_second = round(out.events / out.seconds, 1) if out.seconds else 0.0
        return out


def _topic_dirs(pipeline: Pipeline) -> dict[str, str]:
    """Each topic's landing folder: a local path, or an s3:// prefix (storage.py reaches both)."""
    return {t.landed_topic: storage.local(pipeline.landing_dir(t.topic)) for t in src.source_tables(pipeline)}


def _check_landing_root(pipeline: Pipeline) -> None:
    """An s3:// landing root's bucket answers before Debezium starts (one line naming the endpoint)."""
    if s3.is_s3(pipeline.source_root):
        s3.check_bucket(pipeline.source_root, pipeline.s3_endpoint())


def capture_once(pipeline: Pipeline, progress: Progress = log_progress, *, flush_size: int | None = None,
                 timeout_seconds: float | None = None, marker_interval: float = 2.0) -> CaptureResult:
    """Snapshot if there are no offsets yet, then every change committed so far; then return."""
    return _capture(pipeline, progress, flush_size, timeout_seconds=timeout_seconds, marker_interval=marker_interval)


def capture_continuous(pipeline: Pipeline, stop: threading.Event, progress: Progress = log_progress, *,
                       flush_size: int | None = None, rotate_seconds: float = 60.0) -> CaptureResult:
    """Snapshot if there are no offsets yet, then every change as it comes, until `stop` is set. A
    file is closed at flush_size records or after rotate_seconds open (as the sink's
    rotate.schedule.interval.ms); on stop, open files are dropped: their records were never
    committed, the next run gets them again."""
    if sources.for_pipeline(pipeline).signals is None:  # no incremental snapshots: no restarts for them
        return _capture(pipeline, progress, flush_size, stop=stop, rotate_seconds=rotate_seconds)
    # a table requested by `capture snapshot` and not captured yet: the engine restarts (signals.py)
    results = signals.continuous(pipeline, lambda p, snaps: _capture(
        p, progress, flush_size, stop=stop, rotate_seconds=rotate_seconds, snapshots=snaps), progress)
    return CaptureResult.combined(results)


def _capture(pipeline: Pipeline, progress: Progress, flush_size: int | None, *, timeout_seconds: float | None = None,
             marker_interval: float = 2.0, stop: threading.Event | None = None,
             rotate_seconds: float = 60.0, snapshots: signals.Snapshots | None = None) -> CaptureResult:
    continuous = stop is not None
    started = time.monotonic()
    # a route's pattern: the shards the database has now (sources/routes.py)
    pipeline = routes.resolved(pipeline, lambda: sources.for_pipeline(pipeline).table_names(pipeline))
    pipeline = tablelife.runnable(pipeline, progress)  # a renamed or re-created table stops no other (tablelife.py)
    tables = src.source_tables(pipeline)
    password = src.password(pipeline)
    props = engine_properties(pipeline, password)
    flush_size = flush_size or src.database(pipeline).flush_size or DEFAULT_FLUSH_SIZE
    run_id = uuid.uuid4().hex
    source = sources.for_pipeline(pipeline)
    kind = source.capture_part(pipeline, run_id)
    note = kind.prepare(progress)
    _check_landing_root(pipeline)
    snapshot = not offsets_file(pipeline).exists()
    if snapshot:
        progress(f"no offsets yet: Debezium takes a snapshot of {', '.join(t.qualified for t in tables)}{note}")

    wd = work_dir(pipeline)
    wd.mkdir(parents=True, exist_ok=True)  # the offset store's directory, also when the JVM runs already
    stack = kind.jvm_stack(progress)
    log = jvm.start_jvm(wd) if stack is None else jvm.start_jvm(wd, stack=stack[0], stack_name=stack[1])
    guard_offsets(pipeline, progress)
    kind.guard(progress)

    landing = Landing(_topic_dirs(pipeline), pipeline.source.partition, flush_size,
                      storage.local(pipeline.source_root), staging=wd / "staging")
    # the unwrap SMT runs here, not in the engine, so TRUNCATE survives (unwrap.py)
    engine_props, smt = split_transforms(props)
    consumer = Consumer(landing, kind, continuous, Unwrap(smt) if smt else None)
    consumer.before_batch = GoodCopies(pipeline)
    if engine_props.get("signal.data.collection"):  # the signal table's rows are signals, not a table's changes
        consumer.strays.add(kafka_topic(f"{src.topic_prefix(pipeline)}.{engine_props['signal.data.collection']}"))
    if source.toast_placeholders:  # a key change's TOASTed values come from the old key's row (oldkey.py)
        consumer.oldkeys = OldKeys(engine_props.get("unavailable.value.placeholder") or DEFAULT_PLACEHOLDER)
    connect = source.lookup_connection(pipeline)
    if connect is not None and source.special_values is not None:  # values the events cannot carry (specials.py)
        consumer.specials = SourceValues(_SPECIAL_VALUES[source.special_values](connect))
    if connect is not None and source.unknown_type_text:  # types Debezium does not know: their text (textforms.py)
        consumer.textforms = TextForms(connect, {t.landed_topic: (t.schema, t.table) for t in tables})
    if source.unknown_type_text:  # PostgreSQL: numeric(3,5), numeric(5,-2) as decimals Avro takes (decimals.py)
        consumer.decimals = OddDecimals()
    if connect is not None and source.omitted_arrays:  # interval[] / money[]: read by key (pg_arrays.py)
        consumer.arrays = PgArrays(connect, {t.landed_topic: (t.schema, t.table) for t in tables},
                                   {t.landed_topic: pipeline.shape(t.name) for t in tables})
    if source.signals is not None:
        consumer.snapshots = snapshots or signals.Snapshots(pipeline, progress)
    if source.transaction_boundaries:
        consumer.cuts = Cuts(landing, storage.local(pipeline.source_root),
                             transaction_topic(src.topic_prefix(pipeline)), rotate_seconds if continuous else None,
                             position=kind.position)
    registrar = Registrar(pipeline, {t.landed_topic: t.name for t in tables}, progress)  # schema changes -> registry
    new_columns = NewColumns(pipeline, source, landing, progress)  # ADD COLUMN ... DEFAULT (defaults.py)
    landing.on_file_start = new_columns.file_started
    state: dict = {}
    engine = _build_engine(engine_props, consumer, state)
    thread = threading.Thread(target=engine.run, name="debezium-engine", daemon=True)
    thread.start()
    try:
        _wait(consumer, thread, kind, registrar, new_columns, progress, started=started, log=log, stop=stop,
              rotate_seconds=rotate_seconds, timeout_seconds=timeout_seconds, marker_interval=marker_interval)
    finally:
        _stop_engine(engine, thread, consumer)
    new_columns.poll()  # seen in the last batch: the request waits for the next capture
    _check_outcome(pipeline, consumer, thread, state, stop, log)
    if consumer.reached:
        save_good_copy(pipeline)
    registrar.after_landing(landing)
    return _result(landing, snapshot, time.monotonic() - started, progress)


# a source's `special_values`: what looks them up in its database
_SPECIAL_VALUES: dict[str, Callable] = {"numerics": PgNumerics, "zero_dates": ZeroDates}


def _build_engine(engine_props: dict[str, str], consumer: Consumer, state: dict):
    """Debezium's embedded engine over these properties, notifying the consumer; `state` gets how it ended."""
    from jpype import JClass

    jprops = JClass("java.util.Properties")()
    for k, v in engine_props.items():
        jprops.setProperty(k, v)
    return (JClass("io.debezium.engine.DebeziumEngine").create(JClass("io.debezium.embedded.Connect"))
            .using(jprops).using(make_completion(state)).notifying(make_java_consumer(consumer)).build())


def _wait(consumer: Consumer, thread: threading.Thread, kind: CapturePart, registrar: Registrar,
          new_columns: NewColumns, progress: Progress, *,
          started: float, log: Path, stop: threading.Event | None, rotate_seconds: float,
          timeout_seconds: float | None, marker_interval: float) -> None:
    """Until the run ends: its marker came (--once), `stop` was set (continuous), the engine died, or a
    requested table needs a restart; rotates files by time and pokes the marker meanwhile."""
    landing = consumer.landing
    last_marker = last_note = time.monotonic()
    while not consumer.done.wait(0.5):
        now = time.monotonic()
        if not thread.is_alive():
            break
        new_columns.poll()
        if consumer.snapshots is not None and consumer.snapshots.poll(consumer):
            break  # a requested table this engine does not capture: restart (signals.continuous)
        if stop is not None:
            if stop.is_set():
                break
            consumer.rotate(rotate_seconds)
            registrar.after_landing(landing)
        elif timeout_seconds and now - started > timeout_seconds:
            raise SourceError(f"capture did not catch up within {timeout_seconds:.0f} s "
                              f"({sum(s.records for s in landing.stats.values())} events landed; log: {log})")
        elif now - last_marker >= marker_interval:
            kind.poke()
            last_marker = now
        if now - last_note >= 10:
            progress(f"capturing: {consumer.seq} events received so far")
            last_note = now


# Debezium's AsyncEmbeddedEngine refuses close() while its tasks start (the connector connecting, checking
# its slot): "Cannot stop engine while tasks are starting ... Wait for the tasks to be fully started". A stop
# (SIGTERM, Ctrl-C) in that window, which under load lasts seconds to minutes, once left the engine running:
# the capture printed its summary, then hung at exit on the engine's threads
_STARTING = "tasks are starting"


def close_engine(engine, thread: threading.Thread, patience: float = 300.0, pause: float = 0.5) -> None:
    """Close the engine, asking again while it refuses because its tasks are still starting."""
    end = time.monotonic() + patience
    while True:
        try:
            engine.close()
            return
        except Exception as exc:  # noqa: BLE001 - a refusal, or it stopped by itself (the callback has why)
            if _STARTING not in str(exc) or not thread.is_alive():
                return
            if time.monotonic() >= end:
                raise SourceError(f"the Debezium engine did not finish starting within {patience:.0f} s, so it "
                                  "could not be stopped") from None
        time.sleep(pause)


def _stop_engine(engine, thread: threading.Thread, consumer: Consumer) -> None:
    """Close the engine and wait for its thread; files of a run that did not reach its end are dropped."""
    consumer.stopping = True  # the close interrupts a batch in flight: a stop, not a landing failure
    close_engine(engine, thread)
    thread.join(120)
    stuck = jvm.stop_lingering_threads()  # a binlog reader blocked on Debezium's full queue would keep the JVM up
    if stuck:
        _LOG.warning("Debezium's thread(s) %s did not stop when interrupted: the process may not exit by itself",
                     ", ".join(stuck))
    locked = consumer.lock.acquire(timeout=30)  # the engine's thread may still be in a batch
    try:
        if not consumer.reached:
            consumer.landing.abort()
    finally:
        if locked:
            consumer.lock.release()
        for lookup in (consumer.specials, consumer.arrays, consumer.textforms):
            if lookup is not None:
                lookup.close()


def _check_outcome(pipeline: Pipeline, consumer: Consumer, thread: threading.Thread, state: dict,
                   stop: threading.Event | None, log: Path) -> None:
    """One line when the run failed: landing raised, the engine stopped early, or no offsets were saved."""
    continuous = stop is not None
    if isinstance(consumer.error, HudiCdcError):  # e.g. the S3 endpoint went away: its own kind and line
        raise type(consumer.error)(f"capture failed while landing files: {consumer.error}") from None
    if consumer.error is not None:
        raise SourceError(f"capture failed while landing files: {consumer.error}") from None
    if consumer.snapshots is not None:
        consumer.snapshots.save()
    restarting = consumer.snapshots is not None and consumer.snapshots.reload is not None
    if continuous and not thread.is_alive() and stop is not None and not stop.is_set() and not restarting:
        why = state.get("error") or state.get("message") or "the engine stopped"
        raise SourceError(f"capture stopped: {' '.join(why.split())} (log: {log})")
    if not continuous and not consumer.reached:
        why = state.get("error") or state.get("message") or "the engine stopped"
        raise SourceError(f"capture stopped before catching up: {' '.join(why.split())} (log: {log})")

    if consumer.reached and not offsets_file(pipeline).exists():
        raise SourceError(f"capture landed its files but Debezium saved no offsets to {offsets_file(pipeline)} "
                          f"(log: {log})")


def _result(landing: Landing, snapshot: bool, seconds: float, progress: Progress) -> CaptureResult:
    result = CaptureResult(snapshot=snapshot, seconds=round(seconds, 2))
    for topic, st in landing.stats.items():
        result.topics[topic] = {"records": st.records, "files": len(st.files), "next_offset": landing.offsets[topic]}
        result.events += st.records
        result.files += len(st.files)
        if st.records:
            progress(f"landed {topic}: {st.records} events in {len(st.files)} file(s)")
    result.events_per_second = round(result.events / seconds, 1) if seconds else 0.0
    return result


@contextlib.contextmanager
def stop_on_signals(progress: Progress = log_progress) -> Iterator[threading.Event]:
    """An event SIGTERM or Ctrl-C sets (the handlers are restored on exit): a continuous capture's stop."""
    stop = threading.Event()

    def handler(signum: int, _frame: object) -> None:
        progress(f"{signal.Signals(signum).name}: stopping capture (records in files still open come again "
                 "next run)")
        stop.set()

    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            old[sig] = signal.signal(sig, handler)
    try:
        yield stop
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def for_table(pipeline: Pipeline, table: str) -> Pipeline:
    """The pipeline narrowed to one table, on a slot, publication and offsets of its own
    (<slot>_<table>): capturing one table never moves the pipeline's slot past the others' changes."""
    pipeline.table(table)  # unknown table -> ConfigError
    db = src.database(pipeline)

    def own(name: str) -> str:
        return re.sub(r"[^a-z0-9_]", "_", f"{name}_{table}".lower())[:63]

    narrowed_db = db.model_copy(update={"slot": own(pipeline.slot_name),
                                        "publication": own(pipeline.publication_name)})
    return pipeline.model_copy(update={"tables": {table: pipeline.table(table)},
                                       "source": pipeline.source.model_copy(update={"database": narrowed_db})})


def drop_slot(pipeline: Pipeline, progress: Progress = log_progress) -> dict[str, bool]:
    """Remove what capture created on purpose: the replication slot (refused while a capture reads
    it), the publication and the offsets (they point into the dropped slot: the next capture takes a
    new snapshot). Returns what existed and was dropped."""
    return sources.for_pipeline(pipeline).drop_state(pipeline, progress)
