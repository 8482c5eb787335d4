"""emr/cluster.yaml: cfn-lint clean (errors, warnings and informational checks, with and without the
example parameters), least-privilege IAM, and the same S3 layout the runners use."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.config.settings import EmrSettings
from hudi_cdc.runners.aws import layout
from tests.plugins.aws_fixtures import pipeline_data
from tests.shared import missing

EMR = Path(__file__).resolve().parents[2] / "emr"
TEMPLATE = EMR / "cluster.yaml"
PARAMETERS = EMR / "parameters.json"


def _cfn_lint() -> str:
    exe = Path(sys.executable).parent / "cfn-lint"
    found = str(exe) if exe.exists() else shutil.which("cfn-lint")
    if not found:
        missing("cfn-lint not on PATH (pip install -e .[test])")
    return found


def _lint(*extra: str):
    """The `cfn-lint` command as a user runs it, with informational checks on, in two regions."""
    proc = subprocess.run([_cfn_lint(), "--include-checks", "I", "--regions", "us-east-1", "eu-west-1",
                           "--format", "parseable", *extra, "--", str(TEMPLATE)],
                          capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def template():
    from cfnlint.decode import decode_str

    tpl, problems = decode_str(TEMPLATE.read_text())
    assert not problems
    return tpl


def test_cfn_lint_clean():
    code, out = _lint()
    assert (code, out) == (0, "")


def test_cfn_lint_clean_with_the_example_parameters(tmp_path):
    params = json.loads(PARAMETERS.read_text())
    filled = {"BucketName": "example-lake-123456789012", "SubnetId": "subnet-0123456789abcdef0"}
    for p in params:
        if p["ParameterValue"].startswith("<"):
            p["ParameterValue"] = filled[p["ParameterKey"]]
    f = tmp_path / "parameters.json"
    f.write_text(json.dumps(params))
    code, out = _lint("--parameter-files", str(f))
    assert (code, out) == (0, "")


def test_parameters_file_matches_the_template(template):
    keys = [p["ParameterKey"] for p in json.loads(PARAMETERS.read_text())]
    assert sorted(keys) == sorted(template["Parameters"])
    for name, spec in template["Parameters"].items():
        if "Default" not in spec:
            assert name in keys


def test_defaults_are_the_current_emr_release(template):
    assert template["Parameters"]["ReleaseLabel"]["Default"] == EmrSettings().release_label == "emr-7.12.0"
    assert "Hudi 1.0.2-amzn-1" in template["Description"]
    assert int(template["Parameters"]["StepConcurrencyLevel"]["Default"]) > 1  # streams are long-lived steps
    tags = {t["Key"]: t["Value"] for t in template["Resources"]["Cluster"]["Properties"]["Tags"]}
    assert tags["for-use-with-amazon-emr-managed-policies"] == "true"


def _allow_statements(node):
    """Every Allow statement of every policy document in the template (walking !If branches)."""
    if isinstance(node, dict):
        if node.get("Effect") == "Allow" and "Action" in node:
            yield node
        for v in node.values():
            yield from _allow_statements(v)
    elif isinstance(node, list):
        for v in node:
            yield from _allow_statements(v)


def _strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def test_least_privilege(template):
    statements = list(_allow_statements(template["Resources"]))
    assert len(statements) > 10
    for st in statements:
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        for a in actions:
            assert "*" not in a, f"wildcard action {a}"  # no kafka-cluster:*, no s3:*
        assert st.get("Resource") not in ("*", ["*"]), f"{st.get('Sid')} on every resource"
        assert "s3:ListAllMyBuckets" not in actions
        s3_objects = [r for r in _strings(st.get("Resource")) if "${LakeBucket.Arn}/" in r]
        for r in s3_objects:  # objects only under the named prefixes, never the whole bucket
            assert re.match(r"^\$\{LakeBucket\.Arn\}/\$\{(LandingPrefix|LakePrefix|ArtifactsPrefix)\}", r), r
    by_sid = {st.get("Sid"): st for st in statements if st.get("Sid")}
    assert by_sid["ReadLandedChangeFiles"]["Action"] == "s3:GetObject"  # jobs never change landed files
    assert "s3:DeleteObject" not in by_sid["WriteLandedFiles"]["Action"]  # the sink only adds files
    assert set(by_sid["ConnectToThisCluster"]["Action"]) == {"kafka-cluster:Connect", "kafka-cluster:DescribeCluster"}


def test_layout_matches_the_runners(template):
    """What the stack grants and outputs is where the runners put and read things."""
    res = template["Resources"]
    params = template["Parameters"]
    subst = {f"${{{k}}}": str(v["Default"]) for k, v in params.items() if "Default" in v}
    subst["${LakeBucket.Arn}"] = "arn:aws:s3:::b"
    subst["${LakeBucket}"] = "b"

    def expand(s):
        for k, v in subst.items():
            s = s.replace(k, v)
        return s

    pipeline = parse_pipeline(pipeline_data(bucket="b", prefix=params["ArtifactsPrefix"]["Default"]))
    props = layout.props_uri(pipeline, "artists", "MERGE_ON_READ").replace("s3://b/", "arn:aws:s3:::b/")
    job = {st["Sid"]: st for st in res["LakeJobPolicy"]["Properties"]["PolicyDocument"]["Statement"]}
    assert fnmatch.fnmatch(props, expand(job["ReadRenderedProperties"]["Resource"]["Fn::Sub"]))
    op = {st.get("Sid"): st for st in res["OperatorPolicy"]["Properties"]["PolicyDocument"]["Statement"]
          if isinstance(st, dict)}
    assert fnmatch.fnmatch(props, expand(op["UploadProperties"]["Resource"]["Fn::Sub"]))
    log_output = expand(template["Outputs"]["LogUri"]["Value"]["Fn::Sub"])
    assert log_output == layout.log_root(pipeline)
    step_log = f"{layout.log_root(pipeline)}/j-X/steps/s-Y/stderr.gz".replace("s3://b/", "arn:aws:s3:::b/")
    assert fnmatch.fnmatch(step_log, expand(op["ReadStepLogs"]["Resource"]["Fn::Sub"]))
    assert fnmatch.fnmatch(step_log, expand(job["WriteLogs"]["Resource"]["Fn::Sub"]))
