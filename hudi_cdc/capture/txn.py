"""Transaction cuts: capture lands every table's files together at source transaction boundaries.

Debezium's transaction metadata (``provide.transaction.metadata``) puts a BEGIN and an END record on
``<topic prefix>.transaction`` around each transaction's change events; each change carries its
transaction's id (PostgreSQL: ``source.txId``; the binlog connectors, MySQL and MariaDB: the envelope's
``transaction.id``, the GTID or ``file=...,pos=...`` of its BEGIN), and the snapshot marks its last record
(``source.snapshot = last``). From them capture knows when it stands between two transactions. Only
there does it close files in streaming:

- a file is not closed at ``flush_size`` in the middle of a transaction: it is closed at the next
  boundary (it may hold more than flush_size records by the rest of that transaction); during the
  snapshot flush_size applies as before (no cut falls inside the snapshot anyway);
- the time rotation (``--rotate-seconds``) and flush_size close *every* open file of the pipeline at
  once, at a boundary, and then write a cut (jobs/stream/cuts.py): one JSON naming, for every topic,
  the newest landed file, the source position through which all tables are then complete (the source's
  ``position`` of the records seen: PostgreSQL's commit LSN; a binlog source's ``__lsn`` of the last
  change landed, sources/mysql/binlog.py), and how many transactions ended since the previous cut (a
  binlog source counts every transaction of the server, captured tables or not);
- a ``--once`` run ends with a cut (its end marker comes after every transaction it waited for).

A table with no change since the last cut names the same file again: it is complete through the new
cut as well. A file closed for a schema change may still end inside a transaction; the streamer ends
its rounds on cut files only, so no lake commit applies part of a transaction.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable

from hudi_cdc.common import storage
from hudi_cdc.jobs.stream import cuts

_IN_SNAPSHOT = ("true", "first", "first_in_data_collection", "last_in_data_collection")
_UNLIMITED = sys.maxsize


def transaction_topic(topic_prefix: str) -> str:
    return f"{topic_prefix}.transaction"


def _newest_file(topic_dir: str, topic: str) -> str | None:
    names = [n for n in storage.listdir(topic_dir)
             if n.startswith(f"{topic}+") and n.endswith(".avro") and not n.startswith(storage.IGNORED_PREFIXES)]
    return max(names, key=cuts.file_offset) if names else None


def record_lsn(record) -> int | None:
    try:
        offset = record.sourceOffset()
        value = offset.get("lsn") if offset is not None else None
        return int(value) if value is not None else None
    except Exception:  # noqa: BLE001 - a record without a PostgreSQL offset (none expected)
        return None


def transaction_id(value, source=None) -> str | None:
    """The change's transaction: PostgreSQL's ``source.txId``, else (the binlog connectors) the envelope's
    ``transaction.id`` (Debezium's transaction block); None outside a transaction (a snapshot row).
    `source`: the envelope's source block when the caller has it already."""
    source = source if source is not None else value.getStruct("source")
    if source is not None and source.schema().field("txId") is not None:
        txid = source.get("txId")
        return str(txid) if txid is not None else None
    block = value.getStruct("transaction") if value.schema().field("transaction") is not None else None
    txid = block.get("id") if block is not None else None
    return str(txid) if txid is not None else None


def stands_on_commit(event) -> bool:
    """The record's offset stands on a COMMIT (a transaction's END record, a heartbeat right after a
    commit): never the position capture marks as processed. PostgreSQL gives a COMMIT message the LSN
    just past its commit record, where the next WAL record starts: with concurrent writers, often a change
    of a transaction still open. On restart, Debezium 3.6's WalPositionLocator takes that change for the
    stored COMMIT and skips the open transaction's changes up to it (debezium/dbz#76, fixed in 3.7.0,
    whose embedded engine Maven Central here does not serve): under `pgbench -c 4`, a continuous capture
    stopped and restarted lost about one update in 40,000. An offset on a transaction's last change
    instead resumes right after that change; at worst a transaction comes again, never one less."""
    try:
        offset = event.sourceRecord().sourceOffset()
        return offset is not None and str(offset.get("messageType")) == "COMMIT"
    except Exception:  # noqa: BLE001 - a record without a PostgreSQL offset (a MySQL-family source)
        return False


def initial_snapshot_row(value) -> bool:
    """A row of an initial (blocking) snapshot, not of an incremental one nor a streamed change."""
    source = value.getStruct("source") if value is not None else None
    snap = str(source.getString("snapshot") or "false") if source is not None else "false"
    return snap in _IN_SNAPSHOT or snap == "last"


class Cuts:
    """Tracks transaction boundaries in the record stream and cuts the landing there."""

    def __init__(self, landing, landing_root: str, transaction_topic_name: str, rotate_seconds: float | None = None,
                 position: Callable | None = None):
        """position(record, value): the record's place in the source's commit order, comparable with the
        landed __lsn, or None (the source's CapturePart.position; PostgreSQL's offset LSN by default)."""
        self.landing = landing
        self.position = position or (lambda record, value: record_lsn(record))
        self.flush_size = landing.flush_size
        landing.flush_size = _UNLIMITED  # files close at boundaries (snapshot: flush_size, see observe)
        self.folder = cuts.cuts_dir(landing_root)
        self.topic = transaction_topic_name
        self.rotate_seconds = rotate_seconds
        numbers = cuts.cut_numbers(self.folder)
        self.number = numbers[-1] if numbers else 0
        last = cuts.read_cut(self.folder, self.number) if numbers else None
        self.lsn = int(last["lsn"]) if last and str(last.get("lsn") or "").isdigit() else 0
        self.newest = {t: _newest_file(d, t) for t, d in landing.topic_dirs.items()}
        self.in_txn = False
        self.txid: str | None = None
        self.snapshot = False
        self.ended = 0  # transactions ended since the last cut
        self.written = 0  # cuts written by this run
        self._seen: tuple = (None, "")  # the record observe() looked at last, and its source.snapshot

    # ------------------------------------------------------------ the record stream
    def observe(self, record, topic: str, value) -> None:
        """Before a record is landed (or passed over): boundaries it reveals, the LSN reached."""
        lsn = self.position(record, value)
        if topic == self.topic and value is not None:
            status = str(value.getString("status"))
            if status == "BEGIN":
                self._boundary()  # whatever came before is whole
                self.in_txn = True
            elif status == "END":
                self.in_txn, self.txid = False, None
                self.ended += 1
                self._advance(lsn)
                self._boundary()
            return
        if topic not in self.landing.topic_dirs or value is None:
            if not self.in_txn and not self.snapshot:
                self._advance(lsn)  # heartbeats, messages: the position between transactions
            return
        source = value.getStruct("source")
        snap = str(source.getString("snapshot") or "false") if source is not None else "false"
        self._seen = (record, snap)  # landed() asks again of the same record
        if snap in _IN_SNAPSHOT or snap == "last":
            self.snapshot = True
            self.landing.flush_size = self.flush_size
            return
        if snap == "incremental":
            return  # read between transactions (an incremental snapshot's chunk)
        txid = transaction_id(value, source)
        if self.snapshot:
            self.snapshot = False
            self.landing.flush_size = _UNLIMITED
        if self.in_txn and self.txid is not None and txid is not None and txid != self.txid:
            self.in_txn = False  # a transaction whose END did not come: the txId changed
            self.ended += 1
            self._boundary()
        self.in_txn, self.txid = True, txid
        self._advance(lsn)

    def landed(self, record, value) -> None:
        """After a change record is landed: the snapshot's last record is a boundary."""
        if self._seen[0] is record:  # observed just before (one JPype call less per record)
            last = self._seen[1] == "last"
        else:
            source = value.getStruct("source") if value is not None else None
            last = source is not None and str(source.getString("snapshot") or "") == "last"
        if last:
            self.snapshot = False
            self.landing.flush_size = _UNLIMITED
            self._advance(self.position(record, value))
            self._boundary(force=True)

    def _advance(self, lsn: int | None) -> None:
        if lsn is not None and lsn > self.lsn:
            self.lsn = lsn

    # ------------------------------------------------------------ cutting
    def between(self) -> bool:
        return not self.in_txn and not self.snapshot

    def _due(self) -> bool:
        open_files = self.landing.open.values()
        if any(f.count >= self.flush_size for f in open_files):
            return True
        now = time.monotonic()
        return self.rotate_seconds is not None and any(now - f.opened >= self.rotate_seconds for f in open_files)

    def _boundary(self, force: bool = False) -> None:
        if self.landing.open and (force or self._due()):
            self.cut()

    def rotate(self) -> int:
        """The time rotation (main thread, under the consumer's lock): a cut when due and between
        transactions; inside one, the cut waits for its END. Returns how many files were closed."""
        if not self.between() or not self._due():
            return 0
        return self.cut()

    def cut(self) -> int:
        """Close every open file, then write the cut naming each topic's newest landed file."""
        landing = self.landing
        before = {t: len(s.files) for t, s in landing.stats.items()}
        closed = len(landing.open)
        landing.flush_all()
        changed = False
        for t, s in landing.stats.items():
            if len(s.files) > before[t] or (s.files and self.newest.get(t) is None):
                self.newest[t] = s.files[-1]
                changed = True
        if not changed and self.written:
            return closed
        self.number += 1
        body = {"cut": self.number, "lsn": self.lsn, "ts_ms": int(time.time() * 1000),
                "transactions": self.ended, "topics": dict(sorted(self.newest.items()))}
        # whole or not at all (a local rename, one S3 PUT); a cut lost in a crash is covered by the next
        storage.write_bytes(storage.join(self.folder, cuts.cut_name(self.number)),
                            json.dumps(body, sort_keys=True).encode())
        self.ended = 0
        self.written += 1
        return closed
