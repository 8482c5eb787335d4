"""Kafka Connect configs from the pipeline file: the source's Debezium connector (its Source's config:
sources/postgres/connector.py, sources/mysql/connector.py) and the Confluent S3 sink connector that lands
the files bootstrap/stream read (`hudi-cdc connectors render`).

Current flavour: the source connector carries the same settings `hudi-cdc capture` runs Debezium
3.x with (topic prefix, pgoutput, slot, publication, the unwrap SMT with rewritten deletes and
__op/__db/__table/__schema/__lsn/__source_ts_ms), the password as a config-provider reference
(`${env:<password_env>}`, never the value); both connectors use Apicurio's AvroConverter against the
registry's native API (derived from source.schema_registry); the sink writes Avro in the layout
source.root names (bucket and topics.dir from an s3:// root), `flush.size` = source.database.flush_size,
files closed on a wall-clock schedule too. Seed flavour (`seed=True`): seed 001's two JSON files.
"""

from __future__ import annotations

import re
from typing import Any

from hudi_cdc import sources
from hudi_cdc.capture.capture import DEFAULT_FLUSH_SIZE
from hudi_cdc.config import Pipeline, is_s3_uri
from hudi_cdc.sources.tables import source_tables, topic_prefix

S3_SINK = "io.confluent.connect.s3.S3SinkConnector"
APICURIO_CONVERTER = "io.apicurio.registry.utils.converter.AvroConverter"
ROTATE_SCHEDULE_MS = 60000
PART_SIZE = 5242880
# Apicurio's Confluent-compatible API version -> its native API (what its converter talks to)
NATIVE_API = {"v6": "v2", "v7": "v3", "v8": "v3"}
SEED_REGISTRY = "http://localhost:8080/apis/registry/v2"
# Worker settings the `${env:...}` reference needs (Kafka 3.5+ ships this provider)
ENV_PROVIDER = {"config.providers": "env",
                "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider"}


def native_registry_url(pipeline: Pipeline) -> str:
    """The registry URL for Apicurio's converter: source.schema_registry's ccompat URL mapped to the
    native API (.../apis/ccompat/v7 -> .../apis/registry/v3), or a placeholder when none is set."""
    url = pipeline.source.schema_registry
    if not url:
        return "<apicurio-registry-url>/apis/registry/v3"
    m = re.match(r"^(.*)/apis/ccompat/(v\d+)/?$", url)
    if m:
        return f"{m.group(1)}/apis/registry/{NATIVE_API.get(m.group(2), 'v3')}"
    return url.rstrip("/")


JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"


def _converters(url: str, pipeline: Pipeline | None = None) -> dict[str, str]:
    """Apicurio's AvroConverter against url, or (source.connect.converter: json) Connect's JsonConverter
    with schemas, which every worker has."""
    connect = pipeline.source.connect if pipeline is not None else None
    if connect is not None and connect.converter == "json":
        return {"key.converter": JSON_CONVERTER, "key.converter.schemas.enable": "true",
                "value.converter": JSON_CONVERTER, "value.converter.schemas.enable": "true"}
    out = {}
    for side in ("key", "value"):
        out[f"{side}.converter"] = APICURIO_CONVERTER
        out[f"{side}.converter.apicurio.registry.url"] = url
        out[f"{side}.converter.apicurio.registry.auto-register"] = "true"
        out[f"{side}.converter.apicurio.registry.find-latest"] = "true"
    return out


def source_connector(pipeline: Pipeline) -> dict[str, Any]:
    """The source's Kafka Connect connector (the Source's own config, with the converters)."""
    return sources.for_pipeline(pipeline).connector(pipeline, _converters(native_registry_url(pipeline), pipeline))


def _bucket_and_dir(root: str) -> tuple[str, str]:
    if not is_s3_uri(root):
        return "<your_data_lake_bucket>", "topics"
    bucket, _, prefix = root.split("://", 1)[1].partition("/")
    return bucket, prefix.strip("/") or "topics"


def sink_connector(pipeline: Pipeline) -> dict[str, Any]:
    db = pipeline.source.database
    bucket, topics_dir = _bucket_and_dir(pipeline.source_root)
    st = pipeline.storage
    config: dict[str, Any] = {
        "connector.class": S3_SINK,
        "tasks.max": "1",
        "topics": ",".join(t.landed_topic for t in source_tables(pipeline)),  # a routed table: its shards
        "s3.region": st.s3_region or pipeline.emr.region,
        "s3.bucket.name": bucket,
        "topics.dir": topics_dir,
        "s3.part.size": str(PART_SIZE),
        "flush.size": str(db.flush_size if db else DEFAULT_FLUSH_SIZE),
        "rotate.schedule.interval.ms": str(ROTATE_SCHEDULE_MS),  # close files on a quiet topic too
        "timezone": "UTC",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        "schema.compatibility": "NONE",
        "behavior.on.null.values": "ignore",  # tombstones: deletes arrive as rewritten rows
    }
    if st.s3_endpoint:
        config["store.url"] = st.s3_endpoint
        config["s3.path.style.access.enabled"] = "true" if st.s3_path_style in (None, True) else "false"
    config.update(_converters(native_registry_url(pipeline), pipeline))
    return {"name": f"hudi-cdc-{pipeline.pipeline}-s3-sink", "config": config}


# ---------------------------------------------------------------- the seed's own JSON
def seed_source_connector(pipeline: Pipeline) -> dict[str, Any]:
    return sources.for_pipeline(pipeline).seed_connector(pipeline, _converters(_seed_registry(pipeline)))


def seed_sink_connector(pipeline: Pipeline) -> dict[str, Any]:
    db = pipeline.source.database
    schemas = {t.schema for t in source_tables(pipeline)}
    bucket, _ = _bucket_and_dir(pipeline.source_root)
    config = {
        "connector.class": S3_SINK,
        "tasks.max": 1,
        "topics.regex": f"{topic_prefix(pipeline)}.{schemas.pop() if len(schemas) == 1 else '(.*)'}.(.*)",
        "table.name.format": "${topic}",
        "s3.region": pipeline.storage.s3_region or pipeline.emr.region,
        "s3.bucket.name": bucket,
        "s3.part.size": PART_SIZE,
        "flush.size": db.flush_size if db else DEFAULT_FLUSH_SIZE,
        "rotate.schedule.interval.ms": ROTATE_SCHEDULE_MS,
        "timezone": "UTC",
        "storage.class": "io.confluent.connect.s3.storage.S3Storage",
        "format.class": "io.confluent.connect.s3.format.avro.AvroFormat",
        "schema.generator.class": "io.confluent.connect.storage.hive.schema.DefaultSchemaGenerator",
        "partitioner.class": "io.confluent.connect.storage.partitioner.DefaultPartitioner",
        "schema.compatibility": "NONE",
        "behavior.on.null.values": "ignore",
        **_converters(_seed_registry(pipeline)),
    }
    return {"name": f"sink_connector_{pipeline.pipeline}_kafka_s3", "config": config}


def _seed_registry(pipeline: Pipeline) -> str:
    return native_registry_url(pipeline) if pipeline.source.schema_registry else SEED_REGISTRY


def render_connectors(pipeline: Pipeline, seed: bool = False, table: str | None = None) -> list[dict[str, Any]]:
    """[source, sink], each {"name", "config"} (POST /connectors; `config` alone is the PUT body).
    With table: that table alone, on the slot and publication `capture --table` uses, the connectors
    named hudi-cdc-<pipeline>-<table>-source / -s3-sink."""
    if seed:  # seed 001: source and sink; seed 004: the MySQL connector alone (Redshift reads MSK)
        if not sources.for_pipeline(pipeline).seed_sink:
            return [seed_source_connector(pipeline)]
        return [seed_source_connector(pipeline), seed_sink_connector(pipeline)]
    if table is None:
        return [source_connector(pipeline), sink_connector(pipeline)]
    from hudi_cdc.capture.capture import for_table

    narrowed = for_table(pipeline, table)
    out = [source_connector(narrowed), sink_connector(narrowed)]
    for c, kind in zip(out, ("source", "s3-sink"), strict=True):
        c["name"] = f"hudi-cdc-{pipeline.pipeline}-{table}-{kind}"
    return out


def notes(pipeline: Pipeline) -> list[str]:
    """What the rendered connectors need of the pipeline file besides them (a binlog source's ordering)."""
    if pipeline.source.database is None:
        return []
    return sources.for_pipeline(pipeline).connector_notes(pipeline)


KINDS = ("source", "sink")


def chosen(pipeline: Pipeline, only: str | None = None, table: str | None = None) -> list[dict[str, Any]]:
    """The connectors a deploy/status/restart/delete/validate works on: both, or only source|sink."""
    source, sink = render_connectors(pipeline, table=table)
    return [c for kind, c in zip(KINDS, (source, sink), strict=True) if only in (None, kind)]
