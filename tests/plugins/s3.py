"""The real local S3 endpoint for tests: s3proxy (filesystem backend) started once per session in the
session's stack (tests/plugins/stack.py: same data dir and ports, so the stack's metastore and thrift
server reach it), stopped at the end (``Stack.down``), also on failure.

- ``s3_endpoint``: the endpoint URL; the session's environment carries AWS_ENDPOINT_URL and the
  endpoint's fixed local keys (as a user exports them, docs/s3.md), so every client finds them.
- ``s3_bucket``: a fresh bucket per test (s3://<name>), so tests never see each other's files.

And what the tests that run the MoMA sample on s3:// share (test_s3.py, test_cluster.py): its pipeline
file on a bucket, its steps through the CLI, its artists tables compared with the replay of the landing.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from tests.cli import run_cli

# the sample's steps as a user runs them: snapshot, bootstrap, the seed's changes, one stream round
SAMPLE_STEPS = (("sample", ("sample", "moma", "--stage", "snapshot")),
                ("bootstrap", ("bootstrap",)),
                ("changes", ("sample", "moma", "--stage", "changes")),
                ("stream", ("stream", "--table", "artists", "--once")))


@pytest.fixture(scope="session")
def s3_endpoint(stack_config, _stack_processes):
    from hudi_cdc.common import s3
    from hudi_cdc.stack import Stack
    from hudi_cdc.stack.s3proxy import local_credentials_env

    cfg = stack_config
    stack = Stack(cfg)
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                            "AWS_REGION")}
    try:
        _stack_processes.up(stack, ["s3"])
        os.environ.update(local_credentials_env())
        os.environ.update({"AWS_ENDPOINT_URL": cfg.s3_endpoint, "AWS_REGION": "us-east-1"})
        s3._clients.clear()
        s3.use(None)
        yield cfg.s3_endpoint
    finally:
        stack.down(["s3"])
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        s3._clients.clear()


@pytest.fixture
def s3_bucket(s3_endpoint) -> str:
    from hudi_cdc.common import s3

    name = f"t-{uuid.uuid4().hex[:12]}"
    s3.client().create_bucket(Bucket=name)
    return name


def sample_pipeline_on_s3(bucket: str, settings: str) -> str:
    """The sample's pipeline file (its artists table, hudi_cdc.demo.workspace) with landing and lake on
    s3://BUCKET; ``settings``: the sections in between (storage, spark, emr ...) as YAML text."""
    from hudi_cdc.demo.workspace import sample_tables_text

    return (f"pipeline: moma\nsource:\n  root: s3://{bucket}/landing/topics\nlake:\n  root: s3://{bucket}/lake\n"
            f"{settings}{sample_tables_text('artists')}")


def run_sample_steps(cwd: Path, timeout: float = 1800) -> dict[str, float]:
    """SAMPLE_STEPS through the CLI in ``cwd`` (each must exit 0); the seconds each took."""
    times = {}
    for step, args in SAMPLE_STEPS:
        t0 = time.monotonic()
        run_cli(*args, cwd=cwd, timeout=timeout, check=True)
        times[step] = round(time.monotonic() - t0, 1)
    return times


def download(root_uri: str, dest: Path) -> Path:
    """Every file under ``root_uri`` (s3:// or local) copied below ``dest``, same relative paths."""
    from hudi_cdc.common import storage

    for uri, _, _ in storage.walk_files(root_uri):
        path = dest / uri[len(root_uri) + 1:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(storage.read_bytes(uri) or b"")
    return dest


def assert_artists_equal_the_replay(base: str, landing: Path) -> None:
    """The artists table at ``base`` (read with hudi-rs) equals the replay of the events landed in
    ``landing``, key for key and column for column (__source_ts_ms aside)."""
    from hudi_cdc import sample
    from hudi_cdc.lake.reader import read_table, rows_by_key

    want = sample.expected_state(landing, "artists")
    got = rows_by_key(read_table(base), "artist_id")
    assert set(got) == set(want), base
    cols = [c for c in next(iter(want.values())) if c != "__source_ts_ms"]
    bad = [k for k in want if any(got[k][c] != want[k][c] for c in cols)]
    assert not bad, f"{base}: {len(bad)} rows differ, e.g. {bad[:3]}"
