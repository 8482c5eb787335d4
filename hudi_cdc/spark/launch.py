"""One launcher for every spark-submit hudi-cdc starts: the local runner's streamer job, the real
HoodieDeltaStreamer 0.14 jobs (runners/deltastreamer) and the Iceberg apply job (sinks/iceberg).

Every launch
- gets the Spark environment (`spark_env`: SPARK_HOME, JAVA_HOME, the Python of the driver,
  SPARK_LOCAL_IP on loopback; secrets only ever in the environment, never in argv);
- writes its argv and all its output to one log file;
- inherits the table locks this process holds (lock.held_fds), so a table stays locked while the
  JVM writes it even if hudi-cdc is gone;
- dies with hudi-cdc: PR_SET_PDEATHSIG (Linux) SIGKILLs the child when the hudi-cdc process dies,
  so a killed command never leaves a JVM writing a table whose lock it no longer holds. The
  child runs in its own session, so a terminal's Ctrl-C reaches hudi-cdc only, which stops the
  job (`Launcher.terminate`: SIGTERM to its process group, then SIGKILL);
- maps the driver's class-data sharing archive (spark/cds.py), built by the first run that ends well;
- speaks one result/error protocol: a line ``HUDI_CDC_RESULT <json>`` is the job's result, a line
  ``HUDI_CDC_ERROR <json>`` its error ({"message", "kind"}), lines ``hudi-cdc: ...`` its progress. The
  streamer's error of a run of several targets adds "targets": each target's {"table", "table_type",
  "base_path"} with its "result", or its "error" ({"message", "kind"}) and "code" (every target ran).
  Jobs that print none (HoodieDeltaStreamer) are judged by their exit code and the log's root cause.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hudi_cdc.common.causes import root_cause
from hudi_cdc.core import lock
from hudi_cdc.spark import cds

RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "
PROGRESS_PREFIX = "hudi-cdc: "
TAIL_LINES = 400
PR_SET_PDEATHSIG = 1

Progress = Callable[[str], None]


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl, found in this process (Linux), or None."""
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the child is stopped by terminate() only
        return None


# Loaded here, never in the child: the child of a fork runs only the calling thread, so a module another
# thread was importing at the fork (capture's JPype thread beside `run`'s stream) stays locked there, and an
# `import ctypes` in the child waited on it for ever: `hudi-cdc run` hung before its stream's JVM started.
_PRCTL = _load_prctl()


def die_with_parent() -> None:
    """In the child before exec (Linux): SIGKILL it when hudi-cdc dies (PR_SET_PDEATHSIG survives
    exec, and spark-submit execs the JVM in the same process). No import and no library loading here
    (see _PRCTL): one call of a C function the parent found."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL)


def spark_env(*, spark_home: str | Path, java_home: str | Path, python: str, extra: Mapping[str, str] | None = None,
              drop: Sequence[str] = (), force_local_ip: bool = False) -> dict[str, str]:
    """The environment of a spark-submit: this process's, less `drop`, plus `extra` (credentials
    and endpoints go here, never into argv), SPARK_HOME, JAVA_HOME, the driver's and workers'
    Python, and SPARK_LOCAL_IP on loopback (forced, or unless the user set one)."""
    env = dict(os.environ)
    for name in drop:
        env.pop(name, None)
    env.update(extra or {})
    env["SPARK_HOME"] = str(spark_home)
    env["JAVA_HOME"] = str(java_home)
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = python
    if force_local_ip:
        env["SPARK_LOCAL_IP"] = "127.0.0.1"
    else:
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, never the machine's public address
    return env


@dataclass
class Outcome:
    """How a launch ended: exit code (None: killed at its time limit), the job's result and error
    lines, the output's last lines, seconds, and the log file."""

    code: int | None
    result: Any = None
    error: dict | None = None
    tail: list[str] = field(default_factory=list)
    seconds: float = 0.0
    log_path: Path | None = None

    @property
    def ok(self) -> bool:
        return self.code == 0

    @property
    def timed_out(self) -> bool:
        return self.code is None

    def cause(self) -> str:
        """One line: the job's own error, else how it was killed, else the root cause in its output."""
        if self.error and self.error.get("message"):
            return str(self.error["message"])
        if self.code is None:
            return "timed out"
        if self.code < 0:  # killed (OOM killer, kill -9): the log's last exception is not why
            return f"the job was killed by {signal.Signals(-self.code).name}"
        return root_cause(self.tail)


class Launcher:
    """Runs spark-submits one at a time and can stop the running one from another thread."""

    def __init__(self) -> None:
        self.child: subprocess.Popen | None = None
        self._stopping = threading.Lock()

    def run(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path, log_path: Path,
            progress: Progress | None = None, timeout: float | None = None) -> Outcome:
        """Start argv, copy its output to log_path, report its progress lines, wait for it.

        timeout: kill it (process group, SIGKILL) after this many seconds; Outcome.code is then None."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        started = time.time()
        tail: list[str] = []
        result: Any = None
        error: dict | None = None
        timed_out = threading.Event()
        sharing = cds.plan(env)
        code: int | None = None
        with open(log_path, "w") as log:
            log.write("argv: " + json.dumps(list(argv)) + "\n")
            log.flush()
            try:
                proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=sharing.env, cwd=str(cwd), bufsize=1, start_new_session=True,
                                        pass_fds=lock.held_fds(), preexec_fn=die_with_parent)
            except BaseException:
                sharing.finish(False)
                raise
            self.child = proc
            timer = None
            if timeout is not None:
                def expire() -> None:
                    timed_out.set()
                    _kill_group(proc, signal.SIGKILL)
                timer = threading.Timer(timeout, expire)
                timer.daemon = True
                timer.start()
            try:
                assert proc.stdout is not None
                for line in proc.stdout:
                    log.write(line)
                    if line.startswith(RESULT_MARK):
                        result = json.loads(line[len(RESULT_MARK):])
                    elif line.startswith(ERROR_MARK):
                        error = json.loads(line[len(ERROR_MARK):])
                    elif line.startswith(PROGRESS_PREFIX) and progress is not None:
                        progress("  " + line[len(PROGRESS_PREFIX):].rstrip())
                    tail.append(line.rstrip("\n"))
                    if len(tail) > TAIL_LINES:
                        del tail[: TAIL_LINES // 2]
                code = proc.wait()
            except BaseException:  # Ctrl-C without supervision, or an error reading the output
                self.terminate()
                raise
            finally:
                if timer is not None:
                    timer.cancel()
                self.child = None
                sharing.finish(code == 0 and not timed_out.is_set())
        if timed_out.is_set():
            code = None
        return Outcome(code=code, result=result, error=error, tail=tail, seconds=time.time() - started,
                       log_path=log_path)

    def terminate(self, grace: float = 30.0) -> None:
        """Stop the running job now: SIGTERM to its process group (the JVM's shutdown hooks run),
        SIGKILL after ``grace`` seconds."""
        with self._stopping:
            proc = self.child
            if proc is None or proc.poll() is not None:
                return
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if not _kill_group(proc, sig):
                    return
                try:
                    proc.wait(grace)
                    return
                except subprocess.TimeoutExpired:
                    continue


def _kill_group(proc: subprocess.Popen, sig: int) -> bool:
    try:
        os.killpg(proc.pid, sig)
        return True
    except ProcessLookupError:
        return False
