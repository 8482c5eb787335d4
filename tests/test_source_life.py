"""The source database's life around the pipeline (issue 24), on a real PostgreSQL 15 and real
Debezium: TRUNCATE, heartbeats and the slot's retained WAL, tables without a usable replica identity.

Unit tests check the pieces without a database (properties, the streamer's truncate split rules);
tests marked ``postgres`` (and ``spark``) run the real chain: capture -> landed files -> bootstrap /
stream (Hudi 1.2 through spark-submit) -> verify (hudi-rs against the database).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc.config import load_pipeline, parse_pipeline

ROOT = Path(__file__).resolve().parents[1]


def _pipeline_dict(db: dict, tables: dict | None = None, types=("COPY_ON_WRITE", "MERGE_ON_READ")) -> dict:
    return {
        "pipeline": "life",
        "source": {"root": "landing", "database": {**db, "flush_size": 1000}},
        "lake": {"root": "lake", "hive_database": "life"},
        "spark": {"shuffle_partitions": 2},
        "tables": tables or {
            "items": {"topic": f"{db['name']}.public.items", "record_key": "id", "partition_field": "grp",
                      "table_types": list(types), "compaction_delta_commits": 2},
        },
    }


def _write_pipeline(base: Path, db: dict, **kw):
    base.mkdir(parents=True, exist_ok=True)
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict(db, **kw), sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _connect(db: dict):
    import psycopg

    return psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                           password=os.environ[db["password_env"]], autocommit=True)


def _sql(db: dict, *statements):
    with _connect(db) as conn:
        for st in statements:
            conn.execute(st)


def _cli(base: Path, *args, env: dict | None = None):
    e = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "hudi_cdc.cli", "-c", str(base / "hudi-cdc.yaml"), *args],
                          capture_output=True, text=True, env=e, cwd=base, timeout=900)


def _landed(pipeline, table):
    d = Path(pipeline.topic_dir(table)[len("file://"):])
    return sorted(d.glob("*.avro"))


def _records(paths):
    out = []
    for p in paths:
        with open(p, "rb") as fh:
            out.extend(fastavro.reader(fh))
    return out


# ------------------------------------------------------------------ unit
def test_capture_keeps_truncates_and_sends_heartbeats(tmp_path):
    from hudi_cdc.capture.capture import engine_properties
    from hudi_cdc.capture.connectors import source_connector
    from hudi_cdc.capture.unwrap import split_transforms

    db = {"name": "shop", "user": "u"}
    p = parse_pipeline(_pipeline_dict(db), "x.yaml", str(tmp_path))
    props = engine_properties(p, None)
    assert props["skipped.operations"] == "none"
    assert props["heartbeat.interval.ms"] == "10000" and "heartbeat.action.query" not in props
    engine, smt = split_transforms(props)
    assert not any(k.startswith("transforms") for k in engine)
    assert smt["type"] == "io.debezium.transforms.ExtractNewRecordState"
    assert smt["add.fields"] == "op,db,table,schema,lsn,source.ts_ms"
    q = "UPDATE public.hudi_cdc_heartbeat SET ts = now() WHERE id = 1"
    p2 = parse_pipeline(_pipeline_dict({**db, "heartbeat_interval_ms": 2500, "heartbeat_action_query": q}),
                        "x.yaml", str(tmp_path))
    props2 = engine_properties(p2, None)
    assert props2["heartbeat.interval.ms"] == "2500" and props2["heartbeat.action.query"] == q
    cfg = source_connector(p2)["config"]
    assert cfg["heartbeat.interval.ms"] == "2500" and cfg["heartbeat.action.query"] == q
    off = engine_properties(parse_pipeline(_pipeline_dict({**db, "heartbeat_interval_ms": 0}), "x.yaml",
                                           str(tmp_path)), None)
    assert "heartbeat.interval.ms" not in off


def test_truncate_floor_files_count_once_committed(tmp_path):
    from hudi_cdc.jobs.stream import truncate

    base = str(tmp_path / "t")
    assert truncate.read_floor(base, "100") is None
    truncate.write_floor(base, "100", ["__lsn"], [500])
    truncate.write_floor(base, "200", ["__lsn"], [900])
    assert truncate.read_floor(base, None) is None
    assert truncate.read_floor(base, "99") is None
    assert truncate.read_floor(base, "150") == [500]
    assert truncate.read_floor(base, "200") == [900]


# ------------------------------------------------------------------ real PostgreSQL + Debezium + Hudi
ITEMS_DDL = "CREATE TABLE public.items (id int PRIMARY KEY, name text NOT NULL, grp text, qty bigint)"


@pytest.mark.postgres
@pytest.mark.spark
def test_truncate_empties_the_lake_as_of_its_lsn(tmp_path, pg_database):
    """500 rows, bootstrap; then changes, TRUNCATE, 10 new rows and a change after it: the lake holds
    exactly the database's 10 rows (CoW and MoR, verify through hudi-rs), the round is one
    insert_overwrite_table commit with the truncate's LSN in its metadata. A redelivered file from
    before the truncate changes nothing; a later round applies normally."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.capture.verify import verify
    from hudi_cdc.reader import read_table

    db = pg_database("life_truncate")
    _sql(db, ITEMS_DDL, "INSERT INTO items SELECT g, 'n' || g, 'g' || (g % 5), g FROM generate_series(1, 500) g")
    p = _write_pipeline(tmp_path, db)
    log: list[str] = []
    capture_once(p, progress=log.append, timeout_seconds=300)
    pipe.bootstrap(p, progress=log.append)
    for table, tt in p.targets():
        assert verify(p, table, tt).equal

    _sql(db, "UPDATE items SET qty = -1 WHERE id <= 20",  # before the truncate: gone with it
         "DELETE FROM items WHERE id = 30",
         "TRUNCATE items",
         "INSERT INTO items SELECT g, 'new ' || g, 'g' || (g % 3), g * 10 FROM generate_series(1, 10) g",
         "UPDATE items SET name = 'after', grp = 'moved' WHERE id = 3",
         "DELETE FROM items WHERE id = 4",
         "INSERT INTO items VALUES (4, 'back', NULL, 4)")
    pre_truncate = _landed(p, "items")
    got = capture_once(p, progress=log.append, timeout_seconds=300)
    new = _records(_landed(p, "items")[len(pre_truncate):])
    assert got.events == len(new)
    trunc = [r for r in new if r["__op"] == "t"]
    assert len(trunc) == 1 and trunc[0]["__deleted"] == "true" and trunc[0]["__table"] == "items"
    before = [r for r in new if r["__lsn"] < trunc[0]["__lsn"]]
    assert len(before) == 21 and all(r["__op"] in ("u", "d") for r in before)

    for table in p.tables:
        pipe.stream(p, table, once=True, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
        assert r.db_rows == 10
        base = p.base_path(table, tt)
        rows = read_table(base)
        assert sorted((x["id"], x["name"]) for x in rows) == sorted(
            [(i, f"new {i}") for i in range(1, 11) if i not in (3, 4)] + [(3, "after"), (4, "back")])
        meta = _last_commit_meta(base)
        assert meta["operationType"] == "INSERT_OVERWRITE_TABLE"
        assert meta["extraMetadata"]["streamer.hudi_cdc.truncated_at"] == str(trunc[0]["__lsn"])

    # a file from before the truncate delivered again (at least once): nothing comes back
    again = Path(p.topic_dir("items")[len("file://"):]) / "items+0+9999990000.avro"
    shutil.copy(pre_truncate[-1], again)
    os.utime(again, None)
    for table in p.tables:
        pipe.stream(p, table, once=True, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
    again.unlink()

    # and life goes on: an ordinary round on the overwritten table (located path, CoW and MoR)
    _sql(db, "UPDATE items SET qty = 7 WHERE id = 5", "DELETE FROM items WHERE id = 6",
         "INSERT INTO items VALUES (600, 'later', 'g1', 1)")
    capture_once(p, progress=log.append, timeout_seconds=300)
    for table in p.tables:
        pipe.stream(p, table, once=True, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
        assert r.db_rows == 10


def _last_commit_meta(base: str) -> dict:
    """The newest completed write's action and commit metadata, read by hudi-rs (inspect/)."""
    from hudi_cdc.inspect.metadata import commit_metadata
    from hudi_cdc.inspect.table import open_table
    from hudi_cdc.inspect.timeline import completed_writes, read_timeline

    table = open_table(base)
    last = completed_writes(read_timeline(table))[-1]
    return {"action": last.action, **commit_metadata(table, [last])[0]}
