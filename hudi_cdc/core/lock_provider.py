"""Hudi's own concurrency settings for writers on EMR / EMR Serverless (``lake.lock_provider``).

Local runs are guarded by hudi-cdc's file lock (lock.py); on a cluster, where two steps or two
clusters can write one S3 table, Hudi's optimistic concurrency control with a lock provider does
it. These are rendered as ``--hoodie-conf`` flags of the AWS jobs only, never into the properties
files a local run reads too (a local JVM has no DynamoDB to lock in)."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError

PROVIDERS = {
    "dynamodb": "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider",
    "zookeeper": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider",
}
LOCK_PREFIX = "hoodie.write.lock."
# failed writes must be rolled back lazily with optimistic concurrency control (Hudi rejects EAGER);
# Hudi 0.9 spells the key differently
FAILED_WRITES_KEY = {"seed": "hoodie.cleaner.policy.failed.writes"}
FAILED_WRITES_DEFAULT_KEY = "hoodie.clean.failed.writes.policy"


def lock_conf(pipeline: Pipeline, table: str, table_type: str, profile_name: str) -> list[str]:
    """key=value settings for one job's writer; [] without a lock provider."""
    lake = pipeline.lake
    if lake.lock_provider == "none":
        return []
    if lake.lock_provider == "dynamodb" and profile_name == "seed":
        raise ConfigError(f"lake.lock_provider: dynamodb needs Hudi 0.10 or later (the pipeline uses "
                          f"{pipeline.hudi.version}) ({pipeline.source_file})")
    # one lock per table (its base path): the Hive database names the table type
    key = f"{pipeline.hive_db(table_type)}.{table}"
    options: dict[str, str] = {}
    if lake.lock_provider == "dynamodb":
        options = {"dynamodb.table": "hudi-cdc-locks", "dynamodb.partition_key": key,
                   "dynamodb.region": pipeline.emr.region, "dynamodb.billing_mode": "PAY_PER_REQUEST"}
    elif lake.lock_provider == "zookeeper":
        options = {"zookeeper.port": "2181", "zookeeper.base_path": f"/hudi-cdc/{pipeline.pipeline}",
                   "zookeeper.lock_key": key}
    options.update(lake.lock_options)
    return ["hoodie.write.concurrency.mode=optimistic_concurrency_control",
            f"{FAILED_WRITES_KEY.get(profile_name, FAILED_WRITES_DEFAULT_KEY)}=LAZY",
            f"hoodie.write.lock.provider={PROVIDERS[lake.lock_provider]}",
            *(f"{LOCK_PREFIX}{k}={v}" for k, v in sorted(options.items()))]


def lock_flags(pipeline: Pipeline, table: str, table_type: str, profile_name: str) -> list[str]:
    """The same as HoodieStreamer's --hoodie-conf flags."""
    return [x for kv in lock_conf(pipeline, table, table_type, profile_name) for x in ("--hoodie-conf", kv)]
