"""`verify` applies a table's shaping to the database side (docs/shaping.md): the filter, the derived
columns and the lake types as the database's own SQL (the pipeline file's Spark SQL transpiled by
sqlglot), the kept columns, and the masks in Python (common/shaping.py: what Debezium and the streamer
compute). Shared by the kinds' verify modules."""

from __future__ import annotations

import re

from hudi_cdc.common.shaping import Shape, mask_hash, redact
from hudi_cdc.errors import ConfigError

_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
# a lake type (config/shape.py) -> the database type verify casts to, per sqlglot dialect
_TYPES = {
    "postgres": {"string": "text", "double": "double precision", "float": "real", "bigint": "bigint",
                 "int": "integer", "boolean": "boolean", "date": "date", "timestamp": "timestamp with time zone"},
    # MySQL's CAST takes no BIGINT/INT (SIGNED is BIGINT) and no BOOLEAN (cast_sql: <> 0); DOUBLE and FLOAT:
    # MySQL 8.0.17+, MariaDB 10.4.5+; a lake timestamp of a DATETIME is its wall clock (docs/mysql.md)
    "mysql": {"string": "CHAR", "double": "DOUBLE", "float": "FLOAT", "bigint": "SIGNED", "int": "SIGNED",
              "date": "DATE", "timestamp": "DATETIME(6)"},
}
_DECIMAL_NAMES = {"postgres": "numeric", "mysql": "DECIMAL"}


def transpile(expr: str, dialect: str, where: str) -> str:
    """A Spark SQL expression of the pipeline file in the database's dialect."""
    import sqlglot

    try:
        return sqlglot.transpile(expr, read="spark", write=dialect)[0]
    except sqlglot.errors.SqlglotError as exc:
        raise ConfigError(f"{where}: {expr!r} has no {dialect} form: {str(exc).splitlines()[0]}") from None


def db_type(lake_type: str, dialect: str) -> str:
    m = _DECIMAL.match(lake_type)
    return f"{_DECIMAL_NAMES[dialect]}({m.group(1)},{m.group(2)})" if m else _TYPES[dialect][lake_type]


def cast_sql(expr: str, lake_type: str, dialect: str) -> str:
    """``expr`` (SQL of the dialect) cast to a lake type; a MySQL boolean as Spark casts a number to one."""
    if dialect == "mysql" and lake_type == "boolean":
        return f"(({expr}) <> 0)"
    return f"CAST({expr} AS {db_type(lake_type, dialect)})"


def masked_value(shape: Shape, column: str, value: object, salt: str | None) -> object:
    """A database value as the lake holds it after the column's mask (hash: Debezium's v2 SHA-256)."""
    how = shape.mask.get(column)
    if how == "hash":
        assert salt is not None  # Pipeline.mask_salt raised when unset
        return mask_hash(value, salt)
    if how == "redact":
        return redact(value)
    return value
