"""The real local S3 endpoint for tests: s3proxy (filesystem backend) started once per session in the
session's stack (tests/plugins/stack.py: same data dir and ports, so the stack's metastore and thrift
server reach it), stopped at the end (``Stack.down``), also on failure.

- ``s3_endpoint``: the endpoint URL; the session's environment carries AWS_ENDPOINT_URL and the
  endpoint's fixed local keys (as a user exports them, docs/s3.md), so every client finds them.
- ``s3_bucket``: a fresh bucket per test (s3://<name>), so tests never see each other's files.
"""

from __future__ import annotations

import os
import uuid

import pytest


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
