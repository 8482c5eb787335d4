"""The one real SparkSession of the test session (local[2], Hudi 1.2.0 bundle + spark-avro, Hudi's SQL
extensions for its procedures, UTC, a throwaway warehouse), shared by every Spark test.
A test using it is marked `spark` by tests/conftest.py."""

import os

import pytest


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    from hudi_cdc.common import py4j_lookups
    from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, configure, local_conf
    from hudi_cdc.config.settings import CURRENT_HUDI
    from hudi_cdc.toolchain import jars

    paths = ",".join(str(p) for p in jars.ensure_jars(CURRENT_HUDI))
    builder = (
        SparkSession.builder.master("local[2]").appName("hudi-cdc-tests")
        .config("spark.jars", paths)
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        # the one long-lived JVM of a worker: all JIT tiers and G1, over the tests' C1-only JDK_JAVA_OPTIONS. It
        # runs hundreds of rounds over a suite, so C2's compiles pay: four rounds of two tables on one fresh
        # session took 161 CPU s / 102 s wall with C2 + G1, 170 / 149 s with C1 + serial, 172+ with C2 + serial
        # (session 40); C1 + serial (session 39) went with CI's run growing from ~55 to 76 minutes
        .config("spark.driver.extraJavaOptions", "-Djdk.attach.allowAttachSelf=true -XX:TieredStopAtLevel=4 "
                "-XX:+UseG1GC")
    )
    # the same defaults and Hudi settings as the local job's session (hudi_cdc/common/spark_conf.py)
    session = py4j_lookups.install_for(configure(configure(builder, local_conf()), HUDI_SESSION_CONF).getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
