"""A routed table's shards given by a pattern (config/route.py), listed from the database: capture (at each
start, so a shard created since joins the publication and Debezium's include list), verify and
`source check` resolve the pattern into the tables it matches now. The streamer needs no list: it reads
every landing folder whose topic the pattern matches (common/routing.py)."""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError


def resolved(pipeline: Pipeline, tables: Callable[[], list[str]]) -> Pipeline:
    """The pipeline with every route pattern replaced by the tables it matches (``tables``: the database's
    <schema>.<table> names, the kind's Source.table_names, called only when a route has a pattern); the
    pipeline itself when none has. A pattern that matches nothing is one line naming the table."""
    patterned = {n: t for n, t in pipeline.tables.items() if t.route and t.route.pattern is not None}
    if not patterned:
        return pipeline
    own_signal = f"{pipeline.slot_name[:56]}_signal"  # capture's signal table (incremental snapshots): never a shard
    names = [q for q in tables() if q.rsplit(".", 1)[-1] != own_signal]
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
