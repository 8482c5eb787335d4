"""`hudi-cdc connectors render`: the Debezium PostgreSQL source and Kafka Connect S3 sink configs from
the pipeline file. The current flavour carries what `capture` runs real Debezium with
(capture.engine_properties) and the layout bootstrap/stream read; the `--seed` flavour equals seed
001's two connector JSON files (golden test against the seed text in $HUDI_CDC_SHARED/seeds), key for
key and in order. Property names were checked against debezium/debezium and Confluent's S3 sink
(S3SinkConnectorConfig, StorageCommonConfig)."""

from __future__ import annotations

import json

from hudi_cdc.capture.capture import engine_properties
from hudi_cdc.config import parse_pipeline
from hudi_cdc.connect.connectors import native_registry_url, render_connectors
from tests.shared import render_connectors_cli, seed_text

MOMA_TABLES = {"artists": {"topic": "moma.public.artists", "record_key": "artist_id"},
               "artworks": {"topic": "moma.public.artworks", "record_key": "artwork_id"}}


def _pipeline(tmp_path, db: dict, **source):
    return parse_pipeline({"pipeline": "moma", "source": {"root": "landing/topics", "database": db, **source},
                           "lake": {"root": "lake", "hive_database": "moma"}, "tables": MOMA_TABLES},
                          "hudi-cdc.yaml", str(tmp_path))


def _seed_json(after: str) -> dict:
    text = seed_text("001")
    start = text.index("{", text.index(after))
    return json.JSONDecoder().raw_decode(text[start:])[0]


def test_seed_flavour_is_seed_001s_json(tmp_path):
    want_source = _seed_json("source_connector_moma_postgres_kafka.json, used in steps 2")
    want_sink = _seed_json("sink_connector_moma_kafka_s3.json, used in steps 5")
    p = _pipeline(tmp_path, {"host": "<your_database_hostname>", "name": "moma", "user": "<your_username>",
                             "password_env": "PGPASSWORD", "flush_size": 10000},
                  schema_registry="http://localhost:8080/apis/ccompat/v6")
    source, sink = render_connectors(p, seed=True)
    assert source["name"] == "source_connector_moma_postgres_kafka" and sink["name"] == "sink_connector_moma_kafka_s3"
    assert list(source["config"].items()) == list(want_source.items())
    assert list(sink["config"].items()) == list(want_sink.items())


def test_current_flavour_matches_what_capture_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", "never-rendered")
    p = _pipeline(tmp_path, {"host": "db.example", "name": "moma", "user": "hudi_cdc", "password_env": "PGPASSWORD",
                             "flush_size": 500}, root="s3://lake-bucket/landing/topics",
                  schema_registry="http://127.0.0.1:8080/apis/ccompat/v7")
    source, sink = render_connectors(p)
    assert "never-rendered" not in json.dumps([source, sink])
    cfg = source["config"]
    assert cfg["database.password"] == "${env:PGPASSWORD}"
    # every setting capture runs Debezium with, except the embedded engine's own and the publication mode
    embedded = engine_properties(p, None)
    for key in ("connector.class", "database.hostname", "database.port", "database.user", "database.dbname",
                "topic.prefix", "plugin.name", "slot.name", "publication.name", "table.include.list",
                "snapshot.mode", "tombstones.on.delete", "transforms", "transforms.unwrap.type",
                "transforms.unwrap.delete.tombstone.handling.mode", "transforms.unwrap.add.fields"):
        assert cfg[key] == embedded[key], key
    assert cfg["topic.prefix"] == "moma" and cfg["table.include.list"] == r"public\.artists,public\.artworks"
    assert cfg["publication.autocreate.mode"] == "filtered"
    assert cfg["value.converter.apicurio.registry.url"] == "http://127.0.0.1:8080/apis/registry/v3"
    s = sink["config"]
    # the sink lands where source.root points: <topics.dir>/<topic>/partition=<n>/<topic>+<n>+<offset>.avro
    assert (s["s3.bucket.name"], s["topics.dir"]) == ("lake-bucket", "landing/topics")
    assert s["topics"] == "moma.public.artists,moma.public.artworks"
    assert s["flush.size"] == "500" and s["rotate.schedule.interval.ms"] == "60000" and s["timezone"] == "UTC"
    assert s["format.class"].endswith(".AvroFormat") and s["partitioner.class"].endswith(".DefaultPartitioner")
    assert s["behavior.on.null.values"] == "ignore" and "store.url" not in s and "table.name.format" not in s
    # every value a string, as Kafka Connect's REST API returns them
    assert all(isinstance(v, str) for c in (cfg, s) for v in c.values())


def test_local_endpoint_and_registry_urls(tmp_path):
    p = parse_pipeline({"pipeline": "m", "source": {"root": "s3://hudi-cdc/landing/topics",
                                                    "schema_registry": "http://r:8080/apis/ccompat/v6"},
                        "lake": {"root": "lake"}, "storage": {"s3_endpoint": "http://127.0.0.1:9000"},
                        "tables": MOMA_TABLES}, "x.yaml", str(tmp_path))
    assert native_registry_url(p) == "http://r:8080/apis/registry/v2"
    from hudi_cdc.connect.connectors import sink_connector

    s = sink_connector(p)["config"]
    assert s["store.url"] == "http://127.0.0.1:9000" and s["s3.path.style.access.enabled"] == "true"
    assert s["flush.size"] == "1000"  # no database block: the capture default


def test_cli_prints_and_writes_the_configs(tmp_path, capsys):
    doc, err, written = render_connectors_cli(
        tmp_path, capsys, "pipeline: moma\nsource:\n  root: landing/topics\n  database: {name: moma, user: u, "
        "password_env: PGPASSWORD}\nlake: {root: lake}\ntables:\n"
        "  artists: {topic: moma.public.artists, record_key: artist_id}\n")
    assert [c["name"] for c in doc] == ["hudi-cdc-moma-source", "hudi-cdc-moma-s3-sink"]
    assert "config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider" in err
    assert written == ["source_connector_moma_postgres_kafka.json", "sink_connector_moma_kafka_s3.json"]
    assert json.loads((tmp_path / "c" / "sink_connector_moma_kafka_s3.json").read_text())["tasks.max"] == 1
