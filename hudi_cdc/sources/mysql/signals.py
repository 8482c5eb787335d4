"""MySQL / MariaDB's side of incremental snapshots (`capture snapshot`, capture/signals.py drives them):
Debezium's binlog connectors read an ``execute-snapshot`` row (type incremental) of the signal table
``<database>.<slot>_signal`` (beside the pipeline's first table) from the binlog like any change
(``signal.enabled.channels=source``, ``signal.data.collection``; Debezium adds the signal table to
``table.include.list`` itself, RelationalTableFilters, so its DDL is kept in the schema history and its rows
are decoded), and open and close each chunk's window with rows they insert into the same table. The capture
user needs CREATE on the database once (or the table made for it) and INSERT on the signal table. The signal
table's topic is no table of the pipeline: nothing of it lands.

Why the floor R orders the snapshot rows right on a binlog (capture/signals.py: chunk rows land at R - 1,
a --replace truncate at R - 2): R is ``binlog.lsn`` of SHOW MASTER STATUS's file and position, the start of
the next event; ``__lsn`` is ``(file number << 32) + row event position + row``, which increases along the
binlog (test_binlog_ordering_value_increases_along_the_binlog), and every row of an event written before R
has a value below R - 2 (an event's header alone is 19 bytes and each row takes at least one more).
* The binlog holds only committed transactions, each written whole at its commit, in commit order. A change
  ordered below R is in the binlog before R was read: its transaction committed before the signal row was
  inserted (which is after R), so before Debezium read the signal from the binlog and queried any chunk
  (the storage engine commits in binlog order: MariaDB's group commit always, MySQL with
  binlog_order_commits, its default; `source check` warns when it is off). The chunk row reflects that
  change, and, ordered after it, wins.
* A change ordered at or after R was written to the binlog after R, so it is streamed (the table is
  captured before R) and wins over the chunk row; per key the newest binlog position is the newest change
  (commit order, and row locks serialise the changes of one row). A transaction open at R writes nothing to
  the binlog until it commits, after R: unlike PostgreSQL's WAL (whose changes of an open transaction may
  sit below R) there is nothing to wait for, so ``ended`` is true at once.
* A key changed inside a chunk's window: Debezium drops the chunk row (the streamed change stands); a delete
  at or after R leaves a tombstone no chunk row passes; a row deleted before its chunk is not read.
"""

from __future__ import annotations

import json

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import SourceError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import INCREMENTAL, Progress, signal_properties
from hudi_cdc.sources.mysql import binlog
from hudi_cdc.sources.mysql.catalog import quote

SIGNAL_DDL = "CREATE TABLE IF NOT EXISTS {} (id VARCHAR(42) PRIMARY KEY, type VARCHAR(32) NOT NULL, data VARCHAR(2048))"
EXECUTE = "execute-snapshot"


def signal_table(pipeline: Pipeline) -> tuple[str, str]:
    """(database, table) of the pipeline's signal table: <slot>_signal beside its first table."""
    first = src.source_tables(pipeline)[0]
    return first.schema, f"{pipeline.slot_name[:56]}_signal"


def _name(pipeline: Pipeline) -> str:
    db, table = signal_table(pipeline)
    return f"{quote(db)}.{quote(table)}"


def properties(pipeline: Pipeline) -> dict[str, str]:
    """The connector properties incremental snapshots need (signals read from the binlog)."""
    db, table = signal_table(pipeline)
    return signal_properties(f"{db}.{table}", src.database(pipeline).snapshot_chunk_size,
                             src.topic_prefix(pipeline))


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc.args[-1] if exc.args else exc).split())


class BinlogSignals:
    """base.SnapshotSignals for MySQL and MariaDB."""

    # a --once run ends at its first heartbeat past the binlog's end at its start, which a chunk's window
    # (rows written after that end) always is: it finishes the snapshots it carries out first
    once_finishes = True

    def prepare(self, pipeline: Pipeline, table: str, progress: Progress) -> tuple[bool, str]:
        """The signal table, made and writable by the capture user; the table exists with a primary key.
        True: a binlog dump thread of the capture user (a capture reading the binlog) is connected."""
        import pymysql

        t = src.source_table(pipeline, table)
        db, signal = signal_table(pipeline)
        user = src.database(pipeline).user
        conn = binlog.connect(pipeline)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND "
                            "TABLE_NAME = %s", (t.schema, t.table))
                if not cur.fetchone()[0]:
                    raise SourceError(f"capture snapshot: table {t.qualified} does not exist in the server")
                cur.execute("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND "
                            "TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY'", (t.schema, t.table))
                if not cur.fetchone()[0]:
                    raise SourceError(f"capture snapshot: {t.qualified} has no primary key; Debezium reads an "
                                      "incremental snapshot in primary-key chunks (add one, or re-take it with "
                                      "capture --drop-slot)")
                try:
                    cur.execute(SIGNAL_DDL.format(_name(pipeline)))
                    conn.begin()  # can the user write it (Debezium's window rows, the signal)? nothing stays
                    cur.execute(f"INSERT INTO {_name(pipeline)} (id, type, data) VALUES ('hudi-cdc-probe', 'probe', "
                                "NULL)")
                    conn.rollback()
                except pymysql.Error as exc:
                    raise SourceError(f"cannot create or write the signal table {db}.{signal}: {_one_line(exc)} "
                                      f"(create it as: {SIGNAL_DDL.format(f'{db}.{signal}')}; then GRANT SELECT, "
                                      f"INSERT ON {db}.{signal} TO {user})") from None
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%%' "
                            "AND USER = %s", (user,))
                running = cur.fetchone()[0] > 0
        finally:
            conn.close()
        return running, INCREMENTAL

    def sent(self, pipeline: Pipeline, request_id: str) -> bool:
        conn = binlog.connect(pipeline)
        try:
            with conn.cursor() as cur:
                cur.execute(f"SELECT COUNT(*) FROM {_name(pipeline)} WHERE id = %s", (request_id,))
                return cur.fetchone()[0] > 0
        finally:
            conn.close()

    def floor(self, pipeline: Pipeline) -> tuple[int, str]:
        """R: the binlog's end now as an ordering value (module doc); nothing running needs to end."""
        conn = binlog.connect(pipeline)
        try:
            end = binlog.binlog_status(conn)
        finally:
            conn.close()
        return binlog.lsn(end.file, end.pos, 0), ""

    def ended(self, pipeline: Pipeline, running: str) -> bool:
        return True  # an open transaction reaches the binlog only at its commit, after R (module doc)

    def oldest_transaction(self, pipeline: Pipeline) -> tuple | None:
        conn = binlog.connect(pipeline)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT trx_mysql_thread_id, trx_state, trx_started FROM information_schema.INNODB_TRX "
                            "ORDER BY trx_started LIMIT 1")
                return cur.fetchone()
        finally:
            conn.close()

    def signal(self, pipeline: Pipeline, qualified: str, request_id: str) -> str:
        data = json.dumps({"data-collections": [qualified], "type": INCREMENTAL})
        conn = binlog.connect(pipeline)
        try:
            with conn.cursor() as cur:
                cur.execute(f"INSERT IGNORE INTO {_name(pipeline)} (id, type, data) VALUES (%s, %s, %s)",
                            (request_id, EXECUTE, data))
        finally:
            conn.close()
        return INCREMENTAL

    def flushed(self, pipeline: Pipeline) -> int | None:
        return None  # only blocking snapshots ask, and the MySQL family gets incremental ones
