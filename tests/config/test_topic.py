"""Debezium's Kafka topic for a pipeline topic (config/topic.py), and where the rest of hudi-cdc uses it: the landing
folder, the registry subject, the S3 sink's topics; and table names in the SQL a check line prints."""

from __future__ import annotations

import pytest

from hudi_cdc.config import load_pipeline
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.connect.connectors import sink_connector
from hudi_cdc.registry.register import subject_for
from hudi_cdc.sources.tables import SourceTable, sql_ident
from tests.config.test_config import write

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("topic, kafka", [
    ("shop.public.orders", "shop.public.orders"),
    ("shop.Sales.Order Items", "shop.Sales.Order_Items"),
    ("shop.public.t-dash", "shop.public.t-dash"),
    ("shop.public.café", "shop.public.caf_"),
    ("shop.public.a😀b", "shop.public.a__b"),  # outside the BMP: two UTF-16 units, two replacements
    ("shop.public.a$b/c", "shop.public.a_b_c"),
    ("p." + "x" * 300, ("p." + "x" * 300)[:249]),
    (".", "_"), ("..", "__"),
])
def test_debeziums_topic_name(topic, kafka):
    assert kafka_topic(topic) == kafka
    assert kafka_topic(kafka) == kafka  # a valid name stays as it is


def test_the_landing_folder_subject_and_sink_topics_follow_the_kafka_topic(tmp_path):
    p = load_pipeline(write(tmp_path, """
pipeline: shop
source: {root: landing/topics}
lake: {root: lake, hive_database: shop}
tables:
  Order_Items: {topic: "shop.Sales.Order Items", record_key: [OrderId, Line_No]}
  orders: {topic: shop.public.orders, record_key: id}
"""))
    assert p.topic_dir("Order_Items").endswith("/landing/topics/shop.Sales.Order_Items/partition=0")
    assert subject_for(p, "Order_Items") == "shop.Sales.Order_Items-value"
    assert subject_for(p, "orders") == "shop.public.orders-value"
    sink = sink_connector(p.model_copy(update={"source": p.source.model_copy(update={"root": "s3://b/topics"})}))
    assert sink["config"]["topics"] == "shop.Sales.Order_Items,shop.public.orders"


def test_table_names_in_sql_are_quoted_only_when_they_must_be():
    assert [sql_ident(n) for n in ("orders", "_t1", "Order Items", "MixedCase", "t-dash", "order", "user", "1st",
                                   'a"b')] == ["orders", "_t1", '"Order Items"', '"MixedCase"', '"t-dash"', '"order"',
                                               '"user"', '"1st"', '"a""b"']
    assert SourceTable("Order_Items", "shop.Sales.Order Items", "Sales", "Order Items").sql_text == \
        '"Sales"."Order Items"'
