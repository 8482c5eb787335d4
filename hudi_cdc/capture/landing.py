"""Files in the Kafka Connect S3 sink's layout, naming and format, written from Connect records.

``<root>/<topic>/partition=<p>/<topic>+<p>+<offset of the first record, 10 digits>.avro``: one
Avro object container file (codec null) per ``flush_size`` records of a topic, plus a new file
whenever a topic's value schema changes (the sink's schema.compatibility=NONE). The Avro schema is
the one the sink derives with Confluent's AvroData from the record's Connect schema, in the same
JVM, so ``connect.name`` and the Debezium type names come out as the sink writes them.

A file is written under a hidden name, fsync'ed, renamed and its directory fsync'ed before anyone
may commit the offsets of its records (``Landing.watermark``). Modification times strictly increase
across the whole root (the streamer's checkpoint is the newest modification time it consumed).
Offsets continue from the files already there, as Kafka offsets would.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro

from ..sample import file_name


def next_offset(topic_dir: Path, topic: str, partition: int) -> int:
    """Offset after the last record already landed for the topic (0 when nothing is)."""
    pat = re.compile(rf"^{re.escape(topic)}\+{partition}\+(\d{{10}})\.avro$")
    best, path = -1, None
    if topic_dir.is_dir():
        for p in topic_dir.iterdir():
            m = pat.match(p.name)
            if m and int(m.group(1)) > best:
                best, path = int(m.group(1)), p
    if path is None:
        return 0
    with open(path, "rb") as fh:
        return best + sum(block.num_records for block in fastavro.block_reader(fh))


def latest_mtime_ns(root: Path) -> int:
    latest = 0
    if root.exists():
        for p in root.rglob("*.avro"):
            latest = max(latest, p.stat().st_mtime_ns)
    return latest


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class _OpenFile:
    path: Path
    tmp: Path
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

    def __init__(self, topic_dirs: dict[str, Path], partition: int = 0, flush_size: int = 1000,
                 root: Path | None = None):
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
        roots = {root} if root else {d.parent.parent for d in topic_dirs.values()}
        latest = max([latest_mtime_ns(r) for r in roots] or [0])
        self._next_mtime_ns = max(time.time_ns(), latest + 1_000_000)
        self._next_mtime_ns -= self._next_mtime_ns % 1_000_000  # whole ms, as the checkpoint keeps them
        for d in topic_dirs.values():
            d.mkdir(parents=True, exist_ok=True)
            for stale in d.glob(".*.avro.tmp"):  # left by a capture that died mid-file
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
        d = self.topic_dirs[topic]
        path = d / file_name(topic, self.offsets[topic], self.partition)
        tmp = d / f".{path.name}.tmp"  # hidden while written: readers skip dot files
        stream = self._FileOutputStream(str(tmp))
        writer = self._DataFileWriter(self._GenericDatumWriter())
        writer.setCodec(self._CodecFactory.nullCodec())
        writer.create(self.avro_data.fromConnectSchema(schema), stream)
        f = _OpenFile(path, tmp, writer, stream, schema, seq)
        self.open[topic] = f
        return f

    def _close(self, topic: str) -> None:
        f = self.open.pop(topic)
        f.writer.flush()
        f.stream.getFD().sync()
        f.writer.close()
        mtime = self._next_mtime_ns
        self._next_mtime_ns += 1_000_000
        os.utime(f.tmp, ns=(mtime, mtime))
        fd = os.open(f.tmp, os.O_RDONLY)
        try:
            os.fsync(fd)  # the modification time too
        finally:
            os.close(fd)
        os.rename(f.tmp, f.path)
        _fsync_dir(f.path.parent)
        self.offsets[topic] += f.count
        st = self.stats[topic]
        st.records += f.count
        st.files.append(f.path.name)

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
