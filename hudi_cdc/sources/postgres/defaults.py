"""Which columns new to the landed schema PostgreSQL gives a value in the rows that existed before
the ALTER TABLE (capture/defaults.py asks; no change event carries that value):
- ``ADD COLUMN c ... DEFAULT <constant>``: the fast default, kept in the catalog (``atthasmissing``);
- ``ADD COLUMN c ... DEFAULT <volatile>`` (``random()``, ``clock_timestamp()``, ...): the table is
  rewritten with a value per row, and logical decoding sends no change for it (``atthasdef``);
- ``ADD COLUMN c ... GENERATED ALWAYS AS (...) STORED``: also a rewrite (``attgenerated``).
A default set later (``SET DEFAULT``) changes no row; asked about it (a column the landed files never had
before), it only costs a snapshot that reads what the rows hold."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.sources.postgres import db
from hudi_cdc.sources.tables import SourceTable, lake_name

FILLED_SQL = ("SELECT attname FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped "
              "AND (atthasmissing OR atthasdef OR attgenerated <> '')")


def added_defaults(pipeline: Pipeline, table: SourceTable, columns: list[str]) -> list[str]:
    """The columns (landed names) among `columns` whose existing rows read a value the stream never sent."""
    with db.connect(pipeline) as conn:
        names = [r[0] for r in conn.execute(FILLED_SQL, (table.sql_name,)).fetchall()]
    by_lake = {lake_name(n): n for n in names}
    return [c for c in columns if c in by_lake]
