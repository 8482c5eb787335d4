"""PostgreSQL's Debezium connector for a Kafka Connect worker (`hudi-cdc connectors render`,
hudi_cdc/connect/connectors.py): the settings `hudi-cdc capture` runs it with, and seed 001's own JSON."""

from __future__ import annotations

import re
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.sources.base import UNWRAP
from hudi_cdc.sources.postgres.capture import marker_prefix
from hudi_cdc.sources.postgres.engine import CONNECTOR, TYPE_HANDLING
from hudi_cdc.sources.postgres.heartbeat import heartbeat_properties
from hudi_cdc.sources.shaping import debezium_properties
from hudi_cdc.sources.tables import database, source_tables, topic_prefix


def source_connector(pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
    db = database(pipeline)
    tables = source_tables(pipeline)
    config: dict[str, Any] = {
        "connector.class": CONNECTOR,
        "tasks.max": "1",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
    }
    if db.password_env:
        config["database.password"] = "${env:" + db.password_env + "}"
    config.update({
        "database.dbname": db.name,
        "topic.prefix": topic_prefix(pipeline),
        "plugin.name": "pgoutput",
        "slot.name": pipeline.slot_name,
        "publication.name": pipeline.publication_name,
        "publication.autocreate.mode": "filtered",  # exactly the pipeline's tables
        "table.include.list": ",".join(re.escape(t.qualified) for t in tables),
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        # TRUNCATE: Kafka Connect runs the unwrap SMT, which drops truncate events whatever
        # skipped.operations says; only `hudi-cdc capture` lands them (docs/source-life.md)
        **heartbeat_properties(db, marker_prefix(pipeline)),
        **TYPE_HANDLING,
        **UNWRAP,
        **debezium_properties(pipeline, tables, rendered=True),  # never a salt (sources/shaping.py)
        **converters,
    })
    return {"name": f"hudi-cdc-{pipeline.pipeline}-source", "config": config}


# ---------------------------------------------------------------- seed 001's own JSON
def seed_source_connector(pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
    db = database(pipeline)
    prefix = topic_prefix(pipeline)
    config = {
        "connector.class": CONNECTOR,
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        "database.password": "<your_password>",
        "database.dbname": db.name,
        "database.server.name": prefix,
        "table.include.list": ",".join(t.qualified for t in source_tables(pipeline)),
        "plugin.name": "pgoutput",
        **converters,
        "transforms": "unwrap",
        "transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState",
        "transforms.unwrap.drop.tombstones": "false",
        "transforms.unwrap.delete.handling.mode": "rewrite",  # ignored by Debezium 3.x: no __deleted there
        "transforms.unwrap.add.fields": "op,db,table,schema,lsn,source.ts_ms",  # seed 001's own
    }
    return {"name": f"source_connector_{pipeline.pipeline}_postgres_kafka", "config": config}
