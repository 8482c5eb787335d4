"""A real Spark standalone cluster (tests/plugins/spark_cluster.py: a master and one worker of 1 core
and 1 GiB from the pyspark wheel), landing and lake on the local S3 endpoint (s3proxy), one test: `hudi-cdc
bootstrap` through the CLI with spark.master spark://... (the executors write the tables' files over s3a:
the jars reach them through spark.jars, the s3a settings through spark.hadoop.*, the keys through the
worker's own environment, never through the application), then the EMR steps `hudi-cdc --target emr`
submits stream the changes on the same cluster. The tables are read back with hudi-rs (no JVM) and equal
the replay of the landed events."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from hudi_cdc.config import load_pipeline
from tests.cli import run_cli
from tests.plugins.s3 import assert_artists_equal_the_replay, download, sample_pipeline_on_s3

pytestmark = [pytest.mark.cluster, pytest.mark.s3, pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[2]

SETTINGS = """\
storage:
  s3_endpoint: {endpoint}
spark:
  master: {master}
  driver_memory: 1g
  executor_memory: 1g
  shuffle_partitions: 2
  conf:
    spark.cores.max: "1"
"""


def _cli(base: Path, *args) -> subprocess.CompletedProcess:
    _assert_driver_has_the_keys()
    return run_cli(*args, cwd=base, timeout=1500)


def _assert_driver_has_the_keys() -> None:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert key in os.environ  # the driver's own S3 calls (listing, checkpoint) find them here


def _assert_artists_equal_the_replay(p, landing: Path) -> None:
    """Both artists tables (on s3://) equal the replay of the landed events (copied to `landing` to replay)."""
    download(p.source_root, landing)
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        assert_artists_equal_the_replay(p.base_path("artists", table_type), landing)


EMR_SETTINGS = """\
emr:
  region: us-east-1
  bucket: {bucket}
  prefix: hudi-cdc
  cluster_id: j-LOCALSTANDALONE
"""


def _emr_cluster_conf(conf_dir: Path, master: str, pipeline) -> None:
    """What an EMR cluster's own configuration gives every step (spark-defaults.conf): the master,
    Hudi's and spark-avro's jars on the class path (EMR ships them; the step's --jars names EMR's
    paths), s3:// served by S3A against the local endpoint (EMRFS on EMR). The step's argv is
    not touched."""
    from hudi_cdc.common import s3
    from hudi_cdc.toolchain import jars as jarcache

    conf_dir.mkdir(parents=True, exist_ok=True)
    classpath = ":".join(str(p) for p in jarcache.ensure_jars(pipeline.hudi.version, None, True))
    conf = {"spark.master": master, "spark.driver.memory": "1g", "spark.executor.memory": "1g",
            "spark.cores.max": "1", "spark.driver.extraClassPath": classpath,
            "spark.executor.extraClassPath": classpath, "spark.driver.host": "127.0.0.1",
            **s3.hadoop_conf(pipeline.s3_endpoint())}
    (conf_dir / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in conf.items()))


def test_cli_bootstrap_then_emr_steps_on_a_standalone_cluster(spark_cluster, s3_endpoint, s3_bucket, tmp_path):
    """`hudi-cdc bootstrap` on the cluster (spark.master spark://...), then the EMR steps `hudi-cdc --target
    emr` submits for hudi-cdc's streamer (the current profile's default engine on EMR), argv unchanged but
    for spark-submit's path: the job file and its zip (--py-files) read from s3://, properties, landed
    files and tables on s3://, on the same master + worker with EMR's cluster configuration played by
    spark-defaults.conf: a continuous MoR step that commits the changes landed while it runs (stopped by
    its stop file) and the CoW round as an EMR Serverless job run; the tables equal the replay of the
    landed events."""
    import sysconfig

    from hudi_cdc.common import s3
    from hudi_cdc.core import render
    from hudi_cdc.core.profiles import HUDI_CDC, engine_for
    from hudi_cdc.core.render import Job
    from hudi_cdc.jobs.stream.main import STOP_ENV
    from hudi_cdc.lake.status import table_status
    from hudi_cdc.runners.aws.upload import upload_rendered
    from hudi_cdc.runners.emr.plan import steps_json
    from hudi_cdc.runners.emr_serverless.plan import argv_of, start_request
    from hudi_cdc.toolchain.java_spark import find_java, spark_home, spark_submit

    (tmp_path / "hudi-cdc.yaml").write_text(sample_pipeline_on_s3(s3_bucket, SETTINGS.format(
        endpoint=s3_endpoint, master=spark_cluster.master_url) + EMR_SETTINGS.format(bucket=s3_bucket)))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    assert engine_for(p.hudi.version, "emr") == engine_for(p.hudi.version, "emr-serverless") == HUDI_CDC
    conf_dir = tmp_path / "emr-conf"
    _emr_cluster_conf(conf_dir, spark_cluster.master_url, p)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(SPARK_CONF_DIR=str(conf_dir), SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
               JAVA_HOME=str(Path(find_java(17, "Spark")).resolve().parent.parent),
               # the job's packages (fastavro, hudi-rs, pyarrow, pyspark) for the cluster's Python, as
               # emr/bootstrap-hudi-cdc-job.sh installs them; hudi_cdc itself comes from the zip only
               PYTHONPATH=sysconfig.get_paths()["purelib"], PYTHONNOUSERSITE="1")
    uploaded = upload_rendered(p, s3.client(), lambda m: None, False, with_job=True)
    assert {"streamer.py", "hudi_cdc_job.zip"} <= set(uploaded)

    def run(name: str, argv: list[str]) -> None:
        assert argv[0] == "spark-submit" and argv[argv.index("--py-files") + 1].startswith("s3://")
        log = tmp_path / f"{name.replace(':', '_')}.log"
        with open(log, "w") as fh:
            proc = subprocess.run([str(spark_submit()), *argv[1:]], cwd=tmp_path, env=env, stdout=fh,
                                  stderr=subprocess.STDOUT, timeout=1500)
        assert proc.returncode == 0, f"{name} failed: {log.read_text(errors='replace')[-4000:]}"

    def serverless_job_run(op: str, table_type: str) -> None:
        """What EMR Serverless runs for the StartJobRun request hudi-cdc sends: spark-submit of its jobDriver."""
        names = list(render.render_properties(p))
        request = start_request(p, Job("artists", table_type, op), application_id="00local", log_root="s3://x/l",
                                execution_role_arn="arn:aws:iam::000000000000:role/local", names=names)
        run(request["name"], argv_of(request["jobDriver"]))

    assert _cli(tmp_path, "sample", "moma", "--stage", "snapshot").returncode == 0
    # the bootstrap as a user runs it against a cluster: the CLI's local runner with spark.master spark://
    assert _cli(tmp_path, "bootstrap").returncode == 0, "bootstrap on the cluster failed"
    logs = sorted((tmp_path / ".hudi-cdc" / "logs").glob("*.log"))
    text = "\n".join(f.read_text(errors="replace") for f in logs)
    assert f'"--master", "{spark_cluster.master_url}"' in text  # the argv the log records
    assert list(spark_cluster.work_dir.glob("app-*/*/stderr")), "no executor ran on the worker"
    assert "hudi-cdc-local-secret" not in text  # no key in the application's argv or output
    # the continuous step (`stream --table artists --type mor --target emr`): running while the changes
    # land, it commits them; stopped between rounds by the stop file its supervisor would write
    step = steps_json(p, [Job("artists", "MERGE_ON_READ", "UPSERT", continuous=True)])[0]
    argv = list(step["HadoopJarStep"]["Args"])
    assert "--continuous" in argv
    stop, log = tmp_path / "stop-continuous", tmp_path / "continuous.log"
    with open(log, "w") as fh:
        proc = subprocess.Popen([str(spark_submit()), *argv[1:]], cwd=tmp_path, env={**env, STOP_ENV: str(stop)},
                                stdout=fh, stderr=subprocess.STDOUT)
    try:
        assert _cli(tmp_path, "sample", "moma", "--stage", "changes").returncode == 0
        deadline = time.monotonic() + 900
        while True:  # committed every landed file: a deltacommit after the bootstrap, no backlog
            st = table_status(p, "artists", "MERGE_ON_READ")
            if st.commits >= 2 and st.backlog_files == 0:
                break
            assert proc.poll() is None, f"continuous step exited: {log.read_text(errors='replace')[-3000:]}"
            assert time.monotonic() < deadline, f"no commit of the changes: {log.read_text(errors='replace')[-3000:]}"
            time.sleep(2)
        stop.touch()
        assert proc.wait(600) == 0, log.read_text(errors="replace")[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert "stop requested" in log.read_text(errors="replace")
    # the CoW round as EMR Serverless runs it (its jobDriver's spark-submit); a one-off EMR step is the same
    # steps_json as the continuous step above, without --continuous
    serverless_job_run("UPSERT", "COPY_ON_WRITE")

    _assert_artists_equal_the_replay(p, tmp_path / "landing")
