"""The one real SparkSession of the test session (local[2], Hudi 1.2.0 bundle + spark-avro, Hudi's SQL
extensions for its procedures, UTC, a throwaway warehouse), shared by every Spark test.
A test using it is marked `spark` by tests/conftest.py."""

import os

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, configure, local_conf
    from hudi_cdc.config.settings import CURRENT_HUDI
    from hudi_cdc.toolchain import jars

    paths = ",".join(str(p) for p in jars.ensure_jars(CURRENT_HUDI))
    builder = (
        SparkSession.builder.master("local[2]").appName("hudi-cdc-tests")
        .config("spark.jars", paths)
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        # the one long-lived JVM of a worker: C1 only and the serial collector too. Measured alone on this
        # machine (tests/jobs/test_cdc_semantics.py): 112 CPU s against 141 with C2 and G1 (wall 135 s vs 122 s
        # with a core to spare; the whole suite has none): the tests' Spark work is too varied for C2 to pay
        .config("spark.driver.extraJavaOptions", "-Djdk.attach.allowAttachSelf=true -XX:TieredStopAtLevel=1 "
                "-XX:+UseSerialGC")
    )
    # the same defaults and Hudi settings as the local job's session (hudi_cdc/common/spark_conf.py)
    session = configure(configure(builder, local_conf()), HUDI_SESSION_CONF).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
