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
import re
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hudi_cdc.capture import mysql, signals
from hudi_cdc.capture import source as src
from hudi_cdc.capture.consumer import Consumer, make_completion, make_java_consumer
from hudi_cdc.capture.heartbeat import heartbeat_prefix, heartbeat_properties
from hudi_cdc.capture.landing import Landing
from hudi_cdc.capture.offsets import GoodCopies, good_copy, guard_offsets, offsets_file, save_good_copy, work_dir
from hudi_cdc.capture.postgres_source import PostgresSource, marker_prefix
from hudi_cdc.capture.registrar import Registrar
from hudi_cdc.capture.txn import TXN_PROPERTIES, Cuts, transaction_topic
from hudi_cdc.capture.unwrap import Unwrap, split_transforms
from hudi_cdc.common import s3, storage
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import HudiCdcError, SourceError

Progress = Callable[[str], None]
CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"
# The unwrap SMT as the seed's connector: flattened rows, deletes rewritten (Debezium 3.x key; the
# older delete.handling.mode is silently ignored there), and the fields the pipeline orders by.
UNWRAP = {
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.drop.tombstones": "true",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": "op,db,table,schema,lsn,source.ts_ms",
}
# Debezium's encodings the lake types convert (lake_types.py): intervals as ISO-8601 strings
# column names Avro cannot take ("Order Date", "user-id") land with "_" for each invalid character, as the
# Kafka Connect Avro converter needs too (capture.source.lake_name is the same rule)
TYPE_HANDLING = {"interval.handling.mode": "string", "field.name.adjustment.mode": "avro",
                 "schema.name.adjustment.mode": "avro"}
DEFAULT_FLUSH_SIZE = 1000


def engine_properties(pipeline: Pipeline, password: str | None) -> dict[str, str]:
    """The embedded engine's configuration (Kafka Connect source connector properties)."""
    db = src.database(pipeline)
    if mysql.is_mysql_family(db):
        return mysql.engine_properties(pipeline, password, work_dir(pipeline), offsets_file(pipeline), UNWRAP)
    tables = src.source_tables(pipeline)
    props = {
        "name": f"hudi-cdc-{pipeline.pipeline}",
        "connector.class": CONNECTOR,
        "tasks.max": "1",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(offsets_file(pipeline)),
        "offset.flush.interval.ms": "0",  # commit after every batch, up to what is landed
        "offset.flush.timeout.ms": "60000",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.dbname": db.name,
        "topic.prefix": src.topic_prefix(pipeline),
        "plugin.name": "pgoutput",
        "slot.name": pipeline.slot_name,
        "publication.name": pipeline.publication_name,
        "publication.autocreate.mode": "disabled",  # capture creates it, for exactly these tables
        "table.include.list": ",".join(re.escape(t.qualified) for t in tables),
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        "skipped.operations": "none",  # TRUNCATE too (Debezium skips it by default); unwrap.py lands it
        **heartbeat_properties(db, marker_prefix(pipeline)),
        # this run's end markers, and the heartbeat messages (heartbeat.py)
        "message.prefix.include.list": ",".join(re.escape(m) for m in (marker_prefix(pipeline),
                                                                       heartbeat_prefix(marker_prefix(pipeline)))),
        "errors.max.retries": "0",
        **TXN_PROPERTIES,  # BEGIN/END records: files land at transaction boundaries (txn.py)
        **TYPE_HANDLING,
        **UNWRAP,
        **signals.properties(pipeline),  # incremental snapshots (`capture snapshot`, signals.py)
    }
    if password is not None:
        props["database.password"] = password
    return props


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


def source_kind(pipeline: Pipeline, run_id: str):
    """The per-kind part of capture: PostgresSource, or mysql.BinlogSource for mysql / mariadb."""
    if mysql.is_mysql_family(src.database(pipeline)):
        return mysql.BinlogSource(pipeline, work_dir(pipeline), offsets_file(pipeline))
    return PostgresSource(pipeline, run_id)


def _topic_dirs(pipeline: Pipeline) -> dict[str, str]:
    """Each topic's landing folder: a local path, or an s3:// prefix (storage.py reaches both)."""
    return {t.topic: storage.local(pipeline.topic_dir(name)) for name, t in pipeline.tables.items()}


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
    if mysql.is_mysql_family(src.database(pipeline)):
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
    tables = src.source_tables(pipeline)
    password = src.password(pipeline)
    props = engine_properties(pipeline, password)
    flush_size = flush_size or src.database(pipeline).flush_size or DEFAULT_FLUSH_SIZE
    run_id = uuid.uuid4().hex
    kind = source_kind(pipeline, run_id)
    note = kind.prepare(progress)
    _check_landing_root(pipeline)
    snapshot = not offsets_file(pipeline).exists()
    if snapshot:
        progress(f"no offsets yet: Debezium takes a snapshot of {', '.join(t.qualified for t in tables)}{note}")

    wd = work_dir(pipeline)
    wd.mkdir(parents=True, exist_ok=True)  # the offset store's directory, also when the JVM runs already
    log = kind.start_jvm(wd, progress)
    guard_offsets(pipeline, progress)
    kind.guard(progress)

    landing = Landing(_topic_dirs(pipeline), pipeline.source.partition, flush_size,
                      storage.local(pipeline.source_root), staging=wd / "staging")
    # the unwrap SMT runs here, not in the engine, so TRUNCATE survives (unwrap.py)
    engine_props, smt = split_transforms(props)
    consumer = Consumer(landing, kind, continuous, Unwrap(smt) if smt else None)
    consumer.before_batch = GoodCopies(pipeline)
    if isinstance(kind, PostgresSource):
        consumer.snapshots = snapshots or signals.Snapshots(pipeline, progress)
        consumer.cuts = Cuts(landing, storage.local(pipeline.source_root),
                             transaction_topic(src.topic_prefix(pipeline)), rotate_seconds if continuous else None)
    registrar = Registrar(pipeline, {t.topic: t.name for t in tables}, progress)  # schema changes -> registry
    state: dict = {}
    engine = _build_engine(engine_props, consumer, state)
    thread = threading.Thread(target=engine.run, name="debezium-engine", daemon=True)
    thread.start()
    try:
        _wait(consumer, thread, kind, registrar, progress, started=started, log=log, stop=stop,
              rotate_seconds=rotate_seconds, timeout_seconds=timeout_seconds, marker_interval=marker_interval)
    finally:
        _stop_engine(engine, thread, consumer)
    _check_outcome(pipeline, consumer, thread, state, stop, log)
    if consumer.reached:
        save_good_copy(pipeline)
    registrar.after_landing(landing)
    return _result(landing, snapshot, time.monotonic() - started, progress)


def _build_engine(engine_props: dict[str, str], consumer: Consumer, state: dict):
    """Debezium's embedded engine over these properties, notifying the consumer; `state` gets how it ended."""
    from jpype import JClass

    jprops = JClass("java.util.Properties")()
    for k, v in engine_props.items():
        jprops.setProperty(k, v)
    return (JClass("io.debezium.engine.DebeziumEngine").create(JClass("io.debezium.embedded.Connect"))
            .using(jprops).using(make_completion(state)).notifying(make_java_consumer(consumer)).build())


def _wait(consumer: Consumer, thread: threading.Thread, kind, registrar: Registrar, progress: Progress, *,
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


def _stop_engine(engine, thread: threading.Thread, consumer: Consumer) -> None:
    """Close the engine and wait for its thread; files of a run that did not reach its end are dropped."""
    try:
        engine.close()
    except Exception:  # noqa: BLE001 - it stopped by itself (failure): the callback has why
        pass
    thread.join(120)
    locked = consumer.lock.acquire(timeout=30)  # the engine's thread may still be in a batch
    try:
        if not consumer.reached:
            consumer.landing.abort()
    finally:
        if locked:
            consumer.lock.release()


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
    if mysql.is_mysql_family(src.database(pipeline)):
        return mysql.drop_state(pipeline, work_dir(pipeline), offsets_file(pipeline), good_copy(pipeline), progress)
    from psycopg import sql

    slot, pub = pipeline.slot_name, pipeline.publication_name
    with src.connect(pipeline) as conn:
        src.check_slot_free(conn, slot)  # active -> one-line refusal
        had_slot = conn.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name = %s",
                                (slot,)).fetchone()[0] > 0
        if had_slot:
            conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            progress(f"dropped replication slot {slot}")
        had_pub = conn.execute("SELECT count(*) FROM pg_publication WHERE pubname = %s", (pub,)).fetchone()[0] > 0
        if had_pub:
            try:
                conn.execute(sql.SQL("DROP PUBLICATION {}").format(sql.Identifier(pub)))
            except Exception as exc:  # psycopg.Error: not its owner
                raise SourceError(f"cannot drop publication {pub}: {' '.join(str(exc).split())}") from None
            progress(f"dropped publication {pub}")
    offsets = offsets_file(pipeline)
    had_offsets = offsets.exists()
    if had_offsets:
        offsets.unlink()
        progress(f"removed {offsets} (the next capture takes a new snapshot)")
    good_copy(pipeline).unlink(missing_ok=True)
    if not (had_slot or had_pub or had_offsets):
        progress(f"nothing to drop: no slot {slot}, publication {pub} or offsets")
    return {"slot": had_slot, "publication": had_pub, "offsets": had_offsets}
