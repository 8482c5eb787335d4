"""EMR Serverless runner: one job run per HoodieStreamer job on ``emr.serverless_application_id``.

The flow is aws/runner.py's; here: StartJobRun with the ``sparkSubmit`` job driver of
emr_serverless/plan.py, polled with GetJobRun (botocore has no EMR Serverless waiters); on FAILED
the message shows stateDetails and the tail of the driver's stderr from
``<log root>/applications/<app>/jobs/<run>/SPARK_DRIVER/``. Continuous streams start in mode
STREAMING (no execution timeout) and the wait ends once RUNNING.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError
from hudi_cdc.runners.aws.checks import check_no_secrets
from hudi_cdc.runners.aws.client import items
from hudi_cdc.runners.aws.layout import log_root, props_arg, require
from hudi_cdc.runners.aws.poll import Probe, describe_until
from hudi_cdc.runners.aws.runner import AwsRunner, RunResult
from hudi_cdc.runners.emr_serverless.plan import TARGET, argv_of, start_request


class EmrServerlessRunner(AwsRunner):
    """Run HoodieStreamer jobs as EMR Serverless job runs."""

    target = TARGET
    service = "emr-serverless"
    noun = "job run"
    describe_op = "get_job_run"
    ACTIVE = ("SUBMITTED", "PENDING", "SCHEDULED", "QUEUED", "RUNNING", "CANCELLING")
    DONE = ("SUCCESS", "FAILED", "CANCELLED")
    SUCCESS = "SUCCESS"
    log_noun = "driver "
    logs_late = "(logs reach S3 while the run goes on and when it ends)"
    cancel_command = "hudi-cdc --target emr-serverless emr cancel"

    @property
    def application_id(self) -> str:
        return require(self.settings.serverless_application_id, "serverless_application_id", self.pipeline,
                       "an EMR Serverless Spark application, e.g. the one emr/cluster.yaml creates")

    @property
    def execution_role_arn(self) -> str:
        return require(self.settings.serverless_execution_role_arn, "serverless_execution_role_arn",
                       self.pipeline, "the job runtime role, e.g. ServerlessExecutionRoleArn of emr/cluster.yaml")

    @property
    def where(self) -> str:
        return f"application {self.application_id}"

    def _check_settings(self) -> None:
        self.application_id, self.execution_role_arn  # noqa: B018 - raise ConfigError when unset

    def _dry_answers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        counter = iter(range(1, 10_000))
        return {
            "list_job_runs": lambda p: {"jobRuns": []},
            "get_application": lambda p: {"application": {"releaseLabel": self.settings.release_label}},
            "start_job_run": lambda p: {"applicationId": p["applicationId"],
                                        "jobRunId": f"dryrun{next(counter):010d}"},
        }

    # -- listing
    def _list(self, states: Sequence[str] | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"applicationId": self.application_id}
        if states:
            params["states"] = list(states)
        try:
            return items(self.client, "list_job_runs", "jobRuns", **params)
        except AwsError as exc:
            if getattr(exc, "code", "") != "ResourceNotFoundException":
                raise
            # moto answers so for an application without job runs; make sure it really exists
            self._call("get_application", applicationId=self.application_id)
            return []

    def _describe(self, run_id: str) -> dict[str, Any]:
        return self._call("get_job_run", applicationId=self.application_id, jobRunId=run_id)["jobRun"]

    def _row(self, r: dict[str, Any]) -> dict[str, Any]:
        return {"id": r.get("id") or r.get("jobRunId"), "name": r.get("name"), "state": r.get("state"),
                "created": r.get("createdAt"), "updated": r.get("updatedAt"), "reason": r.get("stateDetails")}

    # -- submit
    def start_request(self, job: Job) -> dict[str, Any]:
        """The StartJobRun parameters for one job (no AWS call; properties must be uploaded by run)."""
        return start_request(self.pipeline, job, application_id=self.application_id,
                             execution_role_arn=self.execution_role_arn, log_root=log_root(self.pipeline),
                             names=self._uploaded.keys() if self._uploaded is not None else None)

    def _start(self, job: Job, name: str, active: list[dict[str, Any]]) -> RunResult:
        self._warn_hudi_version(lambda: self._call("get_application", applicationId=self.application_id)
                                ["application"].get("releaseLabel"))
        self.upload_properties()
        req = self.start_request(job)
        check_no_secrets(self.pipeline, [(f"job run {name}", json.dumps(req))])
        run_id = self._call("start_job_run", clientToken=str(uuid.uuid4()), **req)["jobRunId"]
        self.echo(f"started job run {run_id} {name} on application {self.application_id}")
        argv = argv_of(req["jobDriver"])
        return RunResult(TARGET, run_id, name, "SUBMITTED", argv, props_arg(argv), self._log_prefix(run_id), job)

    # -- wait
    def _probe(self, run_id: str, stop: Sequence[str]) -> Probe:
        def describe():
            jr = self._describe(run_id)
            return jr["state"], jr

        return describe_until(describe, stop)

    def _failure_calls(self) -> str:
        return f"s3.get_object {self._log_dir('<job run id>')}/stderr.gz"

    # -- failure reporting, logs
    def _failure_lines(self, jr: dict[str, Any]) -> list[str]:
        return [f"  details: {jr.get('stateDetails') or 'no stateDetails reported'}"]

    def _log_prefix(self, run_id: str) -> str:
        return f"{log_root(self.pipeline)}/applications/{self.application_id}/jobs/{run_id}"

    def _log_dir(self, run_id: str) -> str:
        return f"{self._log_prefix(run_id)}/SPARK_DRIVER"

    # -- cancel
    def _cancel(self, run_id: str) -> None:
        self._call("cancel_job_run", applicationId=self.application_id, jobRunId=run_id)
