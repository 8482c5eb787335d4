"""Incremental snapshots on the pipeline's own slot: `hudi-cdc capture snapshot --table T [--replace]`.

Debezium's incremental snapshot reads a table in primary-key chunks while streaming goes on; each
chunk is read between two watermark rows Debezium writes into the signal table, and a chunk row whose
key changed inside that window is dropped (the streamed change stands). It is started by an
`execute-snapshot` row (type incremental) in the signal table (`signal.data.collection`), which the
connector reads from the slot like any change: the table and the signal table must be in the
publication, and the table in `table.include.list`, before the signal is decoded.

The command only writes a request (``<work dir>/snapshots/<slot>/<table>.json``) after putting the table
and the signal table into the publication; the capture on the pipeline's slot (running: within a
second; else the next one) carries it out:
1. a table its engine does not capture yet (newly added to the pipeline file): a continuous capture
   restarts its engine with the file's tables (same slot, same offsets); the request waits for that;
2. R = the WAL insert position and the transactions running then; R is the request's **floor**;
3. with --replace: a truncate row of the table (``__op='t'``, ``__lsn`` = R - 2) is landed in its
   topic, under the landing lock, before any event at or after R (jobs/stream/truncate.py applies it);
4. once every transaction running at R has ended, the signal row is inserted;
5. every incremental-snapshot row (op 'r', source.snapshot 'incremental') of the table is landed with
   ``__lsn`` = R - 1 instead of the streaming position Debezium gives it.

A PostgreSQL partitioned table gets a blocking snapshot instead (signal type ``blocking``: Debezium pauses
streaming and reads the table whole, as its initial snapshot does; an incremental snapshot reads none of a
partitioned table's rows): the same floor, its rows ordered at R - 1 the same way, its end told by the
initial snapshot's notification. Debezium never resumes a stopped engine's blocking snapshot: the next capture
gets it again only if it streams the signal again (offsets committed before it). So a capture starting with one
`signalled` counts its rows anew, and requests it again (a new floor; with --replace a new truncate) once the
stream is past the signal with none of its rows (the slot confirmed the signal as read, or a change committed
after it came first: the snapshot pauses the stream) or after RESUME_SECONDS without one.

Why R - 1 (docs/capture.md, "Incremental snapshots"): every change with an LSN below R was committed
before the signal (step 4), so before any chunk was read: the chunk row reflects it and, being
ordered after it, wins. Every change at or after R is streamed (the table is captured before R) and is
ordered after the chunk row: the newest streamed change of a key wins over it, and per key the newest
LSN is the newest change (row locks serialise changes of one row). A delete at or after R leaves a
tombstone no chunk row passes; a row deleted before its chunk is simply not read. Debezium's own
``source.lsn`` of a chunk row is the streaming position at its window's end, which a transaction that
wrote the row earlier but committed after the window would lose to.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hudi_cdc import sources
from hudi_cdc.capture import refill
from hudi_cdc.capture.snapshot_requests import read_json, requests_dir, write_json
from hudi_cdc.config import Pipeline, load_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import BLOCKING, INCREMENTAL, NOTIFICATIONS, SnapshotSignals

Progress = Callable[[str], None]
STALLED_SECONDS = 120  # a --once run that finishes its snapshots (under_way) ends when none moved this long
# a blocking snapshot under way when the last capture stopped, whose signal Debezium may stream again: requested
# anew at once when the stream is past its signal (the slot confirmed it as read, or a change after it came with no
# row of the snapshot before it), else when no row of it came within this long
RESUME_SECONDS = 300.0


# ------------------------------------------------------------------ the capture's side
class Snapshots:
    """What a capture does for incremental snapshots: carries out requests (poll, from its main loop),
    orders the snapshot rows (rewrite, from the consumer) and notes completions; the database's side is
    the source's (base.SnapshotSignals: sources/postgres/signals.py, sources/mysql/signals.py)."""

    def __init__(self, pipeline: Pipeline, progress: Progress, reloadable: bool = False):
        db = sources.for_pipeline(pipeline).signals
        if db is None:
            raise ConfigError(f"incremental snapshots: not for {src.database(pipeline).kind} sources")
        self.db: SnapshotSignals = db
        self.pipeline = pipeline
        self.progress = progress
        self.reloadable = reloadable  # a continuous capture of the whole pipeline may restart its engine
        self.reload: Pipeline | None = None  # set when it must (a requested table it does not capture)
        self.dir = requests_dir(pipeline)
        self.state = read_json(self.dir / "state.json")  # table -> {qualified, floor, replace, state, rows, id}
        self.by_qualified = {s["qualified"]: name for name, s in self.state.items()}
        self.waiting: dict[str, dict] = {}  # table -> {request, xmax} between R and the signal
        self.dirty = False
        self.lock = threading.Lock()
        self.warned: set[str] = set()
        self._last_save = 0.0
        self._under_way = (float("-inf"), False)  # (when, under_way()) looked at last
        self.moved = time.monotonic()  # when a snapshot last moved (a request begun, signalled, a row, an end)
        self.holding = False  # a --once run past its end, held by under_way
        self.interrupted = self._interrupted()  # table -> when this engine started waiting for its rows
        self._flushed_asked = float("-inf")
        self.streamed_lsn = -1  # the newest streamed change's position seen while one is interrupted

    def _interrupted(self) -> dict[str, float]:
        """The blocking snapshots a stopped capture was reading: their rows counted anew from here."""
        out = {}
        for name, s in self.state.items():
            if (s.get("kind"), s.get("state")) == (BLOCKING, "signalled") and name in self.pipeline.tables:
                s["rows"] = 0
                s.pop("expect", None)
                out[name] = time.monotonic()
                self.dirty = True
                self.progress(f"capture snapshot: {name}: its blocking snapshot was under way when the last capture "
                              "stopped: its rows are counted anew (Debezium reads the table again if the signal is "
                              f"streamed again, else it is requested again within {RESUME_SECONDS:.0f} s)")
        return out

    def _resume(self) -> None:
        """An interrupted blocking snapshot (_interrupted) none of whose rows came: requested again."""
        with self.lock:
            waiting = dict(self.interrupted)
        if not waiting:
            return
        flushed = None
        for table, since in waiting.items():
            lsn = self.state[table].get("signal_lsn")
            if lsn is not None and flushed is None and time.monotonic() - self._flushed_asked >= 5:
                self._flushed_asked = time.monotonic()  # a query every 5 s at most
                flushed = self.db.flushed(self.pipeline)
            read = lsn is not None and flushed is not None and flushed >= lsn
            past = lsn is not None and self.streamed_lsn > lsn
            if not (read or past) and time.monotonic() - since < RESUME_SECONDS:
                continue
            if (self.dir / f"{table}.json").exists():  # requested again already (the user): that request stands
                with self.lock:
                    self.interrupted.pop(table, None)
                continue
            with self.lock:
                if self.interrupted.pop(table, None) is None:  # a row came meanwhile: Debezium reads it again
                    continue
            doc = {"table": table, "replace": bool(self.state[table].get("replace")), "id": uuid.uuid4().hex,
                   "requested_at": time.time(), "resumes": self.state[table].get("id")}
            write_json(self.dir / f"{table}.json", doc)
            why = ("the slot confirmed its signal as read" if read else "a change after its signal came first" if past
                   else f"no row of it in {RESUME_SECONDS:.0f} s")
            self.progress(f"capture snapshot: {table}: the blocking snapshot the last capture stopped in is requested "
                          f"again ({why})")

    # -------------------------------------------------------------- main loop
    def poll(self, consumer) -> bool:
        """Carry the pending requests one step further; True when the engine must restart (reload)."""
        self._resume()
        try:
            names = [f for f in os.listdir(self.dir) if f.endswith(".json") and f != "state.json"]
        except FileNotFoundError:
            names = []
        for name in sorted(names):
            doc = read_json(self.dir / name)
            table = doc.get("table")
            if not table:
                continue
            if table not in self.pipeline.tables:
                if self._must_reload(table):
                    return True
                continue
            w = self.waiting.get(table)
            if w is None or w["request"] != doc["id"]:
                self._begin(consumer, table, doc)
            elif self._ended(table, w):
                self._signal(table, doc)
        if self.dirty and time.monotonic() - self._last_save >= 2:
            self.save()
        return False

    def _must_reload(self, table: str) -> bool:
        if table in self.warned:
            return False
        try:
            fresh = load_pipeline(Path(self.pipeline.source_file))
        except Exception:  # noqa: BLE001 - a file being edited: try again next poll
            return False
        if self.reloadable and table in fresh.tables and fresh.slot_name == self.pipeline.slot_name:
            self.reload = fresh
            self.progress(f"capture snapshot: {table} is in {self.pipeline.source_file} but not captured yet: "
                          "restarting the engine with the file's tables (same slot and offsets)")
            return True
        self.warned.add(table)
        self.progress(f"capture snapshot: {table} is not captured by this run (not in its pipeline, or a "
                      "--once / --table run): the next capture of the whole pipeline takes it")
        return False

    def _begin(self, consumer, table: str, doc: dict) -> None:
        """R and the transactions running at R; with --replace the truncate row, under the landing lock
        (every event landed before it has an LSN below R, every later one is after it)."""
        t = src.source_table(self.pipeline, table)
        sent = self.db.sent(self.pipeline, doc["id"])  # sent already (a capture stopped before its bookkeeping)
        if sent and self.state.get(table, {}).get("id") == doc["id"]:  # its floor stays: the snapshot began after it
            kind = self.db.signal(self.pipeline, t.qualified, doc["id"])  # written already: its kind only
            at = self.db.floor(self.pipeline)[0] if kind == BLOCKING else None
            with self.lock:
                self.state[table].update(state="signalled", kind=kind)
                if at is not None:  # a blocking one, maybe read in part by the stopped engine: as _interrupted
                    self.state[table].update(signal_lsn=at, rows=0)
                    self.interrupted[table] = time.monotonic()
            self.save()
            (self.dir / f"{table}.json").unlink(missing_ok=True)
            return
        with consumer.lock:
            r, xmax = self.db.floor(self.pipeline)
            if doc.get("replace"):
                self._land_truncate(consumer, t, r - 2)
        with self.lock:
            self.state[table] = {"qualified": t.qualified, "floor": r - 1, "replace": bool(doc.get("replace")),
                                 "state": "waiting", "rows": 0, "id": doc["id"]}
            self.interrupted.pop(table, None)  # requested again (by _resume or the user)
            self.by_qualified[t.qualified] = table
        self.save()
        self.waiting[table] = {"request": doc["id"], "xmax": xmax, "since": time.monotonic(), "noted": False}
        self.moved = time.monotonic()

    def _ended(self, table: str, w: dict) -> bool:
        """Has every transaction running at R ended? (a note after 30 s names the oldest one)"""
        if self.db.ended(self.pipeline, w["xmax"]):
            return True
        if not w["noted"] and time.monotonic() - w["since"] >= 30:
            w["noted"] = True
            row = self.db.oldest_transaction(self.pipeline)
            self.progress(f"capture snapshot: {table} waits for the transactions open when it began to end"
                          + (f" (oldest: pid {row[0]}, {row[1]} since {row[2]})" if row else ""))
        return False

    def _signal(self, table: str, doc: dict) -> None:
        t = src.source_table(self.pipeline, table)
        kind = self.db.signal(self.pipeline, t.qualified, doc["id"])
        # past the signal's commit: a slot confirmed this far never streams it again (_resume)
        at = self.db.floor(self.pipeline)[0] if kind == BLOCKING else None
        with self.lock:
            self.state[table]["state"] = "signalled"
            self.state[table]["kind"] = kind
            if at is not None:
                self.state[table]["signal_lsn"] = at
        self.moved = time.monotonic()
        self.save()
        (self.dir / f"{table}.json").unlink(missing_ok=True)
        self.waiting.pop(table, None)
        how = "blocking: streaming pauses while it reads the table" if kind == BLOCKING else "incremental"
        self.progress(f"capture snapshot: signalled Debezium to snapshot {t.qualified} ({how}, rows ordered "
                      f"at LSN {self.state[table]['floor']})")

    def truncate_before_snapshot(self, consumer, topic: str, lsn: int | None) -> None:
        """An initial snapshot taken again over the files of an earlier one (refill.py); not the rows of a
        requested blocking snapshot, which look the same (its --replace truncate is at its floor already)."""
        t = next((t for t in src.source_tables(self.pipeline) if t.landed_topic == topic), None)
        if t is not None and self._blocking_under_way(t.name):
            return
        refill.truncate_before_snapshot(consumer, self.pipeline, topic, lsn, self.progress)

    def _blocking_under_way(self, table: str) -> bool:
        """A requested blocking snapshot of the table was signalled and has not completed: its rows are coming."""
        with self.lock:
            s = self.state.get(table, {})
            return (s.get("kind"), s.get("state")) == (BLOCKING, "signalled")

    def _land_truncate(self, consumer, t, lsn: int) -> None:
        refill.land_truncate(consumer, self.pipeline, t, lsn, self.progress, "capture snapshot --replace")

    # -------------------------------------------------------------- the engine's thread
    def rewrite(self, record, value) -> None:
        """An incremental-snapshot row of a requested table, or a row of a requested blocking snapshot (a
        partitioned table's), (`value`, as it lands: with its __lsn) is ordered at the request's floor."""
        op = _field_text(value, "__op")  # one JPype call for a change that is no read (the stream's)
        if op != "r" and self.interrupted:
            self._streamed(value)
        if op != "r" or value.schema().field("__lsn") is None:
            return
        source = record.value().getStruct("source")
        snapshot = str(source.get("snapshot"))
        if snapshot in ("false", "None"):  # a streamed change
            return
        space = "schema" if source.schema().field("schema") is not None else "db"  # PostgreSQL | MySQL, MariaDB
        qualified = f"{source.getString(space)}.{source.getString('table')}"
        table = self.by_qualified.get(qualified)
        if snapshot != INCREMENTAL:  # an initial snapshot's row, or a requested blocking snapshot's (its kind)
            if table is None or not self._blocking_under_way(table):
                return
        elif table is None:
            if qualified not in self.warned:
                self.warned.add(qualified)
                self.progress(f"capture snapshot: incremental-snapshot rows of {qualified} were not requested through "
                              "`hudi-cdc capture snapshot`: they keep Debezium's LSN (a concurrent change may lose)")
            return
        from jpype import JClass, JLong

        with self.lock:
            s = self.state[table]
            self.interrupted.pop(table, None)  # Debezium reads it again: no new request
            value.put("__lsn", JClass("java.lang.Long")(JLong(s["floor"])))
            s["rows"] = s.get("rows", 0) + 1
            done = s.get("expect") is not None and s["rows"] >= s["expect"]  # a blocking snapshot's last row
            self.dirty = True
            self.moved = time.monotonic()
        if done:
            self._end(table, "completed")

    def _streamed(self, value) -> None:
        """A streamed change while a blocking snapshot is interrupted: how far the stream has come (_resume)."""
        lsn = _field_text(value, "__lsn")
        if lsn is not None and lsn.lstrip("-").isdigit():
            self.streamed_lsn = max(self.streamed_lsn, int(lsn))

    def under_way(self) -> bool:
        """Must a --once run go on past its end (the source's once_finishes): a table it captures has a
        snapshot requested, waiting for its signal, or signalled and not completed?"""
        if not self.db.once_finishes:
            return False
        now = time.monotonic()
        if now - self._under_way[0] >= 0.5:  # asked for every record past the run's end: looked at twice a second
            self._under_way = (now, self._look_under_way())
        if self._under_way[1] and not self.holding:  # the run's end reached: the stall clock starts here
            self.holding, self.moved = True, max(self.moved, now)
        if self._under_way[1] and now - self.moved > STALLED_SECONDS:  # never hold a --once run for ever
            if "stalled" not in self.warned:
                self.warned.add("stalled")
                self.progress(f"capture snapshot: no snapshot row for {STALLED_SECONDS} s: this --once run ends, the "
                              "next capture goes on with the snapshot (`capture snapshot --status`)")
            return False
        return self._under_way[1]

    def _look_under_way(self) -> bool:
        with self.lock:
            if any(s.get("state") in ("waiting", "signalled") for name, s in self.state.items()
                   if name in self.pipeline.tables):
                return True
        try:
            names = [f[:-len(".json")] for f in os.listdir(self.dir) if f.endswith(".json") and f != "state.json"]
        except FileNotFoundError:
            return False
        return any(n in self.pipeline.tables for n in names)

    def observe(self, topic: str, value) -> None:
        """A record of another topic than the tables': Debezium's notifications are looked at."""
        if value is not None and topic.endswith("." + NOTIFICATIONS):
            self.notification(value)

    def notification(self, value) -> None:
        """Debezium's notification (sink channel): a table's scan completed."""
        try:
            kind, what = str(value.get("aggregate_type")), str(value.get("type"))
            extra = value.get("additional_data")
        except Exception:  # noqa: BLE001 - another shape: not ours
            return
        if kind not in ("Incremental Snapshot", "Initial Snapshot") or what not in ("TABLE_SCAN_COMPLETED", "ABORTED"):
            return  # a blocking snapshot's are the initial snapshot's: its table in scanned_collection
        collections = str(extra.get("data_collection") or extra.get("scanned_collection")
                          or extra.get("data_collections") or "") if extra else ""
        for qualified in collections.split(","):
            table = self.by_qualified.get(qualified.strip())
            if table is None or self.state[table].get("state") != "signalled":
                continue
            if kind == "Incremental Snapshot":
                self._end(table, "completed" if what == "TABLE_SCAN_COMPLETED" else "aborted")
            elif self.state[table].get("kind") == BLOCKING:  # the scan's last row may come after this: counted
                if what == "ABORTED":
                    self._end(table, "aborted")
                    continue
                with self.lock:
                    self.state[table]["expect"] = int(str(extra.get("total_rows_scanned") or 0))
                if self.state[table].get("rows", 0) >= self.state[table]["expect"]:
                    self._end(table, "completed")

    def _end(self, table: str, state: str) -> None:
        with self.lock:
            self.state[table]["state"] = state
            self.dirty = True
            self._under_way = (float("-inf"), False)
        self.progress(f"capture snapshot: {table}: {state} ({self.state[table].get('rows', 0)} rows)")

    def save(self) -> None:
        with self.lock:
            doc = json.loads(json.dumps(self.state))
            self.dirty = False
        write_json(self.dir / "state.json", doc)
        self._last_save = time.monotonic()


def continuous(pipeline: Pipeline, run: Callable[[Pipeline, Snapshots], Any], progress: Progress) -> list:
    """Run a continuous capture, again with the pipeline file's tables when a requested table is not
    captured yet; the results of every run."""
    results = []
    while True:
        snapshots = Snapshots(pipeline, progress, reloadable=True)
        results.append(run(pipeline, snapshots))
        if snapshots.reload is None:
            return results
        pipeline = snapshots.reload


def _field_text(value, name: str) -> str | None:
    """A Connect struct's field as text; None when it is null or the struct has no such field."""
    from jpype import JClass

    try:
        got = value.get(name)
    except JClass("org.apache.kafka.connect.errors.DataException"):  # no such field (nothing else is caught)
        return None
    return None if got is None else str(got)
