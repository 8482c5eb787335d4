"""The JVM-free merge of MoR file slices hudi-rs refuses (hudi_cdc/lake/slice_merge.py): Hudi's log
format parsed from bytes laid out as HoodieLogFormatWriter writes them, and Hudi's merge rules.
The real case (HoodieDeltaStreamer 0.14 writing a mixed delete block) is in
tests/runners/test_deltastreamer_real.py."""

from __future__ import annotations

import io
import json
import struct

import fastavro

from hudi_cdc.lake import slice_merge as sm

SCHEMA = {"type": "record", "name": "r", "fields": [
    {"name": "_hoodie_commit_time", "type": ["null", "string"]}, {"name": "_hoodie_record_key", "type": "string"},
    {"name": "id", "type": "long"}, {"name": "v", "type": ["null", "string"]}, {"name": "lsn", "type": "long"}]}


def _meta(entries: dict[int, str]) -> bytes:
    out = struct.pack(">i", len(entries))
    for k, v in entries.items():
        b = v.encode()
        out += struct.pack(">ii", k, len(b)) + b
    return out


def block(kind: int, header: dict[int, str], content: bytes) -> bytes:
    h, f = _meta(header), _meta({})
    size = 4 + 4 + len(h) + 8 + len(content) + len(f) + 8
    body = struct.pack(">ii", 1, kind) + h + struct.pack(">q", len(content)) + content + f
    total = len(sm.MAGIC) + 8 + len(body) + 8
    return sm.MAGIC + struct.pack(">q", size) + body + struct.pack(">q", total)


def data_block(instant: str, rows: list[dict]) -> bytes:
    parsed = fastavro.parse_schema(SCHEMA)
    content = struct.pack(">ii", 3, len(rows))
    for r in rows:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, dict(r, _hoodie_commit_time=instant, _hoodie_record_key=str(r["id"])))
        content += struct.pack(">i", len(buf.getvalue())) + buf.getvalue()
    return block(sm.AVRO_DATA_BLOCK, {sm.INSTANT_TIME: instant, sm.SCHEMA: json.dumps(SCHEMA)}, content)


def delete_block(instant: str, deletes: list[tuple[str, object]]) -> bytes:
    """deletes: (key, ordering) with ordering an int (IntWrapper), ("long", n) or None."""
    items = []
    for key, ordering in deletes:
        if ordering is None:
            val = None
        elif isinstance(ordering, tuple):
            val = ("org.apache.hudi.avro.model.LongWrapper", {"value": ordering[1]})
        else:
            val = ("org.apache.hudi.avro.model.IntWrapper", {"value": ordering})
        items.append({"recordKey": key, "partitionPath": "p", "orderingVal": val})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(sm.DELETE_LIST_SCHEMA), {"deleteRecordList": items})
    content = struct.pack(">ii", 3, len(buf.getvalue())) + buf.getvalue()
    return block(sm.DELETE_BLOCK, {sm.INSTANT_TIME: instant}, content)


def rollback_block(instant: str, target: str) -> bytes:
    return block(sm.COMMAND_BLOCK, {sm.INSTANT_TIME: instant, sm.TARGET_INSTANT_TIME: target,
                                    sm.COMMAND_BLOCK_TYPE: sm.ROLLBACK_COMMAND}, b"")


def row(i: int, v: str, lsn: int) -> dict:
    return {"_hoodie_commit_time": "001", "_hoodie_record_key": str(i), "id": i, "v": v, "lsn": lsn}


def test_a_mixed_delete_block_parses_with_both_ordering_types():
    log = data_block("002", [row(5, "new", 500)]) + delete_block("002", [("1", 0), ("2", ("long", 210))])
    blocks = sm.parse_blocks(log)
    assert [b.kind for b in blocks] == [sm.AVRO_DATA_BLOCK, sm.DELETE_BLOCK]
    got = sm.slice_log([("f.log.1_0-1-1", log)], {"002"}, None).entries
    assert got[0][0] == "row" and got[0][1]["v"] == "new"
    assert [(k, d.key, d.ordering) for k, d in got[1:]] == [("delete", "1", None), ("delete", "2", 210)]


def test_hudis_merge_rules_on_the_base_file():
    base = [row(1, "moved away", 100), row(2, "deleted", 100), row(3, "stale delete kept", 100),
            row(4, "stale update kept", 100), row(6, "updated", 100)]
    log = (data_block("002", [row(4, "stale", 50), row(6, "first", 300), row(7, "inserted", 310)])
           + delete_block("002", [("1", 0), ("2", ("long", 210)), ("3", ("long", 40))])
           + data_block("003", [row(6, "older in a later commit", 200)]))
    merged = sm.merge(base, sm.slice_log([("f.log.1_0-1-1", log)], {"002", "003"}, None), "lsn")
    assert {r["id"]: r["v"] for r in merged} == {3: "stale delete kept", 4: "stale update kept", 6: "first",
                                                 7: "inserted"}


def test_uncommitted_rolled_back_and_later_blocks_do_not_count():
    base = [row(1, "base", 100)]
    log = (data_block("002", [row(1, "rolled back", 200)]) + rollback_block("003", "002")
           + data_block("004", [row(1, "inflight", 300)]) + data_block("005", [row(1, "after as-of", 400)])
           + b"#HUDI#\x00\x00\x00\x00\x00\x00\xff\xffgarbage")  # a block cut short by a crash
    completed = {"002", "003", "005"}
    assert sm.merge(base, sm.slice_log([("f.log.1_0-1-1", log)], completed, "004"), "lsn") == base
    assert sm.merge(base, sm.slice_log([("f.log.1_0-1-1", log)], completed, None), "lsn")[0]["v"] == "after as-of"


def test_a_delete_after_a_newer_log_record_is_ignored_and_natural_order_deletes_always_apply():
    log = (data_block("002", [row(8, "newer", 500), row(9, "x", 500)])
           + delete_block("003", [("8", ("long", 400)), ("9", 0)]))
    merged = sm.merge([], sm.slice_log([("f.log.1_0-1-1", log)], {"002", "003"}, None), "lsn")
    assert [(r["id"], r["v"]) for r in merged] == [(8, "newer")]


def test_the_error_hudi_rs_gives_is_recognised():
    assert sm.is_mixed_ordering_error(RuntimeError("Log block error: Delete block mixes ordering types "
                                                   "(union branches 2 and 3)"))
    assert not sm.is_mixed_ordering_error(RuntimeError("something else"))
