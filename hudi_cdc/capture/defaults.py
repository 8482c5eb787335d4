"""Rows that existed before an ADD COLUMN ... DEFAULT get what the database reads for them.

PostgreSQL 11+ keeps a constant default in the catalog (no row is written), a volatile default or a
stored generated column rewrites the table (logical decoding sends no change for it), and MySQL /
MariaDB's instant ADD COLUMN writes no row: in every case no change event carries the new column's
value for the rows that existed, so the lake would hold NULL where the database reads the default.

Capture notices when a table's landed schema gains columns (a file starts with a schema whose field
names the table's previous file did not have: ``Landing.on_file_start``, on the engine's thread) and,
on its main loop, asks the source which of them the existing rows read a value for
(``Source.added_defaults``: a default or generated column in the catalog). For those it requests an
incremental snapshot of the table (capture/signals.py, what ``capture snapshot --table T`` does): the
snapshot's rows carry every column as the database reads it, ordered below every change streamed after
the request, so nothing newer is overwritten (PostgreSQL's slot and MySQL / MariaDB's binlog alike:
sources/postgres/signals.py, sources/mysql/signals.py). A default set later (``SET DEFAULT``) adds no
column: no snapshot, no row changes (as in the database). A request that cannot be made (the capture
user may not write the signal table) is one line naming the table, the columns and why; capture goes on.

The first change of the table after the DDL is what shows the new schema (PostgreSQL sends a table's
new shape with its next change; the binlog connectors decode the next row event with the new schema),
so a table nobody writes after the ALTER gets the snapshot with its next change.
"""

from __future__ import annotations

import io
import re
import threading
from collections import deque
from collections.abc import Callable

from hudi_cdc.capture import signals
from hudi_cdc.common import storage
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.sources import tables as src

Progress = Callable[[str], None]


def landed_fields(topic_dir: str, topic: str, partition: int) -> frozenset[str] | None:
    """The field names of the topic's newest landed file, or None when nothing is landed."""
    import fastavro

    pat = re.compile(rf"^{re.escape(topic)}\+{partition}\+(\d{{10}})\.avro$")
    offsets = {int(m.group(1)): n for n in storage.listdir(topic_dir) if (m := pat.match(n))}
    if not offsets:
        return None
    data = storage.read_bytes(storage.join(topic_dir, offsets[max(offsets)])) or b""
    try:
        schema = fastavro.reader(io.BytesIO(data)).writer_schema
    except Exception:  # noqa: BLE001 - an unreadable file: no comparison (the stream round names it)
        return None
    fields = schema.get("fields", []) if isinstance(schema, dict) else []
    return frozenset(f["name"] for f in fields)


class NewColumns:
    """Spots new columns in a table's landed schema; their existing rows get the database's value."""

    def __init__(self, pipeline: Pipeline, source, landing, progress: Progress):
        self.pipeline = pipeline
        self.source = source
        self.landing = landing
        self.progress = progress
        self.tables = {t.topic: t for t in src.source_tables(pipeline)}
        self.known: dict[str, frozenset[str]] = {}  # topic -> the field names of its newest file
        self.pending: deque[tuple[str, list[str]]] = deque()
        self.lock = threading.Lock()

    # ---------------------------------------------------------- the engine's thread (Landing._start)
    def file_started(self, topic: str, schema) -> None:
        names = [str(f.name()) for f in schema.fields()]
        before = self.known.get(topic)
        if before is None and topic in self.landing.topic_dirs:
            try:
                before = landed_fields(self.landing.topic_dirs[topic], topic, self.landing.partition)
            except Exception as exc:  # noqa: BLE001 - never in landing's way: said, no comparison this time
                self.progress(f"{topic}: could not read the newest landed file's schema ({exc}): a column added "
                              "while capture was stopped is not checked for a default")
        self.known[topic] = frozenset(names)
        if before is None:
            return  # the table's first file: nothing existed before it
        added = [n for n in names if n not in before and not n.startswith("__")]
        if added:
            with self.lock:
                self.pending.append((topic, added))

    # ---------------------------------------------------------- the main loop
    def poll(self) -> None:
        """Ask the source about each table's new columns; request a snapshot where rows read a value."""
        while True:
            with self.lock:
                if not self.pending:
                    return
                topic, added = self.pending.popleft()
            t = self.tables.get(topic)
            if t is None:
                continue
            filled: list[str] = []
            try:
                filled = self.source.added_defaults(self.pipeline, t, added)
                if filled:
                    self._give_existing_rows(t, filled)
            except HudiCdcError as exc:  # the database went away, a table without a key: said, capture goes on
                cols = ", ".join(filled or added)
                self.progress(f"WARNING {t.name}: new column(s) {cols}: could not give the rows that existed their "
                              "value (the lake holds NULL there until a row changes; `verify` names them; "
                              f"`hudi-cdc capture snapshot --table {t.name}` once fixed): {exc}")

    def _give_existing_rows(self, t, filled: list[str]) -> None:
        cols = ", ".join(filled)
        self.progress(f"{t.name}: new column(s) {cols} have a default (or are generated) in {t.qualified}: the rows "
                      "that existed before the ALTER TABLE get it through an incremental snapshot of the table")
        signals.request_snapshot(self.pipeline, t.name, progress=self.progress)
