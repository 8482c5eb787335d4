"""A routed table's shards given by a pattern (config/route.py), listed from the database: capture (at each
start, so a shard created since is captured, its snapshot taken and the publication extended), verify and
`source check` resolve the pattern into the tables it matches now. The streamer needs no list: it reads
every landing folder whose topic the pattern matches (common/routing.py)."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError

_TABLES = ("SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
           "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
           "AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1")


def database_tables(pipeline: Pipeline) -> list[str]:
    """Every user table of the source database as <schema>.<table>."""
    from hudi_cdc.sources.tables import database

    kind = database(pipeline).kind
    if kind != "postgresql":
        raise ConfigError(f"route.pattern: listing shards from a {kind} database is not built (PostgreSQL only); "
                          f"list them in route.tables ({pipeline.source_file})")
    from hudi_cdc.sources.postgres import db

    with db.connect(pipeline) as conn:
        return [r[0] for r in conn.execute(_TABLES).fetchall()]


def resolved(pipeline: Pipeline, tables: list[str] | None = None) -> Pipeline:
    """The pipeline with every route pattern replaced by the tables it matches (``tables``: the database's,
    listed when not given); the pipeline itself when no route has a pattern. A pattern that matches nothing
    is one line naming the table."""
    patterned = {n: t for n, t in pipeline.tables.items() if t.route and t.route.pattern is not None}
    if not patterned:
        return pipeline
    names = database_tables(pipeline) if tables is None else tables
    out = dict(pipeline.tables)
    for name, t in patterned.items():
        assert t.route is not None
        hits = [q for q in names if t.route.covers(q)]
        if not hits:
            raise ConfigError(f"tables.{name}.route.pattern: {t.route.pattern!r} matches no table of the source "
                              f"database ({pipeline.source_file})")
        route = t.route.model_copy(update={"tables": hits, "pattern": None})
        out[name] = t.model_copy(update={"route": route})
    return pipeline.model_copy(update={"tables": out})
