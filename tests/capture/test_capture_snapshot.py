"""`capture snapshot --table T [--replace]`: Debezium's incremental snapshot on the pipeline's one slot
while a continuous capture streams (capture/signals.py), on a real PostgreSQL 15 with Debezium's
embedded engine and the lake written by Spark (marks postgres, spark)."""

from __future__ import annotations

import io
import json
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import fastavro
import pytest
import yaml

from tests.capture.test_capture import _db_state, _files, _landed_state, _records, _sql
from tests.cli import cli_env, run_cli


def _pipeline(db: dict) -> dict:
    return {
        "pipeline": "incsnap",
        "source": {"root": "landing", "database": {**db, "flush_size": 100, "snapshot_chunk_size": 50}},
        "lake": {"root": "lake", "hive_database": "incsnap"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"a": {"topic": "incsnap.public.a", "record_key": "id", "partition_field": "grp",
                         "table_types": ["COPY_ON_WRITE"]}},
    }


B_SETTINGS = {"topic": "incsnap.public.b", "record_key": "id", "partition_field": "grp",
              "table_types": ["MERGE_ON_READ"]}


class _Capture:
    """`hudi-cdc capture` (continuous) as its own process."""

    def __init__(self, base):
        self.proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(base / "hudi-cdc.yaml"),
                                      "capture", "--rotate-seconds", "1"], cwd=base, env=cli_env(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(self, what, check, seconds=300):
        deadline = time.monotonic() + seconds
        while not check():
            assert self.proc.poll() is None, f"capture exited while waiting for {what}: {self.proc.communicate()}"
            assert time.monotonic() < deadline, f"no {what} within {seconds} s"
            time.sleep(0.3)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            _out, err = self.proc.communicate(timeout=180)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        assert self.proc.returncode == 0, err
        return err


def _status(base, table):
    out = run_cli("-c", str(base / "hudi-cdc.yaml"), "capture", "snapshot", "--status", "-o", "json", cwd=base,
                  check=True)
    return next((r for r in json.loads(out.stdout) if r["table"] == table), {})


def _workload(db: dict, stop: threading.Event, done: list) -> None:
    """UPDATEs, DELETEs and INSERTs on b while its snapshot runs; some transactions stay open across
    chunks (the row written early, committed late) to meet the chunk windows."""
    rnd = random.Random(24)
    new_id = 5000
    while not stop.is_set():
        k = rnd.randint(1, 1500)
        op = rnd.random()
        if op < 0.4:
            _sql(db, f"UPDATE b SET qty = qty + 1000, name = name || '!' WHERE id = {k}")
        elif op < 0.6:
            _sql(db, f"DELETE FROM b WHERE id = {k}")
        elif op < 0.8:
            new_id += 1
            _sql(db, f"INSERT INTO b VALUES ({new_id}, 'g{new_id % 4}', 'new {new_id}', 1, 2.50)")
        else:
            _sql(db, f"UPDATE b SET name = 'slow', price = price + 1 WHERE id = {k}", "SELECT pg_sleep(0.2)")
        done.append(k)


def _inject(pipeline, table, events):
    """Land a file of made-up events in the table's topic (the schema of its first file): a lake copy
    gone wrong (a lost delete, a wrong value, a row the database never had)."""
    files = _files(pipeline, table)
    with open(files[0], "rb") as fh:
        schema = fastavro.reader(fh).writer_schema
    offset = sum(1 for _ in _records(files))
    buf = io.BytesIO()
    fastavro.writer(buf, schema, events)
    name = f"incsnap.public.{table}+0+{offset:010d}.avro"
    (files[0].parent / name).write_bytes(buf.getvalue())
    # capture lands whole transactions and names them in a cut (capture/txn.py): so must this file
    from hudi_cdc.jobs.stream import cuts
    folder = cuts.cuts_dir(str(files[0].parent.parent.parent))
    newest = next(cuts.newest_first(folder))
    cut = dict(newest, cut=newest["cut"] + 1, topics={**newest["topics"], files[0].parent.parent.name: name})
    (Path(folder) / cuts.cut_name(cut["cut"])).write_text(json.dumps(cut))


def test_snapshot_properties_requests_and_refusals(tmp_path):
    """No database: the connector settings, the status of requests, and the one-line refusals."""
    from types import SimpleNamespace

    from hudi_cdc.capture import snapshot_requests
    from hudi_cdc.capture.capture import engine_properties
    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.errors import ConfigError

    d = _pipeline({"name": "m", "user": "u", "slot": "s1"})
    p = parse_pipeline(d, str(tmp_path / "x.yaml"), str(tmp_path))
    props = engine_properties(p, None)
    assert props["signal.data.collection"] == "public.s1_signal" and props["signal.enabled.channels"] == "source"
    assert props["incremental.snapshot.chunk.size"] == "50"
    assert props["notification.sink.topic.name"] == "incsnap.hudi_cdc_notifications"
    assert snapshot_requests.snapshot_status(p) == []
    d = snapshot_requests.requests_dir(p)
    snapshot_requests.write_json(d / "a.json", {"table": "a", "replace": True, "id": "x"})
    snapshot_requests.write_json(d / "state.json", {"b": {"qualified": "public.b", "floor": 41, "state": "completed",
                                                          "rows": 7, "replace": False}})
    assert snapshot_requests.snapshot_status(p) == [
        {"table": "a", "state": "requested", "rows": 0, "replace": True, "floor_lsn": None},
        {"table": "b", "state": "completed", "rows": 7, "replace": False, "floor_lsn": 41}]
    with pytest.raises(ConfigError, match="unknown table 'nope'"):
        snapshot_requests.request_snapshot(p, "nope", progress=lambda m: None)
    no = SimpleNamespace(signals=None)  # a source kind without incremental snapshots
    with pytest.raises(ConfigError, match="postgresql sources take no incremental snapshots; a is captured from"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(snapshot_requests.sources, "for_pipeline", lambda _p: no)
            snapshot_requests.request_snapshot(p, "a", progress=lambda m: None)


@pytest.mark.postgres
@pytest.mark.spark
def test_incremental_snapshot_adds_and_retakes_tables_on_one_slot(tmp_path, postgres, pg_database, inprocess_jobs):
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.pipeline.onboard import add_to_file
    from hudi_cdc.sources.verify import verify

    db = pg_database("cap_incsnap")
    _sql(db, "CREATE TABLE a (id int PRIMARY KEY, grp text NOT NULL, v text, n int)",
         "INSERT INTO a SELECT g, 'g' || (g % 3), 'a' || g, g FROM generate_series(1, 200) g",
         "CREATE TABLE b (id int PRIMARY KEY, grp text NOT NULL, name text, qty int, price numeric(10,2))",
         "INSERT INTO b SELECT g, 'g' || (g % 4), 'b' || g, g, g * 1.5 FROM generate_series(1, 1500) g")
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(_pipeline(db), sort_keys=False))
    p = load_pipeline(cfg)
    slots = "SELECT slot_name FROM pg_replication_slots WHERE database = current_database()"

    # capture streams a; b joins the pipeline and is snapshotted on the same slot under a workload
    cap = _Capture(tmp_path)
    stop, done = threading.Event(), []
    worker = None
    try:
        cap.wait_for("a's snapshot", lambda: len(_records(_files(p, "a"))) >= 200)
        p = add_to_file(cfg, "b", B_SETTINGS)
        out = run_cli("-c", str(cfg), "capture", "snapshot", "--table", "b", "-o", "json", cwd=tmp_path, check=True)
        assert json.loads(out.stdout)["capture"] == "running"
        assert "added public.b to publication" in out.stderr
        worker = threading.Thread(target=_workload, args=(db, stop, done), daemon=True)
        worker.start()
        cap.wait_for("b's snapshot", lambda: _status(tmp_path, "b").get("state") == "completed", 600)
        stop.set()
        worker.join(60)
        _sql(db, "UPDATE b SET name = 'last' WHERE id = (SELECT min(id) FROM b)")
        cap.wait_for("b's changes", lambda: _landed_state(p, "b", "id") == _db_state(db, "b", "id"))
        assert [r[0] for r in _sql_rows(db, slots)] == [p.slot_name]  # no second slot
    finally:
        stop.set()
        err = cap.stop()
    assert "restarting the engine with the file's tables" in err, err
    assert len(done) > 20, "too few concurrent changes during the snapshot"
    landed = _records(_files(p, "b"))
    reads = [r for r in landed if r["__op"] == "r"]
    floor = _status(tmp_path, "b")["floor_lsn"]
    assert reads and {r["__lsn"] for r in reads} == {floor}  # every snapshot row ordered at the floor

    # a's landed events go wrong before the lake is written (a wrong value, a row the database never
    # had, a lost row); the lake (one bootstrap: a, and b as add-table does) has them, b equals the database
    a_rows = [r for r in _records(_files(p, "a")) if r["__op"] == "r"]
    top = max(r["__lsn"] for r in _records(_files(p, "a")))
    wrong = dict(a_rows[4], v="corrupt", __op="u", __lsn=top + 8)
    phantom = dict(a_rows[0], id=99999, __op="c", __lsn=top + 16)
    lost = dict(a_rows[6], __op="d", __deleted="true", __lsn=top + 24)
    _inject(p, "a", [wrong, phantom, lost])
    log: list[str] = []
    pipe.bootstrap(p, progress=log.append)
    r = verify(p, "b", "MERGE_ON_READ")
    assert r.equal and r.db_rows > 1000, r.summary()
    r = verify(p, "a", "COPY_ON_WRITE")
    assert not r.equal and r.different == 1 and r.extra == 1 and r.missing == 1, r.summary()

    # `capture snapshot --replace` re-takes a while capture streams
    cap = _Capture(tmp_path)
    try:
        out = run_cli("-c", str(cfg), "capture", "snapshot", "--table", "a", "--replace", cwd=tmp_path, check=True)
        _sql(db, "UPDATE a SET v = 'during' WHERE id = 150", "DELETE FROM a WHERE id = 151")
        cap.wait_for("a's re-take", lambda: _status(tmp_path, "a").get("state") == "completed", 600)
        _sql(db, "UPDATE a SET v = 'after' WHERE id = 152")
        cap.wait_for("a's last change", lambda: any(r.get("v") == "after" for r in _records(_files(p, "a"))))
        assert [r[0] for r in _sql_rows(db, slots)] == [p.slot_name]
    finally:
        err = cap.stop()
    assert "landed a truncate of a" in err, err
    pipe.stream(p, "a", once=True, progress=log.append)
    r = verify(p, "a", "COPY_ON_WRITE")
    assert r.equal and r.db_rows == 199, r.summary()
    assert verify(p, "b", "MERGE_ON_READ").equal


def _sql_rows(db: dict, query: str) -> list:
    import os

    import psycopg

    with psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                         password=os.environ[db["password_env"]]) as conn:
        return conn.execute(query).fetchall()
