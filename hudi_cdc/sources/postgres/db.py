"""A PostgreSQL source's connection and the publication and slot capture reads: connect as the
pipeline's user, wal_level, the publication of exactly the pipeline's tables, the slot free, the WAL
position."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.errors import SourceError
from hudi_cdc.sources.tables import SourceTable, database, password


def connect(pipeline: Pipeline, autocommit: bool = True):
    """A psycopg connection as the pipeline's user; a database that is down is one line."""
    return connect_to(database(pipeline), password(pipeline), autocommit)


def connect_to(db: DatabaseSettings, password: str | None, autocommit: bool = True):
    """A psycopg connection from database settings alone (init --from-database has no pipeline yet)."""
    import psycopg

    try:
        return psycopg.connect(host=db.host, port=db.port, dbname=db.name, user=db.user, password=password,
                               autocommit=autocommit, connect_timeout=10, application_name="hudi-cdc")
    except psycopg.OperationalError as exc:
        msg = " ".join(str(exc).split())
        raise SourceError(f"cannot connect to {db.user}@{db.host}:{db.port}/{db.name}: {msg}") from None


def check_logical(conn) -> None:
    level = conn.execute("SHOW wal_level").fetchone()[0]
    if level != "logical":
        raise SourceError(f"wal_level is {level}, change capture needs logical: ALTER SYSTEM SET wal_level = logical; "
                          "then restart PostgreSQL (on RDS: rds.logical_replication = 1 in the parameter group)")


def ensure_publication(conn, name: str, tables: list[SourceTable], progress=None,
                       shards: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Create the publication for exactly the pipeline's tables when it is missing; when it exists,
    it must publish them all (the fix is printed, nothing is changed behind the user's back), except
    ``shards``: a routed table's source tables (docs/shaping.md#routing), a new one added to it here."""
    from psycopg import sql

    via_root = int(conn.execute("SHOW server_version_num").fetchone()[0]) >= 130000
    row = conn.execute("SELECT puballtables FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
    if row is None:
        idents = sql.SQL(", ").join(sql.Identifier(t.schema, t.table) for t in tables)
        # a partitioned table's changes published as the table's own, not as its partitions' (PostgreSQL 13+)
        options = sql.SQL(" WITH (publish_via_partition_root = true)" if via_root else "")
        try:
            conn.execute(sql.SQL("CREATE PUBLICATION {} FOR TABLE {}{}").format(sql.Identifier(name), idents, options))
        except Exception as exc:  # psycopg.Error: privileges, missing table
            raise SourceError(f"cannot create publication {name}: {' '.join(str(exc).split())}") from None
        if progress:
            progress(f"created publication {name} for {', '.join(t.qualified for t in tables)}")
        return
    partitioned = [t for t in tables if _is_partitioned(conn, t)]
    if partitioned and via_root and not conn.execute(
            "SELECT pubviaroot FROM pg_publication WHERE pubname = %s", (name,)).fetchone()[0]:
        raise SourceError(f"publication {name} publishes the changes of partitioned table "
                          f"{', '.join(t.qualified for t in partitioned)} as its partitions' (topics capture does not "
                          f"land): ALTER PUBLICATION {name} SET (publish_via_partition_root = true);")
    if row[0]:
        return
    published = {(s, t) for s, t in conn.execute(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (name,)).fetchall()}
    missing = [t for t in tables if (t.schema, t.table) not in published]
    gone = [t for t in missing if _relkind(conn, t) is None]
    if gone:  # renamed or dropped: the publication followed the table (by oid), the pipeline file names it
        names = ", ".join(t.qualified for t in gone)
        raise SourceError(f"table {names} of the pipeline does not exist in the database (renamed or dropped?): "
                          "take it out of the pipeline file's tables, or, renamed, add it under its new name "
                          "(`hudi-cdc add-table`, then `hudi-cdc capture snapshot --table <new>`)")
    added = [t for t in missing if (t.schema, t.table) in shards]
    if added:  # a new shard of a routed table: published from now on
        conn.execute(sql.SQL("ALTER PUBLICATION {} ADD TABLE {}").format(
            sql.Identifier(name), sql.SQL(", ").join(sql.Identifier(t.schema, t.table) for t in added)))
        if progress:
            progress(f"publication {name}: added routed source table(s) {', '.join(t.qualified for t in added)} "
                     "(captured from now on)")
        missing = [t for t in missing if t not in added]
    if missing:
        names = ", ".join(t.qualified for t in missing)
        raise SourceError(f"publication {name} does not publish {names}: ALTER PUBLICATION {name} ADD TABLE {names}; "
                          "(a table dropped and created again: its rows written before it is published again are "
                          "not captured; `hudi-cdc capture snapshot --table <table> --replace` publishes it and "
                          "re-takes its lake copy)")


def publication_gaps(pipeline: Pipeline) -> tuple[list[str], list[str]]:
    """(pipeline tables the database no longer has, pipeline tables the pipeline's publication does not
    publish), by pipeline name; nothing when the publication is not there yet or publishes all tables."""
    from hudi_cdc.sources.tables import source_tables

    name = pipeline.publication_name
    with connect(pipeline) as conn:
        row = conn.execute("SELECT puballtables FROM pg_publication WHERE pubname = %s", (name,)).fetchone()
        if row is None or row[0]:
            return [], []
        published = {(s, t) for s, t in conn.execute(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (name,)).fetchall()}
        missing = [t for t in source_tables(pipeline) if (t.schema, t.table) not in published
                   and not _in_publication(conn, name, t)]
        gone = [t.name for t in missing if _relkind(conn, t) is None]
        return gone, [t.name for t in missing if t.name not in gone]


def case_twin_tables(pipeline: Pipeline) -> dict[str, str]:
    """{pipeline table: why} of the tables whose columns differ only in case (catalog.case_twins): Debezium refuses
    them, stopping its connector for every table."""
    from hudi_cdc.sources.postgres import catalog
    from hudi_cdc.sources.tables import source_tables

    out: dict[str, str] = {}
    with connect(pipeline) as conn:
        for t in source_tables(pipeline):
            cols = [r[0] for r in conn.execute(
                "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT "
                "a.attisdropped", (t.schema, t.table))]
            twins = catalog.case_twins(cols)
            if twins and t.name not in out:
                out[t.name] = catalog.case_twins_why(twins)
    return out


def _in_publication(conn, publication: str, t: SourceTable) -> bool:
    """The table, or a partitioned table it is a partition of, is a member of the publication (a partitioned
    table published without publish_via_partition_root shows in pg_publication_tables as its partitions)."""
    return bool(conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_publication p JOIN pg_publication_rel r ON r.prpubid = p.oid "
        "JOIN pg_partition_ancestors(to_regclass(format('%%I.%%I', %s::text, %s::text))) a ON a.relid = r.prrelid "
        "WHERE p.pubname = %s)", (t.schema, t.table, publication)).fetchone()[0])


def _relkind(conn, t: SourceTable) -> str | None:
    row = conn.execute("SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                       "WHERE n.nspname = %s AND c.relname = %s", (t.schema, t.table)).fetchone()
    return row[0] if row else None


def _is_partitioned(conn, t: SourceTable) -> bool:
    return _relkind(conn, t) == "p"


def check_slot_free(conn, slot: str) -> dict[str, object]:
    row = conn.execute("SELECT plugin, active, active_pid, database, current_database() FROM pg_replication_slots "
                       "WHERE slot_name = %s", (slot,)).fetchone()
    if row is None:
        return {}
    plugin, active, pid, slot_db, here = row
    if slot_db != here:
        raise SourceError(f"replication slot {slot} belongs to database {slot_db}, not {here} (slots are per "
                          "server): name another one in source.database.slot")
    if plugin != "pgoutput":
        raise SourceError(f"replication slot {slot} uses {plugin}, capture needs pgoutput: "
                          f"SELECT pg_drop_replication_slot('{slot}'); (loses its position)")
    if active:
        raise SourceError(f"replication slot {slot} is in use (by backend pid {pid}): "
                          "another capture runs on this pipeline")
    return {"plugin": plugin}


def current_lsn(conn) -> int:
    text = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]
    hi, lo = text.split("/")
    return (int(hi, 16) << 32) + int(lo, 16)
