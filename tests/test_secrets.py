"""Registry credentials travel by reference: never in rendered files, argv or dry-run output."""

from hudi_cdc import render
from hudi_cdc.config import parse_pipeline
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
