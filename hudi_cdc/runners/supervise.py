"""Supervision of a continuous local stream: a crashed job is restarted with exponential backoff
(tenacity), each restart said with its cause; too many failures within a window end the command with
one line naming the last cause; SIGTERM/SIGINT stop the job cleanly after its current round.

The clean stop: the job polls a stop file between rounds (``HUDI_CDC_STOP_FILE``, jobs/stream/main.py);
the first signal creates it, so the round in flight commits and the job exits. After
``stream.stop_timeout_seconds``, or on a second signal, the job's process group gets SIGTERM (then
SIGKILL): an instant it left inflight is rolled back by Hudi when the next writer starts.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from tenacity import RetryCallState, RetryError, Retrying, retry_if_exception, wait_exponential

from hudi_cdc.config.settings import StreamSettings
from hudi_cdc.errors import DataError, JobError
from hudi_cdc.registry.errors import RegistryUnavailable

T = TypeVar("T")
Progress = Callable[[str], None]

# what a restart can cure: a job that died (OOM, killed, lost executor), input that may be fixed
# meanwhile (a file still being uploaded) or a registry that went away; not configuration, credentials
# the registry refuses, environment (a full disk), table state or a lock
RESTARTABLE = (JobError, DataError, RegistryUnavailable)
# `stream --all`: the job retries each table's own failures itself (jobs/stream/loops.py); the command
# restarts the application only when it died
JOB_DIED: tuple[type[Exception], ...] = (JobError,)
STOP_ENV = "HUDI_CDC_STOP_FILE"


class _Stopped(Exception):
    """The stop was asked for while waiting to restart."""


class Stopper:
    """Turns SIGTERM/SIGINT into a stop after the current round; a second signal, or the timeout,
    stops the job now (``runner.terminate()``)."""

    def __init__(self, runner: Any, stop_file: Path, timeout: float, progress: Progress):
        self.runner, self.stop_file, self.timeout, self.progress = runner, stop_file, timeout, progress
        self.requested = threading.Event()
        self.forced = False
        self._old: dict[int, Any] = {}
        self._timer: threading.Timer | None = None

    def __enter__(self) -> Stopper:
        self.stop_file.parent.mkdir(parents=True, exist_ok=True)
        self.stop_file.unlink(missing_ok=True)
        self.runner.stop_file = self.stop_file
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._old[sig] = signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        if self._timer:
            self._timer.cancel()
        self.stop_file.unlink(missing_ok=True)
        self.runner.stop_file = None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.requested.is_set():
            self.progress(f"{name} again: stopping the job now")
            self.force()
            return
        self.request(name)

    def request(self, why: str = "stop") -> None:
        self.requested.set()
        self.stop_file.touch()
        self.progress(f"{why}: the job stops after its current round "
                      f"(at most {self.timeout:.0f}s; signal again to stop it now)")
        self._timer = threading.Timer(self.timeout, self.force)
        self._timer.daemon = True
        self._timer.start()

    def force(self) -> None:
        self.forced = True
        terminate = getattr(self.runner, "terminate", None)
        if terminate:
            threading.Thread(target=terminate, daemon=True).start()

    def wait(self, seconds: float) -> None:
        """tenacity's sleep: a backoff that a stop request cuts short."""
        self.requested.wait(seconds)


def supervise(run: Callable[[], list[T]], settings: StreamSettings, label: str, progress: Progress,
              stopper: Stopper | None = None,
              restartable: tuple[type[Exception], ...] = RESTARTABLE) -> list[T]:
    """``run()`` until it returns; restart it on a ``restartable`` failure, with backoff, at most
    ``settings.max_restarts`` times within ``settings.restart_window_seconds``."""
    failures: list[float] = []
    restarts = 0

    def attempt() -> list[T]:
        if stopper and stopper.requested.is_set():
            raise _Stopped()
        return run()

    def can_restart(exc: BaseException) -> bool:
        return isinstance(exc, restartable) and not (stopper and stopper.requested.is_set())

    def give_up(state: RetryCallState) -> bool:
        now = time.monotonic()
        failures.append(now)
        recent = [t for t in failures if now - t <= settings.restart_window_seconds]
        return len(recent) > settings.max_restarts

    def before_sleep(state: RetryCallState) -> None:
        nonlocal restarts
        restarts += 1
        exc = state.outcome.exception() if state.outcome else None
        wait = state.upcoming_sleep
        progress(f"{label}: job failed ({type(exc).__name__}: {exc}); restart {restarts} "
                 f"(at most {settings.max_restarts} within {settings.restart_window_seconds}s) in {wait:.0f}s")

    retrying = Retrying(
        retry=retry_if_exception(can_restart),
        stop=give_up,
        wait=wait_exponential(multiplier=settings.restart_backoff_seconds, min=settings.restart_backoff_seconds,
                              max=settings.restart_backoff_max_seconds),
        sleep=stopper.wait if stopper else time.sleep,
        before_sleep=before_sleep,
    )
    try:
        return retrying(attempt)
    except _Stopped:
        progress(f"{label}: stopped before restarting the job")
        return []
    except RetryError as err:
        last = err.last_attempt.exception()
        cls = type(last) if isinstance(last, restartable) else JobError
        raise cls(f"{label}: gave up after {restarts} restart(s) "
                  f"(stream.max_restarts={settings.max_restarts} within {settings.restart_window_seconds}s); "
                  f"last failure: {last}") from last
    except restartable:
        if stopper and stopper.requested.is_set():
            progress(f"{label}: job stopped on request"
                     + (" before its round ended (Hudi rolls back what it left inflight on the next start)"
                        if stopper.forced else ""))
            return []
        raise


def stop_file_for(work_dir: Path, label: str) -> Path:
    return work_dir / "stop" / f"{label}-{os.getpid()}"
