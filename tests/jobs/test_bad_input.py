"""The bad-input catalogue through the real CLI on one small CoW lake (issue 11, item 6): a null record
key, an empty Avro file (0 bytes; a header-only file is valid), a file whose schema disagrees with the
registry's, the registry answering 401 / 403, the registry going down in the middle of continuous mode, a
Spark job that dies (its JVM killed, as the OOM killer does), a landing file that vanishes between listing
and reading, a disk that fills (a tmpfs lake).

Each: one line naming the file / field / table, its exit code, the table exactly as before (completed
timeline + rows), and the next run after the cause is fixed picks up exactly where it should (rows equal
the replay of every landed event, checkpoint = the newest file).

The registry is a stand-in HTTP server on 127.0.0.1 answering Confluent-compatible GETs (schema, 401, 403,
or not listening): a real Apicurio cannot easily answer 401/403 or be stopped and started within a test,
and what is tested is OUR client's behaviour on each answer. The tests run in order on one lake (a
module fixture); each leaves the lake as the next expects.
"""

from __future__ import annotations

import contextlib
import copy
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.common.instants import COMPLETED, parse_instant_file
from hudi_cdc.jobs.stream.table import read_checkpoint
from hudi_cdc.lake.reader import read_table
from tests.shared import missing, timeline_files

pytestmark = pytest.mark.e2e

TOPIC = "moma.public.artists"
SCHEMA = sample.schema("artists")
REPO = Path(__file__).resolve().parents[2]
COLS = ["artist_id", "name", "nationality", "__lsn"]


def ev(aid, lsn, name=None, deleted=False):
    return {"artist_id": aid, "name": None if deleted else (name or f"artist {aid}"),
            "nationality": None if deleted else "French", "gender": None, "birth_year": None, "death_year": None,
            "__op": "d" if deleted else "u", "__db": "moma", "__table": "artists", "__schema": "public",
            "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "true" if deleted else "false"}


def nullable_key_schema() -> dict:
    s = copy.deepcopy(SCHEMA)
    s["fields"][0] = {"name": "artist_id", "type": ["null", "int"], "default": None}
    return s


class Registry(http.server.BaseHTTPRequestHandler):
    """Every GET is the subject's latest version, or the status set in `answer`."""

    answer: int | dict = 200

    def do_GET(self):  # noqa: N802 (http.server's name)
        a = Registry.answer
        if a == 200 or isinstance(a, dict):
            schema = SCHEMA if a == 200 else a
            status, body = 200, {"subject": f"{TOPIC}-value", "version": 1, "id": 1, "schema": json.dumps(schema)}
        else:
            status, body = int(a), {"error_code": a, "message": "stand-in registry says no"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class Lake:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.landing = tmp / "landing" / TOPIC / "partition=0"
        self.landing.mkdir(parents=True)
        self.lake = tmp / "lake"
        self.lake.mkdir()
        self.tmpfs = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(self.lake)],
                                    capture_output=True, text=True).returncode == 0
        self.server: http.server.ThreadingHTTPServer | None = None
        self.port = self.start_registry()
        base = {"pipeline": "bad", "source": {"root": "landing"}, "lake": {"root": "lake"},
                "spark": {"shuffle_partitions": 1, "driver_memory": "1g"},
                "stream": {"min_sync_interval_seconds": 1, "max_restarts": 6, "restart_backoff_seconds": 1,
                           "restart_backoff_max_seconds": 2, "stop_timeout_seconds": 120},
                "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id",
                                       "table_types": ["COPY_ON_WRITE"]}}}
        self.plain = tmp / "hudi-cdc.yaml"
        self.plain.write_text(yaml.safe_dump(base))
        reg = copy.deepcopy(base)
        reg["source"]["schema_registry"] = f"http://127.0.0.1:{self.port}/apis/ccompat/v7"
        self.reg = tmp / "hudi-cdc-registry.yaml"
        self.reg.write_text(yaml.safe_dump(reg))
        self.base = self.lake / "artists_cow"
        self.events: list[dict] = []
        self.offset, self.last_ms, self.lsn = 0, 0, 100
        self.env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    # ---- the registry -----------------------------------------------------------------------
    def start_registry(self, port: int = 0) -> int:
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Registry)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.server.server_port

    def stop_registry(self) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()
        self.server = None

    # ---- landing -------------------------------------------------------------------------------
    def land(self, records: list[dict], schema: dict = SCHEMA, counted: bool = True, name: str | None = None) -> Path:
        """One S3-sink file, appearing atomically, newer than every earlier one."""
        path = self.landing / (name or sample.file_name(TOPIC, self.offset))
        tmp = self.landing / f".{path.name}.tmp"
        with open(tmp, "wb") as fh:
            fastavro.writer(fh, fastavro.parse_schema(schema), records)
        self.touch(tmp)
        os.replace(tmp, path)
        if name is None:
            self.offset += max(1, len(records))
        if counted:
            self.events.extend(records)
        return path

    def touch(self, path: Path) -> None:
        self.last_ms = max(int(time.time() * 1000), self.last_ms + 1)
        os.utime(path, ns=(self.last_ms * 1_000_000, self.last_ms * 1_000_000))

    def changes(self, n: int = 3) -> list[dict]:
        out = []
        for i in range(n):
            self.lsn += 1
            out.append(ev(1 + (self.lsn % 12), self.lsn, name=f"v{self.lsn}", deleted=i == n - 1))
        return out

    # ---- the CLI -------------------------------------------------------------------------------
    def cli(self, *args: str, config: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hudi_cdc.cli", "--config", str(config or self.plain), *args],
                              cwd=self.tmp, env=self.env, capture_output=True, text=True, timeout=timeout)

    def once(self, config: Path | None = None) -> subprocess.CompletedProcess:
        return self.cli("stream", "--table", "artists", "--once", config=config)

    # ---- what the table holds ------------------------------------------------------------------
    def completed(self) -> list[str]:
        names = timeline_files(self.base)
        return sorted(i.file_name for i in map(parse_instant_file, names) if i and i.state == COMPLETED)

    def dangling(self) -> list[str]:
        parsed = [i for i in map(parse_instant_file, timeline_files(self.base)) if i]
        done = {i.requested_time for i in parsed if i.state == COMPLETED}
        return sorted(i.file_name for i in parsed if i.state != COMPLETED and i.requested_time not in done)

    def rows(self) -> dict:
        return {r["artist_id"]: {c: r[c] for c in COLS} for r in read_table(f"file://{self.base}")}

    def state(self) -> tuple:
        return self.completed(), self.rows(), read_checkpoint(f"file://{self.base}")

    def assert_caught_up(self) -> None:
        want = {k: {c: v[c] for c in COLS} for k, v in sample.replay(self.events, "artist_id").items()}
        assert self.rows() == want
        assert read_checkpoint(f"file://{self.base}") == str(self.last_ms)


def error_line(proc: subprocess.CompletedProcess, code: int, *parts: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert proc.returncode == code and len(lines) == 1, (proc.returncode, proc.stderr[-3000:])
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    lk = Lake(tmp_path_factory.mktemp("bad-input"))
    lk.land([ev(k, k) for k in range(1, 13)])
    proc = lk.cli("bootstrap")
    assert proc.returncode == 0, proc.stderr[-3000:]
    yield lk
    if lk.server:
        lk.stop_registry()
    if lk.tmpfs:
        subprocess.run(["umount", "-l", str(lk.lake)], check=False)


def test_null_record_key_and_empty_files(lake):
    """Two failing runs, nothing written; the fixed files are picked up by a later run (test_job_killed)."""
    before = lake.state()
    bad = lake.land([ev(3, 200, "ok"), {**ev(None, 201), "name": "keyless"}], nullable_key_schema(), counted=False)
    proc = lake.once()
    error_line(proc, 3, bad.name, "has no record key: artist_id", "record 1")
    assert lake.state() == before and not lake.dangling()
    # fixed: the same file landed again with the key (a newer modification time)
    fixed = lake.land([ev(3, 200, "ok"), ev(4, 201, "keyed")], nullable_key_schema(), name=bad.name)
    assert fixed == bad
    zero = lake.landing / sample.file_name(TOPIC, 9000)
    zero.write_bytes(b"")
    lake.touch(zero)
    lake.land([])  # header-only: valid, adds nothing
    proc = lake.once()
    error_line(proc, 3, zero.name, "empty (0-byte) Avro file")
    assert lake.state() == before and not lake.dangling()
    zero.unlink()


def test_registry_refusals_and_a_disagreeing_schema(lake):
    before = lake.state()
    for status in (401, 403):  # the CLI reads the subject before Spark starts: no JVM
        Registry.answer = status
        logs = sorted((lake.tmp / ".hudi-cdc" / "logs").glob("*.log"))
        proc = lake.once(lake.reg)
        error_line(proc, 7, f"HTTP {status}", f"127.0.0.1:{lake.port}")
        # no JVM: nothing said about spark-submit and no new job log
        assert "spark-submit" not in proc.stdout + proc.stderr
        assert sorted((lake.tmp / ".hudi-cdc" / "logs").glob("*.log")) == logs
        assert lake.state() == before
    # the registry's schema says `name` is an int; the landed file carries a string
    registry = copy.deepcopy(SCHEMA)
    registry["fields"][1] = {"name": "name", "type": ["null", "int"], "default": None}
    Registry.answer = registry
    lake.land(lake.changes())
    proc = lake.once(lake.reg)
    # the first pending file is named (the fixed key file of the test before: all carry a string name)
    error_line(proc, 3, sample.file_name(TOPIC, 12), "disagrees with the registry's", "['null', 'string']")
    assert lake.state() == before and not lake.dangling()
    Registry.answer = 200  # fixed: the registry holds the files' schema


@pytest.mark.parametrize("when", ["after listing", "after the check"])
def test_file_vanishing_between_listing_and_reading(lake, spark, monkeypatch, when):
    """In this process on the shared SparkSession (a vanishing file needs a hook between the listing and
    the read): one line naming the file, nothing written; the next round lists again (the continuous
    test below catches up without it)."""
    from hudi_cdc.jobs.stream import events
    from hudi_cdc.jobs.stream import round as rnd
    from hudi_cdc.jobs.stream.argv import parse_argv
    from hudi_cdc.jobs.stream.props import target_properties

    before = lake.state()
    gone = lake.land(lake.changes(), counted=False)
    real_list, real_check = rnd.list_source_files, events.validate_avro_files

    def listed(*args, **kwargs):
        out = real_list(*args, **kwargs)
        if when == "after listing":
            gone.unlink()
        return out

    def checked(*args, **kwargs):
        out = real_check(*args, **kwargs)
        if when == "after the check":
            gone.unlink()  # Spark reads the files next
        return out

    monkeypatch.setattr(rnd, "list_source_files", listed)
    monkeypatch.setattr(events, "validate_avro_files", checked)
    props = lake.tmp / ".hudi-cdc" / "properties" / "artists_cow.properties"
    [target] = parse_argv(["--props", f"file://{props}", "--table-type", "COPY_ON_WRITE", "--target-base-path",
                           f"file://{lake.base}", "--target-table", "default_cow.artists",
                           "--source-ordering-field", "__lsn"])
    vanished = f"landing file .*{re.escape(gone.name)} vanished between listing and reading"
    with pytest.raises(rnd.JobInputError, match=vanished):
        rnd.run_round(spark, target, target_properties(target), log=lambda m: None)
    assert not gone.exists() and lake.state() == before and not lake.dangling()


def test_job_killed_then_disk_full(lake):
    """A JVM killed in the middle of the round (exit 4), then a full disk (exit 5): the completed
    timeline and rows as before each time (the continuous test below catches up: every file landed
    since the bootstrap, the fixed key file, the header-only file, the registry case's file, this one)."""
    before = lake.state()
    lake.land(lake.changes())
    err_file = lake.tmp / "killed.err"
    with open(err_file, "w") as err_fh:
        proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", str(lake.plain), "stream",
                                 "--table", "artists", "--once"], cwd=lake.tmp, env=lake.env, text=True,
                                stdout=subprocess.DEVNULL, stderr=err_fh, start_new_session=True)
        deadline = time.time() + 300
        while not lake.dangling():  # the round has read its files and its write instant is on the timeline
            assert proc.poll() is None and time.time() < deadline, err_file.read_text()[-3000:]
            time.sleep(0.05)
        jvms = [int(p) for p in Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()]
        assert jvms
        for pid in jvms:
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=120)
    err = err_file.read_text()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, "", err)
    error_line(done, 4, "killed by SIGKILL", "stream-artists")
    assert lake.state()[:2] == before[:2]

    if not lake.tmpfs:
        missing("cannot mount a tmpfs lake here (not root?): the full-disk case needs one")
    filler = lake.lake / "filler"
    with contextlib.suppress(OSError), open(filler, "wb") as fh:
        free = shutil.disk_usage(lake.lake).free
        fh.write(b"\0" * max(0, free - 8 * 1024))  # two pages left: the lock and an instant fit, data does not
    proc2 = lake.once()
    error_line(proc2, 5, "No space left on device", "artists")
    assert lake.state()[:2] == before[:2]
    filler.unlink()


def test_registry_down_in_continuous_mode(lake):
    """First the next run after every cause above was fixed: its first round applies every file landed
    since the bootstrap and rolls back what the killed job and the full disk left. Then the registry
    stops answering between rounds: the round fails before writing (exit 7 of the job), supervision
    restarts it with backoff until the registry is back, then it catches up; SIGTERM stops it cleanly."""
    Registry.answer = 200
    out = open(lake.tmp / "continuous.out", "w")
    proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", str(lake.reg), "stream",
                             "--table", "artists"], cwd=lake.tmp, env=lake.env, stdout=out,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        wait_for(lambda: read_checkpoint(f"file://{lake.base}") == str(lake.last_ms), proc, 240)
        lake.assert_caught_up()
        assert not lake.dangling()
        before = lake.state()
        lake.stop_registry()
        lake.land(lake.changes())
        log = lake.tmp / "continuous.out"
        wait_for(lambda: "restart 1" in log.read_text(), proc, 120)
        assert "could not be reached" in log.read_text()
        assert lake.state() == before and not lake.dangling()
        lake.start_registry(lake.port)
        wait_for(lambda: read_checkpoint(f"file://{lake.base}") == str(lake.last_ms), proc, 180)
        lake.assert_caught_up()
    finally:
        if lake.server is None:
            lake.start_registry(lake.port)
        os.killpg(proc.pid, signal.SIGTERM)
        code = proc.wait(180)
        out.close()
    assert code == 0, (lake.tmp / "continuous.out").read_text()[-3000:]
    assert not lake.dangling()


def wait_for(cond, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert proc.poll() is None, f"the stream exited ({proc.returncode})"
        with contextlib.suppress(Exception):  # a timeline being written
            if cond():
                return
        time.sleep(0.5)
    raise AssertionError(f"not reached in {timeout}s")
