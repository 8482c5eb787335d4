"""`verify`'s database side with the table's shaping (sources/shape_sql.py): a temporary view of the
source table inside verify's transaction (rolled back with it) holding the kept columns, the lake types,
the derived columns and the filter's rows, read like the table itself."""

from __future__ import annotations

from hudi_cdc.common.shaping import Shape
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.shape_sql import db_type, transpile

VIEW = "hudi_cdc_verify_shaped"


def shaped_table(conn, shape: Shape, st: src.SourceTable, keys: list[str], db_columns: list[str],
                 where: str) -> src.SourceTable:
    """The source table as the lake sees it (``where``: tables.<name>, for errors); st when unshaped."""
    from psycopg import sql

    if shape.empty:
        return st
    select: list[sql.Composable] = []
    for name in db_columns:
        if not shape.keeps(src.lake_name(name), keys):
            continue
        col = sql.Identifier(name)
        lake_type = shape.types.get(src.lake_name(name))
        if shape.mask.get(src.lake_name(name)):
            lake_type = "string"  # hashed or redacted: the text Debezium hashes
        if lake_type:
            select.append(sql.SQL("CAST({} AS {}) AS {}").format(col, sql.SQL(db_type(lake_type, "postgres")), col))
        else:
            select.append(col)
    for name, expr in shape.derive.items():
        text = transpile(expr, "postgres", f"{where}.derive.{name}")
        lake_type = shape.types.get(name)
        if lake_type:
            text = f"CAST(({text}) AS {db_type(lake_type, 'postgres')})"
        select.append(sql.SQL("{} AS {}").format(sql.SQL(text), sql.Identifier(name)))
    query = sql.SQL("CREATE TEMPORARY VIEW {} AS SELECT {} FROM {}").format(
        sql.Identifier(VIEW), sql.SQL(", ").join(select), sql.Identifier(st.schema, st.table))
    if shape.filter is not None:
        query = sql.SQL("{} WHERE COALESCE(({}), false)").format(
            query, sql.SQL(transpile(shape.filter, "postgres", f"{where}.filter")))
    conn.execute(query)
    schema = conn.execute("SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()").fetchone()[0]
    return src.SourceTable(st.name, st.topic, schema, VIEW)
