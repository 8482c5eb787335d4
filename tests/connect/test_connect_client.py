"""The Kafka Connect REST client and the `connectors deploy|status|restart|delete|validate` commands
against a tiny in-process HTTP stand-in (no JVM): answers shaped like connect-runtime 4.x's, retries
of a busy worker, one-line errors. The same commands against a real worker: tests/connect/test_connect_worker.py.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

import pytest
import yaml

from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.connect.client import ConnectClient, ConnectUnavailable, trace_line
from hudi_cdc.connect.connectors import render_connectors
from hudi_cdc.errors import ConfigError

TRACE = ("org.apache.kafka.connect.errors.ConnectException: An exception occurred in the change event producer.\n"
         "\tat io.debezium.pipeline.ErrorHandler.setProducerThrowable(ErrorHandler.java:67)\n"
         "Caused by: org.postgresql.util.PSQLException: ERROR: must be owner of table paintings\n"
         "\tat org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2733)\n")


class FakeConnect:
    """Connectors in a dict; `busy` answers 409 that many times first; `fail_task` marks tasks FAILED."""

    def __init__(self):
        self.configs: dict[str, dict] = {}
        self.requests: list[tuple[str, str, dict | None]] = []
        self.busy = 0
        self.rebalance_expected = 0
        self.fail_task: set[str] = set()
        self.validate_errors: dict[str, str] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, status, body=None):
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method):
                url = urlparse(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n)) if n else None
                fake.requests.append((method, self.path, body))
                if fake.rebalance_expected:  # a 500, not a 409 (connect-runtime's RebalanceNeededException)
                    fake.rebalance_expected -= 1
                    msg = "Request cannot be completed because a rebalance is expected"
                    return self._send(500, {"error_code": 500, "message": msg})
                if fake.busy:
                    fake.busy -= 1
                    msg = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
                    return self._send(409, {"error_code": 409, "message": msg})
                parts = [unquote(p) for p in url.path.strip("/").split("/")]
                q = parse_qs(url.query)
                if parts == ["connectors"] and method == "GET":
                    return self._send(200, sorted(fake.configs))
                if parts[0] == "connector-plugins" and parts[-1] == "validate":
                    cls = parts[1]
                    if cls.endswith("S3SinkConnector"):
                        msg = f"Failed to find any class that implements Connector and which name matches {cls}"
                        return self._send(500, {"error_code": 500, "message": msg})
                    configs = [{"definition": {"name": k}, "value": {"name": k, "value": v, "errors":
                               [fake.validate_errors[k]] if k in fake.validate_errors else []}}
                               for k, v in body.items()]
                    return self._send(200, {"name": cls, "error_count": len(fake.validate_errors), "groups": [],
                                            "configs": configs})
                if parts[0] != "connectors" or len(parts) < 2:
                    return self._send(404, {"error_code": 404, "message": "HTTP 404 Not Found"})
                name = parts[1]
                rest = parts[2:]
                if rest == ["config"] and method == "PUT":
                    created = name not in fake.configs
                    fake.configs[name] = {**body, "name": name}
                    return self._send(201 if created else 200, {"name": name, "config": body, "tasks": []})
                if name not in fake.configs:
                    return self._send(404, {"error_code": 404, "message": f"Connector {name} not found"})
                if rest == ["config"]:
                    return self._send(200, fake.configs[name])
                if rest == ["status"]:
                    failed = name in fake.fail_task
                    task = {"id": 0, "state": "FAILED" if failed else "RUNNING", "worker_id": "10.0.0.7:8083",
                            **({"trace": TRACE} if failed else {})}
                    return self._send(200, {"name": name, "type": "source", "tasks": [task],
                                            "connector": {"state": "RUNNING", "worker_id": "10.0.0.7:8083"}})
                if rest == ["restart"] and method == "POST":
                    assert q == {"includeTasks": ["true"], "onlyFailed": [q["onlyFailed"][0]]}
                    fake.fail_task.discard(name)
                    return self._send(202, {"name": name, "connector": {"state": "RESTARTING"}, "tasks": []})
                if rest == [] and method == "DELETE":
                    del fake.configs[name]
                    return self._send(204)
                return self._send(405, {"error_code": 405, "message": "HTTP 405 Method Not Allowed"})

            def do_GET(self):
                self._handle("GET")

            def do_PUT(self):
                self._handle("PUT")

            def do_POST(self):
                self._handle("POST")

            def do_DELETE(self):
                self._handle("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake():
    f = FakeConnect()
    yield f
    f.close()


def _cfg(tmp_path, url: str | None, **connect) -> str:
    doc = {"pipeline": "moma",
           "source": {"root": "landing", "database": {"name": "moma", "user": "u", "password_env": "PGPASSWORD"},
                      **({"connect": {"url": url, **connect}} if url or connect else {})},
           "lake": {"root": "lake"},
           "tables": {"artists": {"topic": "moma.public.artists", "record_key": "artist_id"},
                      "artworks": {"topic": "moma.public.artworks", "record_key": "artwork_id"}}}
    path = tmp_path / "hudi-cdc.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def _run(capsys, cfg, *args):
    code = main(["-c", cfg, "connectors", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_deploy_is_idempotent_and_never_sends_the_password(tmp_path, capsys, fake, monkeypatch):
    monkeypatch.setenv("PGPASSWORD", "s3cr3t-value")
    cfg = _cfg(tmp_path, fake.url, converter="json")
    code, out, _ = _run(capsys, cfg, "deploy", "--dry-run", "-o", "json")
    assert code == 0 and [r["action"] for r in json.loads(out)] == ["create", "create"]
    assert fake.configs == {}
    code, out, err = _run(capsys, cfg, "deploy", "-o", "json")
    assert [r["action"] for r in json.loads(out)] == ["created", "created"]
    assert set(fake.configs) == {"hudi-cdc-moma-source", "hudi-cdc-moma-s3-sink"}
    sent = json.dumps([r for r in fake.requests])
    assert "s3cr3t-value" not in sent + out + err
    assert fake.configs["hudi-cdc-moma-source"]["database.password"] == "${env:PGPASSWORD}"
    assert fake.configs["hudi-cdc-moma-source"]["value.converter"] == "org.apache.kafka.connect.json.JsonConverter"
    assert "config.providers=env" in err
    puts = len([r for r in fake.requests if r[0] == "PUT"])
    code, out, _ = _run(capsys, cfg, "deploy", "-o", "json")
    assert [r["action"] for r in json.loads(out)] == ["unchanged", "unchanged"]
    assert len([r for r in fake.requests if r[0] == "PUT"]) == puts  # nothing re-sent
    fake.configs["hudi-cdc-moma-source"]["snapshot.mode"] = "never"
    code, out, _ = _run(capsys, cfg, "deploy", "--only", "source", "-o", "json")
    row = json.loads(out)[0]
    assert row["action"] == "updated" and row["changed_keys"] == "snapshot.mode"


def test_status_restart_delete(tmp_path, capsys, fake):
    cfg = _cfg(tmp_path, fake.url)
    assert _run(capsys, cfg, "deploy", "--only", "source")[0] == 0
    code, out, _ = _run(capsys, cfg, "status")
    assert code == 0 and "RUNNING" in out and "NOT DEPLOYED" in out  # the sink was not deployed
    fake.fail_task.add("hudi-cdc-moma-source")
    code, out, err = _run(capsys, cfg, "status", "--only", "source", "-o", "json")
    assert code == 11 and json.loads(out)[0]["tasks"][0]["trace"].startswith("org.apache.kafka.connect.errors")
    assert err.strip().count("\n") == 0
    assert ("connector hudi-cdc-moma-source task 0 FAILED on 10.0.0.7:8083: org.apache.kafka.connect.errors."
            "ConnectException: An exception occurred in the change event producer. | Caused by: "
            "org.postgresql.util.PSQLException: ERROR: must be owner of table paintings") in err
    code, out, _ = _run(capsys, cfg, "restart", "--only", "source", "--failed-only")
    assert code == 0 and out.strip() == "hudi-cdc-moma-source: RESTARTING"
    assert fake.requests[-1][1].endswith("/restart?includeTasks=true&onlyFailed=true")
    assert _run(capsys, cfg, "status", "--only", "source")[0] == 0
    code, out, _ = _run(capsys, cfg, "delete")
    assert out.splitlines() == ["hudi-cdc-moma-source: deleted", "hudi-cdc-moma-s3-sink: not deployed"]


def test_validate_reports_every_error_by_key(tmp_path, capsys, fake):
    cfg = _cfg(tmp_path, fake.url)
    fake.validate_errors = {"database.hostname": "Error while validating connector config: Connection refused",
                            "slot.name": "bad\nslot"}
    code, out, err = _run(capsys, cfg, "validate", "-o", "json")
    assert code == 2
    doc = json.loads(out)
    assert {(e["connector"], e["key"]) for e in doc["errors"]} == {
        ("hudi-cdc-moma-source", "database.hostname"), ("hudi-cdc-moma-source", "slot.name"),
        ("hudi-cdc-moma-s3-sink", "connector.class")}
    assert next(e["error"] for e in doc["errors"] if e["key"] == "slot.name") == "bad | slot"
    assert err.startswith("error: connectors validate: 3 error(s): ") and err.count("\n") == 1
    # the name travels with the config (Connect requires it) and the full class is in the path
    put = next(r for r in fake.requests if "validate" in r[1])
    assert put[1] == "/connector-plugins/io.debezium.connector.postgresql.PostgresConnector/config/validate"
    assert put[2]["name"] == "hudi-cdc-moma-source"
    fake.validate_errors = {}
    code, out, _ = _run(capsys, cfg, "validate", "--only", "source")
    assert code == 0 and out.strip() == "hudi-cdc-moma-source: valid"


def test_busy_worker_is_retried_then_reported(fake):
    client = ConnectClient(fake.url, backoff=0.01)
    fake.busy = 2  # a rebalance: 409 twice, then the answer
    assert client.connectors() == []
    fake.busy = 10
    with pytest.raises(ConnectUnavailable, match=r"still busy after 7 attempts \(list connectors\): HTTP 409"):
        client.connectors()
    fake.busy, fake.rebalance_expected = 0, 2  # what a worker answers just before a rebalance
    assert client.config("absent") is None
    fake.rebalance_expected = 10
    with pytest.raises(ConnectUnavailable, match=r"still rebalancing after 7 attempts \(list connectors\)"):
        client.connectors()


def test_worker_down_is_one_line_naming_the_url(tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = _cfg(tmp_path, None)
    code, _, err = _run(capsys, cfg, "status", "--connect-url", f"http://127.0.0.1:{port}")
    assert code == 5
    assert err.strip() == (f"error: Kafka Connect worker at http://127.0.0.1:{port} not reachable after 4 attempts "
                           "(read hudi-cdc-moma-source's status): Connection refused")
    code, _, err = _run(capsys, cfg, "deploy")
    assert code == 2 and "source.connect.url: not set" in err


def test_config_key_and_table_names(tmp_path):
    doc = yaml.safe_load(open(_cfg(tmp_path, "http://connect:8083/", converter="json")))
    p = parse_pipeline(doc, "x.yaml", str(tmp_path))
    assert p.source.connect.url == "http://connect:8083" and p.source.connect.converter == "json"
    doc["source"]["connect"] = {"url": "connect:8083"}
    with pytest.raises(ConfigError, match=r"source\.connect\.url: .*http:// or https://"):
        parse_pipeline(doc, "x.yaml", str(tmp_path))
    doc["source"]["connect"] = {"url": "http://c:8083"}
    p = parse_pipeline(doc, "x.yaml", str(tmp_path))
    source, sink = render_connectors(p, table="artworks")
    assert (source["name"], sink["name"]) == ("hudi-cdc-moma-artworks-source", "hudi-cdc-moma-artworks-s3-sink")
    assert source["config"]["slot.name"] == "hudi_cdc_moma_artworks"  # what `capture --table` uses
    assert source["config"]["table.include.list"] == r"public\.artworks" and sink["config"]["topics"] == \
        "moma.public.artworks"
    assert source["config"]["value.converter"].endswith("AvroConverter")  # apicurio unless converter: json


def test_render_one_table(tmp_path, capsys):
    code, out, _ = _run(capsys, _cfg(tmp_path, None), "render", "--table", "artists")
    assert code == 0 and [c["name"] for c in json.loads(out)] == ["hudi-cdc-moma-artists-source",
                                                                  "hudi-cdc-moma-artists-s3-sink"]


def test_trace_line():
    assert trace_line("") == "(no trace)"
    assert trace_line("java.lang.IllegalStateException: boom\n\tat x.y(Z.java:1)") == \
        "java.lang.IllegalStateException: boom"
