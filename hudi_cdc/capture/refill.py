"""Truncate rows capture lands itself: before an incremental snapshot with --replace (signals.py), and
before an initial snapshot taken again over the files an earlier one landed (a kill during the first
snapshot, offsets removed or lost). The truncate sits just below the snapshot's position, so the lake
drops every row landed before it (rows the database deleted meanwhile included) and the snapshot refills
the table (jobs/stream/truncate.py applies it)."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src


def truncate_before_snapshot(consumer, pipeline: Pipeline, topic: str, lsn: int | None,
                             progress: Callable[[str], None]) -> None:
    """An initial snapshot's first row of `topic` in a run that found files landed for it: a truncate at
    the row's LSN - 1 (engine thread, under the consumer's lock)."""
    t = next((t for t in src.source_tables(pipeline) if t.landed_topic == topic), None)
    if t is None or lsn is None:
        return
    land_truncate(consumer, pipeline, t, lsn - 1, progress, "snapshot taken again")


def land_truncate(consumer, pipeline: Pipeline, t, lsn: int, progress: Callable[[str], None], why: str) -> None:
    """A truncate row of the table in its newest landed file's schema (nothing landed: nothing to replace)."""
    import fastavro
    from jpype import JClass, JLong

    from hudi_cdc.capture.unwrap import TRUNCATE_OP, zero_value
    from hudi_cdc.common import storage

    landing = consumer.landing
    topic_dir = landing.topic_dirs[t.landed_topic]
    names = sorted(n for n in storage.listdir(topic_dir) if n.endswith(".avro") and not n.startswith("."))
    if not names:
        progress(f"{why}: nothing landed for {t.name} yet, nothing to replace")
        return
    data = storage.read_bytes(storage.join(topic_dir, names[-1])) or b""
    text = fastavro.reader(io.BytesIO(data)).metadata["avro.schema"]
    schema = landing.avro_data.toConnectSchema(JClass("org.apache.avro.Schema$Parser")().parse(text))
    row = JClass("org.apache.kafka.connect.data.Struct")(schema)
    for f in schema.fields():
        if not f.schema().isOptional():
            row.put(f, zero_value(f.schema()))
    values = {"__op": TRUNCATE_OP, "__deleted": "true", "__db": src.database(pipeline).name,
              "__schema": t.schema, "__table": t.table}
    for name, value in values.items():
        if schema.field(name) is not None:
            row.put(name, value)
    if schema.field("__lsn") is not None:
        row.put("__lsn", JClass("java.lang.Long")(JLong(lsn)))
    if schema.field("__source_ts_ms") is not None:
        row.put("__source_ts_ms", JClass("java.lang.Long")(JLong(int(time.time() * 1000))))
    consumer.seq += 1
    landing.append(consumer.seq, t.landed_topic, schema, row)
    landing.flush_all()
    progress(f"{why}: landed a truncate of {t.name} at LSN {lsn}")
