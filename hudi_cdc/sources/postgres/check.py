"""`hudi-cdc source check`: is the source database ready for change capture, and how to fix it if not.

Two steps: `gather` reads the facts from the database as the pipeline's user (settings, the role's
rights, the publication, each table's primary key and REPLICA IDENTITY, the replication slots and the
WAL they retain); `evaluate` turns facts into checks (ok | warn | fail), each failing one with the
exact SQL or setting that fixes it (and the RDS parameter-group name, as the seed runs on RDS).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.sources.base import Check
from hudi_cdc.sources.db_tables import GENERATED_NOTE
from hudi_cdc.sources.history import is_history
from hudi_cdc.sources.postgres import catalog
from hudi_cdc.sources.postgres.db import connect, current_lsn
from hudi_cdc.sources.postgres.heartbeat import action_table_sql
from hudi_cdc.sources.postgres.identity import Unusable, unusable
from hudi_cdc.sources.tables import SourceTable, lake_name

RESTART = "then restart PostgreSQL"
INDEX_KEYS = ("hoodie.index.type",)


@dataclass
class TableFacts:
    table: SourceTable
    exists: bool
    can_select: bool = False
    primary_key: list[str] = field(default_factory=list)
    replica_identity: str = "d"  # pg_class.relreplident: d default, f full, i index, n nothing
    # TOAST-able columns (varlena, attstorage != 'p'): "name type" each; and the sizes FULL's cost is told from
    toastable: list[str] = field(default_factory=list)
    rows: int = 0  # pg_class.reltuples (an estimate)
    heap_bytes: int = 0
    toast_bytes: int = 0
    generated: list[str] = field(default_factory=list)  # STORED generated columns (catalog.py)


@dataclass
class SlotFacts:
    name: str
    plugin: str | None
    database: str | None
    active: bool
    active_pid: int | None
    retained_bytes: int | None  # WAL kept for it: current LSN - restart_lsn
    lag_bytes: int | None = None  # not yet confirmed by its reader: current LSN - confirmed_flush_lsn


@dataclass
class Facts:
    user: str
    database: str
    wal_level: str
    max_replication_slots: int
    max_wal_senders: int
    slots_used: int
    senders_used: int
    replication: bool  # REPLICATION attribute, superuser, or RDS's rds_replication role
    rds: bool  # the rds_replication role exists: an RDS/Aurora instance
    publication: str
    publication_exists: bool = False
    publication_all_tables: bool = False
    publication_actions: dict[str, bool] = field(default_factory=dict)
    published: set[tuple[str, str]] = field(default_factory=set)
    via_root: bool = True  # publish_via_partition_root (partitioned tables published as themselves)
    partitioned: list[str] = field(default_factory=list)  # the pipeline's partitioned tables
    tables: list[TableFacts] = field(default_factory=list)
    slots: list[SlotFacts] = field(default_factory=list)
    unusable: list[Unusable] = field(default_factory=list)  # tables whose UPDATE/DELETE would be rejected
    heartbeat_query_error: str | None = None  # heartbeat_action_query does not plan (e.g. no such table)


def _one(conn, sql: str, params: tuple = ()) -> Any:
    return conn.execute(sql, params).fetchone()


def gather(conn, pipeline: Pipeline, tables: list[SourceTable]) -> Facts:
    user, db = _one(conn, "SELECT current_user, current_database()")
    rolrepl, rolsuper = _one(conn, "SELECT rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user")
    rds = _one(conn, "SELECT count(*) FROM pg_roles WHERE rolname = 'rds_replication'")[0] > 0
    rds_member = rds and _one(conn, "SELECT pg_has_role(current_user, 'rds_replication', 'member')")[0]
    facts = Facts(
        user=user, database=db,
        wal_level=_one(conn, "SHOW wal_level")[0],
        max_replication_slots=int(_one(conn, "SHOW max_replication_slots")[0]),
        max_wal_senders=int(_one(conn, "SHOW max_wal_senders")[0]),
        slots_used=_one(conn, "SELECT count(*) FROM pg_replication_slots")[0],
        senders_used=_one(conn, "SELECT count(*) FROM pg_stat_replication")[0],
        replication=bool(rolrepl or rolsuper or rds_member), rds=rds,
        publication=pipeline.publication_name)
    pub = _one(conn, "SELECT puballtables, pubinsert, pubupdate, pubdelete FROM pg_publication WHERE pubname = %s",
               (facts.publication,))
    if pub is not None:
        facts.publication_exists, facts.publication_all_tables = True, pub[0]
        facts.publication_actions = {"insert": pub[1], "update": pub[2], "delete": pub[3]}
        facts.published = {(s, t) for s, t in conn.execute(
            "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s", (facts.publication,))}
        if int(_one(conn, "SHOW server_version_num")[0]) >= 130000:
            facts.via_root = bool(_one(conn, "SELECT pubviaroot FROM pg_publication WHERE pubname = %s",
                                       (facts.publication,))[0])
    for t in tables:
        row = _one(conn, "SELECT c.oid, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p')", (t.schema, t.table))
        if row is None:
            facts.tables.append(TableFacts(t, exists=False))
            continue
        oid, ident = row
        if _one(conn, "SELECT relkind FROM pg_class WHERE oid = %s", (oid,))[0] == "p":
            facts.partitioned.append(t.qualified)
        pk = catalog.primary_key(conn, oid)
        select = _one(conn, "SELECT has_table_privilege(%s::oid, 'SELECT')", (oid,))[0]
        toastable = [f"{n} {ty}" for n, ty in conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
            "AND NOT attisdropped AND attlen = -1 AND attstorage <> 'p' ORDER BY attnum", (oid,))]
        rows, heap, toast = _one(conn, "SELECT greatest(reltuples, 0)::bigint, pg_relation_size(oid), "
                                       "coalesce(pg_relation_size(nullif(reltoastrelid, 0)), 0) FROM pg_class "
                                       "WHERE oid = %s", (oid,))
        facts.tables.append(TableFacts(t, True, bool(select), pk, ident, toastable, int(rows), int(heap), int(toast),
                                       catalog.generated_columns(conn, oid)))
    lsn = current_lsn(conn)

    def behind(text: str | None) -> int | None:
        if not text:
            return None
        hi, lo = text.split("/")
        return max(0, lsn - ((int(hi, 16) << 32) + int(lo, 16)))

    for name, plugin, database, active, pid, restart, confirmed in conn.execute(
            "SELECT slot_name, plugin, database, active, active_pid, restart_lsn::text, confirmed_flush_lsn::text "
            "FROM pg_replication_slots ORDER BY slot_name"):
        facts.slots.append(SlotFacts(name, plugin, database, bool(active), pid, behind(restart), behind(confirmed)))
    facts.unusable = unusable(conn, facts.publication, [(t.schema, t.table) for t in tables])
    query = pipeline.source.database.heartbeat_action_query if pipeline.source.database else None
    if query:
        try:
            with conn.transaction():
                conn.execute(f"EXPLAIN {query}")  # plans it, runs nothing
        except Exception as exc:  # psycopg.Error: no such table, no privilege, syntax
            facts.heartbeat_query_error = " ".join(str(exc).split())
    return facts


def _setting(name: str, value: str, rds_name: str | None = None, rds_value: str | None = None) -> str:
    """The fix of a server setting: ALTER SYSTEM here, the parameter group's name and value on RDS."""
    return (f"ALTER SYSTEM SET {name} = {value}; {RESTART} (on RDS: {rds_name or name} = {rds_value or value} "
            "in the DB parameter group, then reboot)")


def _server_checks(pipeline: Pipeline, f: Facts) -> list[Check]:
    out = []
    if f.wal_level == "logical":
        out.append(Check("wal_level", "ok", "logical"))
    else:
        out.append(Check("wal_level", "fail", f"{f.wal_level}: change capture needs logical",
                         _setting("wal_level", "logical", "rds.logical_replication", "1")))
    own_slot = any(s.name == pipeline.slot_name for s in f.slots)
    free_slots = f.max_replication_slots - f.slots_used
    if own_slot or free_slots > 0:
        out.append(Check("max_replication_slots", "ok", f"{f.max_replication_slots} ({f.slots_used} in use)"))
    else:
        out.append(Check("max_replication_slots", "fail",
                         f"{f.max_replication_slots}, all in use: no slot left for {pipeline.slot_name}",
                         _setting("max_replication_slots", str(f.max_replication_slots + 1))))
    if f.max_wal_senders - f.senders_used > 0:
        out.append(Check("max_wal_senders", "ok", f"{f.max_wal_senders} ({f.senders_used} in use)"))
    else:
        out.append(Check("max_wal_senders", "fail", f"{f.max_wal_senders}, all in use: no WAL sender for capture",
                         _setting("max_wal_senders", str(f.max_wal_senders + 1))))
    if f.replication:
        out.append(Check("replication role", "ok", f"{f.user} may replicate"))
    else:
        fix = f"GRANT rds_replication TO {f.user};" if f.rds else f"ALTER ROLE {f.user} WITH REPLICATION;"
        out.append(Check("replication role", "fail", f"{f.user} has no REPLICATION right", fix))
    return out


def _publication_checks(f: Facts, tables: list[TableFacts]) -> list[Check]:
    names = ", ".join(t.table.sql_text for t in tables)
    if not f.publication_exists:
        return [Check("publication", "warn", f"{f.publication} does not exist; capture creates it (the user must own "
                      "the tables)", f"CREATE PUBLICATION {f.publication} FOR TABLE {names};")]
    out = []
    missing = [a for a, on in f.publication_actions.items() if not on]
    if missing:
        out.append(Check("publication", "fail", f"{f.publication} does not publish {', '.join(missing)}",
                         f"ALTER PUBLICATION {f.publication} SET (publish = 'insert, update, delete, truncate');"))
    if f.partitioned and not f.via_root:
        out.append(Check("publication", "fail", f"{f.publication} publishes partitioned table(s) "
                         f"{', '.join(f.partitioned)} as their partitions (topics capture does not land)",
                         f"ALTER PUBLICATION {f.publication} SET (publish_via_partition_root = true);"))
    if f.publication_all_tables:
        out.append(Check("publication tables", "ok", f"{f.publication} publishes all tables"))
        return out
    absent = [t.table.sql_text for t in tables if (t.table.schema, t.table.table) not in f.published]
    if absent:
        out.append(Check("publication tables", "fail", f"{f.publication} does not publish {', '.join(absent)}",
                         f"ALTER PUBLICATION {f.publication} ADD TABLE {', '.join(absent)};"))
    else:
        out.append(Check("publication tables", "ok", f"{f.publication} publishes {names}"))
    return out


def _table_checks(pipeline: Pipeline, f: Facts, t: TableFacts) -> list[Check]:
    name, q = t.table.name, t.table.sql_text
    # one of a routed table's shards: its checks name the shard too
    label = name if pipeline.table(name).route is None else f"{name}[{q}]"
    if not t.exists:
        return [Check(f"{label}: table", "fail", f"{q} does not exist in database {f.database}",
                      f"create it, or fix tables.{name}.topic (<prefix>.<schema>.<table>)")]
    out = []
    if not t.can_select:
        out.append(Check(f"{label}: privileges", "fail", f"{f.user} cannot SELECT {q} (the snapshot reads it)",
                         f"GRANT SELECT ON {q} TO {f.user};"))
    settings = pipeline.table(name)
    keys = settings.source_keys
    if not t.primary_key and is_history(keys):
        out.append(Check(f"{label}: primary key", "ok", f"none: an append-only raw history keyed by the event "
                         f"position ({keys[0]}) and its columns, every change event a row"))
    elif not t.primary_key:
        out.append(Check(f"{label}: primary key", "warn", f"{q} has none: Debezium keys its events by "
                         f"record_key {', '.join(keys)} only with REPLICA IDENTITY FULL",
                         f"ALTER TABLE {q} ADD PRIMARY KEY ({', '.join(keys)});"))
    elif sorted(lake_name(k) for k in t.primary_key) != sorted(keys):  # keys: the columns' names in the lake
        out.append(Check(f"{label}: primary key", "warn", f"({', '.join(t.primary_key)}) differs from record_key "
                         f"({', '.join(keys)})", f"tables.{name}.record_key: {[lake_name(k) for k in t.primary_key]}"))
    else:
        out.append(Check(f"{label}: primary key", "ok", ", ".join(t.primary_key)))
    ident = {"d": "DEFAULT", "f": "FULL", "i": "USING INDEX", "n": "NOTHING"}.get(t.replica_identity, "?")
    full = f"ALTER TABLE {q} REPLICA IDENTITY FULL;"
    if t.replica_identity == "n" or (t.replica_identity == "d" and not t.primary_key):
        why = " without a primary key" if t.replica_identity == "d" else ""
        bad = next((u for u in f.unusable if (u.schema, u.table) == (t.table.schema, t.table.table)), None)
        out.append(Check(f"{label}: replica identity", "fail", f"{ident}{why}: PostgreSQL rejects its UPDATE and "
                         "DELETE once published, and they carry no key (or keep it as an append-only raw history: "
                         f"REPLICA IDENTITY FULL, record_key [__lsn, <its columns>], deletes: soft)",
                         bad.fix() if bad else full))
    else:
        out.append(Check(f"{label}: replica identity", "ok", ident))
    out += _toast_checks(pipeline, t, ident, full)
    out += _shape_checks(pipeline, t, ident, full)
    out += _generated_checks(pipeline, t, label)
    part = settings.partition_field
    index = next((settings.hudi_options[k] for k in INDEX_KEYS if k in settings.hudi_options), "GLOBAL_SIMPLE")
    if part and part not in t.primary_key:
        if t.replica_identity != "f" and not index.upper().startswith("GLOBAL"):
            out.append(Check(f"{label}: partition field", "warn", f"{part} is null in delete events (REPLICA IDENTITY "
                             f"{ident}) and hoodie.index.type={index} is not global: deletes miss the row",
                             f"{full} or drop hoodie.index.type from tables.{name}.hudi_options"))
        elif not index.upper().startswith("GLOBAL"):
            out.append(Check(f"{label}: partition field", "warn", f"{part} can change (not in the primary key) and "
                             f"hoodie.index.type={index} is not global: a changed value duplicates the row",
                             f"drop hoodie.index.type from tables.{name}.hudi_options"))
        else:
            out.append(Check(f"{label}: partition field", "ok", f"{part}: mutable, null in key-only deletes; "
                             f"{index} index finds the row in any partition"))
    return out


def _generated_checks(pipeline: Pipeline, t: TableFacts, label: str) -> list[Check]:
    """A STORED generated column the table's shaping keeps: its snapshot values land, its streamed ones are NULL."""
    cols = pipeline.table(t.table.name).columns
    kept = [c for c in t.generated if not cols or (c in cols.include if cols.include else c not in cols.exclude)]
    if not kept:
        return []
    fix = (f"tables.{t.table.name}.columns: exclude {', '.join(kept)}" if not (cols and cols.include)
           else f"take {', '.join(kept)} out of tables.{t.table.name}.columns.include")
    return [Check(f"{label}: generated columns", "warn", f"{', '.join(kept)}: {GENERATED_NOTE} (the snapshot's are "
                  "read); `verify` names the rows", fix + " (and derive them, docs/shaping.md)")]


def _toast_checks(pipeline: Pipeline, t: TableFacts, ident: str, full: str) -> list[Check]:
    """Unchanged TOASTed values: under REPLICA IDENTITY DEFAULT an UPDATE that leaves a large text,
    jsonb, bytea, array ... value alone carries Debezium's placeholder instead (docs/schema-changes.md)."""
    name = f"{t.table.name}: TOAST"
    if not t.toastable:
        return [Check(name, "ok", "no TOAST-able column")]
    cols = ", ".join(t.toastable)
    if t.replica_identity == "f":
        return [Check(name, "ok", f"REPLICA IDENTITY FULL: updates carry every value of {cols}")]
    from hudi_cdc.core.profiles import HUDI_CDC, engine_for

    try:
        engine = engine_for(pipeline.hudi.version, "local", pipeline.hudi.engine)
    except Exception:  # noqa: BLE001 - a version that cannot run locally: EMR's HoodieStreamer
        engine = "hoodiestreamer"
    per_row = (t.heap_bytes + t.toast_bytes) // t.rows if t.rows else 0
    cost = (f"FULL writes the whole old row to the WAL with every UPDATE and DELETE (about {_bytes(per_row)} per row "
            f"here: {_bytes(t.heap_bytes)} heap + {_bytes(t.toast_bytes)} TOAST over ~{t.rows} rows) and decoding "
            "reads the TOASTed values back")
    what = (f"REPLICA IDENTITY {ident} with TOAST-able column(s) {cols}: an UPDATE that leaves a large value "
            "unchanged carries Debezium's placeholder __debezium_unavailable_value")
    if engine == HUDI_CDC:
        return [Check(name, "ok", f"{what}; hudi-cdc's streamer fills it from the key's earlier event or the stored "
                      "row (a key the lake never held gets null, counted in the round's log). HoodieStreamer jobs "
                      f"(EMR, hudi.engine hoodiestreamer) do not: they need {full} {cost}")]
    return [Check(name, "warn", f"{what}, and hudi.engine hoodiestreamer writes it into the lake as it is; {cost}",
                  full)]


def _shape_checks(pipeline: Pipeline, t: TableFacts, ident: str, full: str) -> list[Check]:
    """A mask, filter or derived column reading a TOAST-able column is exact only under REPLICA IDENTITY
    FULL: an UPDATE leaving the large value alone carries Debezium's placeholder, which Debezium hashes
    (capture's mask) and a filter or expression reads as the value (docs/shaping.md)."""
    from hudi_cdc.config.shape import parse_expression

    shape = pipeline.shape(t.table.name)
    if shape.empty or t.replica_identity == "f":
        return []
    read = set(shape.mask)
    for expr in [*shape.derive.values(), *([shape.filter] if shape.filter else [])]:
        read.update(parse_expression(expr, "filter/derive"))
    toasted = sorted(c.split(" ", 1)[0] for c in t.toastable if c.split(" ", 1)[0] in read)
    if not toasted:
        return [Check(f"{t.table.name}: shaping", "ok", "mask, filter and derive read no TOAST-able column")]
    return [Check(f"{t.table.name}: shaping", "warn", f"mask/filter/derive read TOAST-able column(s) "
                  f"{', '.join(toasted)} under REPLICA IDENTITY {ident}: an UPDATE leaving such a value unchanged "
                  "lands Debezium's placeholder, which capture's mask hashes and a filter or derived column reads "
                  "as the value", full)]


def _slot_checks(pipeline: Pipeline, f: Facts) -> list[Check]:
    out = []
    mine = next((s for s in f.slots if s.name == pipeline.slot_name), None)
    if mine is None:
        out.append(Check("slot", "ok", f"{pipeline.slot_name} not created yet (capture creates it)"))
    elif mine.database != f.database:
        out.append(Check("slot", "fail", f"{mine.name} belongs to database {mine.database}, not {f.database}",
                         "name another one in source.database.slot"))
    elif mine.plugin != "pgoutput":
        out.append(Check("slot", "fail", f"{mine.name} uses {mine.plugin}, capture needs pgoutput",
                         f"SELECT pg_drop_replication_slot('{mine.name}'); (loses its position)"))
    else:
        state = f"active (pid {mine.active_pid})" if mine.active else "inactive"
        out.append(Check("slot", "ok", f"{mine.name}: pgoutput, {state}, retains {_bytes(mine.retained_bytes)} of WAL, "
                         f"{_bytes(mine.lag_bytes)} not yet confirmed"))
    for s in f.slots:
        if s.name != pipeline.slot_name and not s.active:
            out.append(Check(f"slot {s.name}", "warn", f"inactive, retains {_bytes(s.retained_bytes)} of WAL "
                             "(the disk fills while nobody reads it)",
                             f"SELECT pg_drop_replication_slot('{s.name}'); (if nothing will read it again)"))
    return out


def _bytes(n: int | None) -> str:
    from hudi_cdc.common.text import human_bytes

    return "no" if n is None else human_bytes(n)


def _member_checks(f: Facts) -> list[Check]:
    """Tables the existing publication publishes besides the pipeline's, without a replica identity."""
    ours = {(t.table.schema, t.table.table) for t in f.tables}
    return [Check(f"publication member {u.qualified}", "fail", f"{u.why()}: published in {f.publication}, "
                  "PostgreSQL rejects its UPDATE and DELETE", u.fix())
            for u in f.unusable if (u.schema, u.table) not in ours]


def _heartbeat_checks(pipeline: Pipeline, f: Facts) -> list[Check]:
    db = pipeline.source.database
    create, query = action_table_sql()
    if db is None or not db.heartbeat_interval_ms:
        return [Check("heartbeat", "warn", "off: while the captured tables are idle the slot retains the server's "
                      "WAL without bound", "source.database.heartbeat_interval_ms: 10000")]
    every = f"every {db.heartbeat_interval_ms} ms"
    if db.heartbeat_action_query is None:
        return [Check("heartbeat", "ok", f"{every}, action: capture's logical decoding message")]
    if not db.heartbeat_action_query.strip():
        return [Check("heartbeat", "warn", f"{every}, no action query: while the captured tables are idle, "
                      "nothing reaches the slot and it retains the server's WAL",
                      f"drop heartbeat_action_query (capture's own message), or {create} and "
                      f"source.database.heartbeat_action_query: \"{query}\"")]
    if f.heartbeat_query_error:
        return [Check("heartbeat", "fail", f"heartbeat_action_query does not run: {f.heartbeat_query_error}",
                      f"{create} (and heartbeat_action_query: \"{query}\"), or fix the query")]
    return [Check("heartbeat", "ok", f"{every}, action query: {db.heartbeat_action_query}")]


def evaluate(pipeline: Pipeline, f: Facts) -> list[Check]:
    checks = _server_checks(pipeline, f) + _publication_checks(f, f.tables) + _member_checks(f)
    for t in f.tables:
        checks += _table_checks(pipeline, f, t)
    return checks + _slot_checks(pipeline, f) + _heartbeat_checks(pipeline, f)


def source_check(pipeline: Pipeline, tables: list[SourceTable]) -> list[Check]:
    """Every check for these tables of the pipeline against the live database (sources.source_check)."""
    with connect(pipeline) as conn:
        return evaluate(pipeline, gather(conn, pipeline, tables))
