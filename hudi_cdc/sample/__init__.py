"""Land the embedded MoMA sample as Kafka Connect S3-sink Avro files.

Layout and naming as the Confluent S3 sink writes them:
  <root>/<topic>/partition=0/<topic>+0+<first offset, 10 digits>.avro
Records are Debezium's flattened (ExtractNewRecordState, delete.handling.mode=rewrite) values
with the real sink files' schemas: snapshot reads (__op=r) first, then the seed's changes, one
file per sink flush. File modification times strictly increase in landing order, because the
DFS source checkpoint is the newest modification time consumed.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import time
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any, cast

import fastavro

from hudi_cdc.errors import DataError

TOPICS = {"artists": "moma.public.artists", "artworks": "moma.public.artworks"}
KEYS = {"artists": "artist_id", "artworks": "artwork_id"}
ZIPS = {"artists": "moma_public_artists.txt.zip", "artworks": "moma_public_artworks_small.txt.zip"}
SNAPSHOT_LSN = 3600591880192
SNAPSHOT_TS_MS = 1640401890947  # 2021-12-25, the real sink files' snapshot time
CHANGE_LSN_START = 3692866569488
RECORDS_PER_FILE = 300


def _data(name: str):
    return resources.files("hudi_cdc.data") / "moma" / name


def schema(table: str) -> dict:
    return json.loads(_data(f"{TOPICS[table]}-value.avsc").read_text())


def _field_types(sch: dict) -> dict[str, str]:
    out = {}
    for f in sch["fields"]:
        t = f["type"]
        if isinstance(t, list):
            t = next(x for x in t if x != "null")
        out[f["name"]] = t
    return out


def _convert(value: str, avro_type: str):
    if value is None or value == "" and avro_type in ("int", "long"):
        return None
    if avro_type in ("int", "long"):
        try:
            return int(value)
        except ValueError:
            return int(float(value))
    return value


def snapshot_rows(table: str) -> list[dict]:
    """The table's rows as Debezium snapshot events (op=r), in file order."""
    types = _field_types(schema(table))
    with zipfile.ZipFile(io.BytesIO(_data(ZIPS[table]).read_bytes())) as zf:
        text = zf.read(zf.namelist()[0]).decode("utf-8")
    rows = []
    for rec in csv.DictReader(io.StringIO(text), delimiter="|"):
        row = {k: _convert(v, types[k]) for k, v in rec.items() if k in types}
        rows.append(row)
    for extra in seed_changes()["snapshot_extra"].get(table, []):
        rows.append({k: v for k, v in extra.items() if k in types})
    out = []
    for i, row in enumerate(rows):
        full = {f: row.get(f) for f in types if not f.startswith("__")}
        full.update(__op="r", __db="moma", __table=table, __schema="public", __lsn=SNAPSHOT_LSN,
                    __source_ts_ms=SNAPSHOT_TS_MS + i // 10, __deleted="false")
        out.append(full)
    return out


def seed_changes() -> dict:
    return json.loads(_data("seed_changes.json").read_text())


@dataclass
class ChangeFile:
    index: int
    table: str
    offset: int
    records: list[dict]
    at: str


def change_files() -> list[ChangeFile]:
    """The seed's changes as full after-images, replayed over the snapshot."""
    spec = seed_changes()
    state: dict[str, dict[int, dict]] = {}
    offsets: dict[str, int] = {}
    lsn = CHANGE_LSN_START
    out = []
    for idx, f in enumerate(spec["files"]):
        table = f["table"]
        if table not in state:
            snap = snapshot_rows(table)
            state[table] = {r[KEYS[table]]: r for r in snap}
            offsets[table] = len(snap)
        ts = int(datetime.fromisoformat(f["at"].replace("Z", "+00:00")).timestamp() * 1000)
        records = []
        for j, ev in enumerate(f["events"]):
            lsn += 1024 * (j + 1)
            key = ev["key"]
            current = state[table].get(key)
            if current is None:
                raise DataError(f"seed change {idx} touches unknown {table} key {key}")
            if ev["op"] == "d":
                rec: dict[str, Any] = {k: None for k in current}
                rec[KEYS[table]] = key
                rec.update(__op="d", __db="moma", __table=table, __schema="public", __deleted="true")
                del state[table][key]
            else:
                rec = copy.deepcopy(current)
                rec.update(ev["set"])
                rec.update(__op="u", __deleted="false")
                state[table][key] = copy.deepcopy(rec)
            rec["__lsn"] = lsn
            rec["__source_ts_ms"] = ts + j
            records.append(rec)
        out.append(ChangeFile(idx, table, offsets[table], records, f["at"]))
        offsets[table] += len(records)
    return out


def file_name(topic: str, offset: int, partition: int = 0) -> str:
    return f"{topic}+{partition}+{offset:010d}.avro"


def _topic_dir(root: Path, table: str, partition: int = 0) -> Path:
    return root / TOPICS[table] / f"partition={partition}"


class _Clock:
    """Strictly increasing modification times, later than every file already landed."""

    def __init__(self, root: Path):
        latest = 0
        if root.exists():
            for p in root.rglob("*.avro"):
                latest = max(latest, p.stat().st_mtime_ns)
        self.next_ns = max(time.time_ns(), latest + 1_000_000)
        self.next_ns -= self.next_ns % 1_000_000  # whole milliseconds, as the checkpoint stores them

    def tick(self) -> int:
        t = self.next_ns
        self.next_ns += 1_000_000
        return t


def _write(path: Path, sch: dict, records: list[dict], mtime_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name("." + path.name + ".tmp")  # hidden while written: readers skip dot files
    with open(tmp, "wb") as fh:
        fastavro.writer(fh, sch, records, codec="null")
    os.utime(tmp, ns=(mtime_ns, mtime_ns))
    tmp.rename(path)


def land_snapshot(root: Path, tables=("artists", "artworks"), per_file: int = RECORDS_PER_FILE,
                  progress=None) -> list[Path]:
    """Write the snapshot files; files already there are kept (idempotent)."""
    root = Path(root)
    clock = _Clock(root)
    written = []
    for table in tables:
        sch, rows = schema(table), snapshot_rows(table)
        for start in range(0, len(rows), per_file):
            path = _topic_dir(root, table) / file_name(TOPICS[table], start)
            if path.exists():
                continue
            _write(path, sch, rows[start:start + per_file], clock.tick())
            written.append(path)
        if progress:
            progress(f"landed {TOPICS[table]}: {len(rows)} snapshot records")
    return written


def pending_changes(root: Path) -> list[ChangeFile]:
    root = Path(root)
    return [c for c in change_files()
            if not (_topic_dir(root, c.table) / file_name(TOPICS[c.table], c.offset)).exists()]


def land_changes(root: Path, count: int | None = None, progress=None) -> list[Path]:
    """Land the next `count` change files (all by default), each with a later modification time."""
    root = Path(root)
    clock = _Clock(root)
    todo = pending_changes(root)
    if count is not None:
        todo = todo[:count]
    written = []
    for c in todo:
        path = _topic_dir(root, c.table) / file_name(TOPICS[c.table], c.offset)
        _write(path, schema(c.table), c.records, clock.tick())
        written.append(path)
        if progress:
            notes = "; ".join(e.get("note", "") for e in seed_changes()["files"][c.index]["events"])
            progress(f"landed change {c.index + 1}: {path.name} ({notes})")
    return written


def expected_state(root: Path, table: str) -> dict[int, dict]:
    """Current rows a correct pipeline must hold after consuming every file under root, computed
    independently of Spark and Hudi: replay all landed events in LSN order, latest wins, deletes remove."""
    events: list[dict] = []
    for p in sorted(_topic_dir(Path(root), table).glob("*.avro")):
        with open(p, "rb") as fh:
            events.extend(cast("Iterable[dict]", fastavro.reader(fh)))  # a record schema: every datum is a dict
    return replay(events, KEYS[table])


def replay(events: list[dict], key: str, ordering=("__lsn",)) -> dict[int, dict]:
    """Latest event per key wins, deletes remove; a TRUNCATE row (``__op='t'``) removes every event at
    or before its position (the newest truncate counts: what the lake applies, jobs/stream/truncate.py)."""
    state: dict[Any, dict] = {}
    best: dict[Any, tuple] = {}
    truncates = [tuple(ev.get(o) or 0 for o in ordering) for ev in events if ev.get("__op") == "t"]
    floor = max(truncates) if truncates else None
    for ev in events:
        k = ev[key]
        order = tuple(ev.get(o) or 0 for o in ordering)
        if floor is not None and order <= floor:
            continue  # truncated (the truncate rows themselves too)
        if k in best and best[k] > order:
            continue  # a stale event never overwrites a newer one
        best[k] = order
        if ev.get("__deleted") == "true" or ev.get("__op") == "d":
            state.pop(k, None)
        else:
            state[k] = ev
    return state
