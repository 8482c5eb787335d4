"""The registry client and `hudi-cdc schemas` against a real Apicurio Registry 3.x (ccompat v7).

Unmarked tests use a tiny real HTTP server for what Apicurio cannot be made to do on demand
(5xx, non-JSON bodies); everything else talks to the Apicurio the session fixture started.
"""

from __future__ import annotations

import json
import socket
import threading
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc import registry as reg
from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.errors import RegistryError

ARTISTS = "moma.public.artists"


def _schema(fields):
    return {"type": "record", "name": "Value", "namespace": "t", "fields": fields}


V1 = _schema([{"name": "id", "type": "int"}, {"name": "name", "type": ["null", "string"], "default": None}])
V2_ADDED = _schema(V1["fields"] + [{"name": "email", "type": ["null", "string"], "default": None}])
V2_BROKEN = _schema([{"name": "id", "type": "string"}, {"name": "name", "type": ["null", "string"], "default": None}])


def _subject() -> str:
    return f"t{uuid.uuid4().hex[:10]}-value"


# ---- a stub server for statuses Apicurio does not give on demand -----------------------
class _Stub(BaseHTTPRequestHandler):
    script: list = []  # [(status, body bytes, content type)], served in order, the last one repeats
    hits: list = []

    def _serve(self):
        type(self).hits.append((self.command, self.path))
        status, body, ctype = self.script[min(len(self.hits) - 1, len(self.script) - 1)]
        self.send_response(status)
        if ctype:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = _serve

    def log_message(self, *args):
        pass


@pytest.fixture
def stub():
    servers = []

    def start(*script):
        handler = type("H", (_Stub,), {"script": list(script), "hits": []})
        srv = HTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_port}/apis/ccompat/v7", handler

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_5xx_is_retried_then_one_line_error_naming_the_url(stub):
    url, h = stub((503, b"<html>busy</html>", "text/html"))
    client = reg.RegistryClient(url, retries=2, backoff=0.05)
    with pytest.raises(reg.RegistryUnavailable) as ei:
        client.subjects()
    assert len(h.hits) == 3
    msg = str(ei.value)
    assert "\n" not in msg and f"{url}/subjects" in msg and "HTTP 503" in msg and "after 3 attempts" in msg


def test_transient_failure_recovers(stub):
    url, h = stub((500, b"", None), (502, b'{"error_code":50001,"message":"store down"}', "application/json"),
                  (200, b'["a-value"]', "application/json"))
    assert reg.RegistryClient(url, retries=3, backoff=0.01).subjects() == ["a-value"]
    assert len(h.hits) == 3


def test_empty_and_non_json_error_bodies_survive(stub):
    url, _ = stub((404, b"", None))
    with pytest.raises(reg.SubjectNotFound) as ei:
        reg.RegistryClient(url, retries=0).get("x-value")
    assert ei.value.status == 404 and ei.value.error_code is None
    url, _ = stub((422, b"<html><body>Unprocessable</body></html>", "text/html"))
    with pytest.raises(reg.InvalidSchema) as ei:
        reg.RegistryClient(url, retries=0).register("x-value", V1, compatibility=None)
    assert "Unprocessable" in str(ei.value)
    url, _ = stub((418, b"", None))
    with pytest.raises(RegistryError, match="HTTP 418 .*empty body"):
        reg.RegistryClient(url, retries=0).subjects()


def test_connection_refused_is_retried_with_backoff_then_fails():
    url = f"http://127.0.0.1:{_closed_port()}/apis/ccompat/v7"
    client = reg.RegistryClient(url, retries=3, backoff=0.1)
    with pytest.raises(reg.RegistryUnavailable) as ei:
        client.versions("x-value")
    msg = str(ei.value)
    assert "Connection refused" in msg and "after 4 attempts" in msg and url in msg and "\n" not in msg


def test_user_info_in_url_becomes_auth_and_is_redacted():
    client = reg.RegistryClient("http://bob:s3cret@127.0.0.1:1/apis/ccompat/v7", retries=0)
    assert client.session.auth == ("bob", "s3cret")
    assert "s3cret" not in client.url and "bob" not in client.url
    with pytest.raises(reg.RegistryUnavailable) as ei:
        client.subjects()
    assert "s3cret" not in str(ei.value)


# ---- real Apicurio -----------------------------------------------------------------


@pytest.fixture
def client(registry_url):
    with reg.RegistryClient(registry_url, retries=1, backoff=0.1) as c:
        yield c


@pytest.mark.registry
def test_register_show_and_versions(client):
    subject = _subject()
    sid = client.register(subject, V1)
    assert client.register(subject, V1) == sid  # same schema: same id, no new version
    got = client.get(subject)
    assert got.version == 1 and got.id == sid and got.parsed == V1
    assert client.compatibility(subject) == "BACKWARD"
    assert subject in client.subjects()
    sid2 = client.register(subject, V2_ADDED)
    assert sid2 != sid and client.versions(subject) == [1, 2]
    assert client.get(subject, 1).parsed == V1


@pytest.mark.registry
def test_check_compatible_and_incompatible(client):
    subject = _subject()
    client.register(subject, V1)
    assert client.check(subject, V2_ADDED).is_compatible
    assert not client.check(subject, V2_BROKEN).is_compatible
    with pytest.raises(reg.IncompatibleSchema) as ei:
        client.register(subject, V2_BROKEN)
    assert ei.value.status == 409 and "incompatible" in str(ei.value)
    assert client.versions(subject) == [1]  # nothing registered


@pytest.mark.registry
def test_subject_and_version_not_found(client):
    with pytest.raises(reg.SubjectNotFound) as ei:
        client.get(_subject())
    assert ei.value.status == 404 and ei.value.error_code == 40401
    assert "subject not found" in str(ei.value) and "/subjects/" in str(ei.value)
    subject = _subject()
    client.register(subject, V1)
    with pytest.raises(reg.VersionNotFound) as ei:
        client.get(subject, 99)
    assert ei.value.error_code == 40402 and "version not found" in str(ei.value)


@pytest.mark.registry
def test_invalid_schema(client):
    with pytest.raises(reg.InvalidSchema) as ei:
        client.register(_subject(), {"type": "recordx", "name": "x"})
    assert ei.value.status == 422 and ei.value.error_code == 42201
    subject = _subject()
    client.register(subject, V1)
    with pytest.raises(reg.InvalidSchema):
        client.check(subject, "{not json")


@pytest.mark.registry
def test_unauthorised_and_forbidden(secured_registry):
    url, users = secured_registry
    with reg.RegistryClient(url, retries=0) as anon:
        with pytest.raises(reg.Unauthorized) as ei:
            anon.subjects()
    assert ei.value.status == 401 and "needs valid credentials" in str(ei.value)
    assert "User is not authenticated" in str(ei.value)  # Apicurio's JSON body, parsed
    wrong = (users["admin"][0] + "x")
    with reg.RegistryClient(url, auth=("admin", wrong), retries=0) as bad:
        with pytest.raises(reg.Unauthorized) as ei:  # Quarkus answers this one with an empty body
            bad.subjects()
    assert wrong not in str(ei.value)
    subject = _subject()
    with reg.RegistryClient(url, auth=("admin", users["admin"][0]), retries=0) as admin:
        admin.register(subject, V1)
        assert admin.get(subject).parsed == V1
    with reg.RegistryClient(url, auth=("reader", users["reader"][0]), retries=0) as reader:
        assert subject in reader.subjects()  # readers read ...
        assert reader.get(subject).parsed == V1
        with pytest.raises(reg.Forbidden) as ei:  # ... but do not write
            reader.register(_subject(), V1)
    assert ei.value.status == 403 and "not allowed" in str(ei.value)


# ---- the pipeline and the CLI ----------------------------------------------------------
def _pipeline_file(tmp_path: Path, registry_url: str, **source) -> Path:
    from hudi_cdc import sample

    landing = tmp_path / "landing"
    sample.land_snapshot(landing, tables=("artists",), per_file=5000)
    topic = f"{ARTISTS}.{uuid.uuid4().hex[:6]}"  # a subject of its own per test
    (landing / ARTISTS).rename(landing / topic)
    doc = {"pipeline": "moma", "source": {"root": "landing", "schema_registry": registry_url, **source},
           "lake": {"root": "lake", "hive_database": "moma"},
           "tables": {"artists": {"topic": topic, "record_key": "artist_id", "partition_field": "nationality"}}}
    path = tmp_path / "hudi-cdc.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.registry
def test_cli_register_takes_the_landed_writer_schema(tmp_path, registry_url, capsys):
    cfg = _pipeline_file(tmp_path, registry_url)
    p = parse_pipeline(yaml.safe_load(cfg.read_text()), str(cfg), str(tmp_path))
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "check", "-o", "json")
    assert code == 0 and json.loads(out)[0]["compatible"] is True and "not registered yet" in out
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "register", "-o", "json")
    assert code == 0, err
    row = json.loads(out)[0]
    subject = f"{p.tables['artists'].topic}-value"
    assert row["subject"] == subject and row["version"] == 1
    assert row["url"] == f"{registry_url}/subjects/{subject}/versions/latest"
    landed = next((tmp_path / "landing" / p.tables["artists"].topic / "partition=0").glob("*.avro"))
    with open(landed, "rb") as fh:
        writer_schema = json.loads(fastavro.reader(fh).metadata["avro.schema"])
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "show", "artists", "-o", "json")
    assert code == 0 and json.loads(out)["schema"] == writer_schema
    code, out, _ = _run(capsys, "-c", str(cfg), "schemas", "list")
    assert code == 0 and subject in out and "artists" in out
    code, out, _ = _run(capsys, "-c", str(cfg), "schemas", "check")
    assert code == 0 and "True" in out


@pytest.mark.registry
def test_cli_check_and_register_an_incompatible_avsc(tmp_path, registry_url, capsys):
    cfg = _pipeline_file(tmp_path, registry_url)
    assert _run(capsys, "-c", str(cfg), "schemas", "register")[0] == 0
    from hudi_cdc import sample

    broken = sample.schema("artists")
    for f in broken["fields"]:
        if f["name"] == "artist_id":
            f["type"] = "string"
    added = sample.schema("artists")
    added["fields"].append({"name": "email", "type": ["null", "string"], "default": None})
    (tmp_path / "broken.avsc").write_text(json.dumps(broken))
    (tmp_path / "added.avsc").write_text(json.dumps(added))
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "check", "-t", "artists",
                           "--avsc", str(tmp_path / "broken.avsc"))
    assert code == 7 and "False" in out and "incompatible" in err
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "register", "-t", "artists",
                           "--avsc", str(tmp_path / "broken.avsc"))
    assert code == 7 and "nothing was registered" in err and len(err.strip().splitlines()) == 1
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "register", "-t", "artists",
                           "--avsc", str(tmp_path / "added.avsc"), "-o", "json")
    assert code == 0 and json.loads(out)[0]["version"] == 2


@pytest.mark.registry
def test_cli_not_found_and_registry_down(tmp_path, registry_url, capsys):
    cfg = _pipeline_file(tmp_path, registry_url)
    code, _, err = _run(capsys, "-c", str(cfg), "schemas", "show", "artists")
    assert code == 7 and "subject not found" in err and "hudi-cdc schemas register" in err
    down = f"http://127.0.0.1:{_closed_port()}/apis/ccompat/v7"
    code, _, err = _run(capsys, "-c", str(cfg), "schemas", "list", "--registry", down)
    assert code == 7 and "unavailable after 4 attempts" in err and down in err and len(err.strip().splitlines()) == 1


@pytest.mark.registry
def test_cli_credentials_by_reference(tmp_path, secured_registry, capsys, monkeypatch):
    url, users = secured_registry
    cfg = _pipeline_file(tmp_path, url, registry_username_env="T_REG_USER", registry_password_env="T_REG_PW")
    monkeypatch.delenv("T_REG_USER", raising=False)
    code, _, err = _run(capsys, "-c", str(cfg), "schemas", "list")
    assert code == 2 and "T_REG_USER" in err
    monkeypatch.setenv("T_REG_USER", "admin")
    monkeypatch.setenv("T_REG_PW", users["admin"][0])
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "register")
    assert code == 0, err
    assert users["admin"][0] not in out + err + cfg.read_text()
    monkeypatch.setenv("T_REG_PW", "wrong-pw")
    code, out, err = _run(capsys, "-c", str(cfg), "schemas", "list")
    assert code == 7 and "401" in err and "wrong-pw" not in out + err
