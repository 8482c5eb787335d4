"""``capture_once``: Debezium's PostgreSQL connector lands every change committed so far, then exits.

A snapshot is taken when the pipeline has no offsets yet; after that the slot is read from the
committed offsets (no new snapshot). To know when "everything committed so far" has arrived, the
run writes a transactional logical-decoding message into the WAL (pg_logical_emit_message, with a
prefix of its slot and a content of its run id) and stops when that message comes out of the slot:
every transaction committed before the run started is decoded before it. Until the slot exists
(first run) the message is repeated; only this run's message counts.

Order of durability: records are landed in files (landing.Landing: fsync + rename) and only then
marked processed; the engine commits offsets after every batch (offset.flush.interval.ms=0) up to
the last record that is in a landed file. A crash can redeliver records (at least once, as Kafka
Connect), never lose them.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import Pipeline, uri_to_path
from ..errors import ConfigError, SourceError
from . import engine as jvm
from . import source as src
from .landing import Landing

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
DEFAULT_FLUSH_SIZE = 1000


def work_dir(pipeline: Pipeline) -> Path:
    return Path(pipeline.base_dir) / ".hudi-cdc" / "capture"


def offsets_file(pipeline: Pipeline) -> Path:
    return work_dir(pipeline) / f"offsets-{pipeline.slot_name}.dat"


def marker_prefix(pipeline: Pipeline) -> str:
    return f"hudi_cdc.{pipeline.slot_name}"


def engine_properties(pipeline: Pipeline, password: str | None) -> dict[str, str]:
    """The embedded engine's configuration (Kafka Connect source connector properties)."""
    db = src.database(pipeline)
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
        "message.prefix.include.list": re.escape(marker_prefix(pipeline)),
        "errors.max.retries": "0",
        **UNWRAP,
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


class _Consumer:
    """Debezium's ChangeConsumer: lands records, marks what is durable, spots this run's marker."""

    def __init__(self, landing: Landing, message_topic: str, prefix: str, run_id: str):
        self.landing = landing
        self.message_topic = message_topic
        self.prefix = prefix
        self.run_id = run_id
        self.seq = 0
        self.pending: deque = deque()
        self.done = threading.Event()
        self.reached = False
        self.error: BaseException | None = None

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

    def handle_batch(self, records, committer) -> None:
        if self.done.is_set():
            return  # after the marker: leave the rest unmarked, the next run gets it again
        landing = self.landing
        reached = False
        try:
            for event in records:
                self.seq += 1
                record = event.sourceRecord()
                topic = str(record.topic())
                value = record.value()
                self.pending.append((self.seq, event))
                if topic in landing.topic_dirs:
                    if value is not None:
                        landing.append(self.seq, topic, record.valueSchema(), value)
                elif topic == self.message_topic and value is not None and self._is_marker(record):
                    landing.flush_all()
                    reached = True
                    break
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


def _topic_dirs(pipeline: Pipeline) -> dict[str, Path]:
    dirs = {}
    for name, t in pipeline.tables.items():
        uri = pipeline.topic_dir(name)
        if not uri.startswith("file://"):
            raise ConfigError(f"source.root: capture lands files on a local path only for now, not {uri} "
                              f"({pipeline.source_file})")
        dirs[t.topic] = uri_to_path(uri)
    return dirs


def _emit_marker(pipeline: Pipeline, run_id: str) -> None:
    with src.connect(pipeline) as conn:
        conn.execute("SELECT pg_logical_emit_message(true, %s, %s)", (marker_prefix(pipeline), run_id))


def capture_once(pipeline: Pipeline, progress: Progress = print, *, flush_size: int | None = None,
                 timeout_seconds: float | None = None, marker_interval: float = 2.0) -> CaptureResult:
    """Snapshot if there are no offsets yet, then every change committed so far; then return."""
    started = time.monotonic()
    tables = src.source_tables(pipeline)
    password = src.password(pipeline)
    props = engine_properties(pipeline, password)
    flush_size = flush_size or src.database(pipeline).flush_size or DEFAULT_FLUSH_SIZE
    with src.connect(pipeline) as conn:
        src.check_logical(conn)
        src.ensure_publication(conn, pipeline.publication_name, tables, progress)
        slot = src.check_slot_free(conn, pipeline.slot_name)
    snapshot = not offsets_file(pipeline).exists()
    if snapshot:
        progress(f"no offsets yet: Debezium takes a snapshot of {', '.join(t.qualified for t in tables)}"
                 + ("" if not slot else f" (slot {pipeline.slot_name} exists; changes before the snapshot may repeat)"))

    wd = work_dir(pipeline)
    wd.mkdir(parents=True, exist_ok=True)  # the offset store's directory, also when the JVM runs already
    log = jvm.start_jvm(wd)
    from jpype import JClass

    run_id = uuid.uuid4().hex
    landing = Landing(_topic_dirs(pipeline), pipeline.source.partition, flush_size, uri_to_path(pipeline.source_root))
    consumer = _Consumer(landing, f"{props['topic.prefix']}.message", marker_prefix(pipeline), run_id)
    state: dict = {}
    jprops = JClass("java.util.Properties")()
    for k, v in props.items():
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
            if timeout_seconds and now - started > timeout_seconds:
                raise SourceError(f"capture did not catch up within {timeout_seconds:.0f} s "
                                  f"({sum(s.records for s in landing.stats.values())} events landed; log: {log})")
            if now - last_marker >= marker_interval:
                _emit_marker(pipeline, run_id)
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
        if not consumer.reached:
            landing.abort()
    if consumer.error is not None:
        raise SourceError(f"capture failed while landing files: {consumer.error}") from None
    if not consumer.reached:
        why = state.get("error") or state.get("message") or "the engine stopped"
        raise SourceError(f"capture stopped before catching up: {' '.join(why.split())} (log: {log})")

    if not offsets_file(pipeline).exists():
        raise SourceError(f"capture landed its files but Debezium saved no offsets to {offsets_file(pipeline)} "
                          f"(log: {log})")
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
