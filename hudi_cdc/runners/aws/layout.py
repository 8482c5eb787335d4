"""Names and S3 URIs: what a step / job run is called, where properties and logs go, and the
argv a job runs (the renderer's, pointed at the uploaded properties file)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hudi_cdc.config import TYPE_SUFFIX, Pipeline
from hudi_cdc.core import render as rnd
from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError, ConfigError
from hudi_cdc.runners.aws.client import TOOL


def table_key(pipeline: Pipeline, table: str, table_type: str) -> str:
    """The identity of the Hudi table a job writes; one active writer per key."""
    return f"{TOOL}:{pipeline.pipeline}:{table}_{TYPE_SUFFIX[table_type]}"


def job_name(pipeline: Pipeline, job: Job) -> str:
    """Step / job-run name, e.g. ``hudi-cdc:moma:artists_mor:upsert:continuous``."""
    name = f"{table_key(pipeline, job.table, job.table_type)}:{job.op.lower()}"
    return name + (":continuous" if job.continuous else "")


def owns_name(pipeline: Pipeline, name: str | None) -> bool:
    return bool(name and name.startswith(f"{TOOL}:{pipeline.pipeline}:"))


def all_tables_name(pipeline: Pipeline) -> str:
    """The name of `stream --all`'s one step: it writes every table of the pipeline."""
    return f"{TOOL}:{pipeline.pipeline}:all:upsert:continuous"


def writes_table(pipeline: Pipeline, name: str | None, job: Job) -> bool:
    """Does the step / job run called `name` write the table `job` writes (or, for `stream --all`'s
    step, any table of the pipeline)?"""
    if not name:
        return False
    if name == all_tables_name(pipeline) or job.all_tables:
        return owns_name(pipeline, name)
    return name.startswith(table_key(pipeline, job.table, job.table_type) + ":")


def require(value: str | None, key: str, pipeline: Pipeline, hint: str = "") -> str:
    if not value:
        extra = f" ({hint})" if hint else ""
        raise ConfigError(f"emr.{key}: required for this target{extra} ({pipeline.source_file})")
    return value


def artifacts_root(pipeline: Pipeline) -> str:
    """``s3://<emr.bucket>/<emr.prefix>/<pipeline>``: where hudi-cdc puts what it uploads."""
    bucket = require(pipeline.emr.bucket, "bucket", pipeline, "the S3 bucket for properties and logs")
    prefix = pipeline.emr.prefix.strip("/")
    return f"s3://{bucket}/{prefix}/{pipeline.pipeline}" if prefix else f"s3://{bucket}/{pipeline.pipeline}"


def properties_root(pipeline: Pipeline) -> str:
    return f"{artifacts_root(pipeline)}/properties"


def props_uri(pipeline: Pipeline, table: str, table_type: str) -> str:
    return f"{properties_root(pipeline)}/{table}_{TYPE_SUFFIX[table_type]}.properties"


def log_root(pipeline: Pipeline) -> str:
    """emr.log_uri when set, else ``s3://<bucket>/<prefix>/logs``."""
    if pipeline.emr.log_uri:
        return pipeline.emr.log_uri.rstrip("/")
    bucket = require(pipeline.emr.bucket, "bucket", pipeline, "or set emr.log_uri")
    prefix = pipeline.emr.prefix.strip("/")
    return f"s3://{bucket}/{prefix}/logs" if prefix else f"s3://{bucket}/logs"


_S3 = re.compile(r"^s3[an]?://([^/]+)/?(.*)$")


def split_s3(uri: str) -> tuple[str, str]:
    """``s3://b/k`` (also EMR's ``s3n://`` and ``s3a://``) -> (bucket, key)."""
    m = _S3.match(uri)
    if not m:
        raise ConfigError(f"{uri} is not an s3:// URI")
    return m.group(1), m.group(2)


def job_props_uri(pipeline: Pipeline, job: Job, names: Iterable[str] | None = None) -> str:
    """Where the job's properties file is uploaded; checked against the rendered names when given."""
    name = rnd.props_filename(pipeline, job.table, job.table_type)
    if names is not None and name not in set(names):
        raise AwsError(f"{name} is not among the rendered properties files: {', '.join(sorted(names))}")
    return f"{properties_root(pipeline)}/{name}"


def job_argv(pipeline: Pipeline, job: Job, target: str, names: Iterable[str] | None = None) -> list[str]:
    """The renderer's spark-submit argv for ``job`` on ``target``, reading the uploaded properties."""
    return list(rnd.streamer_argv(pipeline, job.table, job.table_type, job.op, target=target,
                                  props_uri=job_props_uri(pipeline, job, names), continuous=job.continuous))


def props_arg(argv: list[str]) -> str:
    """The value of ``--props`` in an argv ('' when absent)."""
    return next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--props"), "")
