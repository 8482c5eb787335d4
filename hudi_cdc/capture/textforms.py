"""PostgreSQL columns of types Debezium has no encoding for, landed as their text.

Debezium 3 leaves a column of a type it does not know out of the change events (composite types,
``box``, ``circle``, ``line``, ``lseg``, ``path``, ``polygon``, ``tsquery``, ...; ``interval[]`` and ``money[]``
stay out whatever the setting below: capture reads them by key, pg_arrays.py).
With ``include.unknown.datatypes=true`` (set by capture) it sends such a column as bytes: the UTF-8 of
PostgreSQL's text form (pgoutput's text, or pgjdbc's ``PGobject`` value in a snapshot); an array of them
as an array of such bytes. The lake type of bytes is ``binary``, and ``bytea`` is bytes too, so capture
tells them apart by the column's type in the database and lands such a column as a string (an array of
strings), PostgreSQL's text: ``(1,"a é")``, ``(1,1),(0,0)``, ``'a' & 'b'``. ``bytea`` stays bytes.
"""

from __future__ import annotations

from typing import Any

from hudi_cdc.capture.rows import rebuilt
from hudi_cdc.capture.specials import LazyConnection
from hudi_cdc.sources.tables import lake_name

BINARY_TYPES = ("bytea", "bytea[]")


class TextForms(LazyConnection):
    """Rewrites the bytes of a column of a type Debezium does not know into PostgreSQL's text."""

    def __init__(self, connect, tables: dict[str, tuple[str, str]]):
        from jpype import JClass

        super().__init__(connect)  # () -> a psycopg connection (autocommit)
        self._tables = tables  # topic -> (schema, table)
        self._System = JClass("java.lang.System")
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._ArrayList = JClass("java.util.ArrayList")
        self._UTF_8 = JClass("java.nio.charset.StandardCharsets").UTF_8
        self._String = JClass("java.lang.String")
        # identity of a row schema -> (the fields to rewrite, the rewritten schema) or None
        self._plans: dict[tuple[str, int], tuple[list[str], Any] | None] = {}

    def apply(self, out, topic: str):
        """The unwrapped record (of `topic`, the change event's), its unknown-type columns as strings."""
        value = out.value()
        if value is None:
            return out
        schema = value.schema()
        ident = (topic, int(self._System.identityHashCode(schema)))
        if ident not in self._plans:
            self._plans[ident] = self._plan(topic, schema)
        plan = self._plans[ident]
        if plan is None:
            return out
        names, widened = plan
        return rebuilt(out, widened, lambda name, v: self._text(v) if name in names else v)

    def _plan(self, topic: str, schema):
        candidates = [str(f.name()) for f in schema.fields() if _bytes_like(f.schema())]
        if not candidates or topic not in self._tables:
            return None
        types = self._column_types(*self._tables[topic])
        names = [n for n in candidates if n in types and types[n] not in BINARY_TYPES]
        if not names:
            return None
        b = self._SchemaBuilder.struct()
        if schema.name() is not None:
            b = b.name(schema.name())
        string = self._SchemaBuilder.string().optional().build()
        for f in schema.fields():
            if str(f.name()) not in names:
                b = b.field(f.name(), f.schema())
            elif str(f.schema().type().getName()) == "array":
                b = b.field(f.name(), self._SchemaBuilder.array(string).optional().build())
            else:
                b = b.field(f.name(), string)
        return names, b.build()

    def _column_types(self, schema: str, table: str) -> dict[str, str]:
        """lake name -> the column's type (a domain's base type), as regtype prints it."""
        rows = self._db().execute(
            "SELECT a.attname, coalesce(nullif(t.typbasetype, 0), a.atttypid)::regtype::text FROM pg_attribute a "
            "JOIN pg_type t ON t.oid = a.atttypid WHERE a.attrelid = (quote_ident(%s) || '.' || quote_ident(%s))"
            "::regclass AND a.attnum > 0 AND NOT a.attisdropped", (schema, table)).fetchall()
        return {lake_name(n): t for n, t in rows}

    def _text(self, v):
        if v is None:
            return None
        cls = str(v.getClass().getName())
        if cls == "[B":
            return self._String(v, self._UTF_8)
        if cls.startswith("java.nio.") and "ByteBuffer" in cls:
            return self._UTF_8.decode(v.duplicate()).toString()
        if cls.startswith("java.util."):  # an array's elements
            out = self._ArrayList()
            for e in v:
                out.add(self._text(e))
            return out
        return v.toString()


def _bytes_like(s) -> bool:
    """bytes with no logical name, or an array of them (bytea, or a type Debezium does not know)."""
    kind = str(s.type().getName())
    if kind == "array":
        s = s.valueSchema()
        kind = str(s.type().getName())
    return kind == "bytes" and s.name() is None
