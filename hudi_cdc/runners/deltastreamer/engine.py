"""The `hoodiestreamer` engine of the local runner for hudi.version 0.14.0: the real
HoodieDeltaStreamer from the cached runtime (runtime.py), one spark-submit per job (submit.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from hudi_cdc.config import Pipeline
from hudi_cdc.core.render import Job
from hudi_cdc.runners.deltastreamer import runtime, submit
from hudi_cdc.spark import launch

Progress = Callable[[str], None]


class DeltaStreamerEngine:
    name = "hoodiestreamer"

    def __init__(self, pipeline: Pipeline, progress: Progress, launcher: launch.Launcher | None = None):
        self.pipeline = pipeline
        self.progress = progress
        self.launcher = launcher or launch.Launcher()

    def preflight(self) -> None:
        """Java 11-17 and the runtime (prepared once: its own pyspark 3.4.3, the 0.14.0 jars)."""
        runtime.ensure_runtime(self.progress).java()

    def plan(self, jobs: Sequence[Job], label: str = "") -> list[dict[str, object]]:
        if not runtime.is_ready():
            self.progress(f"dry run: would prepare the HoodieDeltaStreamer runtime in {runtime.root()} "
                          "(scripts/install-deltastreamer.sh), then run one spark-submit per job")
            return [{"dry_run": True, "engine": self.name, "jobs": [j.name for j in jobs]}]
        rt = runtime.load()
        wd = submit.work_dir(self.pipeline)
        out: list[dict[str, object]] = []
        for job in jobs:
            argv = submit.argv_for(self.pipeline, job, rt, wd / "properties", wd / "schemas")
            self.progress("dry run: would run " + json.dumps(argv))
            out.append({"dry_run": True, "engine": self.name, "argv": argv})
        return out

    def run(self, jobs: Sequence[Job], label: str) -> list[dict[str, object]]:
        return submit.run_jobs(self.pipeline, jobs, label, self.progress, launcher=self.launcher)

    def terminate(self, grace: float = 30.0) -> None:
        self.launcher.terminate(grace)
