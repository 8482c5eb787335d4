"""A real local Kafka (one KRaft broker) and one distributed Kafka Connect worker with Debezium's
PostgreSQL connector (hudi_cdc/stack/kafka_connect.py), once per session, on free ports.

``connect_worker``: the started KafkaConnect. It depends on ``postgres`` so the worker's environment
holds the test role's password variable (HUDI_CDC_TEST_PGPASSWORD) that the connectors' ``${env:...}``
resolves; the value goes to the worker's environment only. Both JVMs are stopped and the data dir
removed at the end of the session, also on failure. Jars missing (no Maven Central) -> skip.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time

import pytest

from tests.shared import missing


@pytest.fixture(scope="session")
def connect_worker(postgres):
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.stack.kafka_connect import KafkaConnect, KafkaConnectConfig, install

    from .postgres import PASSWORD_ENV

    try:
        install()
    except EnvironmentProblem as exc:
        missing(str(exc))
    d = tempfile.mkdtemp(prefix="hudi-cdc-kafka-")
    kc = KafkaConnect(KafkaConnectConfig(d, worker_env={PASSWORD_ENV: os.environ[PASSWORD_ENV]}))
    t0 = time.monotonic()
    try:
        kc.up()
        kc.seconds["up"] = round(time.monotonic() - t0, 1)
        print(f"\nkafka + connect up in {kc.seconds}")
        yield kc
    finally:
        kc.down()
        if os.environ.get("HUDI_CDC_TEST_KEEP_KAFKA") != "1":  # =1 keeps the logs for a look
            shutil.rmtree(d, ignore_errors=True)
