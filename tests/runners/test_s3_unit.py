"""S3 settings without an endpoint running: the s3a confs and jars of a local run on s3:// roots,
no key ever in argv or rendered files, the storage keys' validation, hudi-rs options."""

from __future__ import annotations

import json

import pytest

from hudi_cdc.common import s3
from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import ConfigError
from hudi_cdc.runners.local import plan
from hudi_cdc.toolchain import jars

SECRET = "not-a-real-secret-value"


def _pipeline(tmp_path, **storage):
    return parse_pipeline({"pipeline": "p", "source": {"root": "s3://b/landing/topics"},
                           "lake": {"root": "s3://b/lake"}, "storage": storage,
                           "tables": {"t": {"topic": "x.t", "record_key": "id"}}},
                          str(tmp_path / "hudi-cdc.yaml"), str(tmp_path))


@pytest.fixture
def creds(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    s3.use(None)


def test_local_run_on_s3_gets_s3a_jars_and_settings_without_keys(tmp_path, creds):
    p = _pipeline(tmp_path, s3_endpoint="http://127.0.0.1:9000")
    argv = plan.argv(p, [render.Job("t", "COPY_ON_WRITE", "BULK_INSERT")], plan.cached_jar_paths(p))
    text = json.dumps(argv)
    assert "hadoop-aws-3.3.4.jar" in text and "aws-java-sdk-bundle-1.12.262.jar" in text
    confs = dict(a.split("=", 1) for a in argv if a.startswith("spark.hadoop.fs.s3"))
    assert confs["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert confs["spark.hadoop.fs.s3a.path.style.access"] == "true"
    assert confs["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert confs["spark.hadoop.fs.s3.impl"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert "DefaultAWSCredentialsProviderChain" in confs["spark.hadoop.fs.s3a.aws.credentials.provider"]
    rendered = text + "".join(render.render_properties(p).values())
    assert SECRET not in rendered and "AKIDEXAMPLE" not in rendered


def test_local_paths_keep_the_old_jars_and_confs(tmp_path):
    p = parse_pipeline({"pipeline": "p", "source": {"root": "landing"}, "lake": {"root": "lake"},
                        "tables": {"t": {"topic": "x.t", "record_key": "id"}}}, "f.yaml", str(tmp_path))
    assert not p.uses_s3
    assert [a.artifact for a in jars.local_job_artifacts(p.hudi.version, p.uses_s3)] == [
        "hudi-spark3.5-bundle_2.12", "spark-avro_2.12", "hudi-java-client"]
    assert not any("fs.s3" in c for c in render.spark_confs_local(p))


def test_endpoint_falls_back_to_the_sdk_variables(monkeypatch, tmp_path):
    s3.use(None)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9555/")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    ep = _pipeline(tmp_path).s3_endpoint()
    assert (ep.url, ep.region, ep.path_style) == ("http://127.0.0.1:9555", "eu-west-1", True)
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    assert _pipeline(tmp_path).s3_endpoint().url is None  # AWS itself: virtual-hosted, https


def test_hudi_rs_options_carry_the_endpoint_and_env_keys(creds):
    opts = s3.hudi_rs_options(s3.Endpoint("http://127.0.0.1:9000", "us-east-1", True))
    assert opts["aws_endpoint"] == "http://127.0.0.1:9000" and opts["aws_allow_http"] == "true"
    assert opts["aws_virtual_hosted_style_request"] == "false"
    assert opts["aws_secret_access_key"] == SECRET  # in memory only, from the environment
    assert s3.storage_options_for("/tmp/table") == {}


def test_storage_endpoint_must_be_http(tmp_path):
    with pytest.raises(ConfigError, match="storage.s3_endpoint"):
        _pipeline(tmp_path, s3_endpoint="127.0.0.1:9000")


def test_a_cluster_master_gets_the_executor_size_and_no_keys(tmp_path, creds):
    p = parse_pipeline({"pipeline": "p", "source": {"root": "s3://b/landing/topics"}, "lake": {"root": "s3://b/lake"},
                        "spark": {"master": "spark://127.0.0.1:7077", "executor_memory": "1g"},
                        "tables": {"t": {"topic": "x.t", "record_key": "id"}}}, "f.yaml", str(tmp_path))
    argv = plan.argv(p, [render.Job("t", "COPY_ON_WRITE", "BULK_INSERT")], plan.cached_jar_paths(p))
    assert argv[argv.index("--master") + 1] == "spark://127.0.0.1:7077"
    assert "spark.executor.memory=1g" in argv
    assert not any(a.startswith("spark.executorEnv.") for a in argv)  # executors find keys where they run
    assert SECRET not in json.dumps(argv)
    local = _pipeline(tmp_path)
    assert not any(c.startswith("spark.executor.memory") for c in render.spark_confs_local(local))
