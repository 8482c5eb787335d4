"""The source databases capture reads, one package per kind behind one protocol (base.Source):
PostgreSQL (postgres/), the MySQL family (mysql/: MySQL, Aurora MySQL, MariaDB).

The one place a kind is chosen: ``KINDS`` maps source.database.kind to its Source (ARCHITECTURE.md,
"Adding a source"); everything else asks ``for_pipeline`` / ``get``. The modules beside the kinds are
what they share: tables.py (the tables behind the topics), db_tables.py and init.py (`init
--from-database`), verify.py and typed_values.py (`verify`), history.py (tables without a key).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError

if TYPE_CHECKING:
    from hudi_cdc.sources.base import Check, Source


def _postgres(kind: str) -> Source:
    from hudi_cdc.sources.postgres.source import PostgresSource

    return PostgresSource()


def _mysql_family(kind: str) -> Source:
    from hudi_cdc.sources.mysql.source import MySqlFamily

    return MySqlFamily(kind)


# source.database.kind -> its Source (a new kind: one line here, and its package)
KINDS: dict[str, Callable[[str], Source]] = {
    "postgresql": _postgres,
    "mysql": _mysql_family,
    "mariadb": _mysql_family,
}


def get(kind: str) -> Source:
    """The Source of a source.database.kind."""
    make = KINDS.get(kind)
    if make is None:  # config validation names the kinds first; this is a kind without a package
        raise ConfigError(f"source.database.kind: {kind} has no source package (one of {', '.join(KINDS)})")
    return make(kind)


def for_pipeline(pipeline: Pipeline) -> Source:
    """The Source of the pipeline's source.database (none set: one line naming the file)."""
    from hudi_cdc.sources.tables import database

    return get(database(pipeline).kind)


def source_check(pipeline: Pipeline, table: str | None = None) -> list[Check]:
    """`source check`: every check for the pipeline's tables (or one table) against the live database."""
    from hudi_cdc.sources.routes import resolved
    from hudi_cdc.sources.tables import source_tables

    pipeline = resolved(pipeline, lambda: for_pipeline(pipeline).table_names(pipeline))  # a route's pattern
    tables = source_tables(pipeline)
    if table is not None:
        pipeline.table(table)  # unknown table -> ConfigError
        tables = [t for t in tables if t.name == table]
    return for_pipeline(pipeline).check(pipeline, tables)
