"""`hudi-cdc connectors render` for a MySQL-family source (sources/mysql/connector.py).

The `--seed` flavour is seed 004's connector: every value is taken from the seed's own text in
$HUDI_CDC_SHARED/seeds (the Aurora endpoint and user of its mysql command line, the database of
`database.include.list`, the topic prefix of its `salesdb.salesdb.CUSTOMER` topic, the JSON envelope
its Redshift view parses, MSK's IAM port), key for key and in order; the password the seed shows
inline is never rendered. The current flavour carries what `capture` runs Debezium's binlog connector
with. Property names were checked against debezium/debezium (MySqlConnectorConfig,
KafkaSchemaHistory) and aws-msk-iam-auth's README."""

from __future__ import annotations

import json
import re

from hudi_cdc.config import parse_pipeline
from hudi_cdc.connect.connectors import notes, render_connectors
from hudi_cdc.sources.mysql import binlog as mysql
from tests.shared import render_connectors_cli, seed_text


def _pipeline(tmp_path, db: dict, tables: dict, **source):
    return parse_pipeline({"pipeline": "sales", "source": {"root": "landing/topics", "database": db, **source},
                           "lake": {"root": "lake"}, "tables": tables}, "hudi-cdc.yaml", str(tmp_path))


def test_seed_flavour_is_seed_004s_connector(tmp_path):
    text = seed_text("004")
    # what the seed says, read from its text
    host = re.search(r"mysql -f -u (\S+) -h (\S+)", text)
    user, hostname = host.group(1), host.group(2)
    password = re.search(r"--password=(\S+)", text).group(1)
    prefix, database, table = re.search(r'"(\w+)\.(\w+)\.(\w+)"', text).groups()
    assert "Debezium MySQL source Kafka connector" in text and "database.include.list" in text
    assert f"example database {database}" in text
    assert "json_parse(kafka_value)" in text and 'payload.after."CUST_ID"' in text  # the JSON envelope, no unwrap
    assert "allowing port 9098" in text and "(AWS IAM) authentication" in text  # MSK's IAM listener
    key = re.search(r'payload\.after\."(\w+)"', text).group(1)

    p = _pipeline(tmp_path, {"kind": "mysql", "host": hostname, "name": database, "user": user,
                             "password_env": "SALESDB_PASSWORD", "server_id": 123456},
                  {table.lower(): {"topic": f"{prefix}.{database}.{table}", "record_key": key}},
                  connect={"bootstrap_servers": "b-1.msk.example:9098"})
    rendered = render_connectors(p, seed=True)
    assert len(rendered) == 1  # seed 004 has no S3 sink: Redshift reads the topics from MSK
    iam = {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM",
           "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
           "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler"}
    want = {
        "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "tasks.max": "1",  # not in the seed's text: what the connector runs with (one binlog reader)
        "database.hostname": hostname,
        "database.port": "3306",
        "database.user": user,
        "database.password": "${env:SALESDB_PASSWORD}",
        "database.server.id": "123456",  # not in the seed's text: the binlog connector needs one
        "topic.prefix": prefix,
        "database.include.list": database,
        # not in the seed's text: the schema history the binlog connector needs, on MSK with IAM
        "schema.history.internal.kafka.bootstrap.servers": "b-1.msk.example:9098",
        "schema.history.internal.kafka.topic": f"schema-history.{prefix}",
        **{f"schema.history.internal.producer.{k}": v for k, v in iam.items()},
        **{f"schema.history.internal.consumer.{k}": v for k, v in iam.items()},
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",  # the {"schema", "payload"} envelope the seed's SQL reads
    }
    assert list(rendered[0]["config"].items()) == list(want.items())
    assert rendered[0]["name"] == "source_connector_sales_mysql_msk"
    assert password not in json.dumps(rendered) and not any(k.startswith("transforms") for k in want)
    # no password_env: a placeholder, still never the value
    p = _pipeline(tmp_path, {"kind": "mysql", "host": hostname, "name": database, "user": user},
                  {"customer": {"topic": f"{prefix}.{database}.{table}", "record_key": key}})
    cfg = render_connectors(p, seed=True)[0]["config"]
    assert cfg["database.password"] == "<your_password>"
    assert cfg["schema.history.internal.kafka.bootstrap.servers"] == "<kafka-bootstrap-servers>"


def test_current_flavour_matches_what_capture_runs(tmp_path, monkeypatch):
    from hudi_cdc.capture.capture import engine_properties

    monkeypatch.setenv("SHOP_PW", "never-rendered")
    tables = {"orders": {"topic": "shop.shop.orders", "record_key": "order_id"},
              "items": {"topic": "shop.shop.items", "record_key": "item_id",
                        "ordering_field": ["__file", "__pos", "__row"]}}
    p = _pipeline(tmp_path, {"kind": "mariadb", "host": "db.example", "name": "shop", "user": "cdc",
                             "password_env": "SHOP_PW"}, tables, root="s3://lake-bucket/landing/topics",
                  schema_registry="http://127.0.0.1:8080/apis/ccompat/v7")
    source, sink = render_connectors(p)
    assert "never-rendered" not in json.dumps([source, sink])
    cfg = source["config"]
    assert cfg["connector.class"] == "io.debezium.connector.mariadb.MariaDbConnector"
    assert cfg["database.password"] == "${env:SHOP_PW}"
    embedded = engine_properties(p, None)
    for k in ("connector.class", "database.hostname", "database.port", "database.user", "database.server.id",
              "topic.prefix", "database.include.list", "table.include.list", "snapshot.mode", "tombstones.on.delete",
              "bigint.unsigned.handling.mode", "driver.yearIsDateType", "heartbeat.interval.ms",
              "connect.keep.alive.interval.ms",
              "schema.history.internal.store.only.captured.tables.ddl", "include.schema.changes", "transforms",
              "transforms.unwrap.type", "transforms.unwrap.delete.tombstone.handling.mode",
              "transforms.unwrap.add.fields"):
        assert cfg[k] == embedded[k], k
    assert cfg["transforms.unwrap.add.fields"] == "op,db,table,file,pos,row,source.ts_ms"
    assert cfg["schema.history.internal.kafka.topic"] == "schema-history.shop"
    assert cfg["database.port"] == "3306" and cfg["table.include.list"] == r"shop\.orders,shop\.items"
    assert cfg["value.converter.apicurio.registry.url"] == "http://127.0.0.1:8080/apis/registry/v3"
    assert int(cfg["database.server.id"]) == mysql.server_id(p)
    assert sink["config"]["topics"] == "shop.shop.orders,shop.shop.items"
    assert all(isinstance(v, str) for c in (cfg, sink["config"]) for v in c.values())
    # the lake must order such a landing by the binlog position: the table still on __lsn is named
    assert notes(p) == ["tables.orders: a Kafka Connect landing of a binlog source has no __lsn; set "
                        "ordering_field: [__file, __pos, __row] (the binlog position)"]


def test_binlog_position_fields_order_as_the_binlog():
    # (__file, __pos, __row) compared field by field, as the lake compares ordering fields, orders
    # changes as __lsn does
    coords = [("mysql-bin-changelog.000002", 389, 0), ("mariadb-bin.000001", 5641, 1),
              ("mariadb-bin.000001", 5641, 0), ("mariadb-bin.000010", 4, 0), ("mariadb-bin.000002", 4, 0)]
    same_base = [c for c in coords if c[0].startswith("mariadb")]
    assert sorted(same_base) == sorted(same_base, key=lambda c: mysql.lsn(*c))


def test_cli_renders_a_mysql_source_with_the_ordering_note(tmp_path, capsys):
    doc, err, written = render_connectors_cli(
        tmp_path, capsys, "pipeline: shop\nsource:\n  root: landing/topics\n  database: {kind: mysql, name: shop, "
        "user: u, password_env: SHOP_PW}\nlake: {root: lake}\ntables:\n"
        "  orders: {topic: shop.shop.orders, record_key: order_id}\n")
    assert [c["name"] for c in doc] == ["hudi-cdc-shop-source", "hudi-cdc-shop-s3-sink"]
    assert doc[0]["config"]["connector.class"] == "io.debezium.connector.mysql.MySqlConnector"
    assert "ordering_field: [__file, __pos, __row]" in err and "EnvVarConfigProvider" in err
    assert written == ["source_connector_shop_mysql_msk.json"]
