"""What the EMR and EMR Serverless runners share: clients, the dry-run recorder, the poll loop,
S3 helpers, and the check that nothing secret leaves this machine in a step or a job run.

boto3 is imported lazily (``hudi-cdc --help`` stays instant). Credentials and the endpoint come
only from boto3's standard chain (environment, shared config/credentials files, SSO, instance or
container role; ``AWS_ENDPOINT_URL`` for a stand-in such as moto): hudi-cdc never reads, stores,
passes or prints a key.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from ..config import TYPE_SUFFIX, Pipeline
from ..errors import AwsError, ConfigError

log = logging.getLogger("hudi_cdc.aws")

TOOL = "hudi-cdc"


# ---- errors: one class per outcome, so callers and tests can tell them apart -----------------
class JobFailed(AwsError):
    """The EMR step or job run ended in FAILED."""


class JobCancelled(AwsError):
    """The EMR step or job run was cancelled (by a user, `hudi-cdc emr cancel`, or the cluster)."""


class WaitTimeout(AwsError):
    """hudi-cdc stopped waiting; the step or job run itself may still be running."""


class AlreadyRunning(AwsError):
    """A step or job run writing the same table is still pending or running."""


# ---- jobs ------------------------------------------------------------------------------------
class JobSpec(NamedTuple):
    """One HoodieStreamer run: a table, a table type, an operation, continuous or not."""

    table: str
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    op: str  # BULK_INSERT | UPSERT | INSERT
    continuous: bool = False


def as_job(job: Any) -> JobSpec:
    """Accept a JobSpec, a tuple/list, a mapping, or any object with table/table_type/op attributes."""
    if isinstance(job, JobSpec):
        return job
    if isinstance(job, Mapping):
        return JobSpec(job["table"], job["table_type"], job["op"], bool(job.get("continuous", False)))
    if isinstance(job, (tuple, list)):
        return JobSpec(*job)
    return JobSpec(job.table, job.table_type, job.op, bool(getattr(job, "continuous", False)))


def table_key(pipeline: Pipeline, table: str, table_type: str) -> str:
    """The identity of the Hudi table a job writes; one active writer per key."""
    return f"{TOOL}:{pipeline.pipeline}:{table}_{TYPE_SUFFIX[table_type]}"


def job_name(pipeline: Pipeline, job: JobSpec) -> str:
    """Step / job-run name, e.g. ``hudi-cdc:moma:artists_mor:upsert:continuous``."""
    name = f"{table_key(pipeline, job.table, job.table_type)}:{job.op.lower()}"
    return name + (":continuous" if job.continuous else "")


def owns_name(pipeline: Pipeline, name: Optional[str]) -> bool:
    return bool(name) and name.startswith(f"{TOOL}:{pipeline.pipeline}:")


def writes_table(pipeline: Pipeline, name: Optional[str], job: JobSpec) -> bool:
    return bool(name) and name.startswith(table_key(pipeline, job.table, job.table_type) + ":")


# ---- S3 layout ---------------------------------------------------------------------------------
def require(value: Optional[str], key: str, pipeline: Pipeline, hint: str = "") -> str:
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


def split_s3(uri: str) -> Tuple[str, str]:
    """``s3://b/k`` (also EMR's ``s3n://`` and ``s3a://``) -> (bucket, key)."""
    m = _S3.match(uri)
    if not m:
        raise ConfigError(f"{uri} is not an s3:// URI")
    return m.group(1), m.group(2)


# Hudi that each EMR release installs with Spark/Hive (AWS "Hudi release history", EMR Release Guide).
EMR_HUDI = {
    "emr-7.13.0": "1.0.2-amzn-2", "emr-7.12.0": "1.0.2-amzn-1", "emr-7.11.0": "1.0.2-amzn-0",
    "emr-7.10.0": "0.15.0-amzn-7", "emr-7.9.0": "0.15.0-amzn-6", "emr-7.8.0": "0.15.0-amzn-5",
    "emr-7.7.0": "0.15.0-amzn-4", "emr-7.6.0": "0.15.0-amzn-3", "emr-7.5.0": "0.15.0-amzn-2",
    "emr-7.4.0": "0.15.0-amzn-1", "emr-7.3.0": "0.15.0-amzn-0", "emr-7.2.0": "0.14.1-amzn-1",
    "emr-7.1.0": "0.14.1-amzn-0", "emr-7.0.0": "0.14.0-amzn-1", "emr-6.15.0": "0.14.0-amzn-0",
    "emr-6.5.0": "0.9.0-amzn-1",
}


def hudi_mismatch(pipeline: Pipeline, release_label: Optional[str]) -> Optional[str]:
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


# ---- clients -----------------------------------------------------------------------------------
def aws_client(service: str, region: str) -> Any:
    """A boto3 client from the standard credential chain; endpoint from AWS_ENDPOINT_URL if set."""
    try:
        import boto3
        from botocore.config import Config
    except ModuleNotFoundError as exc:  # pragma: no cover - boto3 is an install requirement
        raise AwsError("boto3 is not installed: pip install boto3") from exc
    cfg = Config(user_agent_extra=TOOL)  # retries, timeouts: the user's AWS config / AWS_RETRY_MODE
    return boto3.session.Session().client(service, region_name=region, config=cfg)


def call(client: Any, operation: str, **params: Any) -> Dict[str, Any]:
    """Call ``client.<operation>(**params)``; every botocore error becomes one AwsError line."""
    try:
        from botocore.exceptions import BotoCoreError, ClientError
    except ModuleNotFoundError:  # pragma: no cover
        BotoCoreError = ClientError = ()  # type: ignore
    try:
        return getattr(client, operation)(**params)
    except ClientError as exc:  # type: ignore[misc]
        err = exc.response.get("Error", {})
        code = err.get("Code", "Error")
        msg = err.get("Message") or str(exc)
        err_ = AwsError(f"{_service(client)}.{operation} failed: {code}: {msg}")
        err_.code = code  # type: ignore[attr-defined]
        raise err_ from exc
    except BotoCoreError as exc:  # type: ignore[misc]
        raise AwsError(f"{_service(client)}.{operation} failed: {exc}") from exc


def _service(client: Any) -> str:
    meta = getattr(client, "meta", None)
    return getattr(getattr(meta, "service_model", None), "service_name", None) or getattr(client, "service", "aws")


# ---- dry run -----------------------------------------------------------------------------------
def _printable(params: Mapping[str, Any]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in params.items():
        if isinstance(v, (bytes, bytearray)):
            out[k] = f"<{len(v)} bytes>"
        else:
            out[k] = v
    return out


@dataclass
class DryRunClient:
    """Stands where a boto3 client would; prints each call as ``<service>.<operation> <json>``
    instead of making it, and answers with just enough for the runner to go on. Makes no network
    call and needs no credentials."""

    service: str
    echo: Callable[[str], None]
    answers: Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]] = field(default_factory=dict)
    calls: List[Tuple[str, Dict[str, Any]]] = field(default_factory=list)

    def __getattr__(self, operation: str) -> Callable[..., Dict[str, Any]]:
        if operation.startswith("_"):
            raise AttributeError(operation)

        def _call(**params: Any) -> Dict[str, Any]:
            self.calls.append((operation, params))
            self.echo(f"{self.service}.{operation} {json.dumps(_printable(params), sort_keys=True, default=str)}")
            answer = self.answers.get(operation)
            return answer(params) if answer else {}

        return _call


# ---- secrets -----------------------------------------------------------------------------------
_AWS_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN")
_SECRET_PATTERNS = (
    re.compile(r"(?i)\b(aws_secret_access_key|aws_session_token|fs\.s3a?\.(secret\.key|session\.token))\s*[=:]"),
    re.compile(r"\bASIA[0-9A-Z]{16}\b|\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"(?i)https?://[^/\s:@]+:[^/\s@]+@"),  # user:password@host
)


def secret_values(pipeline: Pipeline) -> List[str]:
    """Values that must never appear in a step, a job run, an upload or a printed log."""
    names = list(_AWS_SECRET_ENV)
    for n in (pipeline.source.registry_username_env, pipeline.source.registry_password_env):
        if n:
            names.append(n)
    vals = [os.environ.get(n, "") for n in names]
    return [v for v in vals if len(v) >= 4]


def check_no_secrets(pipeline: Pipeline, texts: Iterable[Tuple[str, str]]) -> None:
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


# ---- logs ----------------------------------------------------------------------------------------
def read_log_tail(s3: Any, uri: str, lines: int) -> Optional[str]:
    """Last ``lines`` lines of ``uri`` (gzip or plain); None when the object does not exist (yet)."""
    bucket, key = split_s3(uri)
    candidates = [key] if key.endswith(".gz") else [key + ".gz", key]
    for k in candidates:
        try:
            body = s3.get_object(Bucket=bucket, Key=k)["Body"].read()
        except Exception as exc:  # noqa: BLE001 - NoSuchKey / 404 / AccessDenied all mean "not here"
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404", "NotFound"):
                continue
            raise AwsError(f"s3.get_object s3://{bucket}/{k} failed: {code or exc}") from exc
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        text = body.decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])
    return None


# ---- waiting -------------------------------------------------------------------------------------
@dataclass
class RunResult:
    """What a runner returns for one job: enough to find it again (`hudi-cdc emr status <id>`)."""

    target: str
    id: str
    name: str
    state: str
    argv: List[str]
    props_uri: str
    log_uri: Optional[str] = None
    detail: Dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> Dict[str, Any]:
        job = self.name.split(":")  # hudi-cdc:<pipeline>:<table>_<cow|mor>:<op>[:continuous]
        table = job[2].rsplit("_", 1)[0] if len(job) > 3 else None
        return {"target": self.target, "id": self.id, "name": self.name, "table": table,
                "operation": job[3].upper() if len(job) > 3 else None, "state": self.state,
                "props_uri": self.props_uri, "log_uri": self.log_uri, "dry_run": self.state == "DRY-RUN"}


def poll(
    describe: Callable[[], Tuple[str, Dict[str, Any]]],
    *,
    what: str,
    until: Sequence[str],
    poll_seconds: float,
    timeout_seconds: float,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Tuple[str, Dict[str, Any]]:
    """Call ``describe`` every ``poll_seconds`` until its state is one of ``until``; say each change.

    Raises WaitTimeout after ``timeout_seconds`` with the last state seen. Terminal-state handling
    (failure, cancellation) is left to the caller, which knows where the logs are.
    """
    start = clock()
    last = None
    while True:
        state, detail = describe()
        if state != last:
            elapsed = int(clock() - start)
            say(f"{what}: {state}" + (f" (after {elapsed}s)" if last is not None else ""))
            last = state
        if state in until:
            return state, detail
        if clock() - start >= timeout_seconds:
            raise WaitTimeout(
                f"timed out after {int(timeout_seconds)}s waiting for {what} (last state {state}); "
                "it may still be running: check with `hudi-cdc emr status`, stop it with `hudi-cdc emr cancel`")
        sleep(poll_seconds)


def runner_for(pipeline: Pipeline, target: str, **kwargs: Any):
    """EmrRunner for target "emr", EmrServerlessRunner for "emr-serverless" (same interface)."""
    if target == "emr":
        from .emr import EmrRunner

        return EmrRunner(pipeline, **kwargs)
    if target == "emr-serverless":
        from .emr_serverless import EmrServerlessRunner

        return EmrServerlessRunner(pipeline, **kwargs)
    raise AwsError(f"no AWS runner for target {target!r}; use emr or emr-serverless")
