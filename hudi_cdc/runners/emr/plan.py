"""EMR step definitions (pure: no AWS): ``command-runner.jar`` + the renderer's spark-submit argv,
as boto3/Airflow (``api``) or `aws emr add-steps --steps file://` (``cli``) read them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.core import render as rnd
from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError, ConfigError
from hudi_cdc.runners.aws.checks import check_no_secrets, check_runs_on_aws
from hudi_cdc.runners.aws.layout import all_tables_name, job_argv, job_name, job_props_uri

TARGET = "emr"
COMMAND_RUNNER = "command-runner.jar"
ACTION_ON_FAILURE = "CONTINUE"  # never terminate or park the cluster because one table failed


def step_definition(pipeline: Pipeline, job: Job, names: Iterable[str] | None = None) -> dict[str, Any]:
    """The boto3 ``add_job_flow_steps`` / Airflow ``EmrAddStepsOperator`` shape of one step."""
    argv = job_argv(pipeline, job, TARGET, names)
    if not argv or argv[0] != "spark-submit":
        raise AwsError(f"the renderer's argv for target emr must start with spark-submit, got {argv[:1]}")
    return {
        "Name": job_name(pipeline, job),
        "ActionOnFailure": ACTION_ON_FAILURE,
        "HadoopJarStep": {"Jar": COMMAND_RUNNER, "Args": argv},
    }


def all_tables_step(pipeline: Pipeline, names: Iterable[str] | None = None) -> dict[str, Any]:
    """`stream --all` as ONE step: every table and type in one continuous application of hudi-cdc's
    streamer (hudi.engine: hudi-cdc), its tables scheduled in one application (jobs/stream/loops.py)."""
    from hudi_cdc.core.profiles import HUDI_CDC, engine_for

    if engine_for(pipeline.hudi.version, TARGET, pipeline.hudi.engine) != HUDI_CDC:
        raise ConfigError(f"stream --all as one EMR step runs hudi-cdc's streamer: set hudi.engine: hudi-cdc "
                          f"({pipeline.source_file}); HoodieStreamer runs one step per table")
    jobs = [Job(t, tt, "UPSERT", continuous=True, all_tables=True) for t, tt in pipeline.targets()]
    argv = rnd.hudi_cdc_aws_jobs_argv(pipeline, [(j, job_props_uri(pipeline, j, names)) for j in jobs])
    return {
        "Name": all_tables_name(pipeline),
        "ActionOnFailure": ACTION_ON_FAILURE,
        "HadoopJarStep": {"Jar": COMMAND_RUNNER, "Args": argv},
    }


def to_cli_step(step: dict[str, Any]) -> dict[str, Any]:
    """The same step in the shape `aws emr add-steps --steps file://...` reads (the AWS CLI's own
    flattened form: Type/Name/ActionOnFailure/Jar/Args; it rejects the API's HadoopJarStep)."""
    return {
        "Type": "CUSTOM_JAR",
        "Name": step["Name"],
        "ActionOnFailure": step["ActionOnFailure"],
        "Jar": step["HadoopJarStep"]["Jar"],
        "Args": list(step["HadoopJarStep"]["Args"]),
    }


def steps_json(pipeline: Pipeline, jobs: Iterable[Job], flavor: str = "api",
               all_tables: bool = False) -> list[dict[str, Any]]:
    """``hudi-cdc render --emr-steps``: the list of step definitions (JSON-able).

    flavor "api" (default): boto3 ``add_job_flow_steps(Steps=...)`` shape, which Airflow's
    EmrAddStepsOperator passes through unchanged (also as a templated ``.json`` file: the text is
    plain strings and lists, so its ``ast.literal_eval`` reads it too). flavor "cli": the shape
    ``aws emr add-steps --cluster-id j-... --steps file://steps.json`` reads.
    all_tables: `stream --all`'s one step instead of ``jobs``.
    Raises AwsError when a step would carry a secret value.
    """
    check_runs_on_aws(pipeline, TARGET)
    names = list(rnd.render_properties(pipeline))
    items = [all_tables_step(pipeline, names)] if all_tables else [step_definition(pipeline, j, names) for j in jobs]
    if flavor not in ("api", "cli"):
        raise ConfigError(f"unknown step JSON flavor {flavor!r}: api (boto3/Airflow) or cli (aws emr add-steps)")
    if flavor == "cli":
        items = [to_cli_step(s) for s in items]
    check_no_secrets(pipeline, [(f"step {s['Name']}", json.dumps(s)) for s in items])
    return items


def steps_text(pipeline: Pipeline, jobs: Iterable[Job], flavor: str = "api") -> str:
    """steps_json as the exact text to print or save (2-space indent, trailing newline)."""
    return json.dumps(steps_json(pipeline, jobs, flavor), indent=2) + "\n"
