"""Heartbeats and the slot's retained WAL.

A logical replication slot keeps every WAL segment from its restart_lsn on. When the captured tables
are idle while the rest of the server writes, nothing reaches the connector to acknowledge, so the
slot's confirmed position stands still and the server retains WAL without bound. Debezium's remedy:
a heartbeat every `heartbeat.interval.ms` (records on `__debezium-heartbeat.<prefix>`, carrying the
connector's current offset: capture never lands them, but commits their offsets, so the slot's
confirmed_flush_lsn advances to what the server has sent), optionally with a `heartbeat.action.query`
(a write into a heartbeat table, which makes the server send something even when only other
databases write). `retained_wal` reads what a slot holds back: pg_current_wal_lsn() - restart_lsn.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings

HEARTBEAT_TOPIC_PREFIX = "__debezium-heartbeat"
HEARTBEAT_TABLE = "hudi_cdc_heartbeat"


def heartbeat_prefix(marker_prefix: str) -> str:
    """The logical-message prefix of capture's own heartbeat action."""
    return f"{marker_prefix}.heartbeat"


def default_action_query(marker_prefix: str) -> str:
    """A WAL record at the server's current position at every heartbeat, with no table: a
    non-transactional logical decoding message (what Debezium's documentation suggests for pgoutput).
    It reaches the connector, moves its offset to the server's position, and capture commits it."""
    return f"SELECT pg_logical_emit_message(false, '{heartbeat_prefix(marker_prefix)}', now()::text)"


def heartbeat_properties(db: DatabaseSettings, marker_prefix: str) -> dict[str, str]:
    """The connector properties of source.database's heartbeat settings: heartbeat_action_query unset
    is capture's own message (default_action_query), an empty one is none."""
    out: dict[str, str] = {}
    if db.heartbeat_interval_ms:
        out["heartbeat.interval.ms"] = str(db.heartbeat_interval_ms)
        query = default_action_query(marker_prefix) if db.heartbeat_action_query is None else db.heartbeat_action_query
        if query.strip():
            out["heartbeat.action.query"] = query
    return out


def heartbeat_topic(prefix: str) -> str:
    return f"{HEARTBEAT_TOPIC_PREFIX}.{prefix}"


def action_table_sql(schema: str = "public", table: str = HEARTBEAT_TABLE) -> tuple[str, str]:
    """(the SQL creating a heartbeat table, the heartbeat.action.query writing it)."""
    create = (f"CREATE TABLE IF NOT EXISTS {schema}.{table} (id int PRIMARY KEY, ts timestamptz NOT NULL); "
              f"INSERT INTO {schema}.{table} VALUES (1, now()) ON CONFLICT (id) DO NOTHING;")
    query = f"UPDATE {schema}.{table} SET ts = now() WHERE id = 1"
    return create, query


@dataclass
class SlotWal:
    slot: str
    exists: bool
    active: bool = False
    retained_bytes: int | None = None  # pg_current_wal_lsn() - restart_lsn
    lag_bytes: int | None = None  # pg_current_wal_lsn() - confirmed_flush_lsn
    restart_lsn: str | None = None
    confirmed_flush_lsn: str | None = None
    wal_status: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        if not self.exists:
            return f"slot {self.slot}: not created yet"
        return (f"slot {self.slot}: retains {human_bytes(self.retained_bytes)} of WAL, "
                f"{human_bytes(self.lag_bytes)} not yet confirmed"
                + (f" (wal_status {self.wal_status})" if self.wal_status not in (None, "reserved") else "")
                + (", active" if self.active else ", idle"))


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def retained_wal(conn, slot: str) -> SlotWal:
    """What the slot holds back, read from pg_replication_slots (one query)."""
    row = conn.execute(
        "SELECT active, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint, "
        "pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, restart_lsn::text, "
        "confirmed_flush_lsn::text, wal_status FROM pg_replication_slots WHERE slot_name = %s", (slot,)).fetchone()
    if row is None:
        return SlotWal(slot, exists=False)
    return SlotWal(slot, True, bool(row[0]), row[1], row[2], row[3], row[4], row[5])


def pipeline_slot(pipeline: Pipeline) -> SlotWal | None:
    """The pipeline's replication slot (`status`), or None when the pipeline captures no database."""
    if pipeline.source.database is None:
        return None
    from hudi_cdc.sources.postgres import db

    with db.connect(pipeline) as conn:
        return retained_wal(conn, pipeline.slot_name)
