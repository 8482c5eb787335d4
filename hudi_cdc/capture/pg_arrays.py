"""PostgreSQL ``interval[]``, ``money[]``, ``name[]``, ``xml[]``, ``varbit[]`` and ``point[]`` columns, which
Debezium leaves out of the change events, ``bit[]``, which it sends as a boolean that is always NULL, and
``tsvector[]``, arrays of enums, of composite types, ``tsquery[]`` and the geometric arrays, which it sends as
NULL when an element is NULL (their element schema is not optional): read from the database by key as capture
lands the rows, and added to them (the fields Debezium does send replaced). A table with such a column pays one
query per batch.

Debezium 3's PostgresValueConverter has no schema for these two array types (``PgOid.INTERVAL_ARRAY``,
``PgOid.MONEY_ARRAY``: "still need to be implemented", schema null, before ``include.unknown.datatypes`` is
looked at), so its TableSchemaBuilder leaves such a column out of every event; no connector setting brings
it. Capture picks the columns by their type in the catalog (``_interval``, ``_money``, a domain over them;
never "a column the event lacks": a just-added column of another type would land with a wrong type), kept by
the table's shaping (not excluded, not masked), and absent from the event's schema. Every row of such a table
gets them (the Connect schema widened once per event schema): a row event (snapshot read, insert, update)
gets the row's values, read in one query per table and batch by the rows' keys (specials.py's key texts,
chunks of specials.CHUNK); a delete, a truncate, or a row gone since the event gets NULL (so a table's rows
keep one schema). The catalog is read when a table's event schema is a new one: Debezium builds it again for
every pgoutput relation message (PostgresSchema.applySchemaChangesForTable), so after a DDL too; a query that
finds a column or the table gone reads it again once.

The lake types follow the scalar columns' (docs/types.md): ``interval[]`` as ``array<string>`` of Debezium's
ISO-8601 form of an interval (``P1Y2M3DT4H5M6.78S``, io.debezium.time.Interval, what an ``interval`` column
lands as under interval.handling.mode=string); ``money[]`` as ``array<decimal(38,2)>`` (Connect Decimal of
scale 2, money.fraction.digits' default, as a ``money`` column); the others as ``array<string>`` of PostgreSQL's
text of each element (measured: Debezium 3 omits these four, and sends ``bit[]`` as NULL). NULL arrays and NULL
elements are kept.

The value read is the row's as of the capture (a few seconds after the change), as for specials.py: when the
row changed again since, an earlier event gets the later value and the later change's own event lands after
it, so the newest row in the lake is exact. A row whose key has no database text (a ``timetz`` key, a keyless
table) cannot be read: its columns land as NULL, and capture logs one WARNING naming the table.
"""

from __future__ import annotations

import logging
import re
from decimal import Decimal
from typing import Any

from hudi_cdc.capture.specials import CHUNK, LazyConnection, _key_texts, key_types
from hudi_cdc.sources.tables import lake_name

_LOG = logging.getLogger("hudi_cdc")
# the base type's typname -> kind: interval and money as their scalar columns land; the others as PostgreSQL's
# text of each element ("text"); "retext": a field Debezium does send, wrongly, replaced by the texts (bit(n)[] as a
# boolean that is always NULL; tsvector[] with a NULL element as a NULL array: its element schema is not optional)
ARRAY_TYPES = {"_interval": "interval", "_money": "money", "_name": "text", "_xml": "text", "_varbit": "text",
               "_point": "text", "_bit": "retext", "_tsvector": "retext", "_retext": "retext"}
TEXT_KINDS = ("text", "retext")
MONEY_SCALE = 2  # Debezium's money.fraction.digits default: a money column's Decimal scale
_PG_ISO = re.compile(r"^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?"
                     r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$")
# arrays of these element types Debezium sends with elements that are not optional: an array holding a NULL
# element landed as NULL (measured: enums, composite types, tsquery, the geometric types): replaced ("retext")
RETEXT_ELEMENTS = ("tsquery", "box", "circle", "line", "lseg", "path", "polygon")
# (a domain over a string type as the element, `email[]` of `CREATE DOMAIN email AS text CHECK ...`, too: its
# array lands as array<string> either way; measured: {NULL,q@r.s} landed as NULL)
_TABLE_COLUMNS = (
    "SELECT a.attname, format_type(a.atttypid, a.atttypmod), CASE WHEN et.typtype IN ('e', 'c') OR et.typname = "
    "ANY(%s) OR (et.typtype = 'd' AND ebt.typcategory = 'S') THEN '_retext' ELSE bt.typname END FROM pg_attribute a "
    "JOIN pg_type t ON t.oid = a.atttypid JOIN pg_type bt ON bt.oid = coalesce(nullif(t.typbasetype, 0), t.oid) "
    "LEFT JOIN pg_type et ON et.oid = bt.typelem AND bt.typcategory = 'A' "
    "LEFT JOIN pg_type ebt ON ebt.oid = et.typbasetype "
    "WHERE a.attrelid = (quote_ident(%s) || '.' || quote_ident(%s))::regclass AND a.attnum > 0 AND NOT a.attisdropped")


def debezium_interval(text: str) -> str:
    """PostgreSQL's iso_8601 text of an interval (``P1Y2M-3DT-4H-5M-6.78S``; zero fields left out) in
    Debezium's form (io.debezium.time.Interval.toIsoString: every field, the seconds' trailing zeros dropped)."""
    m = _PG_ISO.match(text)
    if m is None:
        raise ValueError(f"not PostgreSQL's ISO-8601 interval: {text!r}")
    y, mo, d, h, mi, s = (g or "0" for g in m.groups())
    seconds = format(Decimal(s), "f")
    if "." in seconds:
        seconds = seconds.rstrip("0").rstrip(".")
    if seconds in ("-0", ""):
        seconds = "0"
    return f"P{int(y)}Y{int(mo)}M{int(d)}DT{int(h)}H{int(mi)}M{seconds}S"


def money_text(value: Decimal) -> str:
    """A money element (read as numeric) as the plain text of a Decimal of scale MONEY_SCALE; ValueError when
    it has more fractional digits (an lc_monetary with more than two: never rounded)."""
    q = value.quantize(Decimal(1).scaleb(-MONEY_SCALE))
    if q != value:
        raise ValueError(f"money {value} has more than {MONEY_SCALE} fractional digits")
    return format(q, "f")


def elements(kind: str, value: list | None) -> list[str | None] | None:
    """A column's value as the database read it (a list of interval texts or money Decimals, NULLs kept) in
    the texts its Connect elements are made from; ValueError for a multi-dimensional array."""
    if value is None:
        return None
    if any(isinstance(e, list) for e in value):
        raise ValueError("a multi-dimensional array (the lake type is one-dimensional)")
    if kind in TEXT_KINDS:
        return [None if e is None else str(e) for e in value]
    convert = debezium_interval if kind == "interval" else money_text
    return [None if e is None else convert(e) for e in value]


class PgArrays(LazyConnection):
    """Adds a table's interval[] and money[] columns to its rows, their values read from PostgreSQL by key."""

    def __init__(self, connect, tables: dict[str, tuple[str, str]], shapes: dict[str, Any]):
        from jpype import JClass

        super().__init__(connect)  # () -> a psycopg connection (autocommit)
        self._tables = tables  # topic -> (schema, table)
        self._shapes = shapes  # topic -> the table's Shape (common/shaping.py): excluded, masked columns
        self._System = JClass("java.lang.System")
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")
        self._ArrayList = JClass("java.util.ArrayList")
        self._BigDecimal = JClass("java.math.BigDecimal")
        interval = JClass("io.debezium.time.Interval").builder().optional().build()
        money = JClass("org.apache.kafka.connect.data.Decimal").builder(MONEY_SCALE).optional().build()
        text = self._SchemaBuilder.string().optional().build()
        self._element = {"interval": interval, "money": money, "text": text, "retext": text}
        # topic -> {lake name: (name, type, kind)}: the table's columns of these types kept by its shaping, and
        # of every column the type (the key's cast); read when the topic's event schema is new (Debezium
        # refreshes it after a DDL) or a query found the table changed
        self._catalog: dict[str, tuple[dict[str, tuple[str, str, str]], dict[str, tuple[str, str]]]] = {}
        self._envelopes: dict[str, int] = {}  # topic -> identity of the envelope schema its catalog was read for
        self._reads = 0  # catalog reads so far: a plan is for one of them
        self._plans: dict[tuple, tuple[list[tuple[str, str]], Any] | None] = {}  # (topic, schema, reads) -> plan
        self._unkeyed: set[str] = set()
        self.found: dict[tuple[str, tuple], dict[str, list | None]] = {}  # (topic, key texts) -> values

    def _db(self) -> Any:
        if self._conn is None:
            super()._db().execute("SET IntervalStyle = 'iso_8601'")  # the text debezium_interval reads
        return super()._db()

    def _read_catalog(self, topic: str) -> None:
        import psycopg

        try:
            rows = self._db().execute(_TABLE_COLUMNS, (list(RETEXT_ELEMENTS), *self._tables[topic])).fetchall()
        except psycopg.errors.UndefinedTable:  # dropped or renamed since the event: no row of it to read
            rows = []
        shape = self._shapes.get(topic)
        self._catalog[topic] = (
            {lake_name(n): (n, t, ARRAY_TYPES[b]) for n, t, b in rows if b in ARRAY_TYPES
             and (shape is None or (shape.keeps(n) and n not in shape.mask))},
            {lake_name(n): (n, t) for n, t, _ in rows})
        self._reads += 1
        self._plans.clear()

    def _arrays(self, topic: str) -> dict[str, tuple[str, str, str]]:
        """The topic's table's interval[] / money[] columns (none for a topic of no pipeline table)."""
        if topic not in self._catalog:
            if topic not in self._tables:
                return {}
            self._read_catalog(topic)
        return self._catalog[topic][0]

    def look_up(self, records) -> None:
        """Before a batch lands: the values of these columns for every row event of it, one query per table.
        `records`: the batch's (event, source record, topic, value), as consumer.py reads them once."""
        self.found = {}
        wanted: dict[tuple[str, tuple[str, ...]], dict] = {}  # (topic, key fields): a key changed mid-batch too
        for _, record, topic, value in records:
            if value is None or topic not in self._tables:
                continue
            envelope = int(self._System.identityHashCode(value.schema()))
            if self._envelopes.get(topic) != envelope:  # a new event schema: the catalog read (again)
                self._envelopes[topic] = envelope
                self._read_catalog(topic)
            arrays = self._catalog[topic][0]
            if not arrays or value.schema().field("after") is None or value.get("after") is None:
                continue
            after = value.getStruct("after").schema()
            cols = [(c, kind) for c, (_, _, kind) in arrays.items() if after.field(c) is None or kind == "retext"]
            key = _key_texts(record.key()) if cols and record.key() is not None else None
            if key is None:
                if cols:
                    self._warn_unkeyed(topic, record, cols)
                continue
            w = wanted.setdefault((topic, tuple(key[0])), {"fields": key[0], "keys": set(), "cols": set()})
            w["keys"].add(key[1])
            w["cols"].update(cols)
        for (topic, _), w in wanted.items():
            keys = sorted(w["keys"])
            for i in range(0, len(keys), CHUNK):
                for k, values in self._query(topic, w["fields"], keys[i:i + CHUNK], sorted(w["cols"])):
                    self.found[(topic, k)] = values

    def _warn_unkeyed(self, topic: str, record, cols: list[tuple[str, str]]) -> None:
        if topic in self._unkeyed:
            return
        self._unkeyed.add(topic)
        why = f"a key ({key_types(record.key())}) with no database text" if record.key() is not None else "no key"
        _LOG.warning("%s.%s: %s: its %s columns (%s), which Debezium leaves out of the events, cannot be read from "
                     "the database and land as NULL (docs/types.md)", *self._tables[topic], why,
                     "/".join(sorted({k + "[]" for _, k in cols})), ", ".join(c for c, _ in cols))

    def _query(self, topic: str, key_fields: list[str], keys: list[tuple], cols: list[tuple[str, str]],
               retried: bool = False) -> list[tuple[tuple, dict[str, list | None]]]:
        """(key texts, {lake name: elements}) of the rows among `keys` the table still has."""
        import psycopg
        from psycopg import sql

        known = self._catalog[topic][1]
        if not all(k in known for k in key_fields + [c for c, _ in cols]):
            if retried:
                return []  # a column dropped since: the rows land without its value (the next schema drops it)
            self._read_catalog(topic)
            return self._query(topic, key_fields, keys, cols, retried=True)
        reads = [sql.SQL("t.{}::numeric[]" if kind == "money" else "t.{}::text[]").format(
            sql.Identifier(known[c][0])) for c, kind in cols]
        on = sql.SQL(" AND ").join(sql.SQL("t.{} = v.{}::" + known[k][1]).format(
            sql.Identifier(known[k][0]), sql.Identifier(f"k{i}")) for i, k in enumerate(key_fields))
        rows = sql.SQL(", ").join(sql.SQL("({})").format(sql.SQL(", ").join(
            [sql.Literal(i)] + [sql.Literal(v) for v in key])) for i, key in enumerate(keys))
        q = sql.SQL("SELECT v.i, {reads} FROM {table} t JOIN (VALUES {rows}) AS v(i, {kn}) ON {on}").format(
            reads=sql.SQL(", ").join(reads), table=sql.Identifier(*self._tables[topic]), rows=rows,
            kn=sql.SQL(", ").join(sql.Identifier(f"k{i}") for i in range(len(key_fields))), on=on)
        try:
            got = self._db().execute(q).fetchall()
        except (psycopg.errors.UndefinedColumn, psycopg.errors.UndefinedTable):
            if retried:
                raise
            self._read_catalog(topic)  # a DDL since the catalog was read
            return self._query(topic, key_fields, keys, cols, retried=True)
        out = []
        for i, *values in got:
            row = {}
            for (c, kind), v in zip(cols, values, strict=True):
                try:
                    row[c] = elements(kind, v)
                except ValueError as exc:  # the lake type cannot hold it: NULL there, the value said, capture goes on
                    row[c] = None
                    _LOG.warning("%s.%s: row %s: %s: lands as NULL; the database's value: %s (docs/types.md)",
                                 ".".join(self._tables[topic]), c, ", ".join(keys[i]), exc, v)
            out.append((keys[i], row))
        return out

    def apply(self, out, topic: str):
        """The unwrapped record (of `topic`, the change event's) with its table's interval[] / money[] columns
        (NULL when not read)."""
        if not self._arrays(topic):
            return out
        value = out.value()
        if value is None:
            return out
        plan = self._plan(topic, value.schema())
        if plan is None:
            return out
        cols, widened = plan
        key = _key_texts(out.key()) if out.key() is not None and self.found else None
        values = self.found.get((topic, key[1]), {}) if key is not None else {}
        row = self._Struct(widened)
        replaced = {c for c, kind in cols if kind == "retext"}
        for f in value.schema().fields():
            if str(f.name()) not in replaced:
                row.put(f.name(), value.get(f))
        for col, kind in cols:
            row.put(col, self._java(kind, values.get(col)))
        return out.newRecord(out.topic(), out.kafkaPartition(), out.keySchema(), out.key(), widened, row,
                             out.timestamp())

    def _plan(self, topic: str, schema):
        """(columns to add, the widened schema) of an unwrapped row schema; None: nothing to add."""
        memo = (topic, int(self._System.identityHashCode(schema)), self._reads)
        if memo in self._plans:
            return self._plans[memo]
        cols = [(c, kind) for c, (_, _, kind) in self._arrays(topic).items()
                if schema.field(c) is None or kind == "retext"]
        plan = None
        if cols and schema.field("__op") is not None:  # a row (unwrapped), not an envelope
            b = self._SchemaBuilder.struct()
            if schema.name() is not None:
                b = b.name(schema.name())
            fields = list(schema.fields())
            # before Debezium's fields (__op, __lsn, ...): the table's columns first, as in the database
            at = next((i for i, f in enumerate(fields) if str(f.name()).startswith("__")), len(fields))
            arrays = {col: self._SchemaBuilder.array(self._element[kind]).optional().build() for col, kind in cols}
            for f in fields[:at]:  # a replaced field (bit(n)[], tsvector[]) keeps its place
                b = b.field(f.name(), arrays.pop(str(f.name()), f.schema()))
            for col, array in arrays.items():
                b = b.field(col, array)
            for f in fields[at:]:
                b = b.field(f.name(), f.schema())
            plan = (cols, b.build())
        self._plans[memo] = plan
        return plan

    def _java(self, kind: str, texts: list[str | None] | None):
        if texts is None:
            return None
        out = self._ArrayList()
        for t in texts:
            out.add(None if t is None else (self._BigDecimal(t) if kind == "money" else t))
        return out
