"""Read MoR tables whose delete blocks hudi-rs refuses, still without a JVM.

hudi-rs (the `hudi` package, 0.5.0, the newest served) refuses a delete block whose ordering
values are of two types ("Delete block mixes ordering types (union branches 2 and 3)"). Hudi 0.14
(HoodieDeltaStreamer, what EMR 6.15 runs) writes such blocks and no writer setting avoids them:
with a global index, a row whose partition value changes is deleted from its old file group
with Hudi's default ordering value, int 0 (EmptyHoodieRecordPayload), while a key-only delete
carries its event's ordering value (a long for Debezium's LSN); when both hit one file group in
one commit they share its delete block. hudi-cdc's own streamer writes them as two commits.

So a table read goes through hudi-rs file slice by file slice, and only a slice hudi-rs refuses is
merged here: its base file (pyarrow) and its log files, parsed block by block (Hudi log format
version 1: avro and parquet data blocks, delete blocks of version 3, rollback command blocks).
Only blocks of completed instants (up to the as-of instant) count. The merge follows Hudi's
(HoodieMergedLogRecordScanner, DefaultHoodieRecordPayload) on the table's ordering field:
- log records of one key: the later wins unless the earlier has the larger ordering value;
- a delete drops the earlier log record unless that one's ordering value is larger; a delete with
  Hudi's default ordering value (int 0, or none) is in commit order and always applies;
- against the base file: a log record replaces the stored row unless the stored row's ordering
  value is larger; a delete removes it unless the stored row's ordering value is larger (natural
  -order deletes always remove it), as hudi-rs merges the slices it can read.
"""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.common import s3, storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.errors import TableStateError

MIXED_ORDERING = "Delete block mixes ordering types"
MAGIC = b"#HUDI#"
# HoodieLogBlockType ordinals
COMMAND_BLOCK, DELETE_BLOCK, CORRUPT_BLOCK, AVRO_DATA_BLOCK, HFILE_DATA_BLOCK, PARQUET_DATA_BLOCK = range(6)
# HeaderMetadataType ordinals
INSTANT_TIME, TARGET_INSTANT_TIME, SCHEMA, COMMAND_BLOCK_TYPE = range(4)
ROLLBACK_COMMAND = "0"

_WRAPPED = ["boolean", "int", "long", "float", "double", "bytes", "string", "int", "bytes", "long", "long"]
_WRAPPER_NAMES = ["BooleanWrapper", "IntWrapper", "LongWrapper", "FloatWrapper", "DoubleWrapper", "BytesWrapper",
                  "StringWrapper", "DateWrapper", "DecimalWrapper", "TimeMicrosWrapper", "TimestampMicrosWrapper"]
# Hudi's HoodieDeleteRecordList (delete block version 3), written out for fastavro
DELETE_LIST_SCHEMA = {
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord", "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "default": None, "type": ["null"] + [
                {"type": "record", "name": name, "fields": [{"name": "value", "type": t}]}
                for name, t in zip(_WRAPPER_NAMES, _WRAPPED, strict=True)]},
        ]}}}],
}


def is_mixed_ordering_error(exc: BaseException) -> bool:
    return MIXED_ORDERING in str(exc)


@dataclass
class Block:
    kind: int
    header: dict[int, str]
    content: bytes


@dataclass
class Delete:
    key: str
    ordering: Any  # None: Hudi's default (natural order)


@dataclass
class SliceLog:
    """What a file slice's log files hold, in write order: ("row", dict) and ("delete", Delete)."""

    entries: list[tuple[str, Any]] = field(default_factory=list)


def _int(data: bytes, pos: int) -> tuple[int, int]:
    return struct.unpack_from(">i", data, pos)[0], pos + 4


def _long(data: bytes, pos: int) -> tuple[int, int]:
    return struct.unpack_from(">q", data, pos)[0], pos + 8


def _metadata(data: bytes, pos: int) -> tuple[dict[int, str], int]:
    count, pos = _int(data, pos)
    out = {}
    for _ in range(count):
        key, pos = _int(data, pos)
        size, pos = _int(data, pos)
        out[key] = data[pos:pos + size].decode("utf-8")
        pos += size
    return out, pos


def parse_blocks(data: bytes, name: str = "log file") -> list[Block]:
    """The blocks of one Hudi log file (log format version 1); a corrupt block (a write cut short)
    is skipped to the next magic, as Hudi's reader does."""
    blocks: list[Block] = []
    pos = data.find(MAGIC)
    while 0 <= pos < len(data):
        start = pos + len(MAGIC)
        try:
            size, p = _long(data, start)
            end = p + size
            if size <= 0 or end > len(data):
                raise ValueError("block size beyond the file")
            version, p = _int(data, p)
            kind, p = _int(data, p)
            header: dict[int, str] = {}
            if version >= 1:
                header, p = _metadata(data, p)
                length, p = _long(data, p)
            else:
                length = size
            content = data[p:p + length]
            blocks.append(Block(kind=kind, header=header, content=content))
            pos = end
        except (struct.error, ValueError, UnicodeDecodeError):
            pos = data.find(MAGIC, start)  # corrupt: on to the next block
            continue
        nxt = data.find(MAGIC, pos)
        pos = nxt
    return blocks


def _avro_records(block: Block, name: str) -> list[dict]:
    import fastavro

    schema_text = block.header.get(SCHEMA)
    if not schema_text:
        raise TableStateError(f"{name}: an avro data block without its schema")
    schema = fastavro.parse_schema(json.loads(schema_text))
    data = block.content
    _version, pos = _int(data, 0)
    count, pos = _int(data, pos)
    out = []
    for _ in range(count):
        size, pos = _int(data, pos)
        record: Any = fastavro.schemaless_reader(io.BytesIO(data[pos:pos + size]), schema, None)
        out.append(record)
        pos += size
    return out


def _parquet_records(block: Block) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(block.content)).to_pylist()


def _deletes(block: Block) -> list[Delete]:
    import fastavro

    data = block.content
    version, pos = _int(data, 0)
    if version < 3:
        raise TableStateError(f"delete block version {version} (Kryo) is not readable without a JVM")
    size, pos = _int(data, pos)
    rec: Any = fastavro.schemaless_reader(io.BytesIO(data[pos:pos + size]), fastavro.parse_schema(DELETE_LIST_SCHEMA),
                                          None)
    out = []
    for d in rec["deleteRecordList"]:
        ordering = d.get("orderingVal")
        value = ordering.get("value") if isinstance(ordering, dict) else None
        if value == 0 and isinstance(value, int) and not isinstance(value, bool):
            value = None  # Hudi's default ordering value: natural (commit) order
        out.append(Delete(key=d["recordKey"], ordering=value))
    return out


def slice_log(log_files: Iterable[tuple[str, bytes]], completed: set[str], as_of: str | None) -> SliceLog:
    """The rows and deletes of a file slice's log files (oldest first) that count: blocks of
    completed instants up to as_of, less the ones a rollback command block removed."""
    kept: list[tuple[str, Block, str]] = []
    for name, data in log_files:
        for block in parse_blocks(data, name):
            instant = block.header.get(INSTANT_TIME, "")
            if block.kind == COMMAND_BLOCK:
                if block.header.get(COMMAND_BLOCK_TYPE) == ROLLBACK_COMMAND:
                    target = block.header.get(TARGET_INSTANT_TIME)
                    kept = [k for k in kept if k[2] != target]
                continue
            if block.kind == CORRUPT_BLOCK or instant not in completed or (as_of and instant > as_of):
                continue
            kept.append((name, block, instant))
    out = SliceLog()
    for name, block, _ in kept:
        if block.kind == AVRO_DATA_BLOCK:
            out.entries.extend(("row", r) for r in _avro_records(block, name))
        elif block.kind == PARQUET_DATA_BLOCK:
            out.entries.extend(("row", r) for r in _parquet_records(block))
        elif block.kind == DELETE_BLOCK:
            out.entries.extend(("delete", d) for d in _deletes(block))
        else:
            raise TableStateError(f"{name}: log block type {block.kind} is not readable without a JVM")
    return out


def _larger(a: Any, b: Any) -> bool:
    """a > b for ordering values; values that do not compare (None, other types) are never larger."""
    try:
        return a is not None and b is not None and a > b
    except TypeError:
        return False


def merge(base_rows: list[dict], log: SliceLog, ordering_field: str | None) -> list[dict]:
    """The slice's rows after its log: Hudi's merge with DefaultHoodieRecordPayload semantics."""
    def order(row: dict) -> Any:
        return row.get(ordering_field) if ordering_field else None

    latest: dict[str, tuple[str, Any]] = {}
    for kind, item in log.entries:
        key = item["_hoodie_record_key"] if kind == "row" else item.key
        prev = latest.get(key)
        if kind == "row":
            if prev and prev[0] == "row" and _larger(order(prev[1]), order(item)):
                continue
            latest[key] = ("row", item)
        else:
            if prev and prev[0] == "row" and item.ordering is not None and _larger(order(prev[1]), item.ordering):
                continue  # the delete is older than the record before it
            latest[key] = ("delete", item)
    out = []
    for row in base_rows:
        change = latest.pop(row["_hoodie_record_key"], None)
        if change is None:
            out.append(row)
        elif change[0] == "row":
            out.append(row if _larger(order(row), order(change[1])) else change[1])
        elif change[1].ordering is not None and _larger(order(row), change[1].ordering):
            out.append(row)  # a stale delete: the stored row is newer
    out.extend(r for kind, r in latest.values() if kind == "row")
    return [r for r in out if not r.get("_hoodie_is_deleted")]


def _completed(table) -> set[str]:
    tl = table.get_timeline()
    done = list(tl.get_completed_commits()) + list(tl.get_completed_deltacommits())
    return {i.timestamp for i in done}


def _ordering_field(table) -> str | None:
    opts = dict(table.hudi_options())
    value = opts.get("hoodie.table.precombine.field") or opts.get("hoodie.table.ordering.fields") or ""
    return value.split(",")[0] or None


def read_slice(table, fs, as_of: str | None, completed: set[str] | None = None) -> list[dict]:
    """One file slice merged here (base file + log files) as rows."""
    import pyarrow.parquet as pq

    base = table.base_url.rstrip("/")
    part = f"{base}/{fs.partition_path}" if fs.partition_path else base
    rows: list[dict] = []
    if fs.base_file_name:
        data = storage.read_bytes(_path(f"{part}/{fs.base_file_name}"))
        if data is None:
            raise TableStateError(f"{part}/{fs.base_file_name}: base file vanished while reading")
        rows = pq.read_table(io.BytesIO(data)).to_pylist()
    logs = []
    for name in fs.log_file_names:
        data = storage.read_bytes(_path(f"{part}/{name}"))
        if data is None:
            raise TableStateError(f"{part}/{name}: log file vanished while reading")
        logs.append((name, data))
    logs.sort(key=lambda nl: _log_order(nl[0]))
    completed = completed if completed is not None else _completed(table)
    return merge(rows, slice_log(logs, completed, as_of), _ordering_field(table))


def _path(uri: str) -> str:
    return uri if s3.is_s3(uri) else storage.local(uri)


def _log_order(name: str) -> tuple:
    """.<fileId>_<instant>.log.<version>_<writeToken>: by instant, then version."""
    stem, _, rest = name.partition(".log.")
    version = rest.split("_", 1)[0]
    return (stem.rsplit("_", 1)[-1], int(version) if version.isdigit() else 0, name)


def read_table(table, options=None):
    """The table (a hudi-rs HudiTable) as one pyarrow Table, slice by slice: hudi-rs reads every
    slice it can, the slices it refuses for mixed delete-block ordering types are merged here."""
    import pyarrow as pa

    as_of = options.as_of_timestamp() if options is not None else None
    since = None
    if options is not None and "incremental" in str(options.query_type()).lower():
        # Hudi's incremental query: the latest state of the records the commits in (start, end] wrote
        as_of, since = options.end_timestamp(), options.start_timestamp() or ""
    schema = table.get_schema_with_meta_fields()
    reader = table.create_file_group_reader_with_options(options) if options is not None else \
        table.create_file_group_reader_with_options()
    completed: set[str] | None = None
    tables = []
    for fs in table.get_file_slices(options) if options is not None else table.get_file_slices():
        try:
            batches = reader.read_file_slice(fs, options) if options is not None else reader.read_file_slice(fs)
            tables.append(pa.Table.from_batches([batches] if isinstance(batches, pa.RecordBatch) else list(batches)))
        except Exception as exc:
            if not is_mixed_ordering_error(exc):
                raise
            completed = completed if completed is not None else _completed(table)
            rows = read_slice(table, fs, as_of, completed)
            if since is not None:
                rows = [r for r in rows if str(r.get("_hoodie_commit_time") or "") > since]
            try:
                tables.append(pa.Table.from_pylist(rows, schema=schema))
            except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError) as conv:
                raise TableStateError(f"{table.base_url}: cannot convert the merged rows of file group "
                                      f"{fs.file_id}: {first_line(conv)}") from None
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return pa.Table.from_pylist([], schema=schema)
    return pa.concat_tables([t.select(schema.names).cast(schema) if t.schema != schema else t for t in tables])
