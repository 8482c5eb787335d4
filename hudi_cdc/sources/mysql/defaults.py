"""Which columns new to the landed schema MySQL / MariaDB give a value in the rows that existed before
the ALTER TABLE (capture/defaults.py asks): ``ADD COLUMN c ... DEFAULT v`` (an instant ADD COLUMN
writes no row, so the binlog has no change for them), ``NOT NULL`` columns (their type's implicit
default: 0, ''), and generated columns. A default set later changes no row."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.sources.mysql import binlog
from hudi_cdc.sources.tables import SourceTable, lake_name

FILLED_SQL = ("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
              "AND ((COLUMN_DEFAULT IS NOT NULL AND UPPER(COLUMN_DEFAULT) <> 'NULL') OR IS_NULLABLE = 'NO' "
              "OR COALESCE(GENERATION_EXPRESSION, '') <> '')")  # MariaDB writes a NULL default as the text NULL


def added_defaults(pipeline: Pipeline, table: SourceTable, columns: list[str]) -> list[str]:
    """The columns (landed names) among `columns` whose existing rows read a value the stream never sent."""
    conn = binlog.connect(pipeline)
    try:
        with conn.cursor() as cur:
            cur.execute(FILLED_SQL, (table.schema, table.table))
            names = [r[0] for r in cur.fetchall()]
    finally:
        conn.close()
    by_lake = {lake_name(n): n for n in names}
    return [c for c in columns if c in by_lake]
