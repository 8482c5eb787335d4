"""A synthetic CDC stream at any scale, landed as Kafka Connect S3-sink Avro files.

Rows are Debezium's flattened values (ExtractNewRecordState, rewritten deletes) of a `customers`
table partitioned by country. The snapshot is `__op=r`; each change batch mixes updates, partition
moves (country changes), key-only deletes (country null), inserts of new keys and redeliveries
(snapshot events sent again, same LSN: they must change nothing). File names and modification times
follow hudi_cdc.sample (strictly increasing, whole milliseconds: the streamer's checkpoint).
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import fastavro

from hudi_cdc.sample import file_name

TOPIC = "bench.public.customers"
TABLE = "customers"
KEY = "customer_id"
PARTITION = "country"
COUNTRIES = [f"C{i:02d}" for i in range(20)]
SNAPSHOT_LSN = 1_000
SCHEMA = {
    "type": "record", "name": "Value", "namespace": TOPIC,
    "fields": [
        {"name": KEY, "type": "long"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": PARTITION, "type": ["null", "string"], "default": None},
        {"name": "segment", "type": ["null", "string"], "default": None},
        {"name": "balance", "type": ["null", "long"], "default": None},
        *({"name": f, "type": ["null", t], "default": None} for f, t in (
            ("__op", "string"), ("__db", "string"), ("__table", "string"), ("__schema", "string"),
            ("__lsn", "long"), ("__source_ts_ms", "long"), ("__deleted", "string"))),
    ],
}
# share of a change batch per kind of event (the rest of the batch are updates)
MIX = {"move": 0.10, "delete": 0.10, "insert": 0.15, "redeliver": 0.05}


def _row(key: int, country: str | None, lsn: int, op: str, rng: random.Random) -> dict:
    deleted = op == "d"
    return {KEY: key, "name": None if deleted else f"customer {key} v{lsn}", PARTITION: country,
            "segment": None if deleted else rng.choice(("retail", "smb", "enterprise")),
            "balance": None if deleted else rng.randrange(1_000_000),
            "__op": op, "__db": "bench", "__table": TABLE, "__schema": "public", "__lsn": lsn,
            "__source_ts_ms": 1_700_000_000_000 + lsn, "__deleted": "true" if deleted else "false"}


@dataclass
class Stream:
    """The source table's current keys (key -> country) and the next LSN / key / Kafka offset."""

    rows: int
    seed: int = 7
    live: dict[int, str] = field(default_factory=dict)
    next_lsn: int = SNAPSHOT_LSN + 1
    next_key: int = 0
    offset: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def snapshot(self) -> list[dict]:
        return [r for batch in self.snapshot_batches(1) for r in batch]

    def snapshot_batches(self, files: int):
        """The snapshot in `files` lists, one at a time (10M rows as one list of dicts is ~10 GB)."""
        per = max(1, -(-self.rows // files))
        for start in range(1, self.rows + 1, per):
            out = []
            for key in range(start, min(self.rows, start + per - 1) + 1):
                country = COUNTRIES[key % len(COUNTRIES)]
                self.live[key] = country
                out.append(_row(key, country, SNAPSHOT_LSN, "r", self.rng))
            yield out
        self.next_key = self.rows + 1

    def adopt(self) -> None:
        """The state after the snapshot without generating its rows (a table bootstrapped earlier)."""
        self.live = {key: COUNTRIES[key % len(COUNTRIES)] for key in range(1, self.rows + 1)}
        self.next_key = self.rows + 1

    def changes(self, count: int) -> tuple[list[dict], dict[str, int]]:
        """One change batch of `count` events; distinct keys, so each event is visible in the result."""
        n = {kind: int(count * share) for kind, share in MIX.items()}
        n["update"] = count - sum(n.values())
        touched = self.rng.sample(sorted(self.live) if len(self.live) < 2_000_000 else list(self.live),
                                  n["update"] + n["move"] + n["delete"] + n["redeliver"])
        out: list[dict] = []
        it = iter(touched)
        for kind in ("update", "move", "delete", "redeliver"):
            for _ in range(n[kind]):
                key = next(it)
                if kind == "redeliver":  # the snapshot event again: same LSN, so nothing changes
                    out.append(_row(key, self.live[key], SNAPSHOT_LSN, "r", random.Random(key)))
                    continue
                lsn, self.next_lsn = self.next_lsn, self.next_lsn + 1
                if kind == "delete":
                    out.append(_row(key, None, lsn, "d", self.rng))
                    del self.live[key]
                    continue
                country = self.live[key]
                if kind == "move":
                    country = COUNTRIES[(COUNTRIES.index(country) + 1) % len(COUNTRIES)]
                    self.live[key] = country
                out.append(_row(key, country, lsn, "u", self.rng))
        for _ in range(n["insert"]):
            key, self.next_key = self.next_key, self.next_key + 1
            lsn, self.next_lsn = self.next_lsn, self.next_lsn + 1
            country = COUNTRIES[key % len(COUNTRIES)]
            self.live[key] = country
            out.append(_row(key, country, lsn, "c", self.rng))
        return out, n


class Landing:
    """<root>/<topic>/partition=0/<topic>+0+<offset>.avro, modification times strictly increasing."""

    def __init__(self, root: Path, topic: str = TOPIC):
        self.root = Path(root)
        self.topic = topic
        self.schema = SCHEMA if topic == TOPIC else {**SCHEMA, "namespace": topic}
        self.dir = self.root / topic / "partition=0"
        self.dir.mkdir(parents=True, exist_ok=True)
        latest = max((p.stat().st_mtime_ns for p in self.dir.glob("*.avro")), default=0)
        self.offset = sum(1 for _ in self.dir.glob("*.avro")) and _next_offset(self.dir)
        self.next_ns = max(time.time_ns(), latest + 1_000_000)
        self.next_ns -= self.next_ns % 1_000_000

    def land(self, records: list[dict]) -> Path:
        path = self.dir / file_name(self.topic, self.offset)
        tmp = path.with_name("." + path.name + ".tmp")
        with open(tmp, "wb") as fh:
            fastavro.writer(fh, self.schema, records, codec="null")
        self.next_ns = max(self.next_ns, time.time_ns() - time.time_ns() % 1_000_000)
        os.utime(tmp, ns=(self.next_ns, self.next_ns))
        self.next_ns += 1_000_000
        tmp.rename(path)
        self.offset += len(records)
        return path

    def land_snapshot(self, src: Stream, files: int) -> list[Path]:
        return [self.land(batch) for batch in src.snapshot_batches(files)]

    def land_many(self, records: list[dict], files: int) -> list[Path]:
        per = max(1, -(-len(records) // files))
        return [self.land(records[i:i + per]) for i in range(0, len(records), per)]


def _next_offset(folder: Path) -> int:
    last = max(folder.glob("*.avro"), key=lambda p: int(p.stem.rsplit("+", 1)[1]))
    with open(last, "rb") as fh:
        count = sum(1 for _ in fastavro.reader(fh))
    return int(last.stem.rsplit("+", 1)[1]) + count
