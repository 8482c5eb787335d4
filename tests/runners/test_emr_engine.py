"""hudi.engine hudi-cdc on EMR / EMR Serverless: the job file and the job zip (exactly the modules the
job imports, deterministic) uploaded next to the properties, the spark-submit that runs them (golden
step JSON), dry run, secrets; and one real local Spark run of the job from the zip alone.

HUDI_CDC_UPDATE_GOLDEN=1 rewrites the golden file (review the diff before committing).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hudi_cdc import job_package
from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import AwsError, ConfigError
from hudi_cdc.pipeline import plan
from hudi_cdc.runners.emr import EmrRunner, steps_text
from hudi_cdc.runners.emr_serverless import EmrServerlessRunner, job_driver
from tests.plugins.aws_fixtures import BUCKET, SERVERLESS_ROLE, pipeline_data, set_run_state, set_step_state

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REPO = Path(__file__).resolve().parents[2]
PROPS_ROOT = f"s3://{BUCKET}/hudi-cdc/moma/properties"
JOB = render.Job("artists", "MERGE_ON_READ", "UPSERT")


def hudi_cdc_pipeline(**emr):
    data = pipeline_data(**emr)
    data["hudi"] = {"engine": "hudi-cdc"}
    return parse_pipeline(data, "hudi-cdc.yaml", "/")


def jobs_for(p):
    jobs = [render.Job(t, tt, "BULK_INSERT") for t, tt in p.targets()]
    return jobs + [render.Job(t, tt, "UPSERT", continuous=True) for t, tt in p.targets()]


def imported_modules(pythonpath: str, cwd: Path) -> dict[str, str]:
    """{module: file} of every hudi_cdc module ``import hudi_cdc.jobs.streamer`` loads, in a fresh Python
    whose only addition to sys.path is ``pythonpath``."""
    code = ("import json, sys, hudi_cdc.jobs.streamer; "
            "print(json.dumps({m: getattr(sys.modules[m], '__file__', '') for m in sys.modules "
            "if m.split('.')[0] == 'hudi_cdc'}))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=pythonpath, PYTHONNOUSERSITE="1")
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def module_names(members) -> set[str]:
    names = set()
    for name in members:
        mod = name[:-3].replace("/", ".")
        names.add(mod[: -len(".__init__")] if mod.endswith(".__init__") else mod)
    return names


# ---- the package ---------------------------------------------------------------------------------
def test_zip_holds_exactly_what_the_job_imports_and_imports_alone(tmp_path):
    zip_path = tmp_path / job_package.JOB_ZIP_NAME
    zip_path.write_bytes(job_package.job_zip())
    with zipfile.ZipFile(zip_path) as zf:
        names = zf.namelist()
    assert names == sorted(names)
    # the same set of modules as the job really imports from this checkout ...
    here = imported_modules(str(REPO), tmp_path)
    assert module_names(names) == set(here)
    # ... and from the zip alone: every hudi_cdc module comes from the zip, none from an installed copy
    from_zip = imported_modules(str(zip_path), tmp_path)
    assert set(from_zip) == set(here)
    assert all(f.startswith(str(zip_path) + os.sep) for f in from_zip.values()), from_zip


def test_zip_is_deterministic_and_the_job_file_is_the_repositorys():
    a, b = job_package.job_zip(), job_package.job_zip()
    assert a == b
    with zipfile.ZipFile(io.BytesIO(a)) as zf:
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.external_attr >> 16 for i in zf.infolist()} == {0o644}
        for name, path in job_package.job_members():
            assert zf.read(name) == path.read_bytes()
    files = job_package.job_files()
    assert files[job_package.JOB_SCRIPT_NAME] == (REPO / "hudi_cdc" / "jobs" / "streamer.py").read_bytes()


def test_bootstrap_action_and_serverless_image_install_what_the_job_needs():
    for path in (REPO / "emr" / "bootstrap-hudi-cdc-job.sh", REPO / "emr" / "serverless" / "Dockerfile"):
        text = path.read_text()
        assert render.JOB_PYTHON in text
        for req in job_package.JOB_REQUIREMENTS:
            assert f'"{req}"' in text, (path, req)


def test_a_missing_hudi_rs_fails_in_one_line(monkeypatch, tmp_path):
    """The job reads an existing table's checkpoint with hudi-rs: without it the round stops with one line."""
    from hudi_cdc.jobs.stream.errors import TableReadError
    from hudi_cdc.jobs.stream.table import read_checkpoint

    (tmp_path / ".hoodie").mkdir()
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\n")
    monkeypatch.setitem(sys.modules, "hudi", None)  # import hudi -> ImportError, as on a bare EMR Python
    with pytest.raises(TableReadError) as err:
        read_checkpoint(str(tmp_path))
    assert "\n" not in str(err.value)
    assert "the hudi package (hudi-rs) is needed to read the streamer checkpoint (pip install hudi)" in str(err.value)


# ---- the rendering -------------------------------------------------------------------------------
def test_golden_steps():
    p = hudi_cdc_pipeline(cluster_id="j-EXAMPLE")
    text = steps_text(p, jobs_for(p))
    path = GOLDEN / "emr_steps_hudi_cdc.json"
    if os.environ.get("HUDI_CDC_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_argv_runs_the_job_file_with_the_zip_and_the_same_streamer_flags():
    p = hudi_cdc_pipeline(cluster_id="j-EXAMPLE")
    props = f"{PROPS_ROOT}/artists_mor.properties"
    for target in ("emr", "emr-serverless"):
        argv = render.streamer_argv(p, JOB.table, JOB.table_type, JOB.op, target=target, props_uri=props)
        app = argv.index(f"{PROPS_ROOT}/streamer.py")
        assert argv[app - 2:app] == ["--py-files", f"{PROPS_ROOT}/hudi_cdc_job.zip"]
        assert argv[app + 1:] == render.streamer_flags(p, JOB, props)
        assert argv[argv.index("--jars") + 1] == ("/usr/lib/hudi/hudi-spark-bundle.jar,"
                                                   "/usr/lib/spark/connector/lib/spark-avro.jar")
        assert "--class" not in argv and "/usr/lib/hudi/hudi-utilities-bundle.jar" not in argv
        assert f"spark.pyspark.python={render.JOB_PYTHON}" in argv
    # EMR Serverless: the job file is the entryPoint, the zip / jars / confs the sparkSubmitParameters
    argv = render.streamer_argv(p, JOB.table, JOB.table_type, JOB.op, target="emr-serverless", props_uri=props)
    ss = job_driver(argv)["sparkSubmit"]
    assert ss["entryPoint"] == f"{PROPS_ROOT}/streamer.py"
    assert ss["entryPointArguments"] == render.streamer_flags(p, JOB, props)
    assert f"--py-files {PROPS_ROOT}/hudi_cdc_job.zip" in ss["sparkSubmitParameters"]
    # the default engine of the EMR 7 profile is hudi-cdc's streamer; HoodieStreamer with hudi.engine
    default = parse_pipeline(pipeline_data(cluster_id="j-EXAMPLE"), "hudi-cdc.yaml", "/")
    argv = render.streamer_argv(default, JOB.table, JOB.table_type, JOB.op, target="emr", props_uri=props)
    assert "--py-files" in argv and "--class" not in argv
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["hudi"] = {"engine": "hoodiestreamer"}
    chosen = parse_pipeline(data, "hudi-cdc.yaml", "/")
    argv = render.streamer_argv(chosen, JOB.table, JOB.table_type, JOB.op, target="emr", props_uri=props)
    assert "org.apache.hudi.utilities.streamer.HoodieStreamer" in argv and "--py-files" not in argv


def test_emr_6_profiles_refuse_the_hudi_cdc_engine_in_one_line():
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["hudi"] = {"version": "0.14.0", "engine": "hudi-cdc"}
    p = parse_pipeline(data, "hudi-cdc.yaml", "/")
    with pytest.raises(ConfigError, match=r"cannot run on emr for hudi.version 0.14.0: .*emr-6.15.0.* Python 3.7"):
        steps_text(p, jobs_for(p))


def test_render_writes_the_job_files_next_to_the_properties(tmp_path):
    p = hudi_cdc_pipeline(cluster_id="j-EXAMPLE")
    rows = plan.job_argvs(p, tmp_path, PROPS_ROOT, "emr", lambda m: None)
    assert (tmp_path / "streamer.py").read_bytes() == job_package.job_files()["streamer.py"]
    assert (tmp_path / "hudi_cdc_job.zip").read_bytes() == job_package.job_zip()
    assert all(f"{PROPS_ROOT}/streamer.py" in r["argv"] for r in rows)
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["hudi"] = {"engine": "hoodiestreamer"}
    out = tmp_path / "hoodiestreamer"
    plan.job_argvs(parse_pipeline(data, "hudi-cdc.yaml", "/"), out, PROPS_ROOT, "emr", lambda m: None)
    assert not (out / "hudi_cdc_job.zip").exists()


# ---- the runners against moto ----------------------------------------------------------------------
@pytest.mark.aws
def test_emr_step_and_uploaded_job_files(emr_cluster, boto, state_script, echo_lines, tmp_path):
    p = hudi_cdc_pipeline(cluster_id=emr_cluster)
    runner = EmrRunner(p, echo=echo_lines.append, sleep=state_script.sleep, clock=state_script.clock)
    holder: dict[str, str] = {}
    orig = runner.submit

    def submit(job):
        res = orig(job)
        holder["id"] = res.id
        return res

    runner.submit = submit  # type: ignore[method-assign]
    state_script.actions = [lambda: set_step_state(emr_cluster, holder["id"], "COMPLETED")]
    res = runner.run_job(render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))
    assert res.state == "COMPLETED"
    steps = boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"]
    args = boto["emr"].describe_step(ClusterId=emr_cluster, StepId=steps[0]["Id"])["Step"]["Config"]["Args"]
    assert args == render.streamer_argv(p, "artists", "COPY_ON_WRITE", "BULK_INSERT", target="emr",
                                        props_uri=f"{PROPS_ROOT}/artists_cow.properties")

    s3 = boto["s3"]
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="hudi-cdc/moma/properties/")["Contents"]}
    assert {"hudi-cdc/moma/properties/streamer.py", "hudi-cdc/moma/properties/hudi_cdc_job.zip",
            "hudi-cdc/moma/properties/artists_cow.properties"} <= keys
    obj = s3.get_object(Bucket=BUCKET, Key="hudi-cdc/moma/properties/hudi_cdc_job.zip")
    assert obj["ContentType"] == "application/zip"
    zip_path = tmp_path / "from-s3.zip"
    zip_path.write_bytes(obj["Body"].read())
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.namelist() == [n for n, _ in job_package.job_members()]
    from_zip = imported_modules(str(zip_path), tmp_path)  # the job imports from the uploaded zip alone
    assert "hudi_cdc.jobs.streamer" in from_zip
    assert all(f.startswith(str(zip_path) + os.sep) for f in from_zip.values())
    script = s3.get_object(Bucket=BUCKET, Key="hudi-cdc/moma/properties/streamer.py")["Body"].read()
    assert script == job_package.job_files()["streamer.py"]


@pytest.mark.aws
def test_serverless_job_run_runs_the_job_file(serverless_app, lake_bucket, boto, state_script):
    p = hudi_cdc_pipeline(serverless_application_id=serverless_app, serverless_execution_role_arn=SERVERLESS_ROLE)
    runner = EmrServerlessRunner(p, echo=lambda m: None, sleep=state_script.sleep, clock=state_script.clock)
    res = runner.run_job(render.Job("artworks", "MERGE_ON_READ", "UPSERT", continuous=True), wait=False)
    set_run_state(serverless_app, res.id, "RUNNING")
    run = boto["emr-serverless"].get_job_run(applicationId=serverless_app, jobRunId=res.id)["jobRun"]
    ss = run["jobDriver"]["sparkSubmit"]
    assert ss["entryPoint"] == f"{PROPS_ROOT}/streamer.py"
    assert f"--py-files {PROPS_ROOT}/hudi_cdc_job.zip" in ss["sparkSubmitParameters"]
    assert "--continuous" in ss["entryPointArguments"]
    body = boto["s3"].get_object(Bucket=BUCKET, Key="hudi-cdc/moma/properties/hudi_cdc_job.zip")["Body"].read()
    assert body == job_package.job_zip()


@pytest.mark.aws
def test_dry_run_prints_the_job_file_uploads_and_the_step(emr_cluster, boto, capsys, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # any real call would fail loudly
    runner = EmrRunner(hudi_cdc_pipeline(cluster_id=emr_cluster), dry_run=True, show=print)
    runner.preflight()  # a dry run is allowed: it only shows what would be sent
    res = runner.run_job(JOB)
    out = capsys.readouterr().out.splitlines()
    calls = [line.split(" ", 1) for line in out if not line.startswith("#")]
    puts = [json.loads(c[1])["Key"].rsplit("/", 1)[1] for c in calls if c[0] == "s3.put_object"]
    assert "streamer.py" in puts and "hudi_cdc_job.zip" in puts
    add = json.loads(calls[-1][1])
    assert add["Steps"][0]["HadoopJarStep"]["Args"] == res.argv
    assert f"{PROPS_ROOT}/streamer.py" in res.argv
    monkeypatch.setenv("AWS_ENDPOINT_URL", boto["emr"].meta.endpoint_url)
    assert boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"] == []


@pytest.mark.aws
def test_a_real_run_of_hudi_cdcs_streamer_is_not_refused(emr_cluster):
    """The job reads landing, properties and tables through s3:// (tests/runners/test_cluster.py runs the step's
    argv over S3): the former "reads from the local file system only" refusal is gone."""
    runner = EmrRunner(hudi_cdc_pipeline(cluster_id=emr_cluster), echo=lambda m: None)
    runner.preflight()


@pytest.mark.aws
def test_secrets_never_in_the_argv_or_the_uploads(emr_cluster, boto, monkeypatch):
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)  # moto takes any key
    p = hudi_cdc_pipeline(cluster_id=emr_cluster)
    res = EmrRunner(p, echo=lambda m: None).submit(JOB)
    assert not any(secret in a for a in res.argv)
    s3 = boto["s3"]
    for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="hudi-cdc/moma/properties/")["Contents"]:
        assert secret.encode() not in s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read()
    data = pipeline_data(cluster_id=emr_cluster)
    data["hudi"] = {"engine": "hudi-cdc"}
    data["tables"]["artists"]["hudi_options"] = {"hoodie.some.option": secret}
    with pytest.raises(AwsError, match="refusing to send properties file artists_.*secret environment variable"):
        EmrRunner(parse_pipeline(data, "hudi-cdc.yaml", "/"), echo=lambda m: None).submit(
            render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT"))  # JOB's step is still active


# ---- the job from the zip, for real ----------------------------------------------------------------
@pytest.mark.spark
def test_the_job_runs_from_the_zip_alone(tmp_path):
    """spark-submit --py-files <zip> <a copy of streamer.py outside the repository>, no PYTHONPATH: a
    bootstrap of a tiny landing folder commits, and every hudi_cdc module came from the zip."""
    import yaml

    from hudi_cdc import sample
    from hudi_cdc.cli import main
    from hudi_cdc.config import load_pipeline, uri_to_path
    from hudi_cdc.lake.reader import read_table
    from hudi_cdc.toolchain import jars
    from hudi_cdc.toolchain.java_spark import find_java, spark_home, spark_submit

    d = tmp_path / "ws"
    assert main(["init", str(d)]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    doc["tables"] = {"artists": {**doc["tables"]["artists"], "table_types": ["COPY_ON_WRITE"]}}
    doc["spark"] = {"master": "local[1]", "driver_memory": "1g", "shuffle_partitions": 2}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    p = load_pipeline(cfg)
    sample.land_snapshot(uri_to_path(p.source_root), tables=("artists",))
    props = tmp_path / "props"
    render.write_properties(p, props)

    job_dir = tmp_path / "job"  # what a cluster gets: the two files, nothing else
    job_dir.mkdir()
    job_package.write_job_files(job_dir)
    zip_path, script = job_dir / job_package.JOB_ZIP_NAME, job_dir / job_package.JOB_SCRIPT_NAME
    job = render.Job("artists", "COPY_ON_WRITE", "BULK_INSERT")
    argv = render.local_argv(p, [job], props, [str(j) for j in jars.ensure_jars(p.hudi.version)], str(script))
    app = argv.index(str(script))
    argv[app:app] = ["--py-files", str(zip_path)]
    argv[0] = str(spark_submit())

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    java = find_java(17, "Spark")
    env.update(PYTHONNOUSERSITE="1", PYTHONVERBOSE="1", SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               JAVA_HOME=env.get("JAVA_HOME") or str(Path(java).resolve().parent.parent))
    proc = subprocess.run(argv, cwd=job_dir, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = next(line for line in proc.stdout.splitlines() if line.startswith("HUDI_CDC_RESULT "))
    rounds = json.loads(result[len("HUDI_CDC_RESULT "):])
    assert len(rounds) == 1 and not rounds[0].get("skipped")

    # python -v says where each module came from: every hudi_cdc module from the zip, none from a checkout
    # (spark-submit passes the Python driver's stderr on through its stdout)
    lines = (proc.stdout + proc.stderr).splitlines()
    loaded = [line for line in lines if line.startswith("import 'hudi_cdc")]
    assert {line.split("'")[1] for line in loaded} >= {"hudi_cdc.jobs.stream.main", "hudi_cdc.common.properties",
                                                       "hudi_cdc.jobs.stream.round"}
    assert all(f'<zipimporter object "{zip_path}/' in line for line in loaded), loaded[:5]
    assert not [line for line in lines if "code object from" in line and "/hudi_cdc/" in line]

    rows = read_table(p.base_path("artists", "COPY_ON_WRITE"))
    want = sample.expected_state(uri_to_path(p.source_root), "artists")
    assert len(rows) == len(want) > 0
    shutil.rmtree(d / ".hudi-cdc", ignore_errors=True)


@pytest.mark.aws
def test_stream_all_submits_its_one_step_and_is_the_only_writer(emr_cluster, boto, state_script, echo_lines):
    """`hudi-cdc --target emr stream --all`: ONE step (the one `render --emr-steps --all` gives), waited for
    until RUNNING; while it runs, no step of a table of the pipeline is submitted, nor a second --all."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.runners.aws import errors as aws_errors
    from hudi_cdc.runners.emr.plan import steps_json

    p = hudi_cdc_pipeline(cluster_id=emr_cluster)
    runner = EmrRunner(p, echo=echo_lines.append, sleep=state_script.sleep, clock=state_script.clock)
    res = pipe.stream_all(p, target="emr", runner=runner)  # moto: the cluster's first step is RUNNING
    assert len(res) == 1 and res[0]["state"] == "RUNNING" and res[0]["table"] == "*"
    steps = boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"]
    assert len(steps) == 1 and steps[0]["Name"] == f"hudi-cdc:{p.pipeline}:all:upsert:continuous"
    args = boto["emr"].describe_step(ClusterId=emr_cluster, StepId=steps[0]["Id"])["Step"]["Config"]["Args"]
    assert args == steps_json(p, [], all_tables=True)[0]["HadoopJarStep"]["Args"]
    assert args.count("--next") == len(p.targets()) - 1 and "--all-tables" in " ".join(args)
    with pytest.raises(aws_errors.AlreadyRunning, match=rf"step {res[0]['id']} .*all:upsert:continuous"):
        runner.submit(render.Job("artworks", "COPY_ON_WRITE", "UPSERT", continuous=True))
    with pytest.raises(aws_errors.AlreadyRunning, match="writes a table of the pipeline"):
        pipe.stream_all(p, target="emr", runner=runner)
    set_step_state(emr_cluster, res[0]["id"], "CANCELLED")
    runner.submit(render.Job("artworks", "COPY_ON_WRITE", "UPSERT", continuous=True))  # no longer refused
    with pytest.raises(aws_errors.AlreadyRunning, match="writes a table of the pipeline"):
        pipe.stream_all(p, target="emr", runner=runner)  # and now that table's step holds --all back


@pytest.mark.aws
def test_stream_all_dry_run_shows_the_one_step(emr_cluster, boto, monkeypatch):
    from hudi_cdc import pipeline as pipe

    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # any real call would fail loudly
    shown: list[str] = []
    res = pipe.stream_all(hudi_cdc_pipeline(cluster_id=emr_cluster), target="emr", dry_run=True, show=shown.append)
    assert res[0]["state"] == "DRY-RUN" and res[0]["dry_run"]
    add = [json.loads(s.split(" ", 1)[1]) for s in shown if s.startswith("emr.add_job_flow_steps")]
    assert len(add) == 1 and add[0]["Steps"][0]["Name"].endswith(":all:upsert:continuous")
    monkeypatch.setenv("AWS_ENDPOINT_URL", boto["emr"].meta.endpoint_url)
    assert boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"] == []
