"""The Spark Thrift Server (HiveServer2 protocol) on the stack's metastore, with the Hudi Spark bundle.

``spark-submit --class org.apache.spark.sql.hive.thriftserver.HiveThriftServer2`` from the pyspark
wheel, local[1], the Hudi session extension and catalog, bound to 127.0.0.1 (thrift port, driver
and block manager; no UI). ``up`` checks it with a real ``SHOW DATABASES`` through PyHive.
"""

from __future__ import annotations

import os

from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, local_conf
from hudi_cdc.stack import process
from hudi_cdc.stack.s3proxy import s3a_support
from hudi_cdc.stack.service import Launch, Service
from hudi_cdc.toolchain.java_spark import spark_submit

MAIN_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"


class ThriftServer(Service):
    name = "thriftserver"
    start_timeout = 240.0

    @property
    def port(self) -> int:
        return self.cfg.thrift_port

    @property
    def url(self) -> str:
        return f"jdbc:hive2://{self.host}:{self.port}/default"

    def prepare(self, progress=None) -> Launch:
        from hudi_cdc.toolchain.jars import ensure_jars

        submit = spark_submit()
        jars = ensure_jars(self.cfg.hudi_version, progress)
        s3a_jars, s3a_conf, s3_env = s3a_support(self.cfg, progress)
        jars = [*jars, *s3a_jars]
        warehouse = self.cfg.data_dir / "warehouse"
        tmp = self.dir / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        confs = {
            **HUDI_SESSION_CONF,
            "spark.sql.catalogImplementation": "hive",
            "spark.hadoop.hive.metastore.uris": f"thrift://{self.host}:{self.cfg.metastore_port}",
            "spark.sql.warehouse.dir": f"file://{warehouse}",
            **local_conf(1, self.host),
            "spark.local.dir": str(tmp),
            **{f"spark.hadoop.{k}": v for k, v in s3a_conf.items()},
        }
        argv: list[str] = [str(submit), "--master", "local[1]", "--driver-memory", self.cfg.thrift_memory,
                           "--name", "hudi-cdc-thriftserver", "--class", MAIN_CLASS,
                           # the driver's own classpath, not --jars: HiveServer2 closes a session's
                           # classloader when the session ends, and classes --jars brought in through
                           # it (HoodieCatalog's HoodieInternalV2Table) then fail to load
                           "--driver-class-path", os.pathsep.join(str(j) for j in jars),
                           "--driver-java-options",
                           f"{process.marker(self.cfg.data_dir)} -Dderby.system.home={self.dir}"]
        for k, v in confs.items():
            argv += ["--conf", f"{k}={v}"]
        argv += ["--hiveconf", f"hive.server2.thrift.port={self.port}",
                 "--hiveconf", f"hive.server2.thrift.bind.host={self.host}",
                 "spark-internal"]
        return Launch(argv=argv, env={"SPARK_LOG_DIR": str(self.dir), **s3_env}, cwd=self.dir)

    def probe(self) -> None:
        from pyhive import hive

        conn = hive.connect(self.host, self.port, auth="NONE")
        try:
            cur = conn.cursor()
            cur.execute("SHOW DATABASES")
            cur.fetchall()
        finally:
            conn.close()

    def quick_probe(self) -> bool:
        return process.port_open(self.host, self.port)
