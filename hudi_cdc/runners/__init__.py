"""Runners: where the jobs of a command run. One package per target, each with ``runner.py`` (the
Runner) and ``plan.py`` (what it would run, pure); ``aws/`` holds what the AWS runners share.

    local/           spark-submit from pyspark on this machine, one JVM per command
    emr/             one EMR step per job on a running cluster
    emr_serverless/  one EMR Serverless job run per job
    aws/             clients, error mapping, paginated listing, upload, log tails, the wait loop
"""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.runners.base import NotSupported, Runner

TARGETS = ("local", "emr", "emr-serverless")

__all__ = ["NotSupported", "Runner", "TARGETS", "make_runner"]


def make_runner(pipeline: Pipeline, target: str = "local", progress: Callable[[str], None] | None = None,
                dry_run: bool = False, show: Callable[[str], None] | None = None) -> Runner:
    """The runner for ``target``; ``progress`` (progress lines) and ``show`` (an AWS dry run's calls)
    default to the ``hudi_cdc`` logger: the CLI passes its printers."""
    if target == "local":
        from hudi_cdc.runners.local import LocalRunner

        return LocalRunner(pipeline, progress=progress or log_progress, dry_run=dry_run)
    if target == "emr":
        from hudi_cdc.runners.emr import EmrRunner

        return EmrRunner(pipeline, progress=progress, dry_run=dry_run, show=show)
    if target == "emr-serverless":
        from hudi_cdc.runners.emr_serverless import EmrServerlessRunner

        return EmrServerlessRunner(pipeline, progress=progress, dry_run=dry_run, show=show)
    raise ConfigError(f"unknown target {target!r}: use one of {', '.join(TARGETS)}")
