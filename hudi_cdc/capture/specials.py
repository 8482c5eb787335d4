"""Values Debezium's change events cannot carry, read from the database by capture and landed beside the row.

* PostgreSQL ``numeric`` NaN, Infinity and -Infinity (pg_numerics.py): under ``decimal.handling.mode=precise``
  Debezium has no encoding for them and sends NULL (the VariableScaleDecimal of an unconstrained
  ``numeric`` is NULL; a ``numeric(p,s)`` NaN fails its converter, which Debezium logs and replaces by NULL).
* MySQL/MariaDB zero dates ``'0000-00-00'`` (and dates with a zero month or day) under a ``sql_mode``
  that allows them (zerodates.py): Debezium sends NULL, or for a NOT NULL column the column's default or
  the epoch.

The event cannot tell such a value from a NULL (or a real default), so capture asks the database: for the
row events of a batch with a suspect value, one query per table and batch reads the rows' current values
of those columns by their keys, and a value of that kind lands beside the row as ``__source_values`` (a
JSON object ``{column: the database's text}``, lake_types.SOURCE_VALUES_COLUMN). The lake column is NULL
and the row's ``__rejects`` gets the exact value (lake_types.with_source_values); the lake never gets the
``__source_values`` column.

The value read is the row's as of the capture (a few seconds after the change): when the row changed
again since, an earlier event can get a later value, and the later change's own event lands after it,
so the newest row in the lake is exact. The key's Connect values are turned into the database's text
(key_text: dates, times, timestamps, decimals and bytes included, as this project's events carry them:
time.precision.mode adaptive, decimal.handling.mode precise, binary.handling.mode bytes); a key of a type
with no such text (a ``timetz``, a ``bit(n)``) is not looked up, and capture logs one WARNING naming the
table and its key types (docs/types.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from hudi_cdc.common.lake_types import SOURCE_VALUES_COLUMN

_LOG = logging.getLogger("hudi_cdc")
PLAIN_KEY_TYPES = ("INT8", "INT16", "INT32", "INT64", "STRING", "BOOLEAN")
# string encodings that are the database's text of the value
TEXT_NAMES = ("io.debezium.data.Uuid", "io.debezium.data.Enum", "io.debezium.data.EnumSet", "io.debezium.data.Ltree",
              "io.debezium.data.Json", "io.debezium.time.Interval", "io.debezium.time.Year")
# epoch counts: dates in days; times since midnight and timestamps without zone, -> their unit in nanoseconds
DATES = ("io.debezium.time.Date",)
TIMES = {"io.debezium.time.Time": 1_000_000, "io.debezium.time.MicroTime": 1000, "io.debezium.time.NanoTime": 1}
TIMESTAMPS = {"io.debezium.time.Timestamp": 1_000_000, "io.debezium.time.MicroTimestamp": 1000,
              "io.debezium.time.NanoTimestamp": 1}
DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"  # ISO-8601 in UTC, '2024-01-01T10:00:00.5Z': the text
EPOCH = datetime(1970, 1, 1)
CHUNK = 1000


class LazyConnection:
    """The database connection of a capture-time lookup: opened on first use, closed when capture ends."""

    def __init__(self, connect):
        self._connect = connect  # () -> a DB-API connection (autocommit)
        self._conn: Any = None

    def _db(self) -> Any:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Lookup(Protocol):
    """One database's part: which columns may hold such a value, and the query reading them."""

    def checks(self, schema) -> list[tuple[Any, Callable[[Any], bool]]]:
        """The fields of a row schema that may hold such a value, each with its test of a landed value (can it
        stand for such a value?). Asked once per row schema: the tests run for every row event."""

    def table_of(self, source) -> tuple[str, str]:
        """(schema or database, table) of an event's ``source`` block."""

    def query(self, schema: str, table: str, key_fields: list[str], keys: list[tuple], cols: list[str]
              ) -> list[tuple[tuple, dict[str, str]]]:
        """(key texts, {column: text}) of the rows among `keys` holding such a value in `cols`."""

    def close(self) -> None:
        """Closes its connection."""


class SourceValues:
    """Looks up a batch's suspect values; adds ``__source_values`` to the rows holding such a value."""

    def __init__(self, lookup: Lookup):
        from jpype import JClass

        self.lookup = lookup
        self._System = JClass("java.lang.System")
        self._SchemaBuilder = JClass("org.apache.kafka.connect.data.SchemaBuilder")
        self._Struct = JClass("org.apache.kafka.connect.data.Struct")
        self._fields: dict[int, list] = {}  # identity of a row schema -> (field, its name, its test) to look at
        self._widened: list[tuple[Any, Any]] = []
        self.found: dict[tuple[str, tuple], dict[str, str]] = {}  # (topic, key texts) -> {column: text}
        self._unkeyed: set[tuple[str, str]] = set()  # tables warned of: a key with no database text

    def look_up(self, records) -> None:
        """Before a batch lands: the values of every row event in it with a suspect value. `records`: the
        batch's (event, source record, topic, value), as consumer.py reads them once."""
        self.found = {}
        wanted: dict[tuple[str, str, str], dict] = {}
        for _, record, topic, value in records:
            got = self._candidate(record, value)
            if got is None:
                continue
            (schema, table), cols, key = got
            w = wanted.setdefault((topic, schema, table), {"fields": key[0], "keys": set(), "cols": set()})
            w["keys"].add(key[1])
            w["cols"].update(cols)
        for (topic, schema, table), w in wanted.items():
            keys = sorted(w["keys"])
            for i in range(0, len(keys), CHUNK):
                for k, values in self.lookup.query(schema, table, w["fields"], keys[i:i + CHUNK], sorted(w["cols"])):
                    self.found[(topic, k)] = values

    def apply(self, out):
        """The unwrapped record, with ``__source_values`` when its row holds such a value."""
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
        self.lookup.close()

    def _candidate(self, record, value):
        """((schema, table), suspect columns, (key fields, key texts)) of a row event, else None."""
        if value is None or record.key() is None or value.schema().field("after") is None:
            return None
        after = value.getStruct("after")
        if after is None:
            return None
        schema = after.schema()
        ident = int(self._System.identityHashCode(schema))
        fields = self._fields.get(ident)
        if fields is None:
            fields = self._fields[ident] = [(f, str(f.name()), check) for f, check in self.lookup.checks(schema)]
        cols = [name for f, name, check in fields if check(after.get(f))]
        if not cols:
            return None
        source = value.getStruct("source")
        if source is None:
            return None
        table = self.lookup.table_of(source)
        key = _key_texts(record.key())
        if key is None:
            if table not in self._unkeyed:  # the value stays NULL: say so, once per table
                self._unkeyed.add(table)
                _LOG.warning("%s.%s: a key (%s) with no database text: values the events cannot carry (%s) are "
                             "not looked up and land as NULL (docs/types.md)", *table, key_types(record.key()),
                             ", ".join(cols))
            return None
        return table, cols, key

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


def _key_texts(key) -> tuple[list[str], tuple] | None:
    """(field names, the values' database text) of a record key; None when a field has none (key_text)."""
    names, texts = [], []
    for f in key.schema().fields():
        s = f.schema()
        kind = str(s.type().getName()).upper()
        logical = None if s.name() is None else str(s.name())
        v = key.get(f)
        if v is None:
            return None
        if kind == "BYTES" and logical != DECIMAL:
            v = bytes(key.getBytes(f.name()))
        elif logical == DECIMAL:
            v = str(v.toPlainString())
        elif logical == VARIABLE_DECIMAL:
            v = (int(v.getInt32("scale")), bytes(v.getBytes("value")))
        elif kind.startswith("FLOAT"):
            v = float(v)
        elif logical in DATES or logical in TIMES or logical in TIMESTAMPS:
            v = int(v)
        text = key_text(kind, logical, v)
        if text is None:
            return None
        names.append(str(f.name()))
        texts.append(text)
    return names, tuple(texts)


def key_types(key) -> str:
    """A record key's field types, for the warning of a key with no database text: ``d io.debezium.data.Bits``."""
    return ", ".join(f"{f.name()} {f.schema().name() or str(f.schema().type().getName()).upper()}"
                     for f in key.schema().fields())


def key_text(kind: str, logical: str | None, v) -> str | None:
    """The database's text of a key field's value as JPype yields it (an int, str, float, bytes; a Decimal's
    plain text; a VariableScaleDecimal's (scale, unscaled bytes)), which both PostgreSQL (``v::type``) and
    MySQL/MariaDB (zerodates.py's casts) read back as the value; None: a type with no such text."""
    try:
        if (logical is None and kind in PLAIN_KEY_TYPES) or logical in TEXT_NAMES:
            return str(v)
        if logical is None and kind.startswith("FLOAT"):
            return {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}.get(repr(v), repr(v))
        if logical is None and kind == "BYTES":
            return "\\x" + bytes(v).hex()
        if logical == DECIMAL:
            return str(v)
        if logical == VARIABLE_DECIMAL:
            scale, unscaled = v
            return format(Decimal(int.from_bytes(unscaled, "big", signed=True)).scaleb(-scale), "f")
        if logical in DATES:
            return (date(1970, 1, 1) + timedelta(days=v)).isoformat()
        if logical in TIMESTAMPS:
            return (EPOCH + timedelta(microseconds=v * TIMESTAMPS[logical] // 1000)).isoformat(" ", "microseconds")
        if logical in TIMES:
            return _time_text(v * TIMES[logical] // 1000)
        if logical == ZONED_TIMESTAMP:
            return str(v)
    except (OverflowError, ValueError, TypeError):  # beyond Python's dates (PostgreSQL's infinity): no text
        return None
    return None


def _time_text(micros: int) -> str:
    """'[-]HH:MM:SS.ffffff' of a time since midnight (MySQL's TIME may be negative or beyond 24 hours)."""
    seconds, frac = divmod(abs(micros), 1_000_000)
    sign = "-" if micros < 0 else ""
    return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{frac:06d}"
