"""`hudi-cdc source check` for MySQL-family servers (MySQL, Aurora/RDS MySQL, MariaDB).

`gather` reads the facts as the pipeline's user (the binlog settings, the user's grants, each table's
primary key, the binary logs the server still has and the position capture's offsets point at);
`evaluate` turns them into checks (ok | warn | fail) with the exact statement or parameter-group
setting that fixes a failing one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.sources.base import Check
from hudi_cdc.sources.mysql import binlog as mysql
from hudi_cdc.sources.mysql import settings as mysql_settings
from hudi_cdc.sources.mysql.signals import SIGNAL_DDL, signal_table
from hudi_cdc.sources.tables import SourceTable, lake_name, source_tables

PARAMETER_GROUP = "on RDS/Aurora: set it in the DB (cluster) parameter group and reboot"


@dataclass
class TableFacts:
    table: SourceTable
    exists: bool
    engine: str | None = None
    primary_key: list[str] = field(default_factory=list)


@dataclass
class Facts:
    user: str
    settings: dict[str, str]
    grants: list[str]
    rds: bool  # an RDS / Aurora MySQL instance (its mysql.rds_* procedures)
    rds_retention_hours: str | None = None  # 'binlog retention hours' (None: purged as soon as possible)
    binlogs: list[str] = field(default_factory=list)  # SHOW BINARY LOGS
    offsets_file: str | None = None  # the binlog file capture's committed offsets point at
    tables: list[TableFacts] = field(default_factory=list)


def _rows(conn, sql: str, params: tuple = ()) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, params)
        return list(cur.fetchall())


def offsets_binlog_file(path: Path) -> str | None:
    """The binlog file in Debezium's offsets (FileOffsetBackingStore keeps the Connect JSON of each offset
    inside a Java-serialized map: the text is there as it is)."""
    if not path.exists():
        return None
    found = re.findall(rb'"file":"([^"]+)"', path.read_bytes())
    return found[-1].decode() if found else None


def gather(conn, pipeline: Pipeline, tables: list[SourceTable]) -> Facts:
    import pymysql

    from hudi_cdc.sources.base import offsets_file

    name, _, host = str(_rows(conn, "SELECT CURRENT_USER()")[0][0]).rpartition("@")
    user = f"'{name}'@'{host}'"  # as GRANT ... TO names it
    grants = [str(r[0]) for r in _rows(conn, "SHOW GRANTS FOR CURRENT_USER()")]
    settings = mysql_settings.server_settings(conn)
    rds = any(r for r in _rows(conn, "SHOW VARIABLES WHERE Variable_name IN ('aurora_version', 'rds_version')")) or \
        settings.get("basedir", "").startswith("/rdsdbbin")
    facts = Facts(user, settings, grants, rds)
    if rds:
        try:
            for name, value, *_ in _rows(conn, "CALL mysql.rds_show_configuration"):
                if str(name) == "binlog retention hours":
                    facts.rds_retention_hours = None if value is None else str(value)
        except pymysql.Error:
            pass
    try:
        facts.binlogs = [str(r[0]) for r in _rows(conn, "SHOW BINARY LOGS")]
    except pymysql.Error:
        facts.binlogs = []
    facts.offsets_file = offsets_binlog_file(offsets_file(pipeline))
    for t in tables:
        got = _rows(conn, "SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                    (t.schema, t.table))
        tf = TableFacts(t, bool(got), str(got[0][0]) if got and got[0][0] else None)
        if tf.exists:
            tf.primary_key = [str(r[0]) for r in _rows(
                conn, "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND "
                      "TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX", (t.schema, t.table))]
        facts.tables.append(tf)
    return facts


def _has(grants: list[str], privilege: str, schema: str | None = None, table: str | None = None) -> bool:
    """Is ``privilege`` granted globally (or on ``schema``, or on ``schema.table``), directly or through ALL
    PRIVILEGES?"""
    for g in grants:
        m = re.match(r"GRANT (.+?) ON (\S+) TO", g, re.I)
        if not m:
            continue
        privs = [p.strip().upper() for p in m.group(1).split(",")]
        on = m.group(2).replace("`", "")
        if on != "*.*" and not (schema and on in (f"{schema}.*", f"{schema}.{table}")):
            continue
        if "ALL PRIVILEGES" in privs or privilege in privs:
            return True
    return False


def _server_checks(f: Facts) -> list[Check]:
    s = f.settings
    out = []
    for name, want in mysql_settings.REQUIRED.items():
        got = s.get(name, "not set")
        ok = got.upper() == want
        out.append(Check(name, "ok" if ok else "fail", f"{got} (capture needs {want})",
                         None if ok else mysql_settings.FIXES[name]))
    sid = s.get("server_id", "0")
    sid_fix = ("set server_id to a non-zero value unique among the servers and replicas "
               f"(my.cnf: server_id=1; {PARAMETER_GROUP})")
    sid_ok = sid not in ("", "0")
    out.append(Check("server_id", "ok" if sid_ok else "fail", f"server_id = {sid}", None if sid_ok else sid_fix))
    gtid = s.get("gtid_mode")
    if gtid is not None:  # MySQL: the connector resumes by GTID when it is on (failovers)
        gtid_fix = ("gtid_mode=ON and enforce_gtid_consistency=ON let capture resume on another server after a "
                    f"failover ({PARAMETER_GROUP})")
        gtid_ok = gtid.upper() == "ON"
        out.append(Check("gtid_mode", "ok" if gtid_ok else "warn", f"gtid_mode = {gtid}",
                         None if gtid_ok else gtid_fix))
    order = s.get("binlog_order_commits")  # MySQL's; MariaDB's group commit always commits in binlog order
    if order is not None and order.upper() != "ON":  # what orders incremental snapshots (sources/mysql/signals.py)
        out.append(Check("binlog_order_commits", "warn", f"binlog_order_commits = {order}: a transaction may become "
                         "visible after a later one of the binlog, and an incremental snapshot's chunk miss it",
                         "SET GLOBAL binlog_order_commits = ON (its default)"))
    return out


def _retention_checks(f: Facts) -> list[Check]:
    out = []
    s = f.settings
    if f.rds:
        hours = f.rds_retention_hours
        ok = hours is not None and hours.isdigit() and int(hours) >= 24
        out.append(Check("binlog_retention", "ok" if ok else "fail",
                         f"binlog retention hours = {hours or 'NULL (purged as soon as possible)'}",
                         None if ok else "CALL mysql.rds_set_configuration('binlog retention hours', 72);"))
    else:
        secs = s.get("binlog_expire_logs_seconds")
        days = s.get("expire_logs_days")
        seconds = int(secs) if secs and secs.isdigit() and int(secs) > 0 else int(float(days or 0) * 86400)
        ok = seconds == 0 or seconds >= 86400
        what = "never purged" if seconds == 0 else f"purged after {seconds / 3600:g} h"
        out.append(Check("binlog_retention", "ok" if ok else "warn", f"binary logs {what}",
                         None if ok else "keep binary logs longer than the longest capture pause: "
                                         "SET GLOBAL binlog_expire_logs_seconds = 259200;"))
    if f.offsets_file:
        kept = f.offsets_file in f.binlogs
        out.append(Check("capture_position", "ok" if kept else "fail",
                         f"capture's offsets point at {f.offsets_file}" + ("" if kept else ", which the server purged"),
                         None if kept else "the changes since are lost to capture: `hudi-cdc capture --drop-slot`, "
                                           "then capture and bootstrap again (a new snapshot)"))
    return out


def _grant_checks(pipeline: Pipeline, f: Facts, tables: list[TableFacts]) -> list[Check]:
    out = []
    slave = _has(f.grants, "REPLICATION SLAVE") or _has(f.grants, "REPLICATION REPLICA")
    client = any(_has(f.grants, p) for p in ("REPLICATION CLIENT", "BINLOG MONITOR", "SUPER"))
    for name, ok, priv in (("replication_slave", slave, "REPLICATION SLAVE"),
                           ("replication_client", client, "REPLICATION CLIENT")):
        out.append(Check(name, "ok" if ok else "fail", f"{f.user} {'has' if ok else 'lacks'} {priv}",
                         None if ok else f"GRANT {priv} ON *.* TO {f.user};"))
    for schema in sorted({t.table.schema for t in tables}):
        ok = _has(f.grants, "SELECT", schema)
        out.append(Check(f"select:{schema}", "ok" if ok else "fail",
                         f"{f.user} {'can' if ok else 'cannot'} SELECT in {schema}",
                         None if ok else f"GRANT SELECT ON `{schema}`.* TO {f.user};"))
    if pipeline.tables:  # incremental snapshots (`capture snapshot`, after ADD COLUMN ... DEFAULT)
        db, signal = signal_table(pipeline)
        ok = _has(f.grants, "INSERT", db, signal)
        out.append(Check("signal_table", "ok" if ok else "warn", f"{f.user} {'can' if ok else 'cannot'} write the "
                         f"signal table {db}.{signal} (capture snapshot; the snapshot after ADD COLUMN ... DEFAULT)",
                         None if ok else f"GRANT CREATE, INSERT ON `{db}`.* TO {f.user}; (or, as an admin: "
                         f"{SIGNAL_DDL.format(f'{db}.{signal}')}; GRANT SELECT, INSERT ON {db}.{signal} TO {f.user};)"))
    reload_ = _has(f.grants, "RELOAD")
    out.append(Check("reload", "ok" if reload_ else "warn", f"{f.user} {'has' if reload_ else 'lacks'} RELOAD",
                     None if reload_ else f"GRANT RELOAD ON *.* TO {f.user}; (the snapshot's global read lock; "
                                          "without it Debezium locks each table)"))
    return out


def _table_checks(pipeline: Pipeline, t: TableFacts) -> list[Check]:
    name, sql_name = t.table.qualified, ".".join(f"`{p.replace('`', '``')}`" for p in (t.table.schema, t.table.table))
    if not t.exists:
        return [Check(f"table:{name}", "fail", "not found", f"CREATE TABLE {sql_name} (...), or fix tables."
                                                            f"{t.table.name}.topic")]
    out = [Check(f"table:{name}", "ok", f"exists ({t.engine})")]
    keys = pipeline.table(t.table.name).source_keys
    if not t.primary_key:
        out.append(Check(f"primary_key:{name}", "fail", "no primary key: delete events carry no key",
                         f"ALTER TABLE {sql_name} ADD PRIMARY KEY ({', '.join(keys)});"))
    elif sorted(lake_name(k) for k in t.primary_key) != sorted(keys):  # keys: the columns' names in the lake
        lake_keys = [lake_name(k) for k in t.primary_key]
        out.append(Check(f"primary_key:{name}", "warn", f"primary key ({', '.join(t.primary_key)}) is not the "
                         f"record key ({', '.join(keys)})", f"tables.{t.table.name}.record_key: "
                         f"{lake_keys[0] if len(lake_keys) == 1 else lake_keys}"))
    else:
        out.append(Check(f"primary_key:{name}", "ok", f"({', '.join(t.primary_key)})"))
    if t.engine and t.engine.upper() not in ("INNODB", "ROCKSDB"):
        out.append(Check(f"engine:{name}", "warn", f"{t.engine} is not transactional: the snapshot is not consistent",
                         f"ALTER TABLE {sql_name} ENGINE = InnoDB;"))
    return out


def evaluate(pipeline: Pipeline, f: Facts) -> list[Check]:
    checks = _server_checks(f) + _grant_checks(pipeline, f, f.tables)
    for t in f.tables:
        checks += _table_checks(pipeline, t)
    return checks + _retention_checks(f)


def source_check(pipeline: Pipeline, tables: list[SourceTable] | None = None) -> list[Check]:
    conn = mysql.connect(pipeline)
    try:
        return evaluate(pipeline, gather(conn, pipeline, tables if tables is not None else source_tables(pipeline)))
    finally:
        conn.close()
