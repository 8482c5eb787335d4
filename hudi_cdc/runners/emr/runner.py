"""EMR runner: one EMR step per HoodieStreamer job, on a running cluster (emr.cluster_id).

The flow is aws/runner.py's; here: steps are ``command-runner.jar`` + the spark-submit argv the
renderer built for target "emr" (emr/plan.py), added with AddJobFlowSteps; a step is waited for
with boto3's ``step_complete`` waiter, one attempt per poll; on FAILED the message shows
FailureDetails and the tail of the step's stderr from the cluster's LogUri.
Modelled on Airflow's EmrHook / waiter_with_logging: a thin boto3 wrapper and a logging poll loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError
from hudi_cdc.runners.aws.checks import check_no_secrets, check_runs_on_aws
from hudi_cdc.runners.aws.client import items
from hudi_cdc.runners.aws.errors import AlreadyRunning
from hudi_cdc.runners.aws.layout import owns_name, props_arg, require
from hudi_cdc.runners.aws.poll import Probe, waiter_attempt
from hudi_cdc.runners.aws.runner import AwsRunner, RunResult
from hudi_cdc.runners.emr.plan import TARGET, all_tables_step, step_definition


class EmrRunner(AwsRunner):
    """Run HoodieStreamer jobs as EMR steps on ``pipeline.emr.cluster_id``."""

    target = TARGET
    service = "emr"
    noun = "step"
    describe_op = "describe_step"
    ACTIVE = ("PENDING", "CANCEL_PENDING", "RUNNING")
    DONE = ("COMPLETED", "CANCELLED", "FAILED", "INTERRUPTED")
    SUCCESS = "COMPLETED"
    logs_late = "yet (EMR copies step logs to S3 every few minutes and when the step ends)"

    _log_uri: str | None = None

    @property
    def cluster_id(self) -> str:
        return require(self.settings.cluster_id, "cluster_id", self.pipeline, "the id j-... of a running cluster")

    @property
    def where(self) -> str:
        return self.cluster_id

    def _check_settings(self) -> None:
        self.cluster_id  # noqa: B018 - raises ConfigError when unset

    def _dry_answers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        counter = iter(range(1, 10_000))
        emr = self.settings
        return {
            "list_steps": lambda p: {"Steps": []},
            "add_job_flow_steps": lambda p: {"StepIds": [f"s-DRYRUN{next(counter):05d}" for _ in p["Steps"]]},
            "describe_cluster": lambda p: {"Cluster": {"LogUri": emr.log_uri, "StepConcurrencyLevel": 256,
                                                       "ReleaseLabel": emr.release_label}},
        }

    # -- listing
    def _list(self, states: Sequence[str] | None = None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"ClusterId": self.cluster_id}
        if states:
            params["StepStates"] = list(states)
        return items(self.client, "list_steps", "Steps", **params)

    def _describe(self, run_id: str) -> dict[str, Any]:
        return self._call("describe_step", ClusterId=self.cluster_id, StepId=run_id)["Step"]

    def _row(self, s: dict[str, Any]) -> dict[str, Any]:
        st = s.get("Status", {})
        tl = st.get("Timeline", {})
        fd = st.get("FailureDetails") or {}
        return {
            "id": s.get("Id"),
            "name": s.get("Name"),
            "state": st.get("State"),
            "created": tl.get("CreationDateTime"),
            "started": tl.get("StartDateTime"),
            "ended": tl.get("EndDateTime"),
            "reason": fd.get("Reason") or (st.get("StateChangeReason") or {}).get("Message"),
        }

    # -- submit
    def _start(self, job: Job, name: str, active: list[dict[str, Any]]) -> RunResult:
        step = step_definition(self.pipeline, job, self.upload_properties().keys())
        check_no_secrets(self.pipeline, [(f"step {step['Name']}", json.dumps(step))])
        self._warn_if_it_will_wait(active)
        step_id = self._call("add_job_flow_steps", JobFlowId=self.cluster_id, Steps=[step])["StepIds"][0]
        self.echo(f"submitted step {step_id} {step['Name']} to {self.cluster_id}")
        args = step["HadoopJarStep"]["Args"]
        return RunResult(TARGET, step_id, step["Name"], "PENDING", args, props_arg(args), None, job)

    def run_all_tables(self) -> RunResult:
        """`stream --all` as ONE step (plan.all_tables_step), refused while any step of this pipeline is
        active (it would be a second writer of a table); waits until the step is RUNNING."""
        check_runs_on_aws(self.pipeline, self.target)
        step = all_tables_step(self.pipeline, self.upload_properties().keys())
        active = [self._row(i) for i in self._list(self.ACTIVE)]
        for r in active:
            if owns_name(self.pipeline, r["name"]):
                raise AlreadyRunning(
                    f"refusing to submit {step['Name']}: step {r['id']} ({r['name']}) is {r['state']} on "
                    f"{self.cluster_id} and writes a table of the pipeline; stop it first with "
                    f"`{self.cancel_command} {r['id']}`")
        check_no_secrets(self.pipeline, [(f"step {step['Name']}", json.dumps(step))])
        self._warn_if_it_will_wait(active)
        step_id = self._call("add_job_flow_steps", JobFlowId=self.cluster_id, Steps=[step])["StepIds"][0]
        self.echo(f"submitted step {step_id} {step['Name']} to {self.cluster_id}")
        args = step["HadoopJarStep"]["Args"]
        first_table, first_type = self.pipeline.targets()[0]
        job = Job(first_table, first_type, "UPSERT", continuous=True, all_tables=True)
        res = RunResult(TARGET, step_id, step["Name"], "PENDING", args, props_arg(args), None, job)
        if self.dry_run:
            self.show(self._then(job))
            res.state = "DRY-RUN"
            return res
        res.state = self.wait(step_id, continuous=True)
        res.log_uri = self._log_prefix(step_id)
        return res

    def _warn_if_it_will_wait(self, active: list[dict[str, Any]]) -> None:
        """Continuous streams hold a step slot for ever: say so when the new step cannot start."""
        running = [r for r in active if r["state"] in ("RUNNING", "PENDING")]
        cluster = self._call("describe_cluster", ClusterId=self.cluster_id)["Cluster"]
        self._warn_hudi_version(lambda: cluster.get("ReleaseLabel"))
        level = cluster.get("StepConcurrencyLevel") or 1
        if len(running) >= level:
            self.echo(f"warning: {self.cluster_id} runs at most {level} step(s) at once and {len(running)} are "
                      "running or pending; this step waits in PENDING until one ends (raise it with `aws emr "
                      f"modify-cluster --cluster-id {self.cluster_id} --step-concurrency-level N`)")

    # -- wait
    def _probe(self, run_id: str, stop: Sequence[str]) -> Probe:
        return waiter_attempt(self.client, "step_complete", lambda r: (r["Step"]["Status"]["State"], r["Step"]),
                              stop, ClusterId=self.cluster_id, StepId=run_id)

    def _failure_calls(self) -> str:
        return f"emr.describe_cluster and s3.get_object <LogUri>/{self.cluster_id}/steps/<step id>/stderr.gz"

    # -- failure reporting, logs
    def _failure_lines(self, step: dict[str, Any]) -> list[str]:
        status = step.get("Status", {})
        fd = status.get("FailureDetails") or {}
        if not fd:
            reason = (status.get("StateChangeReason") or {}).get("Message")
            return [f"  reason: {reason or 'no FailureDetails reported'}"]
        lines = [f"  reason: {fd.get('Reason', '-')}"]
        if fd.get("Message"):
            lines.append(f"  message: {fd['Message']}")
        if fd.get("LogFile"):
            lines.append(f"  log file: {fd['LogFile']}")
        return lines

    def _cluster_log_uri(self) -> str | None:
        if self._log_uri is None:
            cluster = self._call("describe_cluster", ClusterId=self.cluster_id)["Cluster"]
            self._log_uri = (cluster.get("LogUri") or self.settings.log_uri or "").rstrip("/") or ""
        return self._log_uri or None

    def _log_prefix(self, run_id: str) -> str | None:
        root = self._cluster_log_uri()
        if not root:
            return None
        root = "s3://" + root.split("://", 1)[1]  # EMR reports s3n://
        return f"{root}/{self.cluster_id}/steps/{run_id}"

    def _log_dir(self, run_id: str) -> str:
        prefix = self._log_prefix(run_id)
        if not prefix:
            raise AwsError(f"cluster {self.cluster_id} has no LogUri, so step logs are not on S3 "
                           "(set LogUri when creating the cluster; emr/cluster.yaml does)")
        return prefix

    # -- cancel
    def _cancel(self, run_id: str) -> None:
        resp = self._call("cancel_steps", ClusterId=self.cluster_id, StepIds=[run_id],
                          StepCancellationOption="SEND_INTERRUPT")
        for info in resp.get("CancelStepsInfoList", []):
            if info.get("StepId") == run_id and info.get("Status") == "FAILED":
                raise AwsError(f"EMR refused to cancel step {run_id}: {info.get('Reason', 'no reason given')}")
