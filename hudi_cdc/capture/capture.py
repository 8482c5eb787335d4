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
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hudi_cdc.capture import engine as jvm
from hudi_cdc.capture import mysql, signals
from hudi_cdc.capture import source as src
from hudi_cdc.capture.heartbeat import heartbeat_prefix, heartbeat_properties
from hudi_cdc.capture.identity import refuse_unusable
from hudi_cdc.capture.landing import Landing
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
TYPE_HANDLING = {"interval.handling.mode": "string"}
DEFAULT_FLUSH_SIZE = 1000


def work_dir(pipeline: Pipeline) -> Path:
    return pipeline.work_dir / "capture"


def offsets_file(pipeline: Pipeline) -> Path:
    return work_dir(pipeline) / f"offsets-{pipeline.slot_name}.dat"


def _good_copy(pipeline: Pipeline) -> Path:
    f = offsets_file(pipeline)
    return f.with_name(f.name + ".good")


def _offsets_loadable(path: Path) -> bool:
    """Kafka's FileOffsetBackingStore writes its file in place: a kill during the write leaves it
    truncated, and its load() then silently starts from no offsets (a new snapshot, whose rows deleted
    meanwhile never get their delete events). Read it as the store does (needs the JVM)."""
    from jpype import JClass

    try:
        stream = JClass("java.io.ObjectInputStream")(JClass("java.io.FileInputStream")(str(path)))
        try:
            stream.readObject()
        finally:
            stream.close()
        return True
    except Exception:  # noqa: BLE001 - EOFException, StreamCorruptedException, ...: not loadable
        return False


def guard_offsets(pipeline: Pipeline, progress: Progress) -> None:
    """Before the engine starts: a truncated offsets file is replaced by the copy saved after the last
    run that finished (older offsets: the changes since come again, which the Hudi side absorbs); with
    no such copy, refuse rather than take a new snapshot silently."""
    f, good = offsets_file(pipeline), _good_copy(pipeline)
    if not f.exists() or _offsets_loadable(f):
        return
    if good.exists() and _offsets_loadable(good):
        tmp = f.with_name(f.name + ".restore")
        tmp.write_bytes(good.read_bytes())
        tmp.replace(f)
        progress(f"{f.name} was truncated (a kill while Debezium wrote it): restored the copy of the last "
                 "finished run; the changes since come again")
        return
    raise SourceError(f"{f}: Debezium's offsets file is truncated (a kill while it was written) and there is no "
                      "good copy; capture --drop-slot and capture again would take a new snapshot")


def _save_good_copy(pipeline: Pipeline) -> None:
    f, good = offsets_file(pipeline), _good_copy(pipeline)
    if f.exists() and _offsets_loadable(f):
        tmp = good.with_name(good.name + ".tmp")
        tmp.write_bytes(f.read_bytes())
        tmp.replace(good)


def marker_prefix(pipeline: Pipeline) -> str:
    return f"hudi_cdc.{pipeline.slot_name}"


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


class _Postgres:
    """What capture does that is PostgreSQL's own: the checks before the engine, the marker a --once
    run stops at (a logical-decoding message). MySQL-family sources: mysql.BinlogSource."""

    def __init__(self, pipeline: Pipeline, run_id: str):
        self.pipeline = pipeline
        self.run_id = run_id
        self.prefix = marker_prefix(pipeline)
        self.message_topic = f"{src.topic_prefix(pipeline)}.message"

    def prepare(self, progress: Progress) -> str:
        """Checks before the engine starts; returns a note for the snapshot message."""
        with src.connect(self.pipeline) as conn:
            src.check_logical(conn)
            tables = src.source_tables(self.pipeline)
            # before the publication is created or used: a table PostgreSQL would then refuse updates of
            refuse_unusable(conn, self.pipeline.publication_name, [(t.schema, t.table) for t in tables])
            src.ensure_publication(conn, self.pipeline.publication_name, tables, progress)
            slot = src.check_slot_free(conn, self.pipeline.slot_name)
        return f" (slot {self.pipeline.slot_name} exists; changes before the snapshot may repeat)" if slot else ""

    def start_jvm(self, wd: Path, progress: Progress) -> Path:
        return jvm.start_jvm(wd)

    def guard(self, progress: Progress) -> None:
        pass

    def poke(self) -> None:
        _emit_marker(self.pipeline, self.run_id)

    def verdict(self, record, topic: str, value, landed: dict, continuous: bool) -> str:
        """land (a change of a captured table) | reached (this run's marker) | before (a change after
        the run's end, left for the next run) | other"""
        if topic in landed:
            return "land"
        if not continuous and topic == self.message_topic and value is not None and self._is_marker(record):
            return "reached"
        return "other"

    def rewrite(self, schema, value):
        return schema, value

    def _is_marker(self, record) -> bool:
        from jpype import JClass

        msg = record.value().getStruct("message")
        if str(msg.getString("prefix")) != self.prefix:
            return False
        content = msg.get("content")
        if content is None:
            return False
        text = str(JClass("java.nio.charset.StandardCharsets").UTF_8.decode(content.duplicate()).toString())
        return text == self.run_id


def source_kind(pipeline: Pipeline, run_id: str):
    """The per-kind part of capture: _Postgres, or mysql.BinlogSource for mysql / mariadb."""
    if mysql.is_mysql_family(src.database(pipeline)):
        return mysql.BinlogSource(pipeline, work_dir(pipeline), offsets_file(pipeline))
    return _Postgres(pipeline, run_id)


class _Consumer:
    """Debezium's ChangeConsumer: lands records, marks what is durable, spots where a --once run ends."""

    def __init__(self, landing: Landing, source, continuous: bool = False, unwrap: Unwrap | None = None):
        self.landing = landing
        self.unwrap = unwrap  # the unwrap SMT, applied here so TRUNCATE survives (unwrap.py)
        self.continuous = continuous
        self.lock = threading.Lock()  # the engine's thread lands, the main thread rotates by time
        self.source = source
        self.seq = 0
        self.pending: deque = deque()
        self.done = threading.Event()
        self.reached = False
        self.error: BaseException | None = None
        self.snapshots: signals.Snapshots | None = None  # incremental snapshots (PostgreSQL)
        self.cuts: Cuts | None = None  # PostgreSQL: all files land together at transaction boundaries (txn.py)

    def handle_batch(self, records, committer) -> None:
        with self.lock:
            self._handle_batch(records, committer)

    def rotate(self, seconds: float) -> int:
        with self.lock:
            return self.cuts.rotate() if self.cuts is not None else self.landing.rotate(seconds)

    def _handle_batch(self, records, committer) -> None:
        if self.done.is_set():
            return  # after the marker: leave the rest unmarked, the next run gets it again
        landing = self.landing
        reached = False
        try:
            for event in records:
                record = event.sourceRecord()
                topic = str(record.topic())
                value = record.value()
                if self.cuts is not None:
                    self.cuts.observe(record, topic, value)
                verdict = self.source.verdict(record, topic, value, landing.topic_dirs, self.continuous)
                if verdict == "before":  # committed after the run started: unmarked, the next run's
                    landing.flush_all()
                    reached = True
                    break
                self.seq += 1
                self.pending.append((self.seq, event))
                if verdict == "land":
                    if value is not None:
                        out = self.unwrap.apply(record) if self.unwrap is not None else record
                        if out is not None and out.value() is not None:
                            if self.snapshots is not None:
                                self.snapshots.rewrite(record, out)
                            landing.append(self.seq, topic, *self.source.rewrite(out.valueSchema(), out.value()))
                        if self.cuts is not None:
                            self.cuts.landed(record, value)
                elif verdict == "reached":
                    if self.cuts is not None:
                        self.cuts.cut()  # every file, and the cut naming them
                    else:
                        landing.flush_all()
                    reached = True
                    break
                elif self.snapshots is not None:
                    self.snapshots.observe(topic, value)
            mark = None
            wm = landing.watermark(self.seq)
            while self.pending and self.pending[0][0] <= wm:
                mark = self.pending.popleft()[1]
            if mark is not None:
                committer.markProcessed(mark)
            committer.markBatchFinished()  # offsets committed: only now may the engine stop
            if reached:
                self.reached = True
                self.done.set()
        except BaseException as exc:
            self.error = exc
            self.done.set()
            raise


def _make_java_consumer(consumer: _Consumer):
    from jpype import JImplements, JOverride

    @JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
    class ChangeConsumer:
        @JOverride
        def handleBatch(self, records, committer):
            consumer.handle_batch(records, committer)

        @JOverride
        def supportsTombstoneEvents(self):
            return False

    return ChangeConsumer()


def _make_completion(state: dict):
    from jpype import JImplements, JOverride

    @JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
    class Completion:
        @JOverride
        def handle(self, success, message, error):
            state["success"] = bool(success)
            state["message"] = str(message) if message is not None else ""
            if error is not None:
                cause = error
                while cause.getCause() is not None and cause.getCause() is not cause:
                    cause = cause.getCause()
                state["error"] = f"{error.getMessage()} (cause: {cause.getMessage()})"

    return Completion()


def _topic_dirs(pipeline: Pipeline) -> dict[str, str]:
    """Each topic's landing folder: a local path, or an s3:// prefix (storage.py reaches both)."""
    return {t.topic: storage.local(pipeline.topic_dir(name)) for name, t in pipeline.tables.items()}


def _check_landing_root(pipeline: Pipeline) -> None:
    """An s3:// landing root's bucket answers before Debezium starts (one line naming the endpoint)."""
    if s3.is_s3(pipeline.source_root):
        s3.check_bucket(pipeline.source_root, pipeline.s3_endpoint())


def _emit_marker(pipeline: Pipeline, run_id: str) -> None:
    with src.connect(pipeline) as conn:
        conn.execute("SELECT pg_logical_emit_message(true, %s, %s)", (marker_prefix(pipeline), run_id))


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
    from jpype import JClass

    landing = Landing(_topic_dirs(pipeline), pipeline.source.partition, flush_size,
                      storage.local(pipeline.source_root), staging=wd / "staging")
    # the unwrap SMT runs here, not in the engine, so TRUNCATE survives (unwrap.py)
    engine_props, smt = split_transforms(props)
    consumer = _Consumer(landing, kind, continuous, Unwrap(smt) if smt else None)
    if isinstance(kind, _Postgres):
        consumer.snapshots = snapshots or signals.Snapshots(pipeline, progress)
        consumer.cuts = Cuts(landing, storage.local(pipeline.source_root),
                             transaction_topic(src.topic_prefix(pipeline)), rotate_seconds if continuous else None)
    registrar = Registrar(pipeline, {t.topic: t.name for t in tables}, progress)  # schema changes -> registry
    state: dict = {}
    jprops = JClass("java.util.Properties")()
    for k, v in engine_props.items():
        jprops.setProperty(k, v)
    engine = (JClass("io.debezium.engine.DebeziumEngine").create(JClass("io.debezium.embedded.Connect"))
              .using(jprops).using(_make_completion(state)).notifying(_make_java_consumer(consumer)).build())
    thread = threading.Thread(target=engine.run, name="debezium-engine", daemon=True)
    thread.start()
    last_marker = last_note = time.monotonic()
    try:
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
    finally:
        try:
            engine.close()
        except Exception:  # noqa: BLE001 - it stopped by itself (failure): the callback has why
            pass
        thread.join(120)
        locked = consumer.lock.acquire(timeout=30)  # the engine's thread may still be in a batch
        try:
            if not consumer.reached:
                landing.abort()
        finally:
            if locked:
                consumer.lock.release()
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
    if consumer.reached:
        _save_good_copy(pipeline)
    registrar.after_landing(landing)
    seconds = time.monotonic() - started
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
        return mysql.drop_state(pipeline, work_dir(pipeline), offsets_file(pipeline), _good_copy(pipeline), progress)
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
    _good_copy(pipeline).unlink(missing_ok=True)
    if not (had_slot or had_pub or had_offsets):
        progress(f"nothing to drop: no slot {slot}, publication {pub} or offsets")
    return {"slot": had_slot, "publication": had_pub, "offsets": had_offsets}
