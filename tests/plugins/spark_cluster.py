"""A real Spark standalone cluster for tests: one master and one worker (1 core, 1 GiB) from the
pyspark wheel (SPARK_HOME = pyspark's package folder), on free loopback ports, started with
hudi_cdc/stack/process.py and stopped at the end of the module, also on failure.

``spark_cluster``: a SparkCluster: its master URL (spark://127.0.0.1:P) and the worker's work folder
(one app-*/<executor>/ folder per executor it ran, with its stdout and stderr). The worker starts with the S3 endpoint's
keys in its environment (the local s3proxy's fixed keys): executors inherit the worker's environment
and Hadoop's s3a finds them there through the AWS default chain, as a worker on a real host finds
its host's keys (environment, ~/.aws/credentials, an instance role). The application carries no key:
no spark.executorEnv.*, nothing in argv.
"""

from __future__ import annotations

import json
import socket
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

DAEMON_MEMORY = "512m"  # the master's and the worker's own JVMs; the executor gets --memory


@dataclass(frozen=True)
class SparkCluster:
    master_url: str
    work_dir: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive_workers(webui_port: int) -> int:
    with urllib.request.urlopen(f"http://127.0.0.1:{webui_port}/json/", timeout=2) as resp:
        state = json.load(resp)
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory, s3_endpoint):
    from hudi_cdc.stack import process
    from hudi_cdc.stack.s3proxy import local_credentials_env
    from hudi_cdc.toolchain.java_spark import find_java, spark_home

    data = Path(tmp_path_factory.mktemp("spark-cluster"))
    java = find_java(17, "Spark")
    home = spark_home()
    base_env = {
        "SPARK_HOME": str(home),
        "JAVA_HOME": str(Path(java).resolve().parent.parent),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
        "SPARK_DAEMON_JAVA_OPTS": process.marker(data),
        "SPARK_CONF_DIR": str(data / "conf"),  # none of pyspark's or the machine's settings
    }
    (data / "conf").mkdir()
    port, webui = _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    pids: list[tuple[str, int]] = []
    try:
        mpid = process.spawn([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                              "--port", str(port), "--webui-port", str(webui)],
                             data / "master.log", data / "master.pid", data, base_env)
        pids.append(("master", mpid))
        state = process.wait_until(lambda: process.port_open("127.0.0.1", port), 120,
                                   lambda: process.is_alive(mpid))
        assert state == "ready", f"Spark master {state}: {process.log_tail(data / 'master.log')}"
        worker_env = {**base_env, **local_credentials_env()}  # the host's keys: executors inherit them
        wpid = process.spawn([spark_class, "org.apache.spark.deploy.worker.Worker", master_url,
                              "--host", "127.0.0.1", "--webui-port", str(_free_port()), "--cores", "1",
                              "--memory", "1g", "--work-dir", str(data / "work")],
                             data / "worker.log", data / "worker.pid", data, worker_env)
        pids.append(("worker", wpid))
        state = process.wait_until(lambda: _alive_workers(webui) >= 1, 120, lambda: process.is_alive(wpid))
        assert state == "ready", f"Spark worker {state}: {process.log_tail(data / 'worker.log')}"
        yield SparkCluster(master_url, data / "work")
    finally:
        for _name, pid in reversed(pids):
            process.stop(pid)
