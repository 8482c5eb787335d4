"""`hudi-cdc render --emr-steps`: golden step JSON, accepted unchanged by boto3/Airflow (api flavor)
and by `aws emr add-steps --steps file://` (cli flavor).

HUDI_CDC_UPDATE_GOLDEN=1 rewrites the golden files (review the diff before committing).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.runners.emr import steps_json, steps_text, to_cli_step
from tests.plugins.aws_fixtures import pipeline_data
from tests.shared import missing, require

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def jobs_for(p):
    jobs = [render.Job(t, tt, "BULK_INSERT") for t, tt in p.targets()]
    return jobs + [render.Job(t, tt, "UPSERT", continuous=True) for t, tt in p.targets()]


def current_pipeline():
    return parse_pipeline(pipeline_data(cluster_id="j-EXAMPLE"), "hudi-cdc.yaml", "/")


def seed_pipeline():
    """The seed's own setup: Hudi 0.9.0 on EMR 6.5, ordering by __source_ts_ms, soft deletes."""
    data = pipeline_data(cluster_id="j-EXAMPLE", release_label="emr-6.5.0")
    data["hudi"] = {"version": "0.9.0"}
    data["source"]["schema_registry"] = "http://<your_registry_url:post>/apis/ccompat/v6"
    data["lake"]["root"] = "s3://hudi-cdc-test-lake/moma"
    for t in data["tables"].values():
        t.update(ordering_field="__source_ts_ms", deletes="soft")
    return parse_pipeline(data, "hudi-cdc.yaml", "/")


def locked_pipeline():
    """Hudi's optimistic concurrency with the DynamoDB lock provider (lake.lock_provider)."""
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["lake"]["lock_provider"] = "dynamodb"
    data["lake"]["lock_options"] = {"dynamodb.table": "moma-locks"}
    return parse_pipeline(data, "hudi-cdc.yaml", "/")


CASES = {
    "emr_steps.json": (current_pipeline, "api"),
    "emr_steps_locks.json": (locked_pipeline, "api"),
    "emr_steps_cli.json": (current_pipeline, "cli"),
    "emr_steps_seed.json": (seed_pipeline, "api"),
}


@pytest.mark.parametrize("golden", sorted(CASES))
def test_golden(golden):
    make, flavor = CASES[golden]
    p = make()
    text = steps_text(p, jobs_for(p), flavor)
    path = GOLDEN / golden
    if os.environ.get("HUDI_CDC_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()


def test_api_steps_pass_botocore_validation_and_airflow_literal_eval():
    from botocore.session import get_session
    from botocore.validate import validate_parameters

    text = (GOLDEN / "emr_steps.json").read_text()
    steps = json.loads(text)
    shape = get_session().get_service_model("emr").operation_model("AddJobFlowSteps").input_shape
    validate_parameters({"JobFlowId": "j-EXAMPLE", "Steps": steps}, shape)  # raises on any unknown key
    # EmrAddStepsOperator(steps="steps.json") renders the file and reads it with ast.literal_eval
    assert ast.literal_eval(text) == steps
    assert {s["HadoopJarStep"]["Jar"] for s in steps} == {"command-runner.jar"}
    assert {s["ActionOnFailure"] for s in steps} == {"CONTINUE"}


def test_steps_carry_the_renderer_argv():
    p = current_pipeline()
    for job, step in zip(jobs_for(p), steps_json(p, jobs_for(p)), strict=True):
        props = ("s3://hudi-cdc-test-lake/hudi-cdc/moma/properties/"
                 f"{render.props_filename(p, job.table, job.table_type)}")
        assert step["HadoopJarStep"]["Args"] == render.streamer_argv(
            p, job.table, job.table_type, job.op, target="emr", props_uri=props, continuous=job.continuous)


def test_seed_steps_run_the_seeds_deltastreamer():
    steps = json.loads((GOLDEN / "emr_steps_seed.json").read_text())
    args = steps[-1]["HadoopJarStep"]["Args"]  # artworks MoR continuous UPSERT, as in the seed post
    assert args[:2] == ["spark-submit", "--jars"]
    assert "/usr/lib/hudi/hudi-utilities-bundle.jar" in args
    i = args.index("--class")
    assert args[i + 1:i + 3] == ["org.apache.hudi.utilities.deltastreamer.HoodieDeltaStreamer",
                                 "/usr/lib/hudi/hudi-utilities-bundle.jar"]
    assert args[args.index("--source-ordering-field") + 1] == "__source_ts_ms"
    assert args[-3:] == ["--continuous", "--op", "UPSERT"]


def test_cli_flavor_is_what_awscli_turns_into_the_api_flavor():
    """awscli's own parser for `aws emr add-steps --steps` (when awscli is importable)."""
    try:
        from awscli.customizations.emr import steputils
    except ImportError:
        missing("awscli is not installed (pip install -e .[test])")
    cli = json.loads((GOLDEN / "emr_steps_cli.json").read_text())
    api = json.loads((GOLDEN / "emr_steps.json").read_text())
    assert steputils.build_step_config_list(cli, "us-east-1", "emr-7.12.0") == api


def test_cli_flavor_is_the_api_flavor_flattened():
    api = json.loads((GOLDEN / "emr_steps.json").read_text())
    cli = json.loads((GOLDEN / "emr_steps_cli.json").read_text())
    assert cli == [to_cli_step(s) for s in api]


def _aws_cli():
    return os.environ.get("HUDI_CDC_AWS_CLI") or shutil.which("aws")


@pytest.mark.aws
def test_aws_emr_add_steps_accepts_the_cli_file_unchanged(emr_cluster, boto):
    """`aws emr add-steps --steps file://emr_steps_cli.json` against moto: the steps it creates carry
    exactly the golden argv."""
    require(_aws_cli(), "the AWS CLI (aws) is not installed (pip install -e .[test]); or set HUDI_CDC_AWS_CLI")
    out = subprocess.run([_aws_cli(), "emr", "add-steps", "--cluster-id", emr_cluster, "--steps",
                          f"file://{GOLDEN / 'emr_steps_cli.json'}", "--output", "json"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    ids = json.loads(out.stdout)["StepIds"]
    golden = json.loads((GOLDEN / "emr_steps.json").read_text())
    created = [boto["emr"].describe_step(ClusterId=emr_cluster, StepId=i)["Step"] for i in ids]
    assert [(s["Name"], s["Config"]["Jar"], s["Config"]["Args"]) for s in created] == [
        (g["Name"], g["HadoopJarStep"]["Jar"], g["HadoopJarStep"]["Args"]) for g in golden]


@pytest.mark.aws
def test_boto3_add_job_flow_steps_accepts_the_api_file_unchanged(emr_cluster, boto):
    """What EmrAddStepsOperator does with the file: add_job_flow_steps(Steps=<the list>)."""
    golden = json.loads((GOLDEN / "emr_steps.json").read_text())
    ids = boto["emr"].add_job_flow_steps(JobFlowId=emr_cluster, Steps=golden)["StepIds"]
    created = [boto["emr"].describe_step(ClusterId=emr_cluster, StepId=i)["Step"] for i in ids]
    assert [s["Config"]["Args"] for s in created] == [g["HadoopJarStep"]["Args"] for g in golden]
