"""PostgreSQL ``numeric`` NaN, Infinity and -Infinity, which Debezium's change events cannot carry.

Under ``decimal.handling.mode=precise`` Debezium has no encoding for them and sends NULL (the
VariableScaleDecimal of an unconstrained ``numeric`` is NULL; a ``numeric(p,s)`` NaN fails its converter,
which Debezium logs and replaces by NULL), so the row's event cannot tell such a value from a NULL.
Capture asks the database: for each row event of a batch with a NULL numeric column, one query per
table and batch reads the row's current value of those columns by its key, and a value that is NaN or
an infinity lands beside the row as ``__source_values`` (a JSON object ``{column: PostgreSQL's text}``,
lake_types.SOURCE_VALUES_COLUMN). The lake column stays NULL and the row's ``__rejects`` gets the exact
value (lake_types.schema_types); the lake never gets the ``__source_values`` column.

The value read is the row's as of the capture (a few seconds after the change): when the row changed
again since, an earlier event can get a later value, and the later change's own event lands after it,
so the newest row in the lake is exact. Keys of types whose Connect value is not PostgreSQL's text
(dates, timestamps, numerics, bytea) are not looked up (docs/types.md).
"""

from __future__ import annotations

import json
from typing import Any

from hudi_cdc.common.lake_types import SOURCE_VALUES_COLUMN
from hudi_cdc.sources.tables import lake_name

NUMERIC_NAMES = ("io.debezium.data.VariableScaleDecimal", "org.apache.kafka.connect.data.Decimal")
PLAIN_KEY_TYPES = ("INT8", "INT16", "INT32", "INT64", "STRING", "BOOLEAN")
SPECIAL_TEXTS = ("NaN", "Infinity", "-Infinity")
CHUNK = 1000


class NumericSpecials:
    """Looks up the NULL numerics of a batch's row events; adds ``__source_values`` to the special ones."""

    def __init__(self, connect):
        from jpype import JClass

        self._connect = connect  # () -> a psycopg connection (autocommit)
        self._conn = None
        self._System = JClass("java.lang.System")
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")
        self._numeric_fields: dict[int, list] = {}  # identity of a row schema -> its numeric fields
        self._columns: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}  # lake name -> (name, type)
        self._widened: list[tuple[Any, Any]] = []
        self.found: dict[tuple[str, tuple], dict[str, str]] = {}  # (topic, key texts) -> {column: text}

    def look_up(self, records) -> None:
        """Before a batch lands: the special values of every row event in it with a NULL numeric."""
        self.found = {}
        wanted: dict[tuple[str, str, str], dict] = {}
        for event in records:
            record = event.sourceRecord()
            got = self._candidate(record)
            if got is None:
                continue
            (schema, table), cols, key = got
            w = wanted.setdefault((str(record.topic()), schema, table), {"fields": key[0], "keys": set(),
                                                                         "cols": set()})
            w["keys"].add(key[1])
            w["cols"].update(cols)
        for (topic, schema, table), w in wanted.items():
            keys = sorted(w["keys"])
            for i in range(0, len(keys), CHUNK):
                for k, values in self._query(schema, table, w["fields"], keys[i:i + CHUNK], sorted(w["cols"])):
                    self.found[(topic, k)] = values

    def apply(self, out):
        """The unwrapped record, with ``__source_values`` when its row holds a special numeric."""
        if not self.found or out.key() is None:
            return out
        key = _key_texts(out.key())
        values = self.found.get((str(out.topic()), key[1])) if key else None
        value = out.value()
        if not values or value is None:
            return out
        schema = self._widen(value.schema())
        row = self._Struct(schema)
        for f in value.schema().fields():
            row.put(f.name(), value.get(f))
        row.put(SOURCE_VALUES_COLUMN, json.dumps(values, sort_keys=True))
        return out.newRecord(out.topic(), out.kafkaPartition(), out.keySchema(), out.key(), schema, row,
                             out.timestamp())

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _candidate(self, record):
        """((schema, table), NULL numeric columns, (key fields, key texts)) of a row event, else None."""
        value = record.value()
        if value is None or record.key() is None or value.schema().field("after") is None:
            return None
        after = value.getStruct("after")
        if after is None:
            return None
        fields = self._numerics(after.schema())
        cols = [str(f.name()) for f in fields if after.get(f) is None]
        if not cols:
            return None
        key = _key_texts(record.key())
        source = value.getStruct("source")
        if key is None or source is None:
            return None
        return (str(source.getString("schema")), str(source.getString("table"))), cols, key

    def _numerics(self, schema) -> list:
        ident = int(self._System.identityHashCode(schema))
        fields = self._numeric_fields.get(ident)
        if fields is None:
            fields = [f for f in schema.fields() if str(f.schema().name()) in NUMERIC_NAMES]
            self._numeric_fields[ident] = fields
        return fields

    def _widen(self, schema):
        for s, widened in self._widened:
            if s.equals(schema):
                return widened
        b = self._SchemaBuilder.struct()
        if schema.name() is not None:
            b = b.name(schema.name())
        for f in schema.fields():
            b = b.field(f.name(), f.schema())
        widened = b.field(SOURCE_VALUES_COLUMN, self._SchemaBuilder.string().optional().build()).build()
        self._widened.append((schema, widened))
        return widened

    def _table_columns(self, schema: str, table: str, names: list[str]) -> dict[str, tuple[str, str]]:
        cols = self._columns.get((schema, table), {})
        if not all(n in cols for n in names):  # new to this run, or a column added since
            rows = self._db().execute(
                "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = "
                "(quote_ident(%s) || '.' || quote_ident(%s))::regclass AND attnum > 0 AND NOT attisdropped",
                (schema, table)).fetchall()
            cols = {lake_name(n): (n, t) for n, t in rows}
            self._columns[(schema, table)] = cols
        return cols

    def _query(self, schema: str, table: str, key_fields: list[str], keys: list[tuple], cols: list[str]):
        from psycopg import sql

        known = self._table_columns(schema, table, key_fields + cols)
        if not all(n in known for n in key_fields):
            return []
        cols = [c for c in cols if c in known]
        text = [sql.SQL("t.{}::text").format(sql.Identifier(known[c][0])) for c in cols]
        specials = sql.SQL(", ").join(sql.Literal(s) for s in SPECIAL_TEXTS)
        on = sql.SQL(" AND ").join(sql.SQL("t.{} = v.{}::" + known[k][1]).format(
            sql.Identifier(known[k][0]), sql.Identifier(f"k{i}")) for i, k in enumerate(key_fields))
        rows = sql.SQL(", ").join(sql.SQL("({})").format(sql.SQL(", ").join(
            [sql.Literal(i)] + [sql.Literal(v) for v in key])) for i, key in enumerate(keys))
        q = sql.SQL("SELECT v.i, {cols} FROM {table} t JOIN (VALUES {rows}) AS v(i, {kn}) ON {on} "
                    "WHERE {any}").format(
            cols=sql.SQL(", ").join(text), table=sql.Identifier(schema, table), rows=rows,
            kn=sql.SQL(", ").join(sql.Identifier(f"k{i}") for i in range(len(key_fields))), on=on,
            any=sql.SQL(" OR ").join(sql.SQL("{} IN ({})").format(t, specials) for t in text))
        out = []
        for i, *values in self._db().execute(q).fetchall():
            got = {c: v for c, v in zip(cols, values, strict=True) if v in SPECIAL_TEXTS}
            if got:
                out.append((keys[i], got))
        return out

    def _db(self):
        if self._conn is None:
            self._conn = self._connect()
        return self._conn


def _key_texts(key) -> tuple[list[str], tuple] | None:
    """(field names, the values' text) of a record key whose every field PostgreSQL reads from its text."""
    names, texts = [], []
    for f in key.schema().fields():
        s = f.schema()
        if str(s.type().getName()).upper() not in PLAIN_KEY_TYPES or (
                s.name() is not None and str(s.name()) != "io.debezium.data.Uuid"):
            return None
        v = key.get(f)
        if v is None:
            return None
        names.append(str(f.name()))
        texts.append(str(v))
    return names, tuple(texts)
