"""Every MoR table the pipeline writes stays readable by hudi-rs (issue 11), on real Spark + Hudi 1.2.0.

In one upsert through Hudi's global index, a partition move writes a delete of the row's old
location with Hudi's default ordering value (int 0, IntWrapper), while a key-only delete carries the
event's ordering value (the LSN, a long, LongWrapper). Both land in the old file group's delete
block, and hudi-rs 0.5.0 refuses a delete block whose ordering values are of two types ("Delete block
mixes ordering types (union branches 2 and 3)") although Spark reads it. Through Hudi's index
(`hoodie.streamer.hudi_cdc.locations=index`) the streamer writes such a round as two commits, so each
delete block is of one type; with the locations it finds itself (the default, jobs/stream/located.py)
the move's delete is the event's own, with its LSN, and the round is one commit. Checked for both: the
moves and deletes do land in the same file group, every delete block is of one type, and the table
read natively equals Spark's snapshot read and the state replayed from the events.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest

from hudi_cdc.lake.reader import read_table, rows_by_key
from hudi_cdc.query import history
from tests.jobs.test_cdc_semantics import DATA_COLS, Lake, ev

pytestmark = pytest.mark.spark

NATS = ["American", "French", "German"]
N = 300
DELETE_BLOCK = 1
# orderingVal branches of Hudi's HoodieDeleteRecord (wrapper records): 2 IntWrapper, 3 LongWrapper
INT_WRAPPER, LONG_WRAPPER = 2, 3


def _varint(f) -> int:
    shift = n = 0
    while True:
        b = f.read(1)[0]
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return (n >> 1) ^ -(n & 1)


def _avro_string(f):
    if _varint(f) == 0:  # union branch 0: null
        return None
    return f.read(_varint(f)).decode()


def delete_blocks(log_file: Path) -> list[list[tuple[str, int, object]]]:
    """The delete blocks of a Hudi log file: for each, its records as (key, orderingVal branch, value)."""
    data = io.BytesIO(log_file.read_bytes())
    blocks = []
    while data.read(6) == b"#HUDI#":
        size = struct.unpack(">q", data.read(8))[0]
        start = data.tell()
        _version, block_type, n_headers = struct.unpack(">iii", data.read(12))
        for _ in range(n_headers):
            _key, length = struct.unpack(">ii", data.read(8))
            data.read(length)
        content = data.read(struct.unpack(">q", data.read(8))[0])
        if block_type == DELETE_BLOCK:
            body = io.BytesIO(content[8:8 + struct.unpack(">i", content[4:8])[0]])
            records = []
            count = _varint(body)
            while count:
                if count < 0:
                    count = -count
                    _varint(body)  # block byte size
                for _ in range(count):
                    key, _part, branch = _avro_string(body), _avro_string(body), _varint(body)
                    assert branch in (0, INT_WRAPPER, LONG_WRAPPER), f"{log_file}: ordering branch {branch}"
                    records.append((key, branch, _varint(body) if branch else None))
                count = _varint(body)
            blocks.append(records)
        data.seek(start + size)
    return blocks


def _log_files(base: Path, partition: str) -> dict[str, list[Path]]:
    """Log files of one partition by file id."""
    out: dict[str, list[Path]] = {}
    for p in sorted((base / partition).glob(".*.log.*")):
        if not p.name.endswith(".crc"):
            out.setdefault(p.name[1:].split("_")[0], []).append(p)
    return out


def _spark_rows(spark, path: str) -> dict[int, dict]:
    rows = spark.read.format("hudi").load(path).select(*DATA_COLS).collect()
    return {r["artist_id"]: r.asDict() for r in rows}


@pytest.mark.parametrize("locations", ["snapshot", "index"])
def test_deletes_and_partition_moves_in_one_file_group_read_natively(tmp_path, spark, locations):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",),
                hudi_options={"hoodie.streamer.hudi_cdc.locations": locations})
    snapshot = [ev(i, 100, nat=NATS[i % 3], op="r") for i in range(1, N + 1)]
    lake.land(snapshot[:N // 2])
    lake.land(snapshot[N // 2:])
    lake.run("BULK_INSERT")
    path = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    base = Path(path[len("file://"):])

    american = [k for k in range(1, N + 1) if NATS[k % 3] == "American"]
    # ~1% of the rows each: updates, partition moves out of American, key-only deletes in American
    # (the old file group of the moves) and inserts; American gets no insert, so Hudi appends to
    # its file group's log instead of rewriting its base file.
    rounds = [(american[0:3], american[3:6], american[12]), (american[6:9], american[9:12], american[13])]
    for r, (moves, deletes, american_update) in enumerate(rounds):
        lsn = 1000 * (r + 1)
        events = [ev(k, lsn + k, nat="French", name=f"moved {k}") for k in moves]
        events += [ev(k, lsn + k, deleted=True) for k in deletes]
        events += [ev(k, lsn + k, nat=NATS[k % 3], name=f"update {k}") for k in (1, 2, 4, 5, american_update)]
        events += [ev(N + 1 + 10 * r + i, lsn, nat="German", op="c") for i in range(3)]
        lake.land(events)
        lake.run("UPSERT")

        want = lake.expected()
        native = {k: {c: v[c] for c in DATA_COLS} for k, v in rows_by_key(read_table(path), "artist_id").items()}
        assert native == want, f"round {r + 1}: hudi-rs read differs from the replayed state"
        assert _spark_rows(spark, path) == want, f"round {r + 1}: Spark read differs from the replayed state"

        if r == 0:
            # the case at hand: moves and deletes in the delete blocks of one file group
            logs = _log_files(base, "nationality=American")
            assert len(logs) == 1, logs
            blocks = [b for f in next(iter(logs.values())) for b in delete_blocks(f)]
            deleted = {int(k) for b in blocks for k, _, _ in b}
            assert deleted == set(moves) | set(deletes)
            for b in blocks:
                assert len({branch for _, branch, _ in b}) == 1, f"a delete block mixes ordering types: {b}"
            branches = {int(k): branch for b in blocks for k, branch, _ in b}
            moved = INT_WRAPPER if locations == "index" else LONG_WRAPPER
            assert {branches[k] for k in moves} == {moved} and {branches[k] for k in deletes} == {LONG_WRAPPER}

    # every earlier state reads natively too (time travel reads the older file slices and their logs)
    for key, changes in ((rounds[0][0][0], ["insert", "update"]), (rounds[0][1][0], ["insert", "delete"]),
                         (rounds[1][0][0], ["insert", "update"])):
        native = history(path, str(key)).states
        assert [s["change"] for s in native] == changes
    via_spark = history(path, str(key), spark=spark).states
    assert [(s["instant"], s["change"], s["name"]) for s in native] == \
           [(s["instant"], s["change"], s["name"]) for s in via_spark]
