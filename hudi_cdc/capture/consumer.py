"""The Python side of Debezium's embedded engine: the ChangeConsumer that lands records and marks what
is durable (see capture.py for the order of durability), and the completion callback."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from hudi_cdc.capture import signals
from hudi_cdc.capture.decimals import OddDecimals
from hudi_cdc.capture.landing import Landing
from hudi_cdc.capture.oldkey import OldKeys
from hudi_cdc.capture.pg_arrays import PgArrays
from hudi_cdc.capture.specials import SourceValues
from hudi_cdc.capture.textforms import TextForms
from hudi_cdc.capture.txn import Cuts, initial_snapshot_row, record_lsn, stands_on_commit
from hudi_cdc.capture.unwrap import Unwrap

_LOG = logging.getLogger("hudi_cdc")


def _is_change(value) -> bool:
    """Is this record value a Debezium change of a row (an envelope with `op` and `source`; not a logical
    decoding message, op "m", which capture's markers and heartbeats are)?"""
    if value is None or not hasattr(value, "schema"):
        return False
    schema = value.schema()
    if schema is None or schema.field("op") is None or schema.field("source") is None:
        return False
    return str(value.getString("op")) != "m"


class Consumer:
    """Debezium's ChangeConsumer: lands records, marks what is durable, spots where a --once run ends."""

    def __init__(self, landing: Landing, source, continuous: bool = False, unwrap: Unwrap | None = None):
        self.landing = landing
        self.unwrap = unwrap  # the unwrap SMT, applied here so TRUNCATE survives (unwrap.py)
        self.continuous = continuous
        self.lock = threading.Lock()  # the engine's thread lands, the main thread rotates by time
        self.source = source
        self.seq = 0
        self.pending: deque = deque()
        self.done = threading.Event()
        self.reached = False
        self.error: BaseException | None = None
        # set as the engine is closed (a stop): the close interrupts a batch in flight, which is no failure (its
        # offsets are not committed and its records still in open files are dropped: the next run gets them again)
        self.stopping = False
        self.snapshots: signals.Snapshots | None = None  # incremental snapshots (capture/signals.py)
        self.cuts: Cuts | None = None  # all files land together at transaction boundaries (txn.py)
        self.oldkeys: OldKeys | None = None  # a key change's old key beside a TOAST placeholder (oldkey.py)
        self.specials: SourceValues | None = None  # values the events cannot carry (NaN, zero dates): specials.py
        self.textforms: TextForms | None = None  # types Debezium sends as bytes: their text (textforms.py)
        self.arrays: PgArrays | None = None  # interval[] / money[] columns Debezium leaves out (pg_arrays.py)
        self.decimals: OddDecimals | None = None  # numeric(3,5), numeric(5,-2): decimals Avro takes (decimals.py)
        # topics with files landed before this run: an initial snapshot taken again lands a truncate first
        self.refill: set[str] = {t for t, offset in landing.offsets.items() if offset > 0}
        self.strays: set[str] = set()  # topics of changes no table takes (said once each)
        # called first in every batch (offsets.GoodCopies: the last commit is whole then)
        self.before_batch: Callable[[], None] | None = None

    def handle_batch(self, records, committer) -> None:
        if self.before_batch is not None:
            self.before_batch()
        with self.lock:
            self._handle_batch(records, committer)

    def rotate(self, seconds: float) -> int:
        with self.lock:
            return self.cuts.rotate() if self.cuts is not None else self.landing.rotate(seconds)

    def _landed_form(self, record, topic: str):
        """The record as it lands: unwrapped (unwrap.py), with a key change's old key (oldkey.py), the values
        the event could not carry (specials.py), the interval[] / money[] columns it leaves out (pg_arrays.py)
        and the text of types Debezium does not know (textforms.py)."""
        out = self.unwrap.apply(record) if self.unwrap is not None else record
        if self.oldkeys is not None and out is not None:
            out = self.oldkeys.apply(record, out)
        if self.specials is not None and out is not None:
            out = self.specials.apply(out)
        if self.arrays is not None and out is not None:
            out = self.arrays.apply(out, topic)
        if self.textforms is not None and out is not None:
            out = self.textforms.apply(out, topic)
        if self.decimals is not None and out is not None:
            out = self.decimals.apply(out)
        return out

    def _verdict(self, record, topic: str, value) -> str:
        """The source's verdict; past a --once run's end, one that carries out snapshots finishes them first
        (Snapshots.under_way): its changes land, its end is not reached."""
        verdict = self.source.verdict(record, topic, value, self.landing.topic_dirs, self.continuous)
        if verdict == "other" and topic not in self.strays and _is_change(value):
            self.strays.add(topic)  # a change no table of the pipeline takes: never dropped without a word
            _LOG.warning("capture: changes of topic %s match no table's topic (%s): they are not landed", topic,
                        ", ".join(sorted(self.landing.topic_dirs)))
        if verdict in ("before", "reached") and self.snapshots is not None and self.snapshots.under_way():
            return "land" if verdict == "before" else "other"
        return verdict

    def _end(self) -> None:
        """The run's end: every file landed, and the cut naming them when capture cuts (every landed
        transaction is whole there: a verdict "before" is a binlog transaction's first change)."""
        if self.cuts is not None:
            self.cuts.cut()
        else:
            self.landing.flush_all()

    def _handle_batch(self, records, committer) -> None:
        if self.done.is_set():
            return  # after the marker: leave the rest unmarked, the next run gets it again
        landing = self.landing
        reached = False
        try:
            # each record's parts read once (every JPype call costs microseconds, paid per record)
            batch = [(event, record, str(record.topic()), record.value())
                     for event in records for record in (event.sourceRecord(),)]
            if self.specials is not None:
                self.specials.look_up(batch)
            if self.arrays is not None:
                self.arrays.look_up(batch)
            for event, record, topic, value in batch:
                verdict = self._verdict(record, topic, value)
                if verdict == "before":  # committed after the run started: unmarked, the next run's
                    self._end()  # (the binlog's first change after the run's end: a cut before its transaction)
                    reached = True
                    break
                if self.cuts is not None:
                    self.cuts.observe(record, topic, value)
                if topic.endswith("." + signals.NOTIFICATIONS):
                    # Debezium's notifications carry the offset of the moment they are sent (an initial
                    # snapshot's STARTED one: a position with no snapshot in progress); committing it
                    # before the snapshot's rows are landed would make a restart skip the snapshot.
                    # Never a commit point: looked at, never marked.
                    if self.snapshots is not None:
                        self.snapshots.observe(topic, value)
                    continue
                if verdict == "other" and self.cuts is not None and not self.cuts.between():
                    # not landed (a transaction's BEGIN, a heartbeat, a message) inside a transaction or
                    # the snapshot: its offset lies past changes not landed yet. Never a commit point.
                    if self.snapshots is not None:
                        self.snapshots.observe(topic, value)
                    continue
                if (verdict == "land" and topic in self.refill and self.snapshots is not None
                        and initial_snapshot_row(value)):
                    # a snapshot taken again (a kill during the first, offsets lost): rows the earlier one
                    # landed and the database deleted since would stay; a truncate just before this
                    # snapshot's rows removes them (the snapshot then refills the table). Landed before
                    # this record takes its sequence number, so the watermark never passes it.
                    self.refill.discard(topic)
                    self.snapshots.truncate_before_snapshot(self, topic, record_lsn(record))
                self.seq += 1
                self.pending.append((self.seq, event))
                if verdict == "land":
                    if value is not None:
                        out = self._landed_form(record, topic)
                        if out is not None and out.value() is not None:
                            schema, landed = self.source.rewrite(out.valueSchema(), out.value())
                            if self.snapshots is not None:
                                self.snapshots.rewrite(record, landed)  # its __lsn: the request's floor
                            landing.append(self.seq, topic, schema, landed)
                        if self.cuts is not None:
                            self.cuts.landed(record, value)
                elif verdict == "reached":
                    self._end()
                    reached = True
                    break
                elif self.snapshots is not None:
                    self.snapshots.observe(topic, value)
            wm = landing.watermark(self.seq)
            durable = []
            while self.pending and self.pending[0][0] <= wm:
                durable.append(self.pending.popleft()[1])
            # the newest durable record whose offset is not a COMMIT's (txn.stands_on_commit)
            mark = next((e for e in reversed(durable) if not stands_on_commit(e)), None)
            if mark is not None:
                committer.markProcessed(mark)
            committer.markBatchFinished()  # offsets committed: only now may the engine stop
            if reached:
                self.reached = True
                self.done.set()
        except BaseException as exc:
            if not (self.stopping and interrupted(exc)):
                self.error = exc
            self.done.set()
            raise


def causes(exc: BaseException, limit: int = 20):
    """exc, then each cause it carries: Java's getCause() through JPype, else Python's __cause__."""
    seen: BaseException | None = exc
    for _ in range(limit):
        if seen is None:
            return
        yield seen
        get_cause = getattr(seen, "getCause", None)
        following = get_cause() if get_cause is not None else seen.__cause__
        if following is seen:
            return
        seen = following


def interrupted(exc: BaseException) -> bool:
    """Is this (a Java exception through JPype, or one it caused) the JVM's InterruptedException?"""
    for cause in causes(exc):
        get_class = getattr(cause, "getClass", None)
        name = str(get_class().getName()) if get_class is not None else type(cause).__name__
        if name in ("java.lang.InterruptedException", "InterruptedException"):
            return True
    return False


def make_java_consumer(consumer: Consumer):
    from jpype import JImplements, JOverride

    @JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
    class ChangeConsumer:
        @JOverride
        def handleBatch(self, records, committer):
            consumer.handle_batch(records, committer)

        @JOverride
        def supportsTombstoneEvents(self):
            return False

    return ChangeConsumer()


def make_completion(state: dict):
    from jpype import JImplements, JOverride

    @JImplements("io.debezium.engine.DebeziumEngine$CompletionCallback")
    class Completion:
        @JOverride
        def handle(self, success, message, error):
            state["success"] = bool(success)
            state["message"] = str(message) if message is not None else ""
            if error is not None:
                cause = list(causes(error))[-1]  # the deepest
                state["error"] = f"{error.getMessage()} (cause: {cause.getMessage()})"

    return Completion()
