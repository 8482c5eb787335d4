"""What a local run is made of (pure: nothing runs): where it works, the job file, the argv of
the one spark-submit for all jobs of a command, and the registry credentials for its environment."""

from __future__ import annotations

from pathlib import Path
from typing import List, Sequence

from ... import jars as jarcache
from ...config import Pipeline
from ...jobs import streamer
from ...render import Job, local_argv


def job_script() -> str:
    return str(Path(streamer.__file__).resolve())


def work_dir(pipeline: Pipeline) -> Path:
    return Path(pipeline.base_dir) / ".hudi-cdc"


def props_dir(pipeline: Pipeline) -> Path:
    return work_dir(pipeline) / "properties"


def cached_jar_paths(pipeline: Pipeline) -> List[str]:
    """Where the jars a local job needs are (or will be, once downloaded) in the cache."""
    return [str(jarcache.cache_dir() / a.filename) for a in jarcache.local_job_artifacts(pipeline.hudi.version, pipeline.uses_s3)]


def argv(pipeline: Pipeline, jobs: Sequence[Job], jar_paths: Sequence[str]) -> List[str]:
    """The rendered spark-submit argv running ``jobs`` in one JVM (argv[0] as rendered)."""
    return local_argv(pipeline, jobs, props_dir(pipeline), jar_paths, job_script(),
                      name=f"hudi-cdc-{pipeline.pipeline}")
