"""`verify`'s SELECT of a MySQL-family table with the table's shaping (docs/shaping.md; sources/shape_sql.py):
each kept column as it is or cast to its lake type, masked columns as their text (hashed or redacted in
Python afterwards, sources/shape_sql.masked_value), derived columns and the filter as the pipeline file's
Spark SQL transpiled by sqlglot to MySQL's dialect. One SELECT over the table (or a routed table's UNION ALL,
routed.py), no view: every expression reads the source columns, as the streamer's do.

Each output column's comparison kind (mysql/catalog.py): a kept column's own, a typed one its lake type's, a
masked one text; a derived column without a type takes the kind of the type the server gives its result
(``resolve``, from the cursor's description once the query ran)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hudi_cdc.common.shaping import Shape
from hudi_cdc.sources.comparison import Column
from hudi_cdc.sources.mysql.catalog import quote
from hudi_cdc.sources.shape_sql import cast_sql, transpile

# a lake type (config/shape.py) -> the kind verify compares its values as
_TYPE_KINDS = {"string": "plain", "double": "float8", "float": "float4", "bigint": "plain", "int": "plain",
               "boolean": "bit1", "date": "date", "timestamp": "timestamp"}
# pymysql's FIELD_TYPE codes of a result column -> its kind (a derived column without a type)
_FIELD_KINDS = {0: "decimal", 246: "decimal", 4: "float6", 5: "float8", 7: "timestamptz", 10: "date", 14: "date",
                11: "time", 12: "timestamp"}
UNRESOLVED = "?"  # a derived column's kind until the query ran


def lake_kind(lake_type: str) -> str:
    return "decimal" if lake_type.startswith("decimal(") else _TYPE_KINDS[lake_type]


@dataclass
class Select:
    columns: list[Column]  # the output columns under their lake names
    exprs: dict[str, str]  # lake name -> its SQL
    where: str = ""  # " WHERE ..." (the filter) or ""

    def sql(self, names: list[str], source: str) -> str:
        return f"SELECT {', '.join(self.exprs[n] for n in names)} FROM {source}{self.where}"

    def resolve(self, cols: list[Column], names: list[str], description) -> list[Column]:
        """``cols`` with each untyped derived column's kind from the executed query's description."""
        codes = {n: d[1] for n, d in zip(names, description or [], strict=False)}
        return [dataclasses.replace(c, kind=_FIELD_KINDS.get(codes.get(c.name, -1), "plain"))
                if c.kind == UNRESOLVED else c for c in cols]


def shaped_select(shape: Shape, db_cols: list[Column], keys: list[str], where: str) -> Select:
    """The SELECT of ``db_cols`` as the lake holds them (``where``: tables.<name>, for errors)."""
    if shape.empty:
        return Select(db_cols, {c.name: quote(c.db_name) for c in db_cols})
    out: list[Column] = []
    exprs: dict[str, str] = {}
    for c in db_cols:
        if not shape.keeps(c.name, keys):
            continue
        col = quote(c.db_name)
        if shape.mask.get(c.name):  # hashed or redacted: the text Debezium masks
            out.append(dataclasses.replace(c, kind="plain"))
            exprs[c.name] = f"CAST({col} AS CHAR) AS {col}"
        elif c.name in shape.types:
            out.append(dataclasses.replace(c, kind=lake_kind(shape.types[c.name])))
            exprs[c.name] = f"{cast_sql(col, shape.types[c.name], 'mysql')} AS {col}"
        else:
            out.append(c)
            exprs[c.name] = col
    for name, expr in shape.derive.items():
        text = f"({transpile(expr, 'mysql', f'{where}.derive.{name}')})"
        lake_type = shape.types.get(name)
        out.append(Column(name, "derived", lake_kind(lake_type) if lake_type else UNRESOLVED))
        exprs[name] = f"{cast_sql(text, lake_type, 'mysql') if lake_type else text} AS {quote(name)}"
    cond = ""
    if shape.filter is not None:
        cond = f" WHERE COALESCE(({transpile(shape.filter, 'mysql', f'{where}.filter')}), FALSE)"
    return Select(out, exprs, cond)
