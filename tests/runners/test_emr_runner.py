"""EMR runner against moto's server mode: steps carry the renderer's argv; failure, cancellation,
timeout and re-submission each end in their own error; dry run makes no call."""

from __future__ import annotations

import json

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import AwsError, ConfigError
from hudi_cdc.runners.aws import errors as aws_errors
from hudi_cdc.runners.emr import EmrRunner
from tests.plugins.aws_fixtures import BUCKET, pipeline_data, put_gz, set_step_state

pytestmark = pytest.mark.aws

PROPS_ROOT = f"s3://{BUCKET}/hudi-cdc/moma/properties"


def make_pipeline(**emr):
    """The HoodieStreamer steps (hudi.engine: hoodiestreamer); hudi-cdc's streamer, the current profile's
    default on EMR, has its own tests (test_emr_engine.py, test_cluster.py)."""
    return parse_pipeline({**pipeline_data(**emr), "hudi": {"engine": "hoodiestreamer"}}, "hudi-cdc.yaml",
                          "/nonexistent")


@pytest.fixture
def pipeline(emr_cluster):
    return make_pipeline(cluster_id=emr_cluster)


@pytest.fixture
def runner(pipeline, state_script, echo_lines):
    return EmrRunner(pipeline, echo=echo_lines.append, sleep=state_script.sleep, clock=state_script.clock)


def only_step(boto, cluster_id):
    steps = boto["emr"].list_steps(ClusterId=cluster_id)["Steps"]
    assert len(steps) == 1
    return boto["emr"].describe_step(ClusterId=cluster_id, StepId=steps[0]["Id"])["Step"]


def test_bootstrap_step_carries_exactly_the_rendered_argv(runner, pipeline, emr_cluster, boto, state_script,
                                                          echo_lines):
    track(runner, state_script, emr_cluster, ["RUNNING", "COMPLETED"])
    res = runner.run_job(render.Job("artists", "MERGE_ON_READ", "BULK_INSERT"))
    assert res.state == "COMPLETED"

    step = only_step(boto, emr_cluster)
    expected = render.streamer_argv(pipeline, "artists", "MERGE_ON_READ", "BULK_INSERT", target="emr",
                                    props_uri=f"{PROPS_ROOT}/artists_mor.properties")
    assert step["Config"]["Jar"] == "command-runner.jar"
    assert step["Config"]["Args"] == expected
    assert step["ActionOnFailure"] == "CONTINUE"
    assert step["Name"] == "hudi-cdc:moma:artists_mor:bulk_insert"
    assert expected[0] == "spark-submit" and "org.apache.hudi.utilities.streamer.HoodieStreamer" in expected

    # every rendered file was uploaded, byte for byte, where --props points
    for name, text in render.render_properties(pipeline).items():
        body = boto["s3"].get_object(Bucket=BUCKET, Key=f"hudi-cdc/moma/properties/{name}")["Body"].read()
        assert body.decode() == text

    # the poll loop said each state once, and slept emr.poll_seconds between polls
    assert [line for line in echo_lines if line.startswith(f"step {res.id}:")] == [
        f"step {res.id}: RUNNING", f"step {res.id}: COMPLETED (after 30s)"]
    assert state_script.sleeps == [15, 15]


def track(runner, script, cluster_id, states, last=None):
    """After submission, move the step to states[0], states[1], ... one per poll; ``last`` (if given)
    replaces the final move (e.g. to upload a log first). Returns a dict that gets the step id."""
    holder = {}
    orig = runner.submit

    def submit(job):
        res = orig(job)
        holder["id"] = res.id
        return res

    runner.submit = submit
    moves = [lambda s=s: set_step_state(cluster_id, holder["id"], s) for s in states]
    if last is not None:
        moves[-1] = lambda: last(holder["id"])
    script.actions = moves
    return holder


def test_failure_is_one_line_with_the_details_behind_debug(runner, emr_cluster, boto, state_script, tmp_path,
                                                            monkeypatch, capsys):
    job = render.Job("artworks", "COPY_ON_WRITE", "BULK_INSERT")
    stderr = "\n".join(f"line {i}" for i in range(1, 101)) + "\nException in thread main: HoodieException boom"

    def fail(step_id):
        # the step's stderr reaches S3 under the cluster's LogUri, then the step fails
        log = f"s3://{BUCKET}/hudi-cdc/logs/{emr_cluster}/steps/{step_id}/stderr.gz"
        put_gz(boto["s3"], log, stderr)
        set_step_state(emr_cluster, step_id, "FAILED", failure={
            "Reason": "Unknown Error.", "Message": "java.lang.NoClassDefFoundError: org/apache/spark/sql/avro",
            "LogFile": log})

    holder = track(runner, state_script, emr_cluster, ["FAILED"], last=fail)
    with pytest.raises(aws_errors.JobFailed) as err:
        runner.run_job(job)
    msg, details = str(err.value), err.value.details
    log = f"s3://{BUCKET}/hudi-cdc/logs/{emr_cluster}/steps/{holder['id']}/stderr.gz"
    # one line: what failed, EMR's reason and message, the stderr's root cause, where the log is
    assert "\n" not in msg
    assert msg.startswith(f"step {holder['id']} (hudi-cdc:moma:artworks_cow:bulk_insert) FAILED on {emr_cluster}: "
                          "reason: Unknown Error.; message: java.lang.NoClassDefFoundError: org/apache/spark/sql/avro")
    assert "; stderr: Exception in thread main: HoodieException boom; " in msg
    assert msg.endswith(f"the log: {log} (hudi-cdc emr logs {holder['id']}; --debug shows its last lines)")
    # the details: EMR's lines and the stderr's last 40 lines
    assert details.splitlines()[1:4] == ["  reason: Unknown Error.",
                                         "  message: java.lang.NoClassDefFoundError: org/apache/spark/sql/avro",
                                         f"  log file: {log}"]
    assert "HoodieException boom" in details and "line 100" in details and "line 62\n" in details
    assert "line 61\n" not in details  # a tail, not the whole log
    assert isinstance(err.value, AwsError) and err.value.exit_code == 8

    # through the CLI: one red line (exit 8); --debug prints the details before the traceback
    from hudi_cdc import cli
    from hudi_cdc import pipeline as pipe

    def failing_bootstrap(*args, **kwargs):
        raise err.value

    monkeypatch.setattr(pipe, "bootstrap", failing_bootstrap)
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(json.dumps(pipeline_data(cluster_id=emr_cluster)))
    capsys.readouterr()
    assert cli.main(["--config", str(cfg), "--target", "emr", "bootstrap"]) == 8
    out, errout = capsys.readouterr()
    assert (out, errout) == ("", f"error: {msg}\n")
    with pytest.raises(aws_errors.JobFailed):
        cli.main(["--debug", "--config", str(cfg), "--target", "emr", "bootstrap"])
    assert capsys.readouterr().err == details + "\n"


def test_cancelled_step_has_its_own_message(runner, emr_cluster, state_script):
    job = render.Job("artists", "COPY_ON_WRITE", "UPSERT")
    track(runner, state_script, emr_cluster, ["CANCEL_PENDING", "CANCELLED"])
    with pytest.raises(aws_errors.JobCancelled, match=r"was cancelled on j-.*keeps its last completed commit"):
        runner.run_job(job)


def test_timeout_has_its_own_message(emr_cluster, state_script, echo_lines):
    pipeline = make_pipeline(cluster_id=emr_cluster, poll_seconds=20, timeout_seconds=60)
    runner = EmrRunner(pipeline, echo=echo_lines.append, sleep=state_script.sleep, clock=state_script.clock)
    timeout = r"timed out after 60s waiting for step s-\w+ \(last state RUNNING\)"
    with pytest.raises(aws_errors.WaitTimeout, match=timeout):
        runner.run_job(render.Job("artists", "COPY_ON_WRITE", "UPSERT"))
    assert state_script.sleeps == [20, 20, 20]


def test_continuous_stream_returns_once_running_and_is_not_submitted_twice(runner, emr_cluster, boto):
    stream = render.Job("artists", "MERGE_ON_READ", "UPSERT", continuous=True)
    res = runner.run_job(stream)  # moto: the cluster's first step is RUNNING
    assert res.state == "RUNNING"
    assert "--continuous" in res.argv
    with pytest.raises(aws_errors.AlreadyRunning, match=rf"step {res.id} .* is RUNNING .*emr cancel {res.id}"):
        runner.run_job(stream)
    # a bootstrap of the same table is refused too (one writer per table) ...
    with pytest.raises(aws_errors.AlreadyRunning):
        runner.submit(render.Job("artists", "MERGE_ON_READ", "BULK_INSERT"))
    # ... but the other table type and other tables are not affected
    other = runner.submit(render.Job("artists", "COPY_ON_WRITE", "UPSERT", continuous=True))
    assert other.id != res.id
    assert len(boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"]) == 2
    # once the stream ended it can be started again
    set_step_state(emr_cluster, res.id, "COMPLETED")
    again = runner.submit(stream)
    assert again.id not in (res.id, other.id)


def test_status_and_logs(runner, emr_cluster, boto):
    res = runner.submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    boto["emr"].add_job_flow_steps(JobFlowId=emr_cluster, Steps=[{
        "Name": "someone else's step", "HadoopJarStep": {"Jar": "command-runner.jar", "Args": ["true"]}}])
    rows = runner.status()
    assert [(r["id"], r["name"], r["state"]) for r in rows] == [
        (res.id, "hudi-cdc:moma:artists_cow:bulk_insert", "RUNNING")]
    assert runner.status(res.id)[0]["state"] == "RUNNING"

    with pytest.raises(AwsError, match="no stderr for step"):
        runner.logs(res.id)
    put_gz(boto["s3"], f"s3://{BUCKET}/hudi-cdc/logs/{emr_cluster}/steps/{res.id}/stdout.gz",
           "a\nb\nc\nregistry at https://bob:hunter2secret@registry.internal\n")
    out = runner.logs(res.id, "stdout", lines=2)
    assert out.splitlines()[0] == "c"
    assert "hunter2secret" not in out and "https://***:***@registry.internal" in out


def test_missing_cluster_id_is_a_config_error(aws_env):
    runner = EmrRunner(make_pipeline())
    with pytest.raises(ConfigError, match=r"emr.cluster_id: required .*\(hudi-cdc.yaml\)"):
        runner.submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))


def test_aws_errors_become_one_line(emr_cluster):
    runner = EmrRunner(make_pipeline(cluster_id=emr_cluster, bucket="no-such-bucket"), echo=lambda m: None)
    with pytest.raises(AwsError, match=r"^s3\.put_object failed: NoSuchBucket: ") as err:
        runner.run_job(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    assert "\n" not in str(err.value)


def test_secret_values_never_leave(emr_cluster, monkeypatch):
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)  # moto takes any key
    data = pipeline_data(cluster_id=emr_cluster)
    data["tables"]["artists"]["hudi_options"] = {"hoodie.some.option": secret}
    runner = EmrRunner(parse_pipeline(data, "hudi-cdc.yaml", "/"), echo=lambda m: None)
    with pytest.raises(AwsError, match="refusing to send properties file artists_.*secret environment variable"):
        runner.submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    data["tables"]["artists"]["hudi_options"] = {"hoodie.some.url": "https://user:pw1234@registry.internal"}
    runner = EmrRunner(parse_pipeline(data, "hudi-cdc.yaml", "/"), echo=lambda m: None)
    with pytest.raises(AwsError, match="looks like it carries credentials"):
        runner.submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))


def test_what_cannot_run_on_emr_is_refused_before_any_call(aws_env):
    data = pipeline_data(cluster_id="j-ANY")
    data["source"].update(registry_username_env="REG_USER", registry_password_env="REG_PASS")
    with pytest.raises(ConfigError, match="registry credentials are never sent to emr"):
        EmrRunner(parse_pipeline(data)).submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    data = pipeline_data(cluster_id="j-ANY")
    data["lake"]["root"] = "lake"
    with pytest.raises(ConfigError, match=r"lake.root: file:///.*/lake is not on S3"):
        EmrRunner(parse_pipeline(data)).submit(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))


def test_a_step_that_cannot_start_yet_is_announced(emr_cluster, boto, echo_lines):
    boto["emr"].modify_cluster(ClusterId=emr_cluster, StepConcurrencyLevel=1)
    runner = EmrRunner(make_pipeline(cluster_id=emr_cluster), echo=echo_lines.append)
    runner.submit(render.Job("artists", "COPY_ON_WRITE", "UPSERT", continuous=True))
    warnings = [line for line in echo_lines if line.startswith("warning")]
    # the cluster's EMR release runs its own Hudi, not the pipeline's hudi.version: said once
    assert warnings == ["warning: emr-7.12.0 runs Hudi 1.0.2-amzn-1 from /usr/lib/hudi, but the pipeline renders "
                        "properties and flags for Hudi 1.2.0 (hudi.version); options newer than 1.0.2 are "
                        "rejected or ignored there"]
    runner.submit(render.Job("artworks", "COPY_ON_WRITE", "UPSERT", continuous=True))
    warnings = [line for line in echo_lines if line.startswith("warning")]
    assert len(warnings) == 2
    assert warnings[1].startswith(f"warning: {emr_cluster} runs at most 1 step(s) at once and 1 are running")


def test_dry_run_prints_every_call_and_makes_none(emr_cluster, boto, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # any real call would fail loudly
    runner = EmrRunner(make_pipeline(cluster_id=emr_cluster), dry_run=True, show=print)
    res = runner.run_job(render.Job("artworks", "MERGE_ON_READ", "UPSERT", continuous=True))
    out = capsys.readouterr().out.splitlines()
    calls = [line.split(" ", 1) for line in out if not line.startswith("#")]
    assert [c[0] for c in calls] == ["emr.list_steps", "s3.put_object", "s3.put_object", "s3.put_object",
                                     "s3.put_object", "s3.put_object", "emr.describe_cluster",
                                     "emr.add_job_flow_steps"]
    add = json.loads(calls[-1][1])
    assert add["JobFlowId"] == emr_cluster
    assert add["Steps"][0]["HadoopJarStep"]["Args"] == res.argv
    assert json.loads(calls[1][1])["Body"].endswith("bytes>")
    assert out[-1].startswith("# then: emr.describe_step every 15s until RUNNING")
    assert res.state == "DRY-RUN"
    monkeypatch.setenv("AWS_ENDPOINT_URL", boto["emr"].meta.endpoint_url)
    assert boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"] == []
    assert "Contents" not in boto["s3"].list_objects_v2(Bucket=BUCKET)


def test_dry_run_cancel(emr_cluster, capsys):
    EmrRunner(make_pipeline(cluster_id=emr_cluster), dry_run=True, echo=lambda m: None, show=print).cancel("s-123")
    line = capsys.readouterr().out.strip()
    assert line.startswith("emr.cancel_steps ")
    assert json.loads(line.split(" ", 1)[1]) == {"ClusterId": emr_cluster, "StepIds": ["s-123"],
                                                 "StepCancellationOption": "SEND_INTERRUPT"}


def test_cli_emr_status_json(emr_cluster, tmp_path):
    import yaml
    from click.testing import CliRunner

    from hudi_cdc.cli import cli

    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(pipeline_data(cluster_id=emr_cluster)))
    runner = EmrRunner(parse_pipeline(pipeline_data(cluster_id=emr_cluster)), echo=lambda m: None)
    res = runner.submit(render.Job("artworks", "COPY_ON_WRITE", "BULK_INSERT"))
    out = CliRunner().invoke(cli, ["--config", str(cfg), "--target", "emr", "emr", "status", "-o", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.stdout)
    assert [(r["id"], r["name"], r["state"]) for r in rows] == [
        (res.id, "hudi-cdc:moma:artworks_cow:bulk_insert", "RUNNING")]


def test_run_has_the_local_runners_interface(runner, emr_cluster, state_script, echo_lines):
    """pipeline.bootstrap/stream call runner.run(jobs, label) and get one dict per job."""
    track(runner, state_script, emr_cluster, ["COMPLETED"])
    rows = runner.run([render.Job("artworks", "MERGE_ON_READ", "BULK_INSERT")], "bootstrap")
    assert echo_lines[0] == "bootstrap: 1 job(s) on emr"
    assert [(r["table"], r["operation"], r["state"], r["target"]) for r in rows] == [
        ("artworks", "BULK_INSERT", "COMPLETED", "emr")]
    assert rows[0]["props_uri"] == f"{PROPS_ROOT}/artworks_mor.properties"
    assert rows[0]["log_uri"] == f"s3://{BUCKET}/hudi-cdc/logs/{emr_cluster}/steps/{rows[0]['id']}"
