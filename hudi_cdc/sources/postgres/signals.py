"""PostgreSQL's side of incremental snapshots (`capture snapshot`, capture/signals.py drives them): the
signal table (<slot>_signal beside the first table, read from the slot like any change), the connector
properties that enable it, and the queries capture runs on the database for a request: its floor R (the
WAL insert position and the transactions running then), whether they ended, and the signal row."""

from __future__ import annotations

import json

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import SourceError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import BLOCKING, INCREMENTAL, Progress, signal_properties
from hudi_cdc.sources.postgres import db
from hudi_cdc.sources.postgres.catalog import primary_key
from hudi_cdc.sources.postgres.identity import refuse_unusable

SIGNAL_DDL = "CREATE TABLE IF NOT EXISTS {} (id varchar(42) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))"
EXECUTE = "execute-snapshot"


def signal_table(pipeline: Pipeline) -> tuple[str, str]:
    """(schema, table) of the pipeline's signal table: <slot>_signal beside its first table."""
    first = src.source_tables(pipeline)[0]
    return first.schema, f"{pipeline.slot_name[:56]}_signal"


def properties(pipeline: Pipeline) -> dict[str, str]:
    """The connector properties incremental snapshots need (signals read from the slot)."""
    schema, table = signal_table(pipeline)
    return signal_properties(f"{schema}.{table}", src.database(pipeline).snapshot_chunk_size,
                             src.topic_prefix(pipeline))


def _lsn(text: str) -> int:
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) + int(lo, 16)


class PostgresSignals:
    """base.SnapshotSignals for PostgreSQL."""

    # a --once run goes on past its marker while a snapshot it carries out is under way (the marker poked again
    # meanwhile ends it once completed): before, it stopped at its marker and landed a chunk per run at best
    # (17 runs for 5 chunks; a 1M-row re-take ~3,300 runs: benchmarks/results/2026-11-29-add-column.md)
    once_finishes = True

    def prepare(self, pipeline: Pipeline, table: str, progress: Progress) -> tuple[bool, str]:
        """The signal table, and the table and the signal table in the publication; whether the slot is in use, and
        the kind of snapshot the table gets (a partitioned table's is BLOCKING)."""
        from psycopg import sql

        t = src.source_table(pipeline, table)
        schema, signal = signal_table(pipeline)
        pub = pipeline.publication_name
        with db.connect(pipeline) as conn:
            db.check_logical(conn)
            if conn.execute("SELECT to_regclass(%s)", (t.sql_name,)).fetchone()[0] is None:
                raise SourceError(f"capture snapshot: table {t.qualified} does not exist in "
                                  f"{src.database(pipeline).name}")
            oid, kind = conn.execute("SELECT c.oid, c.relkind FROM pg_class c WHERE c.oid = %s::regclass",
                                     (t.sql_name,)).fetchone()
            # a partitioned table is read by a blocking snapshot (signal below): an incremental one completed with 0
            # rows (measured, docs/types.md), and with --replace had emptied the copy
            if kind != "p" and not primary_key(conn, oid):
                raise SourceError(f"capture snapshot: {t.qualified} has no primary key; Debezium reads an incremental "
                                  "snapshot in primary-key chunks (add one, or re-take it with capture --drop-slot)")
            refuse_unusable(conn, pub, [(t.schema, t.table)])
            ident = sql.Identifier(schema, signal)
            try:
                conn.execute(sql.SQL(SIGNAL_DDL).format(ident))
            except Exception as exc:  # psycopg.Error: no CREATE on the schema
                raise SourceError(f"cannot create the signal table {schema}.{signal}: {' '.join(str(exc).split())} "
                                  f"(create it as: {SIGNAL_DDL.format(f'{schema}.{signal}')})") from None
            row = conn.execute("SELECT puballtables FROM pg_publication WHERE pubname = %s", (pub,)).fetchone()
            if row is None:
                db.ensure_publication(conn, pub, src.source_tables(pipeline), progress)
                row = (False,)
            if not row[0]:
                published = {(s, n) for s, n in conn.execute(
                    "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (pub,)).fetchall()}
                for s, n in ((t.schema, t.table), (schema, signal)):
                    if (s, n) not in published:
                        try:
                            conn.execute(sql.SQL("ALTER PUBLICATION {} ADD TABLE {}").format(
                                sql.Identifier(pub), sql.Identifier(s, n)))
                        except Exception as exc:  # psycopg.Error: not the publication's owner
                            raise SourceError(f"cannot add {s}.{n} to publication {pub}: {' '.join(str(exc).split())} "
                                              f"(ALTER PUBLICATION {pub} ADD TABLE {s}.{n};)") from None
                        progress(f"added {s}.{n} to publication {pub}")
            active = conn.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s",
                                  (pipeline.slot_name,)).fetchone()
        return bool(active and active[0]), BLOCKING if kind == "p" else INCREMENTAL

    def sent(self, pipeline: Pipeline, request_id: str) -> bool:
        from psycopg import sql

        schema, signal = signal_table(pipeline)
        with db.connect(pipeline) as conn:
            return conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE id = %s").format(
                sql.Identifier(schema, signal)), (request_id,)).fetchone()[0] > 0

    def floor(self, pipeline: Pipeline) -> tuple[int, str]:
        with db.connect(pipeline) as conn:
            r = _lsn(conn.execute("SELECT pg_current_wal_insert_lsn()::text").fetchone()[0])
            xmax = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").fetchone()[0]
        return r, xmax

    def ended(self, pipeline: Pipeline, running: str) -> bool:
        with db.connect(pipeline) as conn:
            return bool(conn.execute("SELECT pg_snapshot_xmin(pg_current_snapshot()) >= %s::xid8",
                                     (running,)).fetchone()[0])

    def oldest_transaction(self, pipeline: Pipeline) -> tuple | None:
        with db.connect(pipeline) as conn:
            return conn.execute("SELECT pid, state, xact_start FROM pg_stat_activity WHERE backend_xid IS NOT NULL "
                                "ORDER BY xact_start LIMIT 1").fetchone()

    def signal(self, pipeline: Pipeline, qualified: str, request_id: str) -> str:
        from psycopg import sql

        schema, signal = signal_table(pipeline)
        with db.connect(pipeline) as conn:
            row = conn.execute("SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                               "WHERE n.nspname = %s AND c.relname = %s", tuple(qualified.split(".", 1))).fetchone()
            kind = BLOCKING if row is not None and row[0] == "p" else INCREMENTAL
            data = json.dumps({"data-collections": [qualified], "type": kind})
            conn.execute(sql.SQL("INSERT INTO {} (id, type, data) VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING")
                         .format(sql.Identifier(schema, signal)), (request_id, EXECUTE, data))
        return kind

    def flushed(self, pipeline: Pipeline) -> int | None:
        with db.connect(pipeline) as conn:
            row = conn.execute("SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = %s",
                               (pipeline.slot_name,)).fetchone()
        return _lsn(row[0]) if row and row[0] else None
