"""A real Trino for the test session (``trino``: a TrinoClient), started once in the session's stack
(tests/plugins/stack.py: same data dir, its metastore) on a free port. scripts/install-trino.sh runs
first (on demand: it fetches Trino from Maven Central once and checks for a Java 24+); a Trino that
cannot be installed or does not start is an error, never a skip. Stopped with the stack at the end of
the session. A test using it is marked `trino` (and `hive`: it needs the metastore) by tests/conftest.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def trino(stack_config, _stack_processes):
    from hudi_cdc.stack import Stack
    from hudi_cdc.stack.trino_client import TrinoClient

    if not os.environ.get("HUDI_CDC_TEST_STACK_DIR"):
        env = {**os.environ, "PYTHON": sys.executable}
        proc = subprocess.run(["bash", str(ROOT / "scripts" / "install-trino.sh"), stack_config.trino_version],
                              capture_output=True, text=True, env=env, cwd=str(ROOT))
        if proc.returncode != 0:
            pytest.fail(f"scripts/install-trino.sh failed: {(proc.stdout + proc.stderr).strip()[-800:]}",
                        pytrace=False)
        _stack_processes.up(Stack(stack_config), ["metastore", "trino"])
    return TrinoClient(f"http://{stack_config.host}:{stack_config.trino_port}")
