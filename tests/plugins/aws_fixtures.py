"""moto in server mode (on 127.0.0.1, a free port) as the stand-in for AWS, for tests marked ``aws``.

The code under test talks plain HTTP to the server through boto3's standard chain: the endpoint
comes from ``AWS_ENDPOINT_URL`` and the (fake) credentials from the environment, exactly as a user's
would. moto's EMR steps never change state by themselves (the first step on a cluster is RUNNING,
later ones PENDING) and it has no FailureDetails, so ``StateScript`` moves a step or job run through
the states a test wants, writing them into moto's backend (the threaded server shares this
process's backends) each time the runner sleeps between polls; it also drives the runner's clock,
so a one-hour timeout takes no time at all.
"""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

ACCOUNT = "123456789012"  # moto's default account
REGION = "us-east-1"
BUCKET = "hudi-cdc-test-lake"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def moto_endpoint():
    """One moto server for the test session; torn down at the end."""
    from moto.server import ThreadedMotoServer

    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_env(moto_endpoint, monkeypatch, tmp_path):
    """Point boto3's default chain at moto, with throwaway credentials, and reset moto's state."""
    import requests

    for var in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
                "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    requests.post(f"{moto_endpoint}/moto-api/reset", timeout=10).raise_for_status()
    return moto_endpoint


@pytest.fixture
def boto(aws_env):
    """boto3 clients for the test's own setup and assertions (not used by the code under test)."""
    import boto3

    session = boto3.session.Session(region_name=REGION)
    return {name: session.client(name) for name in ("s3", "emr", "emr-serverless")}


@pytest.fixture
def lake_bucket(boto):
    boto["s3"].create_bucket(Bucket=BUCKET)
    return BUCKET


@pytest.fixture
def emr_cluster(boto, lake_bucket):
    """A (moto) EMR 7 cluster with a LogUri, as emr/cluster.yaml would create it."""
    resp = boto["emr"].run_job_flow(
        Name="hudi-cdc-test", ReleaseLabel="emr-7.12.0", LogUri=f"s3://{lake_bucket}/hudi-cdc/logs/",
        Applications=[{"Name": "Spark"}, {"Name": "Hive"}],
        Instances={"MasterInstanceType": "r5.2xlarge", "SlaveInstanceType": "r5.2xlarge", "InstanceCount": 3,
                   "KeepJobFlowAliveWhenNoSteps": True},
        JobFlowRole="hudi-cdc-ec2", ServiceRole="hudi-cdc-emr", StepConcurrencyLevel=10,
    )
    return resp["JobFlowId"]


@pytest.fixture
def serverless_app(boto):
    app = boto["emr-serverless"].create_application(name="hudi-cdc", releaseLabel="emr-7.12.0", type="SPARK")
    return app["applicationId"]


SERVERLESS_ROLE = f"arn:aws:iam::{ACCOUNT}:role/hudi-cdc-serverless-job"


# ---- driving state in moto's backend ------------------------------------------------------------
def emr_step(cluster_id: str, step_id: str):
    from moto.emr.models import emr_backends

    cluster = emr_backends[ACCOUNT][REGION].clusters[cluster_id]
    return next(s for s in cluster.steps if s.id == step_id)


def set_step_state(cluster_id: str, step_id: str, state: str, failure: dict[str, str] | None = None,
                   reason: str | None = None) -> None:
    step = emr_step(cluster_id, step_id)
    step.state = state
    status = dict(step.status)  # moto's own (State, StateChangeReason, Timeline)
    status["State"] = state
    if reason:
        status["StateChangeReason"] = {"Message": reason}
    if failure:
        status["FailureDetails"] = failure
    step.Status = status  # moto's serializer reads `Status` before `status`


def serverless_run(app_id: str, run_id: str):
    from moto.emrserverless.models import emrserverless_backends

    runs = emrserverless_backends[ACCOUNT][REGION].job_runs[app_id]
    return next(r for r in runs if r.id == run_id)


def set_run_state(app_id: str, run_id: str, state: str, details: str | None = None) -> None:
    run = serverless_run(app_id, run_id)
    run.state = state
    if details is not None:
        run.state_details = details


def put_gz(s3, uri: str, text: str) -> None:
    bucket, key = uri[len("s3://"):].split("/", 1)
    s3.put_object(Bucket=bucket, Key=key, Body=gzip.compress(text.encode()))


@dataclass
class StateScript:
    """Fake sleep + clock for a runner: each sleep applies the next scripted action."""

    actions: list[Callable[[], None]] = field(default_factory=list)
    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.actions:
            self.actions.pop(0)()

    def clock(self) -> float:
        return self.now


@pytest.fixture
def state_script():
    return StateScript()


@pytest.fixture
def echo_lines():
    lines: list[str] = []
    return lines


def pipeline_data(**emr: Any) -> dict[str, Any]:
    """A two-table pipeline on S3, as a user would write it for EMR."""
    settings = {"region": REGION, "bucket": BUCKET, "prefix": "hudi-cdc", "poll_seconds": 15,
                "timeout_seconds": 3600}
    settings.update(emr)
    return {
        "pipeline": "moma",
        "source": {"root": f"s3://{BUCKET}/topics",
                   "schema_registry": "http://registry.internal:8080/apis/ccompat/v7"},
        "lake": {"root": f"s3://{BUCKET}/lake", "hive_database": "moma", "hive_sync": True},
        "emr": settings,
        "tables": {
            "artists": {"topic": "moma.public.artists", "record_key": "artist_id",
                        "partition_field": "nationality"},
            "artworks": {"topic": "moma.public.artworks", "record_key": "artwork_id",
                         "partition_field": "classification"},
        },
    }
