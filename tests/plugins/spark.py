"""The one real SparkSession of the test session (local[2], Hudi 1.2.0 bundle + spark-avro, Hudi's SQL
extensions for its procedures, UTC, a throwaway warehouse), shared by every Spark test.
A test using it is marked `spark` by tests/conftest.py."""

import os

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hudi_cdc import jars
    from hudi_cdc.config import CURRENT_HUDI

    paths = ",".join(str(p) for p in jars.ensure_jars(CURRENT_HUDI))
    session = (
        SparkSession.builder.master("local[2]").appName("hudi-cdc-tests")
        .config("spark.jars", paths)
        .config("spark.driver.memory", "2g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
        .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
        .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
        .config("spark.driver.extraJavaOptions", "-Djdk.attach.allowAttachSelf=true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
