"""MySQL/MariaDB zero dates (``'0000-00-00'``, a zero month or day), which Debezium sends as NULL, or for a
NOT NULL column as the column's default or the epoch: specials.py's lookup."""

from __future__ import annotations

from hudi_cdc.capture.specials import LazyConnection
from hudi_cdc.sources.tables import lake_name

DATE_NAMES = ("io.debezium.time.Date", "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp",
              "io.debezium.time.NanoTimestamp", "io.debezium.time.ZonedTimestamp")
EPOCHS = ("0", "1970-01-01T00:00:00Z")
ZERO = "^[0-9]+-(00-|[0-9]{2}-00)"  # a zero month or day (a zero date's text: 0000-00-00)
INTEGERS = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint")
BINARIES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")


def _zero_date_test(default):
    """NULL, the epoch or the column's default (`default`, None when it has none) may stand for a zero date."""
    stands = set(EPOCHS) | ({str(default)} if default is not None else set())
    return lambda value: value is None or str(value) in stands


class ZeroDates(LazyConnection):
    """The date and timestamp values of row events that may stand for a zero date, read by key."""

    def __init__(self, connect):
        super().__init__(connect)  # () -> a connection (autocommit)
        self._columns: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}  # lake name -> (name, key's cast)

    def checks(self, schema) -> list:
        return [(f, _zero_date_test(f.schema().defaultValue())) for f in schema.fields()
                if str(f.schema().name()) in DATE_NAMES]

    def table_of(self, source) -> tuple[str, str]:
        return str(source.getString("db")), str(source.getString("table"))

    def query(self, schema: str, table: str, key_fields: list[str], keys: list[tuple], cols: list[str]):
        known = self._table_columns(schema, table, key_fields + cols)
        if not all(n in known for n in key_fields):
            return []
        cols = [c for c in cols if c in known]
        texts = [f"CAST(t.{_q(known[c][0])} AS CHAR)" for c in cols]
        rows = " UNION ALL ".join("SELECT " + ", ".join([f"{i} AS i"] + [f"%s AS k{j}" for j in range(len(key))])
                                  for i, key in enumerate(keys))
        on = " AND ".join(f"t.{_q(known[k][0])} = " + known[k][1].format(f"v.k{j}") for j, k in enumerate(key_fields))
        any_zero = " OR ".join(f"{t} REGEXP '{ZERO}'" for t in texts)
        q = (f"SELECT v.i, {', '.join(texts)} FROM {_q(schema)}.{_q(table)} t JOIN ({rows}) v ON {on} "
             f"WHERE {any_zero}")
        with self._db().cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")  # a TIMESTAMP key's text is UTC (ZonedTimestamp)
            cur.execute(q, [v for key in keys for v in key])
            found = cur.fetchall()
        out = []
        for i, *values in found:
            got = {c: str(v) for c, v in zip(cols, values, strict=True) if v is not None and _is_zero(str(v))}
            if got:
                out.append((keys[int(i)], got))
        return out

    def _table_columns(self, schema: str, table: str, names: list[str]) -> dict[str, tuple[str, str]]:
        cols = self._columns.get((schema, table), {})
        if not all(n in cols for n in names):  # new to this run, or a column added since
            with self._db().cursor() as cur:
                cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE FROM "
                            "information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", (schema, table))
                cols = {lake_name(str(n)): (str(n), key_cast(*rest)) for n, *rest in cur.fetchall()}
            self._columns[(schema, table)] = cols
        return cols


def key_cast(data_type, column_type, precision, scale) -> str:
    """The expression ({} the key's text, specials.key_text) a key column of this type compares with exactly."""
    data_type = str(data_type).lower()
    if data_type in INTEGERS:  # not as doubles (a string against a number compares so): exact past 2^53
        return "CAST({} AS UNSIGNED)" if "unsigned" in str(column_type).lower() else "CAST({} AS SIGNED)"
    if data_type == "decimal":
        return f"CAST({{}} AS DECIMAL({int(precision)},{int(scale)}))"
    if data_type in BINARIES:  # the key's text is \\x and hex (specials.key_text)
        return "UNHEX(SUBSTRING({}, 3))"
    if data_type == "bit":  # BIT(1) comes as a boolean (BIT(n) as Bits: no key text)
        return "IF(LOWER({}) IN ('true', '1'), 1, 0)"
    if data_type == "timestamp":  # ISO-8601 in UTC; the lookup's session is in UTC
        return "CAST(REPLACE(REPLACE({}, 'T', ' '), 'Z', '') AS DATETIME(6))"
    return "{}"


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _is_zero(text: str) -> bool:
    import re

    return re.match(ZERO, text) is not None
