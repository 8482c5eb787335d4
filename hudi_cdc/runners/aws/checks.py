"""What a job on EMR / EMR Serverless cannot do, the Hudi that each EMR release ships, and the
check that nothing secret leaves this machine in a step, a job run, an upload or a printed log."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import AwsError, ConfigError

# Hudi that each EMR release installs with Spark/Hive (AWS "Hudi release history", EMR Release Guide).
EMR_HUDI = {
    "emr-7.13.0": "1.0.2-amzn-2", "emr-7.12.0": "1.0.2-amzn-1", "emr-7.11.0": "1.0.2-amzn-0",
    "emr-7.10.0": "0.15.0-amzn-7", "emr-7.9.0": "0.15.0-amzn-6", "emr-7.8.0": "0.15.0-amzn-5",
    "emr-7.7.0": "0.15.0-amzn-4", "emr-7.6.0": "0.15.0-amzn-3", "emr-7.5.0": "0.15.0-amzn-2",
    "emr-7.4.0": "0.15.0-amzn-1", "emr-7.3.0": "0.15.0-amzn-0", "emr-7.2.0": "0.14.1-amzn-1",
    "emr-7.1.0": "0.14.1-amzn-0", "emr-7.0.0": "0.14.0-amzn-1", "emr-6.15.0": "0.14.0-amzn-0",
    "emr-6.5.0": "0.9.0-amzn-1",
}


def hudi_mismatch(pipeline: Pipeline, release_label: str | None) -> str | None:
    """A warning when the EMR release runs another Hudi than the one the pipeline renders for."""
    shipped = EMR_HUDI.get(release_label or "")
    if shipped is None:
        return None
    if shipped.split("-amzn")[0] == pipeline.hudi.version:
        return None
    return (f"warning: {release_label} runs Hudi {shipped} from /usr/lib/hudi, but the pipeline renders "
            f"properties and flags for Hudi {pipeline.hudi.version} (hudi.version); options newer than "
            f"{shipped.split('-amzn')[0]} are rejected or ignored there")


def check_runs_on_aws(pipeline: Pipeline, target: str) -> None:
    """What a job on EMR / EMR Serverless cannot do: read or write this machine's files, or get the
    registry credentials that local runs pass through the job's environment."""
    for key, uri in (("source.root", pipeline.source_root), ("lake.root", pipeline.lake_root)):
        if not uri.startswith("s3://"):
            raise ConfigError(f"{key}: {uri} is not on S3; jobs on {target} read and write s3:// only "
                              f"({pipeline.source_file})")
    s = pipeline.source
    if s.registry_username_env or s.registry_password_env:
        raise ConfigError(
            "source.registry_username_env/registry_password_env: registry credentials are never sent to "
            f"{target} (they would end up in step arguments or files on S3); use a registry the jobs reach "
            f"without credentials (e.g. inside the VPC) ({pipeline.source_file})")


_AWS_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
_SECRET_PATTERNS = (
    re.compile(r"(?i)\b(aws_secret_access_key|aws_session_token|fs\.s3a?\.(secret\.key|session\.token))\s*[=:]"),
    re.compile(r"\bASIA[0-9A-Z]{16}\b|\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)https?://[^/\s:@]+:[^/\s@]+@"),  # user:password@host
)


def secret_values(pipeline: Pipeline) -> list[str]:
    """Values that must never appear in a step, a job run, an upload or a printed log."""
    names = list(_AWS_SECRET_ENV)
    for n in (pipeline.source.registry_username_env, pipeline.source.registry_password_env):
        if n:
            names.append(n)
    vals = [os.environ.get(n, "") for n in names]
    return [v for v in vals if len(v) >= 4]


def check_no_secrets(pipeline: Pipeline, texts: Iterable[tuple[str, str]]) -> None:
    """Refuse to send ``(where, text)`` pairs that carry a secret value or look like credentials."""
    values = secret_values(pipeline)
    for where, text in texts:
        for v in values:
            if v in text:
                raise AwsError(f"refusing to send {where}: it contains the value of a secret environment "
                               "variable; pipeline files, properties and argv must carry references only")
        for pat in _SECRET_PATTERNS:
            if pat.search(text):
                raise AwsError(f"refusing to send {where}: it looks like it carries credentials "
                               f"({pat.pattern[:40]}...); use boto3's default chain / instance roles")


def scrub(pipeline: Pipeline, text: str) -> str:
    """Mask secret values (e.g. in a log tail fetched from S3) before printing."""
    for v in secret_values(pipeline):
        text = text.replace(v, "***")
    return _SECRET_PATTERNS[2].sub(lambda m: m.group(0).split("://")[0] + "://***:***@", text)
