"""The old key of a primary-key change, landed where the new key's row needs it.

An UPDATE that changes a row's primary key reaches Debezium as a delete of the old key and a create
of the new key; Debezium puts the old key (a Struct of the key schema) into the create's
``__debezium.oldkey`` header (RelationalChangeRecordEmitter.PK_UPDATE_OLDKEY_FIELD). Under PostgreSQL's
REPLICA IDENTITY DEFAULT a TOASTed value the UPDATE left alone is not in the WAL, so the create carries
Debezium's unavailable-value placeholder, and the new key has no earlier value in the lake to fill it
from: the value is under the old key. Capture lands the old key on such a create, one column per key
field (``__oldkey_<field>``, the key field's own type, optional), and the streamer fills the placeholder
from the old key's row (jobs/stream/toast.py); the lake never gets these columns.

Only a create that carries the placeholder gets the columns (the landed schema changes only there: a
new file, as for any schema change); other key changes land as before, so engines that cannot fill
placeholders see nothing new.
"""

from __future__ import annotations

from typing import Any

from hudi_cdc.common.lake_types import OLDKEY_PREFIX
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER, text_forms

OLDKEY_HEADER = "__debezium.oldkey"


class OldKeys:
    """Adds ``__oldkey_<field>`` to an unwrapped create that has the header and carries the placeholder."""

    def __init__(self, placeholder: str = DEFAULT_PLACEHOLDER):
        from jpype import JClass

        self.placeholder = placeholder
        self._raw = placeholder.encode()
        self._texts = set(text_forms(placeholder))  # itself, and a bytea's as base64 / hex text
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")
        self._schemas: list[tuple[Any, Any, Any]] = []  # (value schema, key schema, widened schema)

    def apply(self, record, out):
        """`out` (the unwrapped record), with the old key's columns when they are needed."""
        headers = record.headers()
        if headers is None or headers.isEmpty():
            return out
        header = headers.lastWithName(OLDKEY_HEADER)
        if header is None or header.value() is None:
            return out
        value = out.value()
        if value is None or not self._carries_placeholder(value):
            return out
        old = header.value()
        schema = self._widened(value.schema(), old.schema())
        if schema is None:
            return out
        row = self._Struct(schema)
        for f in value.schema().fields():
            row.put(f.name(), value.get(f))
        for f in old.schema().fields():
            row.put(OLDKEY_PREFIX + str(f.name()), old.get(f))
        return out.newRecord(out.topic(), out.kafkaPartition(), out.keySchema(), out.key(), schema, row,
                             out.timestamp())

    def _widened(self, schema, key_schema):
        for vs, ks, widened in self._schemas:
            if vs.equals(schema) and ks.equals(key_schema):
                return widened
        b = self._SchemaBuilder.struct()
        if schema.name() is not None:
            b = b.name(schema.name())
        if schema.version() is not None:
            b = b.version(schema.version())
        for f in schema.fields():
            b = b.field(f.name(), f.schema())
        for f in key_schema.fields():
            fs = f.schema()
            if str(fs.type().getName()) in ("struct", "array", "map"):
                return None  # a key of a type no column copies plainly: left as it was (never seen in practice)
            kb = self._SchemaBuilder.type(fs.type())
            if fs.name() is not None:
                kb = kb.name(fs.name())
            if fs.version() is not None:
                kb = kb.version(fs.version())
            if fs.parameters() is not None:
                kb = kb.parameters(fs.parameters())
            b = b.field(OLDKEY_PREFIX + str(f.name()), kb.optional().build())
        widened = b.build()
        self._schemas.append((schema, key_schema, widened))
        return widened

    def _carries_placeholder(self, value) -> bool:
        for f in value.schema().fields():
            if self._is_placeholder(value.get(f)):
                return True
        return False

    def _is_placeholder(self, v) -> bool:
        if v is None:
            return False
        cls = str(v.getClass().getName())
        if cls == "java.lang.String":
            return str(v) in self._texts
        if cls == "[B":
            return bytes(v) == self._raw
        if cls.startswith("java.nio.") and "ByteBuffer" in cls:
            dup = v.duplicate()
            return dup.remaining() == len(self._raw) and bytes(
                dup.get(i) & 0xFF for i in range(dup.position(), dup.limit())) == self._raw
        if cls.startswith("java.util.") and ("List" in cls or "Collection" in cls):
            items = list(v)
            if len(items) == 1 and items[0] is not None:
                return self._is_placeholder(items[0])
            if len(items) == len(self._raw) and all(x is not None for x in items):
                try:
                    return bytes(int(x) & 0xFF for x in items) == self._raw
                except (TypeError, ValueError):
                    return False
        if cls.startswith("java.util.") and "Map" in cls and v.size() == 1:
            return any(self._is_placeholder(k) for k in v.keySet())
        return False
