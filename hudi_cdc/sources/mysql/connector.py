"""Kafka Connect configs of Debezium's binlog connectors (MySQL, Aurora MySQL, MariaDB) for
`hudi-cdc connectors render` (connectors.py dispatches here for source.database.kind mysql|mariadb).

Current flavour: what `hudi-cdc capture` runs the connector with (sources/mysql/binlog.py), for a Kafka
Connect / MSK Connect worker: the schema history in a Kafka topic (`schema-history.<topic prefix>`,
the embedded engine keeps it in a file), the unwrap SMT with rewritten deletes and the fields
op,db,table,file,pos,row,source.ts_ms. A Connect worker has no step that turns the binlog coordinates
into one `__lsn` (capture does), so the landed files carry `__file`, `__pos`, `__row`: the lake orders
such a table by `ordering_field: [__file, __pos, __row]` (binlog file names are zero-padded, so they
compare as the binlog numbers do; `ordering_notes` names the tables that still order by `__lsn`).
The password is a config-provider reference (`${env:<password_env>}`), never the value.

Seed flavour (`--seed`): seed 004's connector (Debezium's MySQL connector on MSK Connect, read by
Redshift streaming ingestion): the settings its text names (database.include.list, the Aurora
endpoint, the user, the topic prefix of `<prefix>.<database>.<TABLE>` topics, the JSON envelope with
schemas that `json_parse(kafka_value)` / `payload.after."CUST_ID"` read, no unwrap, MSK's IAM auth on
port 9098) and what the connector cannot run without (tasks.max, database.server.id, the schema
history topic with the IAM client settings). The seed shows the password inline on a mysql command
line; it is rendered as a reference, never the value.
"""

from __future__ import annotations

import re
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import UNWRAP
from hudi_cdc.sources.mysql import binlog as mysql
from hudi_cdc.sources.shaping import debezium_properties

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
ORDERING = ["__file", "__pos", "__row"]
BOOTSTRAP_PLACEHOLDER = "<kafka-bootstrap-servers>"
# MSK's IAM authentication (port 9098), as the Kafka clients of the schema history need it
MSK_IAM = {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
           "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
           "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"}


def history_topic(pipeline: Pipeline) -> str:
    return f"schema-history.{src.topic_prefix(pipeline)}"


def _bootstrap(pipeline: Pipeline) -> str:
    connect = pipeline.source.connect
    return (connect.bootstrap_servers if connect is not None else None) or BOOTSTRAP_PLACEHOLDER


def _password(pipeline: Pipeline, placeholder: str | None = None) -> dict[str, str]:
    db = src.database(pipeline)
    if db.password_env:
        return {"database.password": "${env:" + db.password_env + "}"}
    return {"database.password": placeholder} if placeholder else {}


def _history(pipeline: Pipeline, iam: bool) -> dict[str, str]:
    out = {"schema.history.internal.kafka.bootstrap.servers": _bootstrap(pipeline),
           "schema.history.internal.kafka.topic": history_topic(pipeline)}
    if not iam:
        out["schema.history.internal.store.only.captured.tables.ddl"] = "true"
        out["schema.history.internal.skip.unparseable.ddl"] = "true"  # as capture (binlog.py)
    else:
        for side in ("producer", "consumer"):
            out.update({f"schema.history.internal.{side}.{k}": v for k, v in MSK_IAM.items()})
    return out


def source_connector(pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
    """The binlog connector with hudi-cdc's own settings (as capture runs it, less the embedded engine's)."""
    db = src.database(pipeline)
    tables = src.source_tables(pipeline)
    config: dict[str, Any] = {
        "connector.class": mysql.CONNECTORS[db.kind],
        "tasks.max": "1",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        **_password(pipeline),
        "database.server.id": str(mysql.server_id(pipeline)),
        "topic.prefix": src.topic_prefix(pipeline),
        "database.include.list": ",".join(sorted({re.escape(t.schema) for t in tables})),
        "table.include.list": ",".join(re.escape(t.qualified) for t in tables),
        **_history(pipeline, iam=False),
        "include.schema.changes": "false",
        "snapshot.mode": "initial",
        "tombstones.on.delete": "false",
        "bigint.unsigned.handling.mode": "precise",
        **mysql.DRIVER,
        "heartbeat.interval.ms": str(mysql.HEARTBEAT_MS),
        "connect.keep.alive.interval.ms": str(mysql.KEEP_ALIVE_MS),
        # TRUNCATE: the unwrap SMT drops truncate events on a Connect worker; only capture lands them
        **UNWRAP,
        "transforms.unwrap.add.fields": mysql.UNWRAP_FIELDS,  # the ordering position: __file, __pos, __row
        **debezium_properties(pipeline, tables, rendered=True),  # never a salt (sources/shaping.py)
        **converters,
    }
    return {"name": f"hudi-cdc-{pipeline.pipeline}-source", "config": config}


def seed_source_connector(pipeline: Pipeline) -> dict[str, Any]:
    """Seed 004's connector (see the module doc): the JSON envelope, no unwrap, MSK IAM."""
    db = src.database(pipeline)
    tables = src.source_tables(pipeline)
    config: dict[str, Any] = {
        "connector.class": mysql.CONNECTORS["mysql"],
        "tasks.max": "1",
        "database.hostname": db.host,
        "database.port": str(db.port),
        "database.user": db.user,
        **_password(pipeline, "<your_password>"),
        "database.server.id": str(mysql.server_id(pipeline)),
        "topic.prefix": src.topic_prefix(pipeline),
        "database.include.list": ",".join(sorted({t.schema for t in tables})),
        **_history(pipeline, iam=True),
        "key.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": "true",
        "value.converter": JSON_CONVERTER,
        "value.converter.schemas.enable": "true",
    }
    return {"name": f"source_connector_{pipeline.pipeline}_mysql_msk", "config": config}


def ordering_notes(pipeline: Pipeline) -> list[str]:
    """One line per table that orders by __lsn, which a Kafka Connect landing of a binlog source lacks."""
    return [f"tables.{name}: a Kafka Connect landing of a binlog source has no __lsn; set "
            f"ordering_field: [{', '.join(ORDERING)}] (the binlog position)"
            for name, t in pipeline.tables.items() if "__lsn" in t.ordering_fields]
