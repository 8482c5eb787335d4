"""The flow both AWS runners follow; the EMR and EMR Serverless runners fill in the calls.

``run(jobs, label)`` runs the jobs one after another: for each, ``submit`` refuses what cannot run
on AWS and a job whose table is written by a step / job run still active (one writer per table),
then the runner uploads the rendered files and starts the job; ``wait`` polls it, saying each
state change, up to ``emr.timeout_seconds`` (to the end for a one-off run, to RUNNING for a
continuous stream); a failure shows the reasons AWS gives and the tail of the job's stderr from
S3, a cancellation and a timeout say so in their own words. With ``dry_run=True`` every AWS call
is printed instead of made (``plan``).
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_cdc.common.causes import first_line, root_cause
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.core.profiles import HUDI_CDC, engine_for
from hudi_cdc.core.render import Job
from hudi_cdc.errors import AwsError, DataError
from hudi_cdc.runners.aws.checks import check_runs_on_aws, hudi_mismatch, scrub
from hudi_cdc.runners.aws.client import DryRunClient, aws_client, call, check_credentials
from hudi_cdc.runners.aws.errors import AlreadyRunning, JobCancelled, JobFailed
from hudi_cdc.runners.aws.layout import job_name, owns_name, properties_root, writes_table
from hudi_cdc.runners.aws.logs import read_log_tail
from hudi_cdc.runners.aws.poll import Probe, poll
from hudi_cdc.runners.aws.upload import upload_rendered
from hudi_cdc.runners.deltastreamer import typed_render

LOG_TAIL_LINES = 40
Echo = Callable[[str], None]


@dataclass
class RunResult:
    """What a runner returns for one job: enough to find it again (`hudi-cdc emr status <id>`)."""

    target: str
    id: str
    name: str
    state: str
    argv: list[str]
    props_uri: str
    log_uri: str | None
    job: Job

    def to_dict(self) -> dict[str, Any]:
        return {"target": self.target, "id": self.id, "name": self.name,
                "table": "*" if self.job.all_tables else self.job.table,
                "operation": self.job.op, "state": self.state, "props_uri": self.props_uri,
                "log_uri": self.log_uri, "dry_run": self.state == "DRY-RUN"}


class AwsRunner(ABC):
    """Shared part of EmrRunner and EmrServerlessRunner.

    ``client``/``s3``: boto3 clients to use (default: from the standard chain, region emr.region).
    ``echo`` (or ``progress``): where progress lines go; ``show``: where a dry run's lines go (every AWS
    call it would make, and what waiting would call). Both default to the ``hudi_cdc`` logger: the library
    prints nothing, the CLI passes its printers (progress to stderr, the dry run to stdout).
    ``sleep``/``clock``: injectable for tests.
    """

    target: str  # "emr" | "emr-serverless"
    service: str  # boto3 service name
    noun: str  # "step" | "job run"
    describe_op: str  # the call that tells a step's / job run's state
    ACTIVE: tuple[str, ...]  # states of a job that still writes its table
    DONE: tuple[str, ...]  # states a job ends in
    SUCCESS: str  # the state of a job that ended well
    log_noun = ""  # "driver " where the stderr is the Spark driver's
    logs_late = ""  # what to say when a log is not on S3 (yet)

    def __init__(self, pipeline: Pipeline, client: Any = None, *, s3: Any = None, dry_run: bool = False,
                 progress: Echo | None = None, echo: Echo | None = None, show: Echo | None = None,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        self.pipeline = pipeline
        self.settings = pipeline.emr
        self.dry_run = dry_run
        self.echo = echo or progress or log_progress
        self.show = show or log_progress
        self.sleep = sleep
        self.clock = clock
        if dry_run:
            self.client = client or DryRunClient(self.service, self.show, answers=self._dry_answers())
            self.s3 = s3 or DryRunClient("s3", self.show)
        else:
            self.client = client or aws_client(self.service, self.settings.region)
            self.s3 = s3 or aws_client("s3", self.settings.region)
        self._uploaded: dict[str, str] | None = None
        self._typed: typed_render.TypedFiles | None = None
        self._warned_version = False

    # ---- what each runner fills in -----------------------------------------------------------
    @property
    @abstractmethod
    def where(self) -> str:
        """Where jobs run, for messages: the cluster id, ``application <id>``."""

    cancel_command = "hudi-cdc emr cancel"

    @abstractmethod
    def _check_settings(self) -> None:
        """Raise ConfigError when an emr.* setting this target needs is missing."""

    def _dry_answers(self) -> dict[str, Callable[[dict[str, Any]], dict[str, Any]]]:
        return {}

    @abstractmethod
    def _list(self, states: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every step / job run (in ``states`` when given), as the list API returns them."""

    @abstractmethod
    def _describe(self, run_id: str) -> dict[str, Any]:
        """The step / job run as the describe call returns it."""

    @abstractmethod
    def _row(self, item: dict[str, Any]) -> dict[str, Any]:
        """id, name, state, created, reason, ... of a listed or described step / job run."""

    @abstractmethod
    def _start(self, job: Job, name: str, active: list[dict[str, Any]]) -> RunResult:
        """Upload, check for secrets, start the job; no waiting."""

    @abstractmethod
    def _probe(self, run_id: str, stop: Sequence[str]) -> Probe:
        """One look at the job for the wait loop; done once its state is one of ``stop``."""

    @abstractmethod
    def _failure_lines(self, detail: dict[str, Any]) -> list[str]:
        """Why AWS says it failed, one indented line each."""

    @abstractmethod
    def _log_dir(self, run_id: str) -> str:
        """Where the job's stderr/stdout are on S3 (raises AwsError when they are nowhere)."""

    @abstractmethod
    def _failure_calls(self) -> str:
        """For the dry run: what a failure would read (calls and log objects)."""

    @abstractmethod
    def _cancel(self, run_id: str) -> None:
        """Ask AWS to stop the step / job run."""

    def _log_prefix(self, run_id: str) -> str | None:
        """The job's log folder for RunResult.log_uri (None when unknown)."""
        return None

    # ---- the Runner interface ------------------------------------------------------------------
    def preflight(self) -> None:
        """Before anything is touched: the pipeline can run on AWS, and boto3 finds credentials."""
        check_runs_on_aws(self.pipeline, self.target)
        self._check_settings()
        if not isinstance(self.client, DryRunClient):
            check_credentials()

    def plan(self, jobs: Sequence[Job], label: str = "") -> list[dict[str, Any]]:
        """Print every AWS call the jobs would make, make none; one dict per job."""
        runner = self if self.dry_run else type(self)(self.pipeline, dry_run=True, echo=self.echo, show=self.show)
        return runner._run_all(jobs, label)

    def run(self, jobs: Sequence[Job], label: str = "") -> list[dict[str, Any]]:
        """Run the jobs one after another (see the module docstring); one dict per job."""
        return self._run_all(jobs, label)

    def status(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """One step / job run, or all of this pipeline's."""
        if run_id:
            return [self._row(self._describe(run_id))]
        return [r for r in map(self._row, self._list()) if owns_name(self.pipeline, r["name"])]

    def logs(self, run_id: str, kind: str = "stderr", lines: int = 200) -> str:
        """Tail of the job's (driver's) stderr or stdout on S3, secrets masked."""
        prefix = self._log_dir(run_id)
        text = read_log_tail(self.s3, f"{prefix}/{kind}", lines)
        if text is None:
            raise AwsError(f"no {self.log_noun}{kind} for {self.noun} {run_id} at {prefix}/ {self.logs_late}")
        return scrub(self.pipeline, text)

    def cancel(self, run_id: str) -> str:
        self._cancel(run_id)
        self.echo(f"cancel requested for {self.noun} {run_id} on {self.where}")
        return run_id

    # ---- the flow ----------------------------------------------------------------------------------
    def _call(self, op: str, **params: Any) -> dict[str, Any]:
        return call(self.client, op, **params)

    def _run_all(self, jobs: Sequence[Job], label: str) -> list[dict[str, Any]]:
        jobs = list(jobs)
        if label:
            self.echo(f"{label}: {len(jobs)} job(s) on {self.target}")
        return [self.run_job(j).to_dict() for j in jobs]

    @property
    def engine(self) -> str:
        """The profile's default engine on AWS or hudi.engine; ConfigError when it cannot run here."""
        return engine_for(self.pipeline.hudi.version, self.target, self.pipeline.hudi.engine)

    def typed_files(self) -> typed_render.TypedFiles | None:
        """HoodieStreamer's typed columns (rendered once from the landed schemas); None for hudi-cdc's streamer."""
        if self._typed is None and typed_render.applies(self.pipeline, self.target):
            self._typed = typed_render.render_typed(self.pipeline, properties_root(self.pipeline), self.echo)
        return self._typed

    def upload_properties(self) -> dict[str, str]:
        """Upload every rendered file once (and hudi-cdc's job files for that engine); name -> s3 URI."""
        if self._uploaded is None:
            typed = self.typed_files()
            self._uploaded = upload_rendered(self.pipeline, self.s3, self.echo, self.dry_run,
                                             rendered=typed.files if typed else None,
                                             with_job=self.engine == HUDI_CDC)
        return self._uploaded

    def _warn_hudi_version(self, release_label: Callable[[], str | None]) -> None:
        """Once per runner: say when the EMR release runs another Hudi than the pipeline's."""
        if not self._warned_version:
            self._warned_version = True
            mismatch = hudi_mismatch(self.pipeline, release_label())
            if mismatch:
                self.echo(mismatch)

    def submit(self, job: Job) -> RunResult:
        """Refuse what cannot run or would be a second writer of a table, then start; do not wait."""
        check_runs_on_aws(self.pipeline, self.target)
        name = job_name(self.pipeline, job)
        active = [self._row(i) for i in self._list(self.ACTIVE)]
        for r in active:  # before uploading: never touch the files of a running stream
            if writes_table(self.pipeline, r["name"], job):
                raise AlreadyRunning(
                    f"refusing to submit {name}: {self.noun} {r['id']} ({r['name']}) is {r['state']} on "
                    f"{self.where} and writes the same table; stop it first with `{self.cancel_command} {r['id']}`")
        typed = self.typed_files()
        if typed is not None and job.table in typed.no_landing:
            # HoodieStreamer would write Debezium's encodings, and the table would keep them
            raise DataError(f"refusing to submit {name}: " + typed_render.no_landing_line(self.pipeline, job.table))
        return self._start(job, name, active)

    def run_job(self, job: Job, wait: bool = True) -> RunResult:
        """Submit one job and wait: to the end for a one-off run, to RUNNING for a continuous stream."""
        res = self.submit(job)
        if not wait:
            return res
        if self.dry_run:
            self.show(self._then(job))
            res.state = "DRY-RUN"
            return res
        res.state = self.wait(res.id, continuous=job.continuous)
        res.log_uri = res.log_uri or self._log_prefix(res.id)
        return res

    def _then(self, job: Job) -> str:
        """The dry run's last line: what waiting would call."""
        until = "RUNNING" if job.continuous else self.SUCCESS
        return (f"# then: {self.service}.{self.describe_op} every {self.settings.poll_seconds}s until {until} "
                f"(timeout {self.settings.timeout_seconds}s); on failure {self._failure_calls()}")

    def wait(self, run_id: str, continuous: bool = False) -> str:
        stop = (("RUNNING",) if continuous else ()) + self.DONE
        state, detail = poll(self._probe(run_id, stop), what=f"{self.noun} {run_id}",
                             poll_seconds=self.settings.poll_seconds, timeout_seconds=self.settings.timeout_seconds,
                             say=self.echo, sleep=self.sleep, clock=self.clock)
        if state in (self.SUCCESS, "RUNNING"):
            return state
        row = self._row(detail)
        if state == "CANCELLED":
            raise JobCancelled(f"{self.noun} {run_id} ({row['name'] or ''}) was cancelled on {self.where}"
                               + (f": {row['reason']}" if row["reason"] else "")
                               + "; the Hudi table keeps its last completed commit; run again when ready")
        if state == "INTERRUPTED":  # EMR only
            raise JobCancelled(f"{self.noun} {run_id} ({row['name'] or ''}) was interrupted on {self.where} "
                               "(cluster shutting down or step cancelled while running); the table keeps its "
                               "last completed commit")
        raise JobFailed(*self.failure_message(run_id, detail))

    def failure_message(self, run_id: str, detail: dict[str, Any]) -> tuple[str, str]:
        """(one line: what failed, AWS's reason, the stderr's root cause, where its log is; the details:
        AWS's failure lines and the last LOG_TAIL_LINES lines of the stderr)."""
        header = f"{self.noun} {run_id} ({self._row(detail)['name'] or ''}) FAILED on {self.where}"
        reasons = [line.strip() for line in self._failure_lines(detail)]
        lines = [header, *self._failure_lines(detail)]
        log = f"{self._log_dir(run_id)}/stderr.gz"
        try:
            tail = self.logs(run_id, "stderr", LOG_TAIL_LINES)
            lines += [f"--- last {LOG_TAIL_LINES} lines of {log} ---", tail]
            cause = f"stderr: {_stderr_cause(tail)}"
        except AwsError as exc:
            lines.append(f"  (no {self.log_noun}stderr: {exc})")
            cause = f"no {self.log_noun}stderr ({first_line(exc, 200)})"
        line = (f"{header}: {'; '.join(first_line(r, 300) for r in reasons)}; {first_line(cause, 300)}; "
                f"the {self.log_noun}log: {log} (hudi-cdc emr logs {run_id}; --debug shows its last lines)")
        return line, "\n".join(lines)


def _stderr_cause(tail: str) -> str:
    """The root cause of a stderr tail (its deepest 'Caused by' or exception line), else its last line:
    where a job's stderr ends is why it ended."""
    lines = [line for line in tail.splitlines() if line.strip()]
    cause = root_cause(lines)
    return lines[-1].strip() if lines and cause == lines[0].strip() and len(lines) > 1 else cause
