"""Debezium's unwrap SMT (ExtractNewRecordState) applied by capture itself, so TRUNCATE survives.

ExtractNewRecordState drops every truncate event, whatever its settings (Debezium 2.x/3.x:
AbstractExtractRecordStrategy.handleTruncateRecord returns null), and the embedded engine runs its
transforms before capture sees a record. So capture runs the connector without `transforms.*` and
applies the very same SMT, configured with the same keys, to each change record here; a truncate
event (op 't', no key, before/after null) becomes one row in the table's own landed schema instead:
`__op='t'`, `__deleted='true'`, the truncate's `__lsn`, `__source_ts_ms`, `__db`, `__schema`,
`__table`, the row's nullable columns null and its required ones (key, NOT NULL) a zero value of
their type. The schema is the one the SMT gives a change of the table (the truncate envelope's
`after` schema run through it), so the truncate lands in the table's current file, in order.

Readers recognise the row by `__op='t'`; the streamer applies it as "every row of this table is
gone as of this LSN" (jobs/stream/truncate.py). An engine that does not know `__op='t'` sees a delete
of a zero key, never a new row.
"""

from __future__ import annotations

from typing import Any

TRUNCATE_OP = "t"
TRANSFORM_PREFIX = "transforms"


def split_transforms(props: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(connector properties without transforms.*, the unwrap SMT's own settings without its prefix)."""
    names = [n.strip() for n in props.get(TRANSFORM_PREFIX, "").split(",") if n.strip()]
    if names not in ([], ["unwrap"]):
        raise ValueError(f"capture applies only the unwrap transform, not {names}")
    engine = {k: v for k, v in props.items() if not (k == TRANSFORM_PREFIX or k.startswith(TRANSFORM_PREFIX + "."))}
    prefix = f"{TRANSFORM_PREFIX}.unwrap."
    smt = {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}
    return engine, smt


class Unwrap:
    """The unwrap SMT over Connect source records; truncate events become a row (see module doc)."""

    def __init__(self, settings: dict[str, str]):
        from jpype import JClass

        self._type = settings.get("type", "io.debezium.transforms.ExtractNewRecordState")
        self._smt = JClass(self._type)()
        conf = JClass("java.util.HashMap")()
        for k, v in settings.items():
            if k != "type":
                conf.put(k, v)
        self._smt.configure(conf)
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")

    def apply(self, record) -> Any:
        """The transformed record, or None when the SMT drops it (a tombstone)."""
        # a truncate event has no key (one JPype call rules out the change events of keyed tables)
        if record.key() is None and is_truncate(record):
            return self._truncate_row(record)
        return self._smt.apply(record)

    def _truncate_row(self, record):
        envelope = record.valueSchema()
        value = record.value()
        row = self._Struct(envelope.field("after").schema())
        for f in row.schema().fields():
            if not f.schema().isOptional():
                row.put(f, zero_value(f.schema()))
        env = self._Struct(envelope)
        env.put("after", row)
        env.put("op", "c")
        env.put("source", value.getStruct("source"))
        for name in ("ts_ms", "ts_us", "ts_ns"):
            if envelope.field(name) is not None and value.get(name) is not None:
                env.put(name, value.get(name))
        as_create = record.newRecord(record.topic(), record.kafkaPartition(), record.keySchema(), record.key(),
                                     envelope, env, record.timestamp())
        out = self._smt.apply(as_create)
        unwrapped = out.value()
        unwrapped.put("__op", TRUNCATE_OP)
        if unwrapped.schema().field("__deleted") is not None:
            unwrapped.put("__deleted", "true")
        return out

    def close(self) -> None:
        self._smt.close()


def is_truncate(record) -> bool:
    """A Debezium change envelope with op 't'."""
    value = record.value()
    schema = record.valueSchema()
    if value is None or schema is None or schema.type().getName() != "struct":
        return False
    if schema.field("op") is None or schema.field("after") is None:
        return False
    op = value.get("op")
    return op is not None and str(op) == TRUNCATE_OP


def zero_value(schema):
    """A value of a required Connect schema: 0, '', false, empty bytes, a struct of zeros, ... (the
    columns of a truncate row that cannot be null)."""
    from jpype import JArray, JByte, JClass, JDouble, JFloat, JInt, JLong, JShort

    name = schema.name()
    if name is not None:
        name = str(name)
        if name == "org.apache.kafka.connect.data.Decimal":
            scale = int(str(schema.parameters().get("scale")))
            return JClass("java.math.BigDecimal").valueOf(JLong(0), JInt(scale))
        if name in ("org.apache.kafka.connect.data.Date", "org.apache.kafka.connect.data.Time",
                    "org.apache.kafka.connect.data.Timestamp"):
            return JClass("java.util.Date")(JLong(0))
    if schema.defaultValue() is not None:
        return schema.defaultValue()
    kind = str(schema.type().getName())
    if kind == "int8":
        return JClass("java.lang.Byte")(JByte(0))
    if kind == "int16":
        return JClass("java.lang.Short")(JShort(0))
    if kind == "int32":
        return JClass("java.lang.Integer")(JInt(0))
    if kind == "int64":
        return JClass("java.lang.Long")(JLong(0))
    if kind == "float32":
        return JClass("java.lang.Float")(JFloat(0.0))
    if kind == "float64":
        return JClass("java.lang.Double")(JDouble(0.0))
    if kind == "boolean":
        return JClass("java.lang.Boolean").FALSE
    if kind == "string":
        return JClass("java.lang.String")("")
    if kind == "bytes":
        return JClass("java.nio.ByteBuffer").wrap(JArray(JByte)(0))
    if kind == "array":
        return JClass("java.util.ArrayList")()
    if kind == "map":
        return JClass("java.util.HashMap")()
    if kind == "struct":
        s = JClass("org.apache.kafka.connect.data.Struct")(schema)
        for f in schema.fields():
            if not f.schema().isOptional():
                s.put(f, zero_value(f.schema()))
        return s
    raise ValueError(f"no zero value for Connect type {kind}")
