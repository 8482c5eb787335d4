"""EMR Serverless runner: one job run per HoodieStreamer job on ``emr.serverless_application_id``.

Same interface as the EMR runner: ``run_job(job)`` uploads the rendered properties, refuses when a
job run writing the same table is still active, calls StartJobRun with a ``sparkSubmit`` job driver
(entryPoint = the jar holding the streamer class, entryPointArguments = the streamer's arguments,
sparkSubmitParameters = the spark-submit options) split from the argv the renderer built for target
"emr-serverless", then polls GetJobRun, logging each state change. On FAILED it shows stateDetails
and the tail of the driver's stderr from ``<log root>/applications/<app>/jobs/<run>/SPARK_DRIVER/``.

Continuous streams start in mode STREAMING (no execution timeout) and the wait ends once RUNNING.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from ..config import Pipeline
from ..errors import AwsError
from . import aws_common as ac
from .aws_common import JobCancelled, JobFailed, RunResult
from .emr import _stderr, _stdout, job_argv, job_props_uri, upload_rendered

TARGET = "emr-serverless"
ACTIVE = ("SUBMITTED", "PENDING", "SCHEDULED", "QUEUED", "RUNNING", "CANCELLING")
DONE = ("SUCCESS", "FAILED", "CANCELLED")
LOG_TAIL_LINES = 40

# spark-submit options that take a value (everything else starting with -- is a flag)
_VALUE_OPTS = {
    "--class", "--jars", "--packages", "--exclude-packages", "--repositories", "--py-files", "--files",
    "--archives", "--conf", "-c", "--properties-file", "--driver-memory", "--driver-java-options",
    "--driver-library-path", "--driver-class-path", "--executor-memory", "--proxy-user", "--driver-cores",
    "--total-executor-cores", "--executor-cores", "--num-executors", "--principal", "--keytab", "--queue",
    "--name", "--master", "--deploy-mode",
}


def split_spark_submit(argv: List[str]) -> Tuple[List[str], str, List[str]]:
    """``[spark-submit] <options> <app jar> <app args>`` -> (options, app jar, app args)."""
    rest = argv[1:] if argv and argv[0].endswith("spark-submit") else list(argv)
    opts: List[str] = []
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


def job_driver(argv: List[str]) -> Dict[str, Any]:
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


def argv_of(driver: Dict[str, Any]) -> List[str]:
    """Inverse of job_driver: the spark-submit argv a job run's jobDriver stands for."""
    ss = driver["sparkSubmit"]
    params = ss.get("sparkSubmitParameters") or ""
    return ["spark-submit", *params.split(), ss["entryPoint"], *ss.get("entryPointArguments", [])]


class EmrServerlessRunner:
    """Run HoodieStreamer jobs as EMR Serverless job runs.

    ``client``/``s3``: boto3 clients (default: standard chain, region emr.region). ``echo``: progress
    lines (default stderr). ``sleep``/``clock``: injectable for tests.
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
            counter = iter(range(1, 10_000))
            answers = {
                "list_job_runs": lambda p: {"jobRuns": []},
                "get_application": lambda p: {"application": {"releaseLabel": pipeline.emr.release_label}},
                "start_job_run": lambda p: {"applicationId": p["applicationId"],
                                            "jobRunId": f"dryrun{next(counter):010d}"},
            }
            self.client = client or ac.DryRunClient("emr-serverless", _stdout, answers=answers)
            self.s3 = s3 or ac.DryRunClient("s3", _stdout)
        else:
            self.client = client or ac.aws_client("emr-serverless", self.settings.region)
            self.s3 = s3 or ac.aws_client("s3", self.settings.region)
        self._uploaded: Optional[Dict[str, str]] = None
        self._warned_version = False

    @property
    def application_id(self) -> str:
        return ac.require(self.settings.serverless_application_id, "serverless_application_id", self.pipeline,
                          "an EMR Serverless Spark application, e.g. the one emr/cluster.yaml creates")

    @property
    def execution_role_arn(self) -> str:
        return ac.require(self.settings.serverless_execution_role_arn, "serverless_execution_role_arn",
                          self.pipeline, "the job runtime role, e.g. ServerlessExecutionRoleArn of emr/cluster.yaml")

    def log_root(self) -> str:
        return ac.log_root(self.pipeline)

    def _call(self, op: str, **params: Any) -> Dict[str, Any]:
        return ac.call(self.client, op, **params)

    def _list_runs(self, params: Dict[str, Any]) -> Dict[str, Any]:
        try:
            return self._call("list_job_runs", **params)
        except AwsError as exc:
            if getattr(exc, "code", "") != "ResourceNotFoundException":
                raise
            # moto answers so for an application without job runs; make sure it really exists
            self._call("get_application", applicationId=self.application_id)
            return {"jobRuns": []}

    # -- upload (same layout as the EMR runner)
    def upload_properties(self) -> Dict[str, str]:
        if self._uploaded is None:
            self._uploaded = upload_rendered(self.pipeline, self.s3, self.echo, self.dry_run)
        return self._uploaded

    def start_request(self, job: Any) -> Dict[str, Any]:
        """The StartJobRun parameters for one job (no AWS call; properties must be uploaded by run)."""
        job = ac.as_job(job)
        names = self._uploaded.keys() if self._uploaded is not None else None
        argv = job_argv(self.pipeline, job, TARGET, job_props_uri(self.pipeline, job, names))
        req: Dict[str, Any] = {
            "applicationId": self.application_id,
            "executionRoleArn": self.execution_role_arn,
            "name": ac.job_name(self.pipeline, job),
            "jobDriver": job_driver(argv),
            "configurationOverrides": {
                "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": self.log_root() + "/"}}},
            "tags": {"hudi-cdc:pipeline": self.pipeline.pipeline, "hudi-cdc:table": f"{job.table}"},
        }
        if job.continuous:
            req["mode"] = "STREAMING"
        else:
            req["executionTimeoutMinutes"] = max(5, -(-self.settings.timeout_seconds // 60))
        return req

    # -- submit / wait
    def active_runs(self) -> List[Dict[str, Any]]:
        found: List[Dict[str, Any]] = []
        params: Dict[str, Any] = {"applicationId": self.application_id, "states": list(ACTIVE)}
        while True:
            page = self._list_runs(params)
            found += [r for r in page.get("jobRuns", []) if ac.owns_name(self.pipeline, r.get("name"))]
            if not page.get("nextToken"):
                return found
            params["nextToken"] = page["nextToken"]

    def submit(self, job: Any) -> RunResult:
        job = ac.as_job(job)
        ac.check_runs_on_aws(self.pipeline, TARGET)
        name = ac.job_name(self.pipeline, job)
        for r in self.active_runs():
            if ac.writes_table(self.pipeline, r.get("name"), job):
                raise ac.AlreadyRunning(
                    f"refusing to submit {name}: job run {r['id']} ({r['name']}) is {r.get('state')} on "
                    f"application {self.application_id} and writes the same table; stop it first with "
                    f"`hudi-cdc --target emr-serverless emr cancel {r['id']}`")
        if not self._warned_version:
            self._warned_version = True
            app = self._call("get_application", applicationId=self.application_id)["application"]
            mismatch = ac.hudi_mismatch(self.pipeline, app.get("releaseLabel"))
            if mismatch:
                self.echo(mismatch)
        self.upload_properties()
        req = self.start_request(job)
        ac.check_no_secrets(self.pipeline, [(f"job run {name}", json.dumps(req))])
        resp = self._call("start_job_run", clientToken=str(uuid.uuid4()), **req)
        run_id = resp["jobRunId"]
        self.echo(f"started job run {run_id} {name} on application {self.application_id}")
        argv = argv_of(req["jobDriver"])
        props = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--props"), "")
        return RunResult(TARGET, run_id, name, "SUBMITTED", argv, props, self.run_log_prefix(run_id))

    def run_job(self, job: Any, wait: bool = True) -> RunResult:
        job = ac.as_job(job)
        res = self.submit(job)
        if not wait:
            return res
        if self.dry_run:
            until = "RUNNING" if job.continuous else "SUCCESS"
            _stdout(f"# then: emr-serverless.get_job_run every {self.settings.poll_seconds}s until {until} "
                    f"(timeout {self.settings.timeout_seconds}s); on failure s3.get_object "
                    f"{self.run_log_prefix('<job run id>')}/SPARK_DRIVER/stderr.gz")
            res.state = "DRY-RUN"
            return res
        res.state = self.wait(res.id, continuous=job.continuous)
        return res

    def run_jobs(self, jobs: Iterable[Any], wait: bool = True) -> List[RunResult]:
        return [self.run_job(j, wait=wait) for j in jobs]

    def run(self, jobs: Iterable[Any], label: str = "") -> List[Dict[str, Any]]:
        """The local runner's interface: run the jobs one after another, one dict per job."""
        jobs = [ac.as_job(j) for j in jobs]
        if label:
            self.echo(f"{label}: {len(jobs)} job(s) on {self.target}")
        return [self.run_job(j).to_dict() for j in jobs]

    def wait(self, run_id: str, continuous: bool = False) -> str:
        until = ("RUNNING",) + DONE if continuous else DONE

        def describe():
            jr = self._call("get_job_run", applicationId=self.application_id, jobRunId=run_id)["jobRun"]
            return jr["state"], jr

        state, jr = ac.poll(describe, what=f"job run {run_id}", until=until,
                            poll_seconds=self.settings.poll_seconds, timeout_seconds=self.settings.timeout_seconds,
                            say=self.echo, sleep=self.sleep, clock=self.clock)
        if state in ("SUCCESS", "RUNNING"):
            return state
        name = jr.get("name", "")
        if state == "CANCELLED":
            details = jr.get("stateDetails")
            raise JobCancelled(f"job run {run_id} ({name}) was cancelled on application {self.application_id}"
                               + (f": {details}" if details else "")
                               + "; the Hudi table keeps its last completed commit; run again when ready")
        raise JobFailed(self.failure_message(run_id, jr))

    # -- failure reporting
    def run_log_prefix(self, run_id: str) -> str:
        return f"{self.log_root()}/applications/{self.application_id}/jobs/{run_id}"

    def failure_message(self, run_id: str, jr: Dict[str, Any]) -> str:
        lines = [f"job run {run_id} ({jr.get('name', '')}) FAILED on application {self.application_id}",
                 f"  details: {jr.get('stateDetails') or 'no stateDetails reported'}"]
        try:
            tail = self.logs(run_id, "stderr", LOG_TAIL_LINES)
            lines.append(f"--- last {LOG_TAIL_LINES} lines of {self.run_log_prefix(run_id)}/SPARK_DRIVER/stderr.gz ---")
            lines.append(tail)
        except AwsError as exc:
            lines.append(f"  (no driver stderr: {exc})")
        return "\n".join(lines)

    # -- emr status | logs | cancel
    def status(self, run_id: Optional[str] = None) -> List[Dict[str, Any]]:
        if run_id:
            runs = [self._call("get_job_run", applicationId=self.application_id, jobRunId=run_id)["jobRun"]]
        else:
            runs, params = [], {"applicationId": self.application_id}
            while True:
                page = self._list_runs(params)
                runs += [r for r in page.get("jobRuns", []) if ac.owns_name(self.pipeline, r.get("name"))]
                if not page.get("nextToken"):
                    break
                params["nextToken"] = page["nextToken"]
        return [{"id": r.get("id") or r.get("jobRunId"), "name": r.get("name"), "state": r.get("state"),
                 "created": r.get("createdAt"), "updated": r.get("updatedAt"), "reason": r.get("stateDetails")}
                for r in runs]

    def logs(self, run_id: str, kind: str = "stderr", lines: int = 200) -> str:
        prefix = f"{self.run_log_prefix(run_id)}/SPARK_DRIVER"
        text = ac.read_log_tail(self.s3, f"{prefix}/{kind}", lines)
        if text is None:
            raise AwsError(f"no driver {kind} for job run {run_id} at {prefix}/ (logs reach S3 while the "
                           "run goes on and when it ends)")
        return ac.scrub(self.pipeline, text)

    def cancel(self, run_id: str) -> str:
        self._call("cancel_job_run", applicationId=self.application_id, jobRunId=run_id)
        self.echo(f"cancel requested for job run {run_id} on application {self.application_id}")
        return run_id

