"""EMR runner: one EMR step per HoodieStreamer job, on a running cluster (emr.cluster_id).

Same shape as the local runner: ``run_job(job)`` runs one table/table-type/operation and returns
when it is done (or, for a continuous stream, once it is RUNNING). What it does, in order:

1. refuses what cannot run on EMR (non-S3 roots, registry credentials, secret values in files/argv)
   and a job whose table is written by a step still PENDING or RUNNING (one writer per table);
2. uploads the rendered properties files to ``s3://<emr.bucket>/<emr.prefix>/<pipeline>/properties/``;
3. adds one step: ``command-runner.jar`` + the spark-submit argv the renderer built for target "emr";
4. polls DescribeStep every ``emr.poll_seconds``, logging each state change, up to
   ``emr.timeout_seconds``; on FAILED it shows FailureDetails and the tail of the step's stderr
   from the cluster's LogUri, on CANCELLED and on timeout it says so in its own words.

With ``dry_run=True`` nothing is called: every AWS call is printed instead.
Modelled on Airflow's EmrHook / waiter_with_logging: a thin boto3 wrapper and a logging poll loop.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Dict, Iterable, List, Optional

from .. import render as rnd
from ..config import Pipeline
from ..errors import AwsError, ConfigError
from . import aws_common as ac
from .aws_common import JobCancelled, JobFailed, JobSpec, RunResult

TARGET = "emr"
COMMAND_RUNNER = "command-runner.jar"
ACTION_ON_FAILURE = "CONTINUE"  # never terminate or park the cluster because one table failed
ACTIVE = ("PENDING", "CANCEL_PENDING", "RUNNING")
DONE = ("COMPLETED", "CANCELLED", "FAILED", "INTERRUPTED")
LOG_TAIL_LINES = 40


# ---- rendering (pure: no AWS) -------------------------------------------------------------------
def rendered_properties(pipeline: Pipeline) -> Dict[str, str]:
    return rnd.render_properties(pipeline)


def job_props_uri(pipeline: Pipeline, job: JobSpec, names: Optional[Iterable[str]] = None) -> str:
    """Where the job's properties file is uploaded; checked against the rendered names when given."""
    name = rnd.props_filename(pipeline, job.table, job.table_type)
    if names is not None and name not in set(names):
        raise AwsError(f"{name} is not among the rendered properties files: {', '.join(sorted(names))}")
    return f"{ac.properties_root(pipeline)}/{name}"


def job_argv(pipeline: Pipeline, job: JobSpec, target: str, props_uri: str) -> List[str]:
    return list(rnd.streamer_argv(pipeline, job.table, job.table_type, job.op, target=target,
                                        props_uri=props_uri, continuous=job.continuous))


def step_definition(pipeline: Pipeline, job: Any, names: Optional[Iterable[str]] = None) -> Dict[str, Any]:
    """The boto3 ``add_job_flow_steps`` / Airflow ``EmrAddStepsOperator`` shape of one step."""
    job = ac.as_job(job)
    argv = job_argv(pipeline, job, TARGET, job_props_uri(pipeline, job, names))
    if not argv or argv[0] != "spark-submit":
        raise AwsError(f"the renderer's argv for target emr must start with spark-submit, got {argv[:1]}")
    return {
        "Name": ac.job_name(pipeline, job),
        "ActionOnFailure": ACTION_ON_FAILURE,
        "HadoopJarStep": {"Jar": COMMAND_RUNNER, "Args": argv},
    }


def to_cli_step(step: Dict[str, Any]) -> Dict[str, Any]:
    """The same step in the shape `aws emr add-steps --steps file://...` reads (the AWS CLI's own
    flattened form: Type/Name/ActionOnFailure/Jar/Args; it rejects the API's HadoopJarStep)."""
    return {
        "Type": "CUSTOM_JAR",
        "Name": step["Name"],
        "ActionOnFailure": step["ActionOnFailure"],
        "Jar": step["HadoopJarStep"]["Jar"],
        "Args": list(step["HadoopJarStep"]["Args"]),
    }


def steps(pipeline: Pipeline, jobs: Iterable[Any], flavor: str = "api") -> List[Dict[str, Any]]:
    ac.check_runs_on_aws(pipeline, TARGET)
    names = list(rendered_properties(pipeline).keys())
    out = [step_definition(pipeline, j, names) for j in jobs]
    if flavor == "cli":
        return [to_cli_step(s) for s in out]
    if flavor != "api":
        raise ConfigError(f"unknown step JSON flavor {flavor!r}: api (boto3/Airflow) or cli (aws emr add-steps)")
    return out


def steps_json(pipeline: Pipeline, jobs: Iterable[Any], flavor: str = "api") -> List[Dict[str, Any]]:
    """``hudi-cdc render --emr-steps``: the list of step definitions (JSON-able).

    flavor "api" (default): boto3 ``add_job_flow_steps(Steps=...)`` shape, which Airflow's
    EmrAddStepsOperator passes through unchanged (also as a templated ``.json`` file: the text is
    plain strings and lists, so its ``ast.literal_eval`` reads it too). flavor "cli": the shape
    ``aws emr add-steps --cluster-id j-... --steps file://steps.json`` reads.
    Raises AwsError when a step would carry a secret value.
    """
    items = steps(pipeline, jobs, flavor)
    ac.check_no_secrets(pipeline, [(f"step {s['Name']}", json.dumps(s)) for s in items])
    return items


def upload_rendered(pipeline: Pipeline, s3: Any, echo: Callable[[str], None], dry_run: bool) -> Dict[str, str]:
    """Upload every rendered file (properties, and schemas when the renderer emits them) to the
    pipeline's properties root, secrets checked first; returns name -> s3 URI. Both AWS runners use it."""
    files = rendered_properties(pipeline)
    ac.check_no_secrets(pipeline, [(f"properties file {n}", t) for n, t in files.items()])
    root = ac.properties_root(pipeline)
    out: Dict[str, str] = {}
    for name in sorted(files):
        uri = f"{root}/{name}"
        bucket, key = ac.split_s3(uri)
        ac.call(s3, "put_object", Bucket=bucket, Key=key, Body=files[name].encode("utf-8"), ContentType="text/plain")
        out[name] = uri
    if not dry_run:
        echo(f"uploaded {len(out)} file(s) to {root}/")
    return out


def steps_text(pipeline: Pipeline, jobs: Iterable[Any], flavor: str = "api") -> str:
    """steps_json as the exact text to print or save (2-space indent, trailing newline)."""
    return json.dumps(steps_json(pipeline, jobs, flavor), indent=2) + "\n"


# ---- the runner -----------------------------------------------------------------------------------
class EmrRunner:
    """Run HoodieStreamer jobs as EMR steps on ``pipeline.emr.cluster_id``.

    ``emr``/``s3``: boto3 clients to use (default: from the standard chain, region emr.region).
    ``echo``: where progress lines go (default: stderr). ``sleep``/``clock``: injectable for tests.
    """

    target = TARGET

    def __init__(self, pipeline: Pipeline, client: Any = None, *, s3: Any = None, dry_run: bool = False,
                 progress: Optional[Callable[[str], None]] = None, echo: Optional[Callable[[str], None]] = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self.pipeline = pipeline
        self.settings = pipeline.emr
        self.dry_run = dry_run
        self.echo = echo or progress or _stderr
        self.sleep = sleep
        self.clock = clock
        if dry_run:
            self.emr = client or ac.DryRunClient("emr", _stdout, answers=_dry_answers_emr(pipeline))
            self.s3 = s3 or ac.DryRunClient("s3", _stdout)
        else:
            self.emr = client or ac.aws_client("emr", self.settings.region)
            self.s3 = s3 or ac.aws_client("s3", self.settings.region)
        self._uploaded: Optional[Dict[str, str]] = None
        self._log_uri: Optional[str] = None
        self._warned_version = False

    # -- helpers
    @property
    def cluster_id(self) -> str:
        return ac.require(self.settings.cluster_id, "cluster_id", self.pipeline, "the id j-... of a running cluster")

    def _call(self, op: str, **params: Any) -> Dict[str, Any]:
        return ac.call(self.emr, op, **params)

    # -- upload
    def upload_properties(self) -> Dict[str, str]:
        """Upload every rendered file once; returns name -> s3 URI."""
        if self._uploaded is None:
            self._uploaded = upload_rendered(self.pipeline, self.s3, self.echo, self.dry_run)
        return self._uploaded

    # -- submit / wait
    def active_steps(self, all_steps: bool = False) -> List[Dict[str, Any]]:
        """PENDING/RUNNING steps on the cluster: this pipeline's, or everybody's with all_steps."""
        found: List[Dict[str, Any]] = []
        params: Dict[str, Any] = {"ClusterId": self.cluster_id, "StepStates": list(ACTIVE)}
        while True:
            page = self._call("list_steps", **params)
            found += [s for s in page.get("Steps", []) if all_steps or ac.owns_name(self.pipeline, s.get("Name"))]
            marker = page.get("Marker")
            if not marker:
                return found
            params["Marker"] = marker

    def _warn_if_it_will_wait(self, active: List[Dict[str, Any]]) -> None:
        """Continuous streams hold a step slot for ever: say so when the new step cannot start."""
        running = [s for s in active if s.get("Status", {}).get("State") in ("RUNNING", "PENDING")]
        cluster = self._call("describe_cluster", ClusterId=self.cluster_id)["Cluster"]
        if not self._warned_version:
            self._warned_version = True
            mismatch = ac.hudi_mismatch(self.pipeline, cluster.get("ReleaseLabel"))
            if mismatch:
                self.echo(mismatch)
        level = cluster.get("StepConcurrencyLevel") or 1
        if len(running) >= level:
            self.echo(f"warning: {self.cluster_id} runs at most {level} step(s) at once and {len(running)} are "
                      "running or pending; this step waits in PENDING until one ends (raise it with `aws emr "
                      f"modify-cluster --cluster-id {self.cluster_id} --step-concurrency-level N`)")

    def step_for(self, job: Any) -> Dict[str, Any]:
        job = ac.as_job(job)
        names = self.upload_properties().keys()
        return step_definition(self.pipeline, job, names)

    def submit(self, job: Any) -> RunResult:
        """Upload, check nothing writes this table already, add the step; do not wait."""
        job = ac.as_job(job)
        ac.check_runs_on_aws(self.pipeline, TARGET)
        name = ac.job_name(self.pipeline, job)
        active = self.active_steps(all_steps=True)
        for s in active:  # before uploading: never touch the files of a running stream
            if ac.writes_table(self.pipeline, s.get("Name"), job):
                state = s.get("Status", {}).get("State", "?")
                raise ac.AlreadyRunning(
                    f"refusing to submit {name}: step {s['Id']} ({s['Name']}) is {state} on "
                    f"{self.cluster_id} and writes the same table; stop it first with `hudi-cdc emr cancel {s['Id']}`")
        step = self.step_for(job)
        ac.check_no_secrets(self.pipeline, [(f"step {step['Name']}", json.dumps(step))])
        self._warn_if_it_will_wait(active)
        resp = self._call("add_job_flow_steps", JobFlowId=self.cluster_id, Steps=[step])
        step_id = resp["StepIds"][0]
        self.echo(f"submitted step {step_id} {step['Name']} to {self.cluster_id}")
        args = step["HadoopJarStep"]["Args"]
        return RunResult(TARGET, step_id, step["Name"], "PENDING", args, _props_arg(args), None)

    def run_job(self, job: Any, wait: bool = True) -> RunResult:
        """Submit one job and wait: to COMPLETED for a one-off run, to RUNNING for a continuous stream."""
        job = ac.as_job(job)
        res = self.submit(job)
        if not wait:
            return res
        if self.dry_run:
            until = "RUNNING" if job.continuous else "COMPLETED"
            _stdout(f"# then: emr.describe_step every {self.settings.poll_seconds}s until {until} "
                    f"(timeout {self.settings.timeout_seconds}s); on failure emr.describe_cluster and "
                    f"s3.get_object <LogUri>/{self.cluster_id}/steps/<step id>/stderr.gz")
            res.state = "DRY-RUN"
            return res
        res.state = self.wait(res.id, continuous=job.continuous)
        res.log_uri = self.step_log_prefix(res.id)
        return res

    def run_jobs(self, jobs: Iterable[Any], wait: bool = True) -> List[RunResult]:
        return [self.run_job(j, wait=wait) for j in jobs]

    def run(self, jobs: Iterable[Any], label: str = "") -> List[Dict[str, Any]]:
        """The local runner's interface: run the jobs one after another, one dict per job."""
        jobs = [ac.as_job(j) for j in jobs]
        if label:
            self.echo(f"{label}: {len(jobs)} job(s) on {self.target}")
        return [self.run_job(j).to_dict() for j in jobs]

    def wait(self, step_id: str, continuous: bool = False) -> str:
        until = ("RUNNING",) + DONE if continuous else DONE
        what = f"step {step_id}"

        def describe():
            st = self._call("describe_step", ClusterId=self.cluster_id, StepId=step_id)["Step"]
            return st["Status"]["State"], st

        state, step = ac.poll(describe, what=what, until=until, poll_seconds=self.settings.poll_seconds,
                              timeout_seconds=self.settings.timeout_seconds, say=self.echo,
                              sleep=self.sleep, clock=self.clock)
        if state in ("COMPLETED", "RUNNING"):
            return state
        name = step.get("Name", "")
        reason = (step["Status"].get("StateChangeReason") or {}).get("Message")
        if state == "CANCELLED":
            raise JobCancelled(f"step {step_id} ({name}) was cancelled on {self.cluster_id}"
                               + (f": {reason}" if reason else "")
                               + "; the Hudi table keeps its last completed commit; run again when ready")
        if state == "INTERRUPTED":
            raise JobCancelled(f"step {step_id} ({name}) was interrupted on {self.cluster_id} (cluster shutting "
                               "down or step cancelled while running); the table keeps its last completed commit")
        raise JobFailed(self.failure_message(step_id, step))

    # -- failure reporting
    def cluster_log_uri(self) -> Optional[str]:
        if self._log_uri is None:
            cluster = self._call("describe_cluster", ClusterId=self.cluster_id)["Cluster"]
            self._log_uri = (cluster.get("LogUri") or self.settings.log_uri or "").rstrip("/") or ""
        return self._log_uri or None

    def step_log_prefix(self, step_id: str) -> Optional[str]:
        root = self.cluster_log_uri()
        if not root:
            return None
        root = "s3://" + root.split("://", 1)[1]  # EMR reports s3n://
        return f"{root}/{self.cluster_id}/steps/{step_id}"

    def failure_message(self, step_id: str, step: Dict[str, Any]) -> str:
        status = step.get("Status", {})
        fd = status.get("FailureDetails") or {}
        lines = [f"step {step_id} ({step.get('Name', '')}) FAILED on {self.cluster_id}"]
        if fd:
            lines.append(f"  reason: {fd.get('Reason', '-')}")
            if fd.get("Message"):
                lines.append(f"  message: {fd['Message']}")
            if fd.get("LogFile"):
                lines.append(f"  log file: {fd['LogFile']}")
        else:
            reason = (status.get("StateChangeReason") or {}).get("Message")
            lines.append(f"  reason: {reason or 'no FailureDetails reported'}")
        try:
            tail = self.logs(step_id, "stderr", LOG_TAIL_LINES)
            lines.append(f"--- last {LOG_TAIL_LINES} lines of {self.step_log_prefix(step_id)}/stderr.gz ---")
            lines.append(tail)
        except AwsError as exc:
            lines.append(f"  (no stderr: {exc})")
        return "\n".join(lines)

    # -- emr status | logs | cancel
    def status(self, step_id: Optional[str] = None) -> List[Dict[str, Any]]:
        if step_id:
            steps_ = [self._call("describe_step", ClusterId=self.cluster_id, StepId=step_id)["Step"]]
        else:
            steps_, params = [], {"ClusterId": self.cluster_id}
            while True:
                page = self._call("list_steps", **params)
                steps_ += [s for s in page.get("Steps", []) if ac.owns_name(self.pipeline, s.get("Name"))]
                if not page.get("Marker"):
                    break
                params["Marker"] = page["Marker"]
        return [_step_row(s) for s in steps_]

    def logs(self, step_id: str, kind: str = "stderr", lines: int = 200) -> str:
        prefix = self.step_log_prefix(step_id)
        if not prefix:
            raise AwsError(f"cluster {self.cluster_id} has no LogUri, so step logs are not on S3 "
                           "(set LogUri when creating the cluster; emr/cluster.yaml does)")
        text = ac.read_log_tail(self.s3, f"{prefix}/{kind}", lines)
        if text is None:
            raise AwsError(f"no {kind} for step {step_id} at {prefix}/ yet (EMR copies step logs to S3 "
                           "every few minutes and when the step ends)")
        return ac.scrub(self.pipeline, text)

    def cancel(self, step_id: str) -> str:
        resp = self._call("cancel_steps", ClusterId=self.cluster_id, StepIds=[step_id],
                          StepCancellationOption="SEND_INTERRUPT")
        for info in resp.get("CancelStepsInfoList", []):
            if info.get("StepId") == step_id and info.get("Status") == "FAILED":
                raise AwsError(f"EMR refused to cancel step {step_id}: {info.get('Reason', 'no reason given')}")
        self.echo(f"cancel requested for step {step_id} on {self.cluster_id}")
        return step_id


def _props_arg(argv: List[str]) -> str:
    for i, a in enumerate(argv[:-1]):
        if a == "--props":
            return argv[i + 1]
    return ""


def _step_row(s: Dict[str, Any]) -> Dict[str, Any]:
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


def _dry_answers_emr(pipeline: Pipeline) -> Dict[str, Callable[[Dict[str, Any]], Dict[str, Any]]]:
    counter = iter(range(1, 10_000))
    return {
        "list_steps": lambda p: {"Steps": []},
        "add_job_flow_steps": lambda p: {"StepIds": [f"s-DRYRUN{next(counter):05d}" for _ in p["Steps"]]},
        "describe_cluster": lambda p: {"Cluster": {"LogUri": pipeline.emr.log_uri, "StepConcurrencyLevel": 256,
                                                   "ReleaseLabel": pipeline.emr.release_label}},
    }


def _stderr(msg: str) -> None:
    import click

    click.echo(msg, err=True)


def _stdout(msg: str) -> None:
    import click

    click.echo(msg)
