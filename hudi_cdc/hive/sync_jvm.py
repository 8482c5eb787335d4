"""One JVM that runs Hudi's HiveSyncTool for target after target (`hudi-cdc sync`).

A HiveSyncTool JVM spends ~3 CPU seconds loading classes before it syncs anything, so one JVM per target
made 200 tables of both types take ~12 minutes on two cores. Here one JVM serves every target: py4j's
GatewayServer (pyspark's jars carry it) started with the Hudi bundle and Spark's jars on its classpath, and
``HiveSyncTool.main`` called with each target's arguments, the very command line a per-target JVM got
(``syncHoodieTable`` closes its metastore client after each). A call that overruns its timeout kills the JVM
(that target fails; the next call starts a new one). The JVM's own output goes to a log file, never to the
terminal.
"""

from __future__ import annotations

import re
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hudi_cdc.common.causes import error_lines, root_cause
from hudi_cdc.errors import JobError

_ERR = re.compile(r"(Exception|ERROR|Error:|Caused by)")


class SyncJvm:
    """HiveSyncTool's main in one long-lived JVM; `call` is one target's sync, raising JobError on failure."""

    def __init__(self, java: str, java_options: Sequence[str], classpath: str, env: dict[str, str] | None,
                 log_path: Path):
        self.java, self.java_options, self.classpath, self.env = java, list(java_options), classpath, env
        self.log_path = log_path
        self._proc: subprocess.Popen | None = None
        self._gateway: Any = None

    def _start(self) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway  # type: ignore[import-untyped]

        argv = [self.java, *self.java_options, "-cp", self.classpath, "py4j.GatewayServer",
                "--die-on-broken-pipe", "--enable-auth", "0"]
        log = open(self.log_path, "ab")  # noqa: SIM115 (the drain thread closes it)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=self.env)
        except OSError as exc:
            log.close()
            raise JobError(f"hive sync: cannot start {self.java}: {exc}") from None
        assert proc.stdout is not None
        port_line, token = proc.stdout.readline(), proc.stdout.readline().strip()
        if not port_line.strip().isdigit():
            proc.kill()
            log.close()
            raise JobError(f"hive sync: the sync JVM did not start: {_tail(self.log_path)}")
        threading.Thread(target=_drain, args=(proc.stdout, log), daemon=True).start()
        self._proc = proc
        self._gateway = JavaGateway(gateway_parameters=GatewayParameters(
            port=int(port_line), auth_token=token.decode(), auto_convert=True,
            enable_memory_management=False))  # no release messages from finalizers to a JVM that is gone

    def call(self, args: Sequence[str], label: str, timeout: float) -> None:
        """HiveSyncTool.main(args) in the JVM; JobError naming label if it throws, dies or overruns timeout."""
        from py4j.protocol import Py4JError, Py4JJavaError  # type: ignore[import-untyped]

        if self._proc is None or self._proc.poll() is not None:
            self._start()
        gateway = self._gateway
        failure: list[BaseException] = []

        def run() -> None:
            try:
                array = gateway.new_array(gateway.jvm.java.lang.String, len(args))
                for i, arg in enumerate(args):
                    array[i] = arg
                gateway.jvm.org.apache.hudi.hive.HiveSyncTool.main(array)
            except BaseException as exc:  # handed to the caller's thread below
                failure.append(exc)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            self.close()
            raise JobError(f"hive sync of {label} did not finish within {int(timeout)}s")
        if not failure:
            return
        exc = failure[0]
        if isinstance(exc, Py4JJavaError):
            raise JobError(f"hive sync of {label} failed: {root_cause(exc, 300)}") from None
        if isinstance(exc, Py4JError):
            self.close()
            raise JobError(f"hive sync of {label}: the sync JVM failed ({exc}): {_tail(self.log_path)}") from None
        raise exc

    def close(self) -> None:
        if self._gateway is not None:
            try:
                self._gateway.close()
            except Exception:  # noqa: BLE001 (the JVM is killed next; nothing of the result depends on it)
                pass
            self._gateway = None
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def __enter__(self) -> SyncJvm:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _drain(stream, log) -> None:
    try:
        for line in iter(stream.readline, b""):
            log.write(line)
    finally:
        log.close()


def _tail(path: Path) -> str:
    """The JVM log's last error lines, one line."""
    try:
        return error_lines(path.read_text(errors="replace"), _ERR, keep=3)
    except OSError:
        return "(no output)"
