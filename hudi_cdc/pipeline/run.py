"""`hudi-cdc run`: a whole pipeline under one supervisor: capture (when the pipeline has a database) and
`stream --all` (every table and type in one Spark application).

The stream is supervised as `stream --all` is (pipeline.stream_all: restarted when its JVM dies, SIGTERM/
Ctrl-C stop it after the rounds in flight); capture runs beside it in a thread of this process, on the
same stop: the first signal stops both (capture drops the files still open: their records were never
committed, the next run gets them again). A capture that fails is restarted with the stream's backoff
settings (stream.max_restarts within stream.restart_window_seconds); past the bound it stops the stream
too and the command exits with capture's error (11 for the source). A stream that gives up stops capture
and the command exits with the stream's error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import HudiCdcError, JobError, SourceError
from hudi_cdc.pipeline import plan_stream_all, stream_all
from hudi_cdc.runners.supervise import Stopper, supervise

Progress = Callable[[str], None]
CAPTURE_RESTARTABLE: tuple[type[Exception], ...] = (SourceError, JobError)


def _detach_from_jvm() -> None:
    """A Python thread that used capture's in-process JVM (JPype) is attached to it as a non-daemon
    thread: not detached when it ends, the JVM's shutdown at exit waits for it for ever."""
    import sys

    jpype = sys.modules.get("jpype")
    if jpype is None or not jpype.isJVMStarted():
        return
    thread = jpype.JClass("java.lang.Thread")
    if thread.isAttached():
        thread.detach()


@dataclass
class RunResult:
    capture: dict | None = None  # what capture landed (None: the pipeline has no database)
    stream: list[dict] = field(default_factory=list)  # stream --all's per-table loops

    def to_dict(self) -> dict[str, Any]:
        return {"capture": self.capture, "stream": self.stream}


def run_pipeline(pipeline: Pipeline, *, progress: Progress = log_progress, flush_size: int | None = None,
                 rotate_seconds: float = 60.0, dry_run: bool = False) -> RunResult:
    has_db = pipeline.source.database is not None
    if dry_run:
        if has_db:
            progress(f"dry run: would capture {', '.join(pipeline.tables)} from the database "
                     f"(slot {pipeline.slot_name}) beside the stream")
        return RunResult(stream=stream_all(pipeline, dry_run=True, progress=progress))
    plan_stream_all(pipeline, once=False)  # every table bootstrapped: refused before capture starts
    if not has_db:
        return RunResult(stream=stream_all(pipeline, progress=progress))
    from hudi_cdc.capture.capture import capture_continuous

    out = RunResult()
    failed: list[BaseException] = []
    threads: list[threading.Thread] = []
    stoppers: list[Stopper] = []

    def capture_loop(stopper: Stopper) -> None:
        def once() -> list:
            return [capture_continuous(pipeline, stopper.requested, progress=progress, flush_size=flush_size,
                                       rotate_seconds=rotate_seconds)]

        try:
            results = supervise(once, pipeline.stream, "capture", progress, stopper, restartable=CAPTURE_RESTARTABLE)
            out.capture = results[0].to_dict() if results else None
        except BaseException as exc:  # noqa: BLE001 - re-raised by the main thread once the stream stopped
            failed.append(exc)
            if not stopper.requested.is_set():
                stopper.request(f"capture failed ({exc})")
        finally:
            _detach_from_jvm()

    def start_capture(stopper: Stopper) -> None:
        stoppers.append(stopper)
        th = threading.Thread(target=capture_loop, args=(stopper,), name="hudi-cdc-capture", daemon=True)
        th.start()
        threads.append(th)

    try:
        out.stream = stream_all(pipeline, progress=progress, stopper_hook=start_capture)
    finally:
        for stopper in stoppers:
            stopper.requested.set()  # the stream ended (or failed): capture stops too
        for th in threads:
            th.join()
    if failed:
        exc = failed[0]
        if isinstance(exc, HudiCdcError):
            raise exc
        raise SourceError(f"capture failed: {exc}") from exc
    return out
