"""The one HTTP layer (hudi_cdc/http.py) the registry and Kafka Connect clients share: retries of
transient answers, URLs without credentials in messages, error bodies read as one line. A real
local HTTP server (http.server on a free port) answers what each test scripts."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from hudi_cdc import http
from hudi_cdc.connect.client import ConnectClient, ConnectRequestError, ConnectUnavailable
from hudi_cdc.errors import ConfigError
from hudi_cdc.registry import RegistryClient
from hudi_cdc.registry.errors import RegistryUnavailable


@contextmanager
def server(answers: list[tuple[int, str]]) -> Iterator[SimpleNamespace]:
    """A local server answering each request with the next (status, body) of answers (the last one
    repeats); seen.requests lists (method, path, Authorization header) as they arrived."""
    seen = SimpleNamespace(requests=[], url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            seen.requests.append((self.command, self.path, self.headers.get("Authorization")))
            status, body = answers[min(len(seen.requests), len(answers)) - 1]
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = _answer

        def log_message(self, *args) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    seen.url = f"http://127.0.0.1:{srv.server_address[1]}"
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield seen
    finally:
        srv.shutdown()
        srv.server_close()


def test_retrying_session_retries_the_named_statuses_then_returns_the_answer():
    with server([(503, "{}"), (503, "{}"), (200, '{"ok": true}')]) as s:
        resp = http.retrying_session(3, 0, {503}).get(s.url + "/x", timeout=10)
        assert (resp.status_code, resp.json()) == (200, {"ok": True})
        assert len(s.requests) == 3
    with server([(503, '{"message": "busy"}')]) as s:  # retries spent: the last answer comes back
        resp = http.retrying_session(1, 0, {503}).put(s.url + "/x", data="{}", timeout=10)
        assert resp.status_code == 503 and len(s.requests) == 2
    with server([(500, "{}"), (200, "{}")]) as s:  # a status not named is not retried
        assert http.retrying_session(3, 0, {503}).get(s.url, timeout=10).status_code == 500
        assert len(s.requests) == 1


def test_registry_client_retries_then_names_the_url_without_its_password():
    body = json.dumps({"error_code": 50301, "message": "storage down"})
    with server([(503, body)]) as s:
        url = s.url.replace("http://", "http://alice:s3cret-pw@") + "/apis/ccompat/v7"
        client = RegistryClient(url, retries=2, backoff=0)
        with pytest.raises(RegistryUnavailable) as err:
            client.subjects()
        msg = str(err.value)
        assert "s3cret" not in msg and "alice" not in msg and s.url in msg
        assert "unavailable after 3 attempts (list subjects): HTTP 503 (50301: storage down)" in msg
        assert len(s.requests) == 3
        assert all(auth and auth.startswith("Basic ") for _, _, auth in s.requests)  # sent, never printed


def test_connect_client_error_bodies_as_one_line():
    refused = json.dumps({"error_code": 400, "message": "Connector configuration is invalid\nand has 1 error"})
    with server([(400, refused)]) as s:
        with pytest.raises(ConfigError, match=r"refused deploy c1: Connector configuration is invalid \| and has"):
            ConnectClient(s.url, retries=0, backoff=0).put_config("c1", {"a": 1})
    with server([(500, "plain text failure\nsecond line")]) as s:
        with pytest.raises(ConnectRequestError, match=r"HTTP 500 plain text failure$"):
            ConnectClient(s.url, retries=0, backoff=0).status("c1")
    with server([(409, json.dumps({"message": "rebalance in progress"}))]) as s:
        with pytest.raises(ConnectUnavailable, match="still busy after 3 attempts .*rebalance in progress"):
            ConnectClient(s.url, retries=2, busy_retries=2, backoff=0).connectors()
        assert len(s.requests) == 3
    with server([(200, "{}")]) as s:
        closed = s.url
    with pytest.raises(ConnectUnavailable, match="not reachable after 1 attempts .*Connection refused"):
        ConnectClient(closed.replace("http://", "http://u:pw@"), retries=0, backoff=0).connectors()


@pytest.mark.parametrize("text,expected", [
    ('{"error_code": 40401, "message": "Subject not found"}', (40401, "Subject not found")),
    ('{"error_code": "x", "detail": "bad"}', (None, "bad")),
    ('["a"]', (None, '["a"]')),
    ("<html>\nProxy error</html>", (None, "<html>")),
    ("", (None, "")),
])
def test_error_body(text, expected):
    assert http.error_body(SimpleNamespace(text=text)) == expected


def test_redact_and_one_line():
    assert http.redact("https://user:p%40ss@host:8081/apis?x=1") == "https://host:8081/apis?x=1"
    assert http.redact("http://host/path@x") == "http://host/path@x"
    assert http.one_line("a\n  b \n\nc", limit=5) == "a | b"
    assert http.short_reason(OSError("[Errno 111] Connection refused")) == "Connection refused"
    assert http.short_reason(ValueError("odd\nmore"), first_line=True) == "odd"
    assert http.short_reason(ValueError("odd")) == "ValueError"
