"""Files in the Kafka Connect S3 sink's layout, naming and format, written from Connect records.

``<root>/<topic>/partition=<p>/<topic>+<p>+<offset of the first record, 10 digits>.avro``: one
Avro object container file (codec null) per ``flush_size`` records of a topic, plus a new file
whenever a topic's value schema changes (the sink's schema.compatibility=NONE). The Avro schema is
the one the sink derives with Confluent's AvroData from the record's Connect schema, in the same
JVM, so ``connect.name`` and the Debezium type names come out as the sink writes them.

A file is written to a hidden staging name and fsync'ed, then landed by ``storage.land`` before
anyone may commit the offsets of its records (``Landing.watermark``): on a local root it is renamed
into place (its folder fsync'ed), on an s3:// root it is one PUT of the whole object (atomic, durable
once it returned). Modification times strictly increase across the whole root (the streamer's
checkpoint is the newest modification time it consumed; on S3 that is one file per second at most,
S3 listing times to the second). Offsets continue from the files already there, as Kafka offsets
would, whether the root is local or in S3.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro

from hudi_cdc.common import storage
from hudi_cdc.common.s3 import is_s3
from hudi_cdc.sample import file_name


def next_offset(topic_dir: str, topic: str, partition: int) -> int:
    """Offset after the last record already landed for the topic (0 when nothing is); topic_dir is
    a local folder or an s3:// prefix."""
    pat = re.compile(rf"^{re.escape(topic)}\+{partition}\+(\d{{10}})\.avro$")
    best, name = -1, None
    for n in storage.listdir(topic_dir):
        m = pat.match(n)
        if m and int(m.group(1)) > best:
            best, name = int(m.group(1)), n
    if name is None:
        return 0
    data = storage.read_bytes(storage.join(topic_dir, name)) or b""
    return best + sum(block.num_records for block in fastavro.block_reader(io.BytesIO(data)))


@dataclass
class _OpenFile:
    uri: str  # where it lands: a local path or an s3:// URI
    tmp: Path  # where it is written first (a hidden name)
    # Java objects through JPype (untyped): an Avro DataFileWriter, a FileOutputStream, a Connect Schema
    writer: Any
    stream: Any
    schema: Any  # the Connect schema of every record in the file
    first_seq: int
    count: int = 0
    opened: float = field(default_factory=time.monotonic)  # for rotation by time


@dataclass
class TopicStats:
    records: int = 0
    files: list[str] = field(default_factory=list)


class Landing:
    """Routes Connect records to per-topic files; tracks which records are durable."""

    def __init__(self, topic_dirs: dict[str, str], partition: int = 0, flush_size: int = 1000,
                 root: str | None = None, staging: Path | None = None):
        """topic_dirs: each topic's folder, local or s3://; root: the landing root (for the newest
        modification time); staging: a local folder for the files of s3:// topics while written."""
        from jpype import JClass

        self.topic_dirs = topic_dirs
        self.partition = partition
        self.flush_size = flush_size
        self._AvroData = JClass("io.confluent.connect.avro.AvroData")
        self._DataFileWriter = JClass("org.apache.avro.file.DataFileWriter")
        self._GenericDatumWriter = JClass("org.apache.avro.generic.GenericDatumWriter")
        self._CodecFactory = JClass("org.apache.avro.file.CodecFactory")
        self._FileOutputStream = JClass("java.io.FileOutputStream")
        self.avro_data = self._AvroData(100)
        self.offsets = {t: next_offset(d, t, partition) for t, d in topic_dirs.items()}
        self.open: dict[str, _OpenFile] = {}
        self.stats: dict[str, TopicStats] = {t: TopicStats() for t in topic_dirs}
        self._avro_schemas: dict[int, object] = {}
        roots = {root} if root else {d.rsplit("/", 2)[0] for d in topic_dirs.values()}
        self._last_mtime_ms = max([storage.newest_mtime_ms(r) for r in roots] or [0])
        self._staging: dict[str, Path] = {}
        self.on_file_start: Callable[[str, dict], None] | None = None  # (topic, Avro schema's JSON): defaults.py
        for t, d in topic_dirs.items():
            if is_s3(d):
                if staging is None:
                    raise ValueError("a staging folder is needed for s3:// topics")
                self._staging[t] = staging / t
            else:
                self._staging[t] = Path(storage.local(d))
        for folder in self._staging.values():
            folder.mkdir(parents=True, exist_ok=True)
            for stale in folder.glob(".*.avro.tmp"):  # left by a capture that died mid-file
                stale.unlink()

    # -------------------------------------------------------------- writing
    def append(self, seq: int, topic: str, schema, value) -> None:
        f = self.open.get(topic)
        if f is not None and f.schema is not schema and not f.schema.equals(schema):
            self._close(topic)
            f = None
        if f is None:
            f = self._start(topic, seq, schema)
        f.writer.append(self.avro_data.fromConnectData(schema, value))
        f.count += 1
        if f.count >= self.flush_size:
            self._close(topic)

    def _start(self, topic: str, seq: int, schema) -> _OpenFile:
        name = file_name(topic, self.offsets[topic], self.partition)
        tmp = self._staging[topic] / f".{name}.tmp"  # hidden while written: readers skip dot files
        stream = self._FileOutputStream(str(tmp))
        writer = self._DataFileWriter(self._GenericDatumWriter())
        writer.setCodec(self._CodecFactory.nullCodec())
        avro_schema = self.avro_data.fromConnectSchema(schema)
        writer.create(avro_schema, stream)
        f = _OpenFile(storage.join(self.topic_dirs[topic], name), tmp, writer, stream, schema, seq)
        self.open[topic] = f
        if self.on_file_start is not None:
            self.on_file_start(topic, json.loads(str(avro_schema.toString())))
        return f

    def _close(self, topic: str) -> None:
        f = self.open.pop(topic)
        f.writer.flush()
        f.stream.getFD().sync()
        f.writer.close()
        # in place, whole, durable, newer than every file before it; only then may its offsets commit
        try:
            self._last_mtime_ms = storage.land(f.tmp, f.uri, self._last_mtime_ms)
        except BaseException:
            f.tmp.unlink(missing_ok=True)  # never landed: its records come again next run
            raise
        self.offsets[topic] += f.count
        st = self.stats[topic]
        st.records += f.count
        st.files.append(f.uri.rsplit("/", 1)[-1])

    def flush_all(self) -> None:
        """Close every open file (end of a --once run)."""
        for topic in list(self.open):
            self._close(topic)

    def rotate(self, seconds: float) -> int:
        """Close the files open for `seconds` or more (the sink's rotate.schedule.interval.ms: a quiet
        topic's records are landed too). Returns how many were closed."""
        now = time.monotonic()
        old = [t for t, f in self.open.items() if now - f.opened >= seconds]
        for topic in old:
            self._close(topic)
        return len(old)

    def abort(self) -> None:
        """Drop open files without landing them (their records were never committed)."""
        for _topic, f in list(self.open.items()):
            try:
                f.writer.close()
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
            f.tmp.unlink(missing_ok=True)
        self.open.clear()

    def watermark(self, last_seq: int) -> int:
        """The highest sequence number at or below which every record is in a landed file."""
        if not self.open:
            return last_seq
        return min(f.first_seq for f in self.open.values()) - 1
