"""EMR Serverless runner against moto's server mode: job runs carry the renderer's argv (split into
entryPoint / entryPointArguments / sparkSubmitParameters); failure, cancellation, timeout and
re-submission each end in their own error; dry run makes no call."""

from __future__ import annotations

import json

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import AwsError
from hudi_cdc.runners.aws import errors as aws_errors
from hudi_cdc.runners.emr_serverless import EmrServerlessRunner, argv_of, job_driver, split_spark_submit
from tests.plugins.aws_fixtures import (
    ACCOUNT,
    BUCKET,
    REGION,
    SERVERLESS_ROLE,
    pipeline_data,
    put_gz,
    serverless_run,
    set_run_state,
)

pytestmark = pytest.mark.aws

PROPS_ROOT = f"s3://{BUCKET}/hudi-cdc/moma/properties"


@pytest.fixture
def pipeline(serverless_app):
    # HoodieStreamer's job runs (hudi.engine: hoodiestreamer); hudi-cdc's streamer, the current profile's
    # default, has its own tests (test_emr_engine.py, test_cluster.py)
    data = pipeline_data(serverless_application_id=serverless_app, serverless_execution_role_arn=SERVERLESS_ROLE)
    return parse_pipeline({**data, "hudi": {"engine": "hoodiestreamer"}}, "hudi-cdc.yaml", "/")


@pytest.fixture
def runner(pipeline, lake_bucket, state_script, echo_lines):
    return EmrServerlessRunner(pipeline, echo=echo_lines.append, sleep=state_script.sleep, clock=state_script.clock)


def track(runner, script, app_id, states, last=None):
    holder = {}
    orig = runner.submit

    def submit(job):
        res = orig(job)
        holder["id"] = res.id
        set_run_state(app_id, res.id, "SUBMITTED")  # moto starts runs at SUCCESS
        return res

    runner.submit = submit
    moves = [lambda s=s: set_run_state(app_id, holder["id"], s) for s in states]
    if last is not None:
        moves[-1] = lambda: last(holder["id"])
    script.actions = moves
    return holder


def test_job_run_carries_exactly_the_rendered_argv(runner, pipeline, serverless_app, boto, state_script,
                                                   echo_lines):
    track(runner, state_script, serverless_app, ["SCHEDULED", "RUNNING", "SUCCESS"])
    res = runner.run_job(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    assert res.state == "SUCCESS"

    run = boto["emr-serverless"].get_job_run(applicationId=serverless_app, jobRunId=res.id)["jobRun"]
    expected = render.streamer_argv(pipeline, "artists", "COPY_ON_WRITE", "BULK_INSERT", target="emr-serverless",
                                    props_uri=f"{PROPS_ROOT}/artists_cow.properties")
    assert argv_of(run["jobDriver"]) == expected
    ss = run["jobDriver"]["sparkSubmit"]
    assert ss["entryPoint"].startswith("/usr/lib/hudi/")
    assert ss["entryPointArguments"][:2] == ["--table-type", "COPY_ON_WRITE"]
    assert "--class org.apache.hudi.utilities.streamer.HoodieStreamer" in ss["sparkSubmitParameters"]
    assert run["name"] == "hudi-cdc:moma:artists_cow:bulk_insert"
    assert serverless_run(serverless_app, res.id).execution_role_arn == SERVERLESS_ROLE  # moto does not echo it
    assert run["configurationOverrides"]["monitoringConfiguration"]["s3MonitoringConfiguration"]["logUri"] == \
        f"s3://{BUCKET}/hudi-cdc/logs/"
    body = boto["s3"].get_object(Bucket=BUCKET, Key="hudi-cdc/moma/properties/artists_cow.properties")["Body"]
    assert body.read().decode() == render.render_properties(pipeline)["artists_cow.properties"]
    assert [line for line in echo_lines if line.startswith("warning: emr-7.12.0 runs Hudi 1.0.2-amzn-1")]
    said = [line for line in echo_lines if line.startswith(f"job run {res.id}:")]
    assert said == [f"job run {res.id}: SUBMITTED", f"job run {res.id}: SCHEDULED (after 15s)",
                    f"job run {res.id}: RUNNING (after 30s)", f"job run {res.id}: SUCCESS (after 45s)"]


def test_failure_shows_state_details_and_driver_stderr(runner, serverless_app, boto, state_script):
    def fail(run_id):
        put_gz(boto["s3"], f"s3://{BUCKET}/hudi-cdc/logs/applications/{serverless_app}/jobs/{run_id}/"
               "SPARK_DRIVER/stderr.gz", "starting\n" * 50 + "org.apache.hudi.exception.HoodieIOException: no props")
        set_run_state(serverless_app, run_id, "FAILED", details="Job failed, please check complete logs")

    holder = track(runner, state_script, serverless_app, ["RUNNING", "FAILED"], last=fail)
    with pytest.raises(aws_errors.JobFailed) as err:
        runner.run_job(render.Job("artworks", "MERGE_ON_READ", "BULK_INSERT"))
    msg, details = str(err.value), err.value.details
    assert "\n" not in msg  # one line; the stderr's last lines are the error's details (--debug)
    assert f"job run {holder['id']} (hudi-cdc:moma:artworks_mor:bulk_insert) FAILED" in msg
    assert "details: Job failed, please check complete logs; stderr: org.apache.hudi.exception.HoodieIOException: " \
           "no props; the driver log: s3://" in msg
    assert "details: Job failed, please check complete logs" in details
    assert details.rstrip().endswith("HoodieIOException: no props")
    assert details.count("starting") == 39  # the last 40 lines only


def test_cancel_through_the_api_then_wait_reports_cancellation(runner, serverless_app, state_script):
    job = render.Job("artists", "MERGE_ON_READ", "UPSERT")
    holder = track(runner, state_script, serverless_app, ["RUNNING"])
    state_script.actions = [lambda: set_run_state(serverless_app, holder["id"], "RUNNING"),
                            lambda: runner.cancel(holder["id"])]  # moto's CancelJobRun -> CANCELLED
    with pytest.raises(aws_errors.JobCancelled, match=r"job run \w+ .* was cancelled on application"):
        runner.run_job(job)


def test_timeout(pipeline, serverless_app, lake_bucket, state_script):
    data = pipeline_data(serverless_application_id=serverless_app, serverless_execution_role_arn=SERVERLESS_ROLE,
                         poll_seconds=30, timeout_seconds=90)
    runner = EmrServerlessRunner(parse_pipeline(data), echo=lambda m: None, sleep=state_script.sleep,
                                 clock=state_script.clock)
    track(runner, state_script, serverless_app, ["RUNNING"])
    timeout = r"timed out after 90s waiting for job run \w+ \(last state RUNNING\)"
    with pytest.raises(aws_errors.WaitTimeout, match=timeout):
        runner.run_job(render.Job("artists", "COPY_ON_WRITE", "UPSERT"))


def test_stream_runs_in_streaming_mode_and_is_not_submitted_twice(runner, serverless_app, boto, state_script):
    stream = render.Job("artworks", "COPY_ON_WRITE", "UPSERT", continuous=True)
    track(runner, state_script, serverless_app, ["RUNNING"])
    res = runner.run_job(stream)
    assert res.state == "RUNNING"
    req = runner.start_request(stream)
    assert req["mode"] == "STREAMING" and "executionTimeoutMinutes" not in req
    assert "--continuous" in argv_of(req["jobDriver"])
    with pytest.raises(aws_errors.AlreadyRunning, match=rf"job run {res.id} .* is RUNNING"):
        runner.submit(stream)
    runner.cancel(res.id)
    assert runner.status(res.id)[0]["state"] == "CANCELLED"
    assert [r["id"] for r in runner.status()] == [res.id]


def test_cli_cancel_status_logs(pipeline, serverless_app, lake_bucket, boto, tmp_path):
    import yaml
    from click.testing import CliRunner

    from hudi_cdc.cli import cli

    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(pipeline_data(serverless_application_id=serverless_app,
                                                serverless_execution_role_arn=SERVERLESS_ROLE)))
    res = EmrServerlessRunner(pipeline, echo=lambda m: None).submit(render.Job("artists", "COPY_ON_WRITE", "UPSERT"))
    base = ["--config", str(cfg), "--target", "emr-serverless", "emr"]
    out = CliRunner().invoke(cli, base + ["cancel", res.id])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, base + ["status", res.id, "-o", "json"])
    assert json.loads(out.stdout)[0]["state"] == "CANCELLED"
    put_gz(boto["s3"], f"s3://{BUCKET}/hudi-cdc/logs/applications/{serverless_app}/jobs/{res.id}/SPARK_DRIVER/"
           "stdout.gz", "one\ntwo\nthree\n")
    out = CliRunner().invoke(cli, base + ["logs", res.id, "--stdout", "-n", "2"])
    assert (out.exit_code, out.stdout) == (0, "two\nthree\n")


def test_dry_run_prints_every_call_and_makes_none(pipeline, serverless_app, lake_bucket, boto, capsys, monkeypatch):
    endpoint = boto["s3"].meta.endpoint_url
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    runner = EmrServerlessRunner(pipeline, dry_run=True, show=print)
    res = runner.run_job(render.Job("artists", "MERGE_ON_READ", "BULK_INSERT"))
    out = capsys.readouterr().out.splitlines()
    ops = [line.split(" ", 1)[0] for line in out if not line.startswith("#")]
    assert ops == (["emr-serverless.list_job_runs", "emr-serverless.get_application"] + ["s3.put_object"] * 5
                   + ["emr-serverless.start_job_run"])
    start = json.loads(out[7].split(" ", 1)[1])
    assert argv_of(start["jobDriver"]) == res.argv
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    from moto.emrserverless.models import emrserverless_backends

    assert not emrserverless_backends[ACCOUNT][REGION].job_runs.get(serverless_app)
    assert "Contents" not in boto["s3"].list_objects_v2(Bucket=BUCKET)


# ---- pure -----------------------------------------------------------------------------------------
def test_split_spark_submit_round_trips():
    argv = ["spark-submit", "--conf", "a=b", "--jars", "/x.jar,/y.jar", "--verbose", "--class", "C",
            "/app.jar", "--props", "s3://b/p", "--enable-sync"]
    assert split_spark_submit(argv) == (["--conf", "a=b", "--jars", "/x.jar,/y.jar", "--verbose", "--class", "C"],
                                        "/app.jar", ["--props", "s3://b/p", "--enable-sync"])
    assert argv_of(job_driver(argv)) == argv


def test_whitespace_in_an_option_value_is_refused():
    with pytest.raises(AwsError, match="whitespace"):
        job_driver(["spark-submit", "--conf", "spark.driver.extraJavaOptions=-Da=1 -Db=2", "/app.jar"])
