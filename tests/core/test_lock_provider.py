"""lake.lock_provider: Hudi's optimistic concurrency settings in the AWS jobs' argv, never in the
properties files (a local run reads those too and is guarded by hudi-cdc's file lock)."""

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.core.lock_provider import lock_conf
from hudi_cdc.errors import ConfigError
from tests.plugins.aws_fixtures import pipeline_data

PROPS = "s3://b/p/artists_mor.properties"


def make(version: str | None = None, engine: str | None = None, **lake):
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["lake"].update(lake)
    data["hudi"] = {k: v for k, v in (("version", version), ("engine", engine)) if v}
    return parse_pipeline(data, "hudi-cdc.yaml", "/")


def conf_of(argv: list[str]) -> dict[str, str]:
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "--hoodie-conf"]
    return dict(kv.split("=", 1) for kv in pairs)


def test_none_renders_nothing():
    p = make()
    argv = render.streamer_argv(p, "artists", "MERGE_ON_READ", "UPSERT", target="emr", props_uri=PROPS)
    assert not any(k.startswith(("hoodie.write.lock", "hoodie.write.concurrency")) for k in conf_of(argv))


@pytest.mark.parametrize("target", ["emr", "emr-serverless"])
@pytest.mark.parametrize("engine", ["hoodiestreamer", "hudi-cdc"])
def test_dynamodb_in_every_aws_argv(target, engine):
    p = make(engine=engine, lock_provider="dynamodb", lock_options={"dynamodb.table": "locks"})
    argv = render.streamer_argv(p, "artists", "MERGE_ON_READ", "UPSERT", target=target, props_uri=PROPS)
    conf = conf_of(argv)
    assert conf["hoodie.write.concurrency.mode"] == "optimistic_concurrency_control"
    assert conf["hoodie.clean.failed.writes.policy"] == "LAZY"
    assert conf["hoodie.write.lock.provider"] == "org.apache.hudi.aws.transaction.lock.DynamoDBBasedLockProvider"
    assert conf["hoodie.write.lock.dynamodb.table"] == "locks"  # the user's value wins
    assert conf["hoodie.write.lock.dynamodb.region"] == p.emr.region
    # one lock per table: CoW and MoR of one table name are different tables
    assert conf["hoodie.write.lock.dynamodb.partition_key"] == "moma_mor.artists"
    cow = conf_of(render.streamer_argv(p, "artists", "COPY_ON_WRITE", "UPSERT", target=target, props_uri=PROPS))
    assert cow["hoodie.write.lock.dynamodb.partition_key"] == "moma_cow.artists"


def test_never_in_the_properties_files():
    p = make(lock_provider="dynamodb")
    assert not any("hoodie.write.lock" in text or "concurrency" in text
                   for text in render.render_properties(p).values())


def test_zookeeper_needs_a_url_and_renders_its_keys():
    with pytest.raises(ConfigError, match="zookeeper.url"):
        make(lock_provider="zookeeper")
    p = make(lock_provider="zookeeper", lock_options={"zookeeper.url": "zk1"})
    conf = dict(kv.split("=", 1) for kv in lock_conf(p, "artists", "COPY_ON_WRITE", "current"))
    assert conf["hoodie.write.lock.provider"] == "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
    assert conf["hoodie.write.lock.zookeeper.url"] == "zk1"
    assert conf["hoodie.write.lock.zookeeper.port"] == "2181"
    assert conf["hoodie.write.lock.zookeeper.lock_key"] == "moma_cow.artists"


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="lock_options"):
        make(lock_options={"dynamodb.table": "x"})  # options without a provider
    with pytest.raises(ConfigError, match="prefix"):
        make(lock_provider="dynamodb", lock_options={"hoodie.write.lock.dynamodb.table": "x"})
    with pytest.raises(ConfigError, match="lock_provider"):
        make(lock_provider="etcd")
    p = make("0.9.0", lock_provider="dynamodb")
    with pytest.raises(ConfigError, match="0.10"):
        render.streamer_argv(p, "artists", "COPY_ON_WRITE", "UPSERT", target="emr", props_uri=PROPS)


def test_seed_spells_the_failed_writes_key_its_way():
    p = make("0.9.0", lock_provider="zookeeper", lock_options={"zookeeper.url": "zk"})
    conf = dict(kv.split("=", 1) for kv in lock_conf(p, "artists", "COPY_ON_WRITE", "seed"))
    assert conf["hoodie.cleaner.policy.failed.writes"] == "LAZY"
