"""The real local stack for tests: started once per test session, on free ports, in a temp data dir.

- ``stack_config``: the session's StackConfig (nothing started yet).
- ``registry_url``: Apicurio only (registry tests don't pay for the metastore and thrift server).
- ``hive_stack``: all three services (the registry is reused when it runs already).
- ``secured_registry``: a second Apicurio with basic auth (admin: sr-admin, reader: sr-readonly),
  for the 401/403 paths; its credentials are made up here and never leave the test.
Every process started is stopped at the end of the session (``Stack.down``), also on failure.
Set HUDI_CDC_TEST_STACK_DIR to reuse a stack you started yourself with ``hudi-cdc local up --data-dir``.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest


def _free_port_pair() -> int:
    """A port p with p and p+1 free (Apicurio serves health on p+1)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        with socket.socket() as s2:
            try:
                s2.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Started:
    """Remembers what this session started so teardown stops exactly that."""

    def __init__(self):
        self.stacks = []

    def up(self, stack, names=None):
        if stack not in self.stacks:
            self.stacks.append(stack)
        return stack.up(names)

    def down_all(self):
        for stack in reversed(self.stacks):
            try:
                stack.down()
            except Exception:  # noqa: BLE001 - teardown must go on
                pass


@pytest.fixture(scope="session")
def _stack_processes():
    started = _Started()
    yield started
    started.down_all()


@pytest.fixture(scope="session")
def stack_config(tmp_path_factory):
    from hudi_cdc.stack import StackConfig

    reuse = os.environ.get("HUDI_CDC_TEST_STACK_DIR")
    if reuse:
        return StackConfig.saved(Path(reuse))
    # s3=True: the metastore and thrift server can use table locations on the session's S3 endpoint
    # (tests/plugins/s3.py starts it in this same stack)
    return StackConfig(data_dir=tmp_path_factory.mktemp("stack"), registry_port=_free_port_pair(),
                       metastore_port=_free_port(), thrift_port=_free_port(), s3_port=_free_port(), s3=True,
                       trino_port=_free_port())


@pytest.fixture(scope="session")
def registry_url(stack_config, _stack_processes):
    from hudi_cdc.stack import Stack

    stack = Stack(stack_config)
    if not os.environ.get("HUDI_CDC_TEST_STACK_DIR"):
        _stack_processes.up(stack, ["registry"])
    return stack_config.registry_url


@pytest.fixture(scope="session")
def hive_stack(stack_config, _stack_processes):
    from hudi_cdc.stack import Stack

    stack = Stack(stack_config)
    if not os.environ.get("HUDI_CDC_TEST_STACK_DIR"):
        _stack_processes.up(stack)
    return stack_config


SECURED_USERS = {"admin": ("admin-test-pw", "sr-admin"), "reader": ("reader-test-pw", "sr-readonly")}


@pytest.fixture(scope="session")
def secured_registry(tmp_path_factory, _stack_processes):
    """(ccompat URL, users) of an Apicurio that requires basic auth."""
    from hudi_cdc.stack import Stack, StackConfig

    cfg = StackConfig(data_dir=tmp_path_factory.mktemp("secured-stack"), registry_port=_free_port_pair(),
                      registry_users=SECURED_USERS)
    _stack_processes.up(Stack(cfg), ["registry"])
    return cfg.registry_url, SECURED_USERS
