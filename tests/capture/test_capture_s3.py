"""`hudi-cdc capture` landing in S3: a real PostgreSQL (tests/plugins/postgres.py) and the real local
S3 endpoint (s3proxy, tests/plugins/s3.py). capture --once into s3:// -> bootstrap -> SQL changes ->
capture --once (file offsets continue from what is in S3) -> stream --once -> verify equal, CoW and
MoR. The endpoint going away while capture lands (a proxy in front of s3proxy that drops every PUT)
is one line naming it, lands nothing and leaves Debezium's offsets where they were; an endpoint that
is down from the start is refused before the JVM starts."""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.common import s3
from tests.capture.test_capture import _load_moma, _pipeline_dict, _sql
from tests.cli import run_cli

pytestmark = [pytest.mark.s3, pytest.mark.postgres, pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[2]


class FlakyEndpoint:
    """An HTTP proxy in front of the S3 endpoint; while ``drop_puts`` is set, every PUT is answered by
    a closed connection (what a client sees of an endpoint that died)."""

    def __init__(self, target: str):
        host, port = target.split("://", 1)[1].rstrip("/").split(":")
        self.drop_puts = False
        self.dropped = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _forward(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                if self.command == "PUT" and outer.drop_puts:
                    outer.dropped += 1
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                conn = http.client.HTTPConnection(host, int(port), timeout=60)
                try:
                    conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for k, v in self.headers.items():  # Host as signed by the client
                        conn.putheader(k, v)
                    conn.endheaders(body)
                    resp = conn.getresponse()
                    data = resp.read()
                finally:
                    conn.close()
                self.send_response(resp.status, resp.reason)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                length = resp.getheader("Content-Length") if self.command == "HEAD" else None
                self.send_header("Content-Length", length or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _cli(base: Path, config: str, *args):
    return run_cli("-c", str(base / config), *args, cwd=base, timeout=1200)


def _ok(proc, what):
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}): {proc.stderr[-3000:]}"
    return proc


def _keys(bucket: str, prefix: str = "") -> list[str]:
    return sorted(o["Key"] for o in s3.list_objects(f"s3://{bucket}/{prefix}".rstrip("/")))


def _write(base: Path, name: str, db: dict, bucket: str, endpoint: str) -> None:
    d = _pipeline_dict(db, flush_size=100)
    del d["tables"]["artworks"]  # its types are proven on a local root (test_capture.py); one table here
    d["source"]["root"] = f"s3://{bucket}/landing/topics"
    d["lake"]["root"] = f"s3://{bucket}/lake"
    d["storage"] = {"s3_endpoint": endpoint}
    d["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    (base / name).write_text(yaml.safe_dump(d, sort_keys=False))


def _wal_lsn(db: dict) -> int:
    """The server's current WAL position as a number (bytes since 0/0)."""
    import psycopg

    with psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                         password=os.environ[db["password_env"]]) as conn:
        return int(conn.execute("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn").fetchone()[0])


def _position(offsets: bytes) -> dict:
    """Where Debezium's offsets point (the JSON value in Kafka's serialized offsets map): the LSN of the
    last event processed and its transaction. A run that landed nothing may still add ``lsn_commit``
    for the same position (Debezium notes what it confirmed to the slot), which is not a move."""
    text = offsets.decode("latin-1")
    value = json.loads(text[text.rindex('{"'):text.rindex("}") + 1])
    return {k: value.get(k) for k in ("lsn", "lsn_proc", "txId")}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_capture_into_s3_to_lake_verifies(tmp_path, pg_database, s3_endpoint):
    from hudi_cdc.capture.offsets import offsets_file
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.sources.verify import verify

    db = pg_database("cap_s3")
    _load_moma(db)
    bucket = f"cap-{uuid.uuid4().hex[:10]}"
    s3.client().create_bucket(Bucket=bucket)
    flaky = FlakyEndpoint(s3_endpoint)
    try:
        _write(tmp_path, "hudi-cdc.yaml", db, bucket, s3_endpoint)
        _write(tmp_path, "via-proxy.yaml", db, bucket, flaky.url)
        _write(tmp_path, "down.yaml", db, bucket, f"http://127.0.0.1:{_free_port()}")
        times: dict[str, float] = {}

        def step(name, *args, config="hudi-cdc.yaml"):
            t0 = time.monotonic()
            proc = _cli(tmp_path, config, *args)
            times[name] = round(time.monotonic() - t0, 1)
            return proc

        first = json.loads(_ok(step("capture snapshot", "capture", "--once", "-o", "json"), "capture").stdout)
        assert first["snapshot"] and first["events"] == 300
        artists = [k.rsplit("/", 1)[1] for k in _keys(bucket, "landing/topics/moma.public.artists")]
        assert artists == [f"moma.public.artists+0+{o:010d}.avro" for o in (0, 100, 200)]
        assert not list((tmp_path / ".hudi-cdc" / "capture" / "staging").rglob("*.tmp"))
        _ok(step("bootstrap", "bootstrap"), "bootstrap")

        ids = [r["artist_id"] for r in sample.snapshot_rows("artists")[:300]]
        before_changes = _wal_lsn(db)  # every change below is after it
        _sql(db, f"UPDATE artists SET name = 'Updated', death_year = 2001 WHERE artist_id = {ids[0]}",
             f"DELETE FROM artists WHERE artist_id = {ids[1]}",
             f"UPDATE artists SET nationality = 'Moved' WHERE artist_id = {ids[2]}")
        _sql(db, "INSERT INTO artists VALUES (999999, 'Newcomer', 'Unknown', NULL, 2000, NULL)")

        # the endpoint down from the start: refused before Debezium starts, one line naming it
        down = step("capture, endpoint down", "capture", "--once", config="down.yaml")
        assert down.returncode == 5, down.stderr
        assert down.stderr.strip().count("\n") == 0 and "127.0.0.1" in down.stderr and "does not answer" in down.stderr

        # the endpoint dies while capture lands: nothing landed, offsets where they were
        landed, offsets = _keys(bucket, "landing"), offsets_file(load_pipeline(tmp_path / "hudi-cdc.yaml"))
        saved = offsets.read_bytes()
        flaky.drop_puts = True
        failed = step("capture, PUTs dropped", "capture", "--once", config="via-proxy.yaml")
        flaky.drop_puts = False
        assert failed.returncode == 5, failed.stderr
        # one line of error; a slow capture may print its progress lines first
        lines = [ln for ln in failed.stderr.strip().splitlines() if not ln.startswith("capturing: ")]
        assert len(lines) == 1, failed.stderr
        line = lines[0]
        assert flaky.url in line and "does not answer" in line, line
        assert flaky.dropped > 0
        assert _keys(bucket, "landing") == landed
        # offsets never pass a change that was not landed; they may move over what precedes the changes
        # (a heartbeat message of the last run: heartbeats, docs/source-life.md)
        now = _position(offsets.read_bytes())
        assert now == _position(saved) or now["lsn"] <= before_changes, (now, before_changes)
        assert not list((tmp_path / ".hudi-cdc" / "capture" / "staging").rglob("*.tmp"))

        second = json.loads(_ok(step("capture changes", "capture", "--once", "-o", "json"), "capture").stdout)
        assert not second["snapshot"] and second["events"] == 4
        assert second["topics"]["moma.public.artists"]["next_offset"] == 304
        artists = [k.rsplit("/", 1)[1] for k in _keys(bucket, "landing/topics/moma.public.artists")]
        assert artists[-1] == "moma.public.artists+0+0000000300.avro"

        _ok(step("stream", "stream", "--table", "artists", "--once"), "stream")
        p = load_pipeline(tmp_path / "hudi-cdc.yaml")
        for table, tt in p.targets():
            r = verify(p, table, tt)
            assert r.equal, f"{table} {tt}: {r.summary()}"
        print(f"capture into S3, seconds: {times}")
    finally:
        flaky.close()
