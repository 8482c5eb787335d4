"""EMR Serverless job runs (pure: no AWS): the renderer's spark-submit argv for target
"emr-serverless" split into StartJobRun's ``sparkSubmit`` job driver (entryPoint = the jar holding
the streamer class, entryPointArguments = the streamer's arguments, sparkSubmitParameters = the
spark-submit options), and the StartJobRun request of one job."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError
from hudi_cdc.runners.aws.layout import job_argv, job_name

TARGET = "emr-serverless"

# spark-submit options that take a value (everything else starting with -- is a flag)
_VALUE_OPTS = {
    "--class", "--jars", "--packages", "--exclude-packages", "--repositories", "--py-files", "--files",
    "--archives", "--conf", "-c", "--properties-file", "--driver-memory", "--driver-java-options",
    "--driver-library-path", "--driver-class-path", "--executor-memory", "--proxy-user", "--driver-cores",
    "--total-executor-cores", "--executor-cores", "--num-executors", "--principal", "--keytab", "--queue",
    "--name", "--master", "--deploy-mode",
}


def split_spark_submit(argv: list[str]) -> tuple[list[str], str, list[str]]:
    """``[spark-submit] <options> <app jar> <app args>`` -> (options, app jar, app args)."""
    rest = argv[1:] if argv and argv[0].endswith("spark-submit") else list(argv)
    opts: list[str] = []
    i = 0
    while i < len(rest):
        a = rest[i]
        if not a.startswith("-"):
            return opts, a, rest[i + 1:]
        if "=" in a and a.split("=", 1)[0] in _VALUE_OPTS:
            opts.append(a)
            i += 1
        elif a in _VALUE_OPTS:
            if i + 1 >= len(rest):
                raise AwsError(f"spark-submit option {a} has no value in the rendered argv")
            opts += [a, rest[i + 1]]
            i += 2
        else:
            opts.append(a)
            i += 1
    raise AwsError("the rendered argv has no application jar (entryPoint) for EMR Serverless")


def job_driver(argv: list[str]) -> dict[str, Any]:
    """StartJobRun's ``jobDriver`` for a spark-submit argv.

    EMR Serverless splits sparkSubmitParameters on whitespace, so an option value holding a space
    cannot be expressed; such argv is refused instead of being silently changed.
    """
    opts, entry, args = split_spark_submit(argv)
    for o in opts:
        if any(c.isspace() for c in o) or not o:
            raise AwsError(f"spark-submit option value {o!r} contains whitespace, which EMR Serverless's "
                           "sparkSubmitParameters cannot carry")
    return {"sparkSubmit": {"entryPoint": entry, "entryPointArguments": args,
                            "sparkSubmitParameters": " ".join(opts)}}


def argv_of(driver: dict[str, Any]) -> list[str]:
    """Inverse of job_driver: the spark-submit argv a job run's jobDriver stands for."""
    ss = driver["sparkSubmit"]
    params = ss.get("sparkSubmitParameters") or ""
    return ["spark-submit", *params.split(), ss["entryPoint"], *ss.get("entryPointArguments", [])]


def start_request(pipeline: Pipeline, job: Job, *, application_id: str, execution_role_arn: str, log_root: str,
                  names: Iterable[str] | None = None) -> dict[str, Any]:
    """The StartJobRun parameters of one job (without clientToken)."""
    req: dict[str, Any] = {
        "applicationId": application_id,
        "executionRoleArn": execution_role_arn,
        "name": job_name(pipeline, job),
        "jobDriver": job_driver(job_argv(pipeline, job, TARGET, names)),
        "configurationOverrides": {
            "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": log_root + "/"}}},
        "tags": {"hudi-cdc:pipeline": pipeline.pipeline, "hudi-cdc:table": f"{job.table}"},
    }
    if job.continuous:
        req["mode"] = "STREAMING"
    else:
        req["executionTimeoutMinutes"] = max(5, -(-pipeline.emr.timeout_seconds // 60))
    return req
