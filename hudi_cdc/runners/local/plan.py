"""What a local run is made of (pure: nothing runs): where it works, the job file, the argv of
the one spark-submit for all jobs of a command, and the registry credentials for its environment."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.core.render import Job, local_argv
from hudi_cdc.jobs import streamer
from hudi_cdc.toolchain import jars as jarcache


def job_script() -> str:
    return str(Path(streamer.__file__).resolve())


def work_dir(pipeline: Pipeline) -> Path:
    return pipeline.work_dir


def props_dir(pipeline: Pipeline) -> Path:
    return work_dir(pipeline) / "properties"


def cached_jar_paths(pipeline: Pipeline) -> list[str]:
    """Where the jars a local job needs are (or will be, once downloaded) in the cache."""
    arts = jarcache.local_job_artifacts(pipeline.hudi.version, pipeline.uses_s3)
    return [str(jarcache.cache_dir() / a.filename) for a in arts]


def argv(pipeline: Pipeline, jobs: Sequence[Job], jar_paths: Sequence[str]) -> list[str]:
    """The rendered spark-submit argv running ``jobs`` in one JVM (argv[0] as rendered)."""
    return local_argv(pipeline, jobs, props_dir(pipeline), jar_paths, job_script(),
                      name=f"hudi-cdc-{pipeline.pipeline}")
