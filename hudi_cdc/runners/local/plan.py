"""What a local run is made of (pure: nothing runs): where it works, the job file, the argv of
the one spark-submit for all jobs of a command, and the registry credentials for its environment."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Sequence

from ... import jars as jarcache
from ...config import Pipeline
from ...errors import EnvironmentProblem
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
    return [str(jarcache.cache_dir() / a.filename) for a in jarcache.local_job_artifacts(pipeline.hudi.version)]


def argv(pipeline: Pipeline, jobs: Sequence[Job], jar_paths: Sequence[str]) -> List[str]:
    """The rendered spark-submit argv running ``jobs`` in one JVM (argv[0] as rendered)."""
    return local_argv(pipeline, jobs, props_dir(pipeline), jar_paths, job_script(),
                      name=f"hudi-cdc-{pipeline.pipeline}")


def registry_env(pipeline: Pipeline) -> Dict[str, str]:
    """Registry credentials travel to the job through its environment, never argv or files."""
    env = {}
    s = pipeline.source
    if s.registry_username_env and s.registry_password_env:
        user, pw = os.environ.get(s.registry_username_env), os.environ.get(s.registry_password_env)
        if user is None or pw is None:
            raise EnvironmentProblem(
                f"source.registry_username_env/registry_password_env name ${s.registry_username_env} and "
                f"${s.registry_password_env}, but they are not set in the environment")
        env["HUDI_CDC_REGISTRY_USERNAME"], env["HUDI_CDC_REGISTRY_PASSWORD"] = user, pw
    return env
