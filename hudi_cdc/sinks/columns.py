"""Columns of a table from its Avro value schema, typed per SQL dialect."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# (avro type or logical type) -> SQL type, per dialect
_TYPES: dict[str, dict[str, str]] = {
    "trino": {"int": "INTEGER", "long": "BIGINT", "string": "VARCHAR", "boolean": "BOOLEAN", "float": "REAL",
              "double": "DOUBLE", "bytes": "VARBINARY", "date": "DATE", "timestamp-millis": "TIMESTAMP(3)",
              "timestamp-micros": "TIMESTAMP(6)"},
    "spark": {"int": "INT", "long": "BIGINT", "string": "STRING", "boolean": "BOOLEAN", "float": "FLOAT",
              "double": "DOUBLE", "bytes": "BINARY", "date": "DATE", "timestamp-millis": "TIMESTAMP",
              "timestamp-micros": "TIMESTAMP"},
    "redshift": {"int": "INTEGER", "long": "BIGINT", "string": "VARCHAR(65535)", "boolean": "BOOLEAN",
                 "float": "REAL", "double": "DOUBLE PRECISION", "bytes": "VARBYTE", "date": "DATE",
                 "timestamp-millis": "TIMESTAMP", "timestamp-micros": "TIMESTAMP"},
    # Athena DDL is Hive DDL (the changes table); its views are Trino SQL
    "athena": {"int": "INT", "long": "BIGINT", "string": "STRING", "boolean": "BOOLEAN", "float": "FLOAT",
               "double": "DOUBLE", "bytes": "BINARY", "date": "DATE", "timestamp-millis": "TIMESTAMP",
               "timestamp-micros": "TIMESTAMP"},
}
_TYPES["postgres"] = {**_TYPES["redshift"], "string": "TEXT", "bytes": "BYTEA"}
# a lake type (config/shape.py's types:, Spark SQL names) -> the Avro-like name _TYPES maps per dialect
_LAKE = {"string": "string", "double": "double", "float": "float", "bigint": "long", "int": "int",
         "boolean": "boolean", "date": "date", "timestamp": "timestamp-micros"}
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")


@dataclass(frozen=True)
class Column:
    name: str
    avro: str  # the Avro primitive or logical type name
    semantic: str | None = None  # Debezium's/Kafka Connect's semantic type (connect.name), when the field has one
    lake: str | None = None  # a lake type (shaping's types:, or string for a masked column): the type it lands in

    def sql_type(self, dialect: str) -> str:
        m = _DECIMAL.match(self.lake or "")
        if m:
            return f"DECIMAL({m.group(1)},{m.group(2)})"
        if self.lake:
            return _TYPES[dialect][_LAKE[self.lake]]
        try:
            return _TYPES[dialect][self.avro]
        except KeyError:
            raise ValueError(f"column {self.name}: Avro type {self.avro!r} has no {dialect} type") from None


def _avro_type(t: Any) -> str:
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        if len(non_null) != 1:
            raise ValueError(f"only [null, T] unions are supported, not {t}")
        return _avro_type(non_null[0])
    if isinstance(t, dict):
        return str(t.get("logicalType") or t.get("type"))
    return str(t)


def _semantic(t: Any) -> str | None:
    if isinstance(t, list):
        return next((s for s in map(_semantic, t) if s), None)
    return str(t["connect.name"]) if isinstance(t, dict) and t.get("connect.name") else None


def columns_of(schema: dict[str, Any]) -> list[Column]:
    """Every field of a flattened (ExtractNewRecordState) value schema, in schema order."""
    out = []
    for f in schema.get("fields", []):
        try:
            out.append(Column(f["name"], _avro_type(f["type"]), _semantic(f["type"])))
        except ValueError as exc:
            raise ValueError(f"field {f['name']}: {exc}") from None
    return out
