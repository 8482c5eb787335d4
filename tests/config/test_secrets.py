"""Registry credentials travel by reference: never in rendered files, argv or dry-run output."""

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.registry.credentials import registry_env
from hudi_cdc.runners.local import LocalRunner

SECRET = "pw-7f3c-never-print-me"


def pipeline(tmp_path):
    (tmp_path / "landing" / "t.a" / "partition=0").mkdir(parents=True)
    return parse_pipeline({
        "pipeline": "s",
        "source": {"root": "landing", "schema_registry": "http://127.0.0.1:1/apis/ccompat/v7",
                   "registry_username_env": "TEST_REG_USER", "registry_password_env": "TEST_REG_PW"},
        "lake": {"root": "lake"},
        "tables": {"a": {"topic": "t.a", "record_key": "k"}},
    }, "s.yaml", str(tmp_path))


def test_secret_reaches_only_the_job_environment(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TEST_REG_USER", "alice")
    monkeypatch.setenv("TEST_REG_PW", SECRET)
    p = pipeline(tmp_path)
    texts = list(render.render_properties(p).values())
    jobs = [render.Job("a", tt, "UPSERT") for tt in p.table("a").table_types]
    texts.append(" ".join(render.local_argv(p, jobs, tmp_path, ["x.jar"], "streamer.py")))
    texts.append(" ".join(render.streamer_argv(p, "a", "COPY_ON_WRITE", "UPSERT", target="emr", props_uri="s3://b/p")))
    printed = []
    LocalRunner(p, progress=printed.append, dry_run=True).run(jobs, "stream-a")
    texts += printed
    for text in texts:
        assert SECRET not in text and "alice" not in text
    assert any("TEST_REG" not in t and "registry.url=http://127.0.0.1:1/" in t for t in texts)
    assert registry_env(p) == {"HUDI_CDC_REGISTRY_USERNAME": "alice", "HUDI_CDC_REGISTRY_PASSWORD": SECRET}


# ---- every command, with every secret set through its route ---------------------------------------
import base64  # noqa: E402
import http.server  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import yaml  # noqa: E402

from hudi_cdc import cli  # noqa: E402
from tests.plugins.aws_fixtures import BUCKET, SERVERLESS_ROLE, pipeline_data  # noqa: E402

REG_USER, REG_PW = "reg-user-5b2a", "reg-pw-0c4e-never-print-me"
DB_PW = "db-pw-81aa-never-print-me"
AWS_KEY_ID, AWS_SECRET = "AKIAHUDICDCTEST00042", "aws-secret-d3f0/never+print+me"
SECRETS = (REG_PW, DB_PW, AWS_SECRET, AWS_KEY_ID, base64.b64encode(f"{REG_USER}:{REG_PW}".encode()).decode())


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A stand-in registry answering 401 to everything, recording the Authorization headers it got:
    the password reaches the registry (the wire) and nothing else."""

    seen: list[str] = []

    def _answer(self):
        _Refusing.seen.append(self.headers.get("Authorization") or "")
        body = b'{"error_code": 401, "message": "Unauthorized"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def secret_env(monkeypatch):
    monkeypatch.setenv("TEST_REG_USER", REG_USER)
    monkeypatch.setenv("TEST_REG_PW", REG_PW)
    monkeypatch.setenv("TEST_DB_PW", DB_PW)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Refusing.seen = []
    yield f"http://127.0.0.1:{server.server_port}/apis/ccompat/v7"
    server.shutdown()
    server.server_close()


def _local_config(tmp_path: Path, registry: str) -> Path:
    (tmp_path / "landing").mkdir(exist_ok=True)
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump({
        "pipeline": "s",
        "source": {"root": "landing", "schema_registry": registry,
                   "registry_username_env": "TEST_REG_USER", "registry_password_env": "TEST_REG_PW",
                   "database": {"host": "127.0.0.1", "port": 1, "name": "moma", "user": "cdc",
                                "password_env": "TEST_DB_PW"}},
        "lake": {"root": "lake", "hive_metastore": "thrift://127.0.0.1:1"},
        "tables": {"artists": {"topic": "moma.public.artists", "record_key": "artist_id",
                               "table_types": ["COPY_ON_WRITE"]}},
    }))
    return cfg


def _scan(texts: dict[str, str], tmp_path: Path) -> None:
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.stat().st_size < 5_000_000:
            texts[str(path)] = path.read_bytes().decode("utf-8", "replace")
    leaks = {where: s for where, text in texts.items() for s in SECRETS if s in text}
    assert not leaks, leaks


def _run(argv: list[str], capsys, caplog, texts: dict[str, str]) -> int:
    code = cli.main(argv)
    out = capsys.readouterr()
    where = " ".join(argv)
    texts[f"stdout of {where}"] = out.out
    texts[f"stderr of {where}"] = out.err
    texts[f"log of {where}"] = caplog.text
    caplog.clear()
    return code


LOCAL_COMMANDS = [
    ["apply", "--engine", "iceberg", "--table", "artists"],  # before anything landed: no Spark run here
    ["sample", "moma", "--stage", "snapshot"],
    ["render", "--out", "{tmp}/rendered"],
    ["render-sql", "--engine", "trino"],
    ["render-sql", "--engine", "spark"],
    ["bootstrap", "--dry-run"],
    ["bootstrap"],  # the registry (401) refuses before Spark starts
    ["stream", "--table", "artists", "--dry-run"],
    ["stream", "--table", "artists", "--once"],
    ["stream", "--all", "--dry-run"],  # no table bootstrapped: refused (6) before Spark starts, as --table
    ["stream", "--all"],
    ["run", "--dry-run"],
    ["run"],  # refused before capture or Spark starts
    ["show", "--table", "artists"],
    ["query", "as-of", "--table", "artists", "--at", "2024-01-01"],
    ["query", "history", "--table", "artists", "--key", "1"],
    ["query", "changes", "--table", "artists", "--since", "2024-01-01"],
    *[["inspect", sub, "--table", "artists"] for sub in ("commits", "stats", "compactions", "files", "schema",
                                                          "timeline")],
    ["schemas", "register"], ["schemas", "check"], ["schemas", "list"], ["schemas", "show", "artists"],
    ["hive", "tables", "--server", "127.0.0.1:1"], ["hive", "sql", "show databases", "--server", "127.0.0.1:1"],
    ["sync", "--table", "artists"],
    ["status"],
    ["table", "downgrade", "--dry-run"], ["table", "downgrade"],  # no table: nothing to convert, no Spark
    ["capture", "--once", "--timeout", "5"],
    ["verify", "--table", "artists"],
    ["local", "status", "--data-dir", "{tmp}/stack"],
    ["local", "down", "--data-dir", "{tmp}/stack"],
]


def test_every_local_command_keeps_every_secret(tmp_path, secret_env, monkeypatch, capsys, caplog):
    """Every command that runs here (`local up`, which starts Apicurio with the users' passwords in its
    environment, is covered by tests/stack/test_stack.py), with registry, database and AWS secrets set, runs or
    fails; its stdout, stderr, log records and every file it wrote are free of them."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.DEBUG)
    cfg = _local_config(tmp_path, secret_env)
    texts: dict[str, str] = {}
    codes = {}
    for args in LOCAL_COMMANDS:
        argv = ["--config", str(cfg), *[a.format(tmp=tmp_path) for a in args]]
        codes[" ".join(args)] = _run(argv, capsys, caplog, texts)
    _run(["init", str(tmp_path / "init"), "--registry", secret_env], capsys, caplog, texts)
    _run(["demo", str(tmp_path / "demo"), "--registry", secret_env], capsys, caplog, texts)
    # the registry was asked with the credentials (so they were set), and refused
    assert any(h == "Basic " + SECRETS[-1] for h in _Refusing.seen)
    assert codes["bootstrap"] == 7 and codes["stream --table artists --once"] == 6  # no table: refused first
    assert codes["stream --all"] == codes["run"] == codes["stream --all --dry-run"] == codes["run --dry-run"] == 6
    assert codes["capture --once --timeout 5"] == 11 and codes["schemas list"] == 7
    assert codes["render --out {tmp}/rendered"] == 0 and codes["bootstrap --dry-run"] == 0
    assert codes["table downgrade --dry-run"] == codes["table downgrade"] == 0
    _scan(texts, tmp_path)


def test_every_aws_command_keeps_every_secret(tmp_path, emr_cluster, serverless_app, boto, monkeypatch, capsys,
                                              caplog):
    """EMR and EMR Serverless (moto): render --emr-steps, dry runs, real submissions, status, logs,
    cancel; the steps and job runs as moto stored them, and the files uploaded to S3, are scanned too."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AWS_KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_SECRET)  # moto takes any key
    monkeypatch.setenv("TEST_DB_PW", DB_PW)
    monkeypatch.setenv("TEST_REG_PW", REG_PW)  # set, but the AWS pipeline names no registry credentials
    monkeypatch.chdir(tmp_path)
    caplog.set_level(logging.INFO)
    # moto never finishes a step or job run by itself: poll once, then give up waiting (exit 4, a line
    # that names the step) instead of emr.timeout_seconds of real time
    data = pipeline_data(cluster_id=emr_cluster, serverless_application_id=serverless_app,
                         serverless_execution_role_arn=SERVERLESS_ROLE, poll_seconds=1, timeout_seconds=1)
    data["source"]["database"] = {"host": "127.0.0.1", "port": 1, "name": "moma", "user": "cdc",
                                  "password_env": "TEST_DB_PW"}
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(data))
    texts: dict[str, str] = {}
    base = ["--config", str(cfg)]
    for target in ("emr", "emr-serverless"):
        t = [*base, "--target", target]
        _run([*t, "render", "--emr-steps"], capsys, caplog, texts)
        _run([*t, "bootstrap", "--dry-run"], capsys, caplog, texts)
        _run([*t, "stream", "--table", "artists", "--dry-run"], capsys, caplog, texts)
        _run([*t, "bootstrap", "--table", "artists"], capsys, caplog, texts)  # submitted to moto
        _run([*t, "emr", "status"], capsys, caplog, texts)
        _run([*t, "emr", "logs", "s-NOPE"], capsys, caplog, texts)
        _run([*t, "emr", "cancel", "s-NOPE", "--dry-run"], capsys, caplog, texts)
    steps = boto["emr"].list_steps(ClusterId=emr_cluster)["Steps"]
    assert steps, texts
    texts["EMR steps as stored"] = json.dumps(steps, default=str)
    runs = boto["emr-serverless"].list_job_runs(applicationId=serverless_app)["jobRuns"]
    texts["EMR Serverless runs as stored"] = json.dumps(
        [boto["emr-serverless"].get_job_run(applicationId=serverless_app, jobRunId=r["id"]) for r in runs], default=str)
    for obj in boto["s3"].list_objects_v2(Bucket=BUCKET).get("Contents", []):
        texts[f"s3://{BUCKET}/{obj['Key']}"] = boto["s3"].get_object(Bucket=BUCKET, Key=obj["Key"])["Body"].read(
        ).decode("utf-8", "replace")
    _scan(texts, tmp_path)
