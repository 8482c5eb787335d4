"""The `hudi-cdc` command as tests run it: a subprocess of this checkout's code (its root first on
PYTHONPATH, whatever is pip-installed), output captured, a timeout, and the failure's stderr tail in
the assertion message."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with the checkout first on PYTHONPATH."""
    out = dict(os.environ if env is None else env)
    rest = out.get("PYTHONPATH", "")
    out["PYTHONPATH"] = str(ROOT) + (os.pathsep + rest if rest else "")
    return out


def run_cli(*args: str, cwd: Path | str, env: Mapping[str, str] | None = None, timeout: float = 1800,
            check: bool = False) -> subprocess.CompletedProcess:
    """``python -m hudi_cdc.cli ARGS`` in ``cwd``; ``check``: a non-zero exit fails the test with its stderr."""
    proc = subprocess.run([sys.executable, "-m", "hudi_cdc.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=cli_env(env), timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"hudi-cdc {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc


def run_main(*args: str, cwd: Path | str, check: bool = True) -> int:
    """``hudi-cdc ARGS`` in this process (hudi_cdc.cli.main) from ``cwd``: with the ``inprocess_jobs`` fixture
    its Spark jobs run on the shared session. ``check``: a non-zero exit fails the test."""
    from hudi_cdc.cli import main

    before = Path.cwd()
    os.chdir(cwd)
    try:
        code = main(list(args))
    finally:
        os.chdir(before)
    if check and code != 0:
        raise AssertionError(f"hudi-cdc {' '.join(args)} failed ({code}): see the captured stderr")
    return int(code)
