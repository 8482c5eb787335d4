"""Rows that existed before a DDL the database applied to them without change events get what it reads.

* ADD COLUMN ... DEFAULT: PostgreSQL 11+ keeps a constant default in the catalog (no row is written), a
  volatile default or a stored generated column rewrites the table (logical decoding sends no change for it),
  and MySQL / MariaDB's instant ADD COLUMN writes no row: no change event carries the new column's value for
  the rows that existed, so the lake would hold NULL where the database reads the default.
* A column's type changed, an enum lost labels, a column became NOT NULL where the database fills the NULLs
  in silently (fieldtypes.py): the database rewrote the stored values, the lake keeps the old ones.

Capture notices when a table's landed schema changes (a file starts with an Avro schema whose fields differ
from the table's previous file: ``Landing.on_file_start``, on the engine's thread) and, on its main loop, for
added columns asks the source which of them the existing rows read a value for (``Source.added_defaults``: a
default or generated column in the catalog). For those, and for any rewriting change, it requests an
incremental snapshot of the table (capture/signals.py, what ``capture snapshot --table T`` does): the
snapshot's rows carry every column as the database reads it, ordered below every change streamed after
the request, so nothing newer is overwritten (PostgreSQL's slot and MySQL / MariaDB's binlog alike:
sources/postgres/signals.py, sources/mysql/signals.py). A default set later (``SET DEFAULT``) changes no
row: no snapshot (as in the database). A request that cannot be made (the capture user may not write the
signal table) is one line naming the table, the columns and why; capture goes on.

The first change of the table after the DDL is what shows the new schema (PostgreSQL sends a table's
new shape with its next change; the binlog connectors decode the next row event with the new schema),
so a table nobody writes after the ALTER gets the snapshot with its next change.
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from hudi_cdc.capture import fieldtypes, snapshot_requests
from hudi_cdc.common import storage
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.sources import tables as src

Progress = Callable[[str], None]


def landed_fields(topic_dir: str, topic: str, partition: int) -> dict[str, Any] | None:
    """{field name: type} of the topic's newest landed file (fieldtypes.field_types), or None when nothing is
    landed."""
    import fastavro

    pat = re.compile(rf"^{re.escape(topic)}\+{partition}\+(\d{{10}})\.avro$")
    offsets = {int(m.group(1)): n for n in storage.listdir(topic_dir) if (m := pat.match(n))}
    if not offsets:
        return None
    data = storage.read_bytes(storage.join(topic_dir, offsets[max(offsets)])) or b""
    try:  # the header's own text: the form Landing hands over (Java's Schema.toString)
        schema = json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"])
    except Exception:  # noqa: BLE001 - an unreadable file: no comparison (the stream round names it)
        return None
    return fieldtypes.field_types(schema) if isinstance(schema, dict) else None


class NewColumns:
    """Spots new and rewritten columns in a table's landed schema; their existing rows get the database's value."""

    def __init__(self, pipeline: Pipeline, source, landing, progress: Progress):
        self.pipeline = pipeline
        self.source = source
        self.landing = landing
        self.progress = progress
        self.not_null_rewrites = bool(source.not_null_rewrites)
        self.tables = {t.landed_topic: t for t in src.source_tables(pipeline)}
        self.known: dict[str, dict[str, Any]] = {}  # topic -> {field: type} of its newest file
        self.pending: deque[tuple[str, list[str], dict[str, str]]] = deque()  # (topic, added, {column: why})
        self.lock = threading.Lock()

    # ---------------------------------------------------------- the engine's thread (Landing._start)
    def file_started(self, topic: str, avro_schema: dict[str, Any]) -> None:
        """A file of `topic` starts with this Avro schema (parsed JSON)."""
        now = fieldtypes.field_types(avro_schema)
        before = self.known.get(topic)
        if before is None and topic in self.landing.topic_dirs:
            try:
                before = landed_fields(self.landing.topic_dirs[topic], topic, self.landing.partition)
            except Exception as exc:  # noqa: BLE001 - never in landing's way: said, no comparison this time
                self.progress(f"{topic}: could not read the newest landed file's schema ({exc}): a column added "
                              "or changed while capture was stopped is not checked")
        self.known[topic] = now
        if before is None:
            return  # the table's first file: nothing existed before it
        added = [n for n in now if n not in before]
        changed = {n: why for n, t in now.items() if n in before
                   if (why := fieldtypes.rewritten(before[n], t, not_null_rewrites=self.not_null_rewrites))}
        if added or changed:
            with self.lock:
                self.pending.append((topic, added, changed))

    # ---------------------------------------------------------- the main loop
    def poll(self) -> None:
        """Ask the source about each table's new columns; request a snapshot where existing rows changed."""
        while True:
            with self.lock:
                if not self.pending:
                    return
                topic, added, changed = self.pending.popleft()
            t = self.tables.get(topic)
            if t is None:
                continue
            filled: list[str] = []
            try:
                if added:
                    filled = self.source.added_defaults(self.pipeline, t, added)
                if filled or changed:
                    self._give_existing_rows(t, filled, changed)
            except HudiCdcError as exc:  # the database went away, a table without a key: said, capture goes on
                cols = ", ".join(filled + list(changed) or added)
                what = "column(s)" if changed else "new column(s)"
                self.progress(f"WARNING {t.name}: {what} {cols}: could not give the rows that existed their value "
                              "(the lake keeps what it had there until a row changes; `verify` names them; "
                              f"`hudi-cdc capture snapshot --table {t.name}` once fixed): {exc}")

    def _give_existing_rows(self, t, filled: list[str], changed: dict[str, str]) -> None:
        said = []
        if filled:
            said.append(f"new column(s) {', '.join(filled)} have a default (or are generated)")
        said += [f"column {c}: {why}" for c, why in changed.items()]
        self.progress(f"{t.name}: {'; '.join(said)} in {t.qualified}: the rows that existed before the ALTER "
                      "TABLE get the database's values through an incremental snapshot of the table")
        snapshot_requests.request_snapshot(self.pipeline, t.name, progress=self.progress)
