"""PostgreSQL ``numeric`` NaN, Infinity and -Infinity, which Debezium sends as NULL (in a ``numeric[]``, as a
NULL element), and multi-dimensional arrays of any type (``'{{5,6},{7,8}}'`` in an ``int[]`` column), which
Debezium sends as an array of NULL elements (measured: ``[NULL, NULL]``, every value lost without a word):
specials.py's lookup. For an array the database's text of the whole array is kept (the column NULL, the text in
``__rejects``): a lake array is a list of elements, a multi-dimensional array has no such value."""

from __future__ import annotations

import re

from hudi_cdc.capture.specials import LazyConnection
from hudi_cdc.sources.tables import lake_name

NUMERIC_NAMES = ("io.debezium.data.VariableScaleDecimal", "org.apache.kafka.connect.data.Decimal")
SPECIAL_TEXTS = ("NaN", "Infinity", "-Infinity")
# an array's text holding one of them as an element: {1.5,NaN,NULL}, {{-Infinity}}
SPECIAL_ELEMENT = r"(^|[{,])(NaN|-?Infinity)([,}]|$)"


MULTI_DIM = r"^(\[-?[0-9]+:-?[0-9]+\])*=?\{\{"  # {{1,2},{3,4}}, [1:2][1:1]={{1},{2}}: two or more dimensions


def multi_dimensional(text: str) -> bool:
    """PostgreSQL's text of an array of two or more dimensions."""
    return re.match(MULTI_DIM, text) is not None


def _numeric(schema) -> bool:
    return schema is not None and str(schema.name()) in NUMERIC_NAMES


def _is_array(schema) -> bool:
    return str(schema.type().getName()).upper() == "ARRAY"


def _is_null(value) -> bool:
    return value is None


def _has_null_element(value) -> bool:
    return value is not None and any(e is None for e in value)


class PgNumerics(LazyConnection):
    """The NULL numerics of row events, read from PostgreSQL by key."""

    def __init__(self, connect):
        super().__init__(connect)  # () -> a connection (autocommit)
        self._columns: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}  # lake name -> (name, type)

    def checks(self, schema) -> list:
        out = []
        for f in schema.fields():
            if _numeric(f.schema()):
                out.append((f, _is_null))
            elif _is_array(f.schema()) and _numeric(f.schema().valueSchema()):
                out.append((f, _has_null_element))  # a NULL element may be a NaN (a NULL array is just NULL)
            elif _is_array(f.schema()):
                out.append((f, _has_null_element))  # NULL elements may be the sub-arrays of a multi-dimensional one
        return out

    def table_of(self, source) -> tuple[str, str]:
        return str(source.getString("schema")), str(source.getString("table"))

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

    def query(self, schema: str, table: str, key_fields: list[str], keys: list[tuple], cols: list[str]):
        from psycopg import sql

        known = self._table_columns(schema, table, key_fields + cols)
        if not all(n in known for n in key_fields):
            return []
        cols = [c for c in cols if c in known]
        arrays = {c for c in cols if known[c][1].endswith("[]")}
        numeric = {c for c in arrays if known[c][1].startswith("numeric")}  # NaN elements of float8[] are values
        text = [sql.SQL("t.{}::text").format(sql.Identifier(known[c][0])) for c in cols]
        specials = sql.SQL(", ").join(sql.Literal(s) for s in SPECIAL_TEXTS)
        special = [sql.SQL("({} ~ {} OR {} ~ {})").format(t, sql.Literal(SPECIAL_ELEMENT), t, sql.Literal(MULTI_DIM))
                   if c in numeric else sql.SQL("{} ~ {}").format(t, sql.Literal(MULTI_DIM)) if c in arrays
                   else sql.SQL("{} IN ({})").format(t, specials) for c, t in zip(cols, text, strict=True)]
        on = sql.SQL(" AND ").join(sql.SQL("t.{} = v.{}::" + known[k][1]).format(
            sql.Identifier(known[k][0]), sql.Identifier(f"k{i}")) for i, k in enumerate(key_fields))
        rows = sql.SQL(", ").join(sql.SQL("({})").format(sql.SQL(", ").join(
            [sql.Literal(i)] + [sql.Literal(v) for v in key])) for i, key in enumerate(keys))
        q = sql.SQL("SELECT v.i, {cols} FROM {table} t JOIN (VALUES {rows}) AS v(i, {kn}) ON {on} "
                    "WHERE {any}").format(
            cols=sql.SQL(", ").join(text), table=sql.Identifier(schema, table), rows=rows,
            kn=sql.SQL(", ").join(sql.Identifier(f"k{i}") for i in range(len(key_fields))), on=on,
            any=sql.SQL(" OR ").join(special))
        out = []
        for i, *values in self._db().execute(q).fetchall():
            got = {c: v for c, v in zip(cols, values, strict=True)
                   if (c not in arrays and v in SPECIAL_TEXTS) or (c in arrays and v is not None and (
                       multi_dimensional(v) or (c in numeric and re.search(SPECIAL_ELEMENT, v))))}
            if got:
                out.append((keys[i], got))
        return out
