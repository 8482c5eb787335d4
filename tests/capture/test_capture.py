"""Change capture from a real PostgreSQL with Debezium's embedded engine, and verify against it.

Unit tests (no database): the pipeline file's source.database block, the engine's properties,
verify's value normalisation. Tests marked ``postgres`` start Debian's PostgreSQL 15
(tests/plugins/postgres.py) and the Debezium engine in this process (pydbzengine, Java 17);
those marked ``spark`` also run bootstrap/stream through the local runner, its jobs on the shared SparkSession
(tests/plugins/inprocess_jobs.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.config import load_pipeline, parse_pipeline
from hudi_cdc.demo import moma_db
from hudi_cdc.errors import ConfigError
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
ARTISTS_DDL = moma_db.ddl("artists")  # the sample's artists (as `hudi-cdc demo --from-postgres` loads them)
ARTWORKS_DDL = ("CREATE TABLE public.artworks (artwork_id integer PRIMARY KEY, title text, artist_id integer NOT NULL, "
                "classification text, acquired date, price numeric(12,2), updated_at timestamp, "
                "seen_at timestamptz, weight real, on_view boolean)")


def _pipeline_dict(db: dict, types=("COPY_ON_WRITE", "MERGE_ON_READ"), flush_size=100) -> dict:
    return {
        "pipeline": "cap",
        "source": {"root": "landing", "database": {**db, "flush_size": flush_size}},
        "lake": {"root": "lake", "hive_database": "cap"},
        "spark": {"shuffle_partitions": 2},
        "tables": {
            "artists": {"topic": "moma.public.artists", "record_key": "artist_id", "partition_field": "nationality",
                        "table_types": list(types), "compaction_delta_commits": 2},
            "artworks": {"topic": "moma.public.artworks", "record_key": "artwork_id",
                         "partition_field": "classification", "table_types": list(types)},
        },
    }


# ------------------------------------------------------------------ unit: config, properties, values
def test_database_block_defaults_and_errors(tmp_path):
    db = {"name": "moma", "user": "u", "password_env": "PGPASSWORD"}
    p = parse_pipeline(_pipeline_dict(db), "x.yaml", str(tmp_path))
    assert p.source.database.port == 5432 and p.source.database.host == "127.0.0.1"
    assert p.slot_name == "hudi_cdc_cap" and p.publication_name == "hudi_cdc_cap"
    with pytest.raises(ConfigError, match=r"source\.database\.user: field required \(x\.yaml\)"):
        parse_pipeline(_pipeline_dict({"name": "moma"}), "x.yaml", str(tmp_path))
    with pytest.raises(ConfigError, match=r"source\.database\.password_env: must name an environment variable"):
        parse_pipeline(_pipeline_dict({"name": "m", "user": "u", "password_env": "s3cr3t pass"}), "x.yaml")
    with pytest.raises(ConfigError, match=r"source\.database\.slot: must be lower-case"):
        parse_pipeline(_pipeline_dict({"name": "m", "user": "u", "slot": "Bad-Slot"}), "x.yaml")
    with pytest.raises(ConfigError, match=r"source\.database\.passwd: unknown key"):
        parse_pipeline(_pipeline_dict({"name": "m", "user": "u", "passwd": "x"}), "x.yaml")


def test_engine_properties_follow_the_pipeline(tmp_path, monkeypatch):
    from hudi_cdc.capture.capture import engine_properties
    from hudi_cdc.sources import tables as src

    p = parse_pipeline(_pipeline_dict({"name": "moma", "user": "u", "port": 6543, "password_env": "T_PW",
                                       "slot": "s1"}), "x.yaml", str(tmp_path))
    props = engine_properties(p, None)
    assert "database.password" not in props
    assert props["topic.prefix"] == "moma" and props["slot.name"] == "s1" and props["plugin.name"] == "pgoutput"
    assert props["table.include.list"] == r"public\.artists,public\.artworks"
    assert props["transforms.unwrap.delete.tombstone.handling.mode"] == "rewrite"
    assert props["transforms.unwrap.add.fields"] == "op,db,table,schema,lsn,source.ts_ms,sequence"
    assert props["publication.autocreate.mode"] == "disabled" and props["offset.flush.interval.ms"] == "0"
    assert props["offset.storage.file.filename"].startswith(str(tmp_path / ".hudi-cdc" / "capture"))
    monkeypatch.delenv("T_PW", raising=False)
    with pytest.raises(ConfigError, match="environment variable T_PW is not set"):
        src.password(p)
    d = _pipeline_dict({"name": "m", "user": "u"})
    d["tables"]["artworks"]["topic"] = "other.public.artworks"
    with pytest.raises(ConfigError, match="same prefix"):
        src.topic_prefix(parse_pipeline(d, "x.yaml"))


def test_verify_compares_typed_values():
    """verify's canonical forms (sources/typed_values.py): the database's text and the lake's typed
    (arrow) values meet; a lake column still in a Debezium encoding never equals."""
    import pyarrow as pa

    from hudi_cdc.sources import typed_values as tv

    assert tv.kind_of("timestamp(3) without time zone") == "timestamp"
    assert tv.kind_of("timestamp with time zone[]") == "array:timestamptz"
    assert tv.db_value("date", "2021-12-25") == tv.lake_value("date", pa.date32(), 18986)
    assert tv.lake_value("date", pa.int32(), 18986) != tv.db_value("date", "2021-12-25")  # raw int days
    assert tv.db_value("timestamp", "1970-01-01 00:00:01.000005") == tv.lake_value("timestamp", pa.timestamp("us"),
                                                                                    1_000_005)
    assert tv.db_value("timestamptz", "2020-01-02 03:04:05.5+00") == tv.db_value("timestamptz",
                                                                                 "2020-01-02 05:04:05.5+02")
    assert tv.lake_value("timestamptz", pa.string(), "2020-01-02T03:04:05.500000Z") != tv.db_value(
        "timestamptz", "2020-01-02 03:04:05.5+00")  # Debezium's string is no typed timestamp
    assert tv.db_value("decimal", "12.30") == tv.lake_value("decimal", pa.decimal128(38, 18), Decimal("12.3"))
    assert tv.db_value("decimal", "12.35") != tv.lake_value("decimal", pa.decimal128(4, 1), Decimal("12.4"))
    assert tv.db_value("decimal", "NaN") != tv.lake_value("decimal", pa.decimal128(38, 18), None)
    assert tv.db_value("float4", 1.1) == tv.lake_value("float4", pa.float32(), 1.100000023841858)
    assert tv.db_value("date", "0044-03-15 BC") == ("date", -735160) and tv.db_value("date", "infinity")[1] == 2932896
    assert tv.db_value("interval", "P1Y2M3DT4H5M6.789S") == tv.lake_value("interval", pa.string(),
                                                                           "P1Y2M3DT4H5M6.789S")
    assert tv.interval_parts("P-1M-2D") == tv.interval_parts("P0Y-1M-2DT0H0M0S") == (-1, -2, 0)
    assert tv.db_value("time", "13:14:15.5") == tv.lake_value("time", pa.string(), "13:14:15.500000")
    assert tv.db_value("timetz", "13:14:15.5+02") == tv.lake_value("timetz", pa.string(), "11:14:15.5Z")
    assert tv.db_value("json", '{"b": [1, 2], "a": 1.10}') == tv.lake_value("json", pa.string(), '{"a":1.10,"b":[1,2]}')
    arr = pa.list_(pa.date32())
    assert tv.db_value("array:date", ["2024-01-01", None]) == tv.lake_value("array:date", arr, [19723, None])


def test_an_interrupt_while_the_engine_closes_is_a_stop_not_a_landing_failure():
    """Closing the engine (SIGTERM, Ctrl-C, a --once run's end) interrupts a batch in flight: Java's
    InterruptedException, or one it caused, then ends the batch without marking its offsets, and is not the
    run's error (CI saw `capture failed while landing files: java.lang.InterruptedException`, exit 11, after a
    SIGTERM); before the close it still is one."""
    from types import SimpleNamespace

    from hudi_cdc.capture.consumer import Consumer, interrupted

    class Java(Exception):  # what JPype raises: the Java class and cause behind it
        def __init__(self, name: str, cause=None):
            super().__init__(name)
            self.name, self.cause = name, cause

        def getClass(self):  # noqa: N802 - Java's names
            return SimpleNamespace(getName=lambda: self.name)

        def getCause(self):  # noqa: N802
            return self.cause

    assert interrupted(Java("java.lang.InterruptedException"))
    assert interrupted(Java("org.apache.kafka.connect.errors.ConnectException", Java("java.lang.InterruptedException")))
    assert not interrupted(Java("java.io.IOException")) and not interrupted(ValueError("x"))

    class Batch:
        def __iter__(self):
            raise Java("java.lang.InterruptedException")

    for stopping in (False, True):
        consumer = Consumer(SimpleNamespace(offsets={}), source=None)
        consumer.stopping = stopping
        with pytest.raises(Java):
            consumer.handle_batch(Batch(), committer=None)
        assert consumer.done.is_set() and (consumer.error is None) == stopping



def test_a_stop_while_the_engine_starts_waits_for_it_to_start():
    """Debezium's engine refuses close() while its tasks start (the text below is AsyncEmbeddedEngine 3.6's);
    a SIGTERM in that window (seconds to minutes under load) once left the engine running and the capture
    hanging at exit: the close is asked again until the engine takes it; a refusal for another reason (it
    stopped by itself) ends the asking; an engine that never finishes starting is a one-line error."""
    import threading

    from hudi_cdc.capture.capture import close_engine
    from hudi_cdc.errors import SourceError

    starting = ("java.lang.IllegalStateException: Cannot stop engine while tasks are starting, this may lead to "
                "leaked resource. Wait for the tasks to be fully started.")

    class Engine:
        def __init__(self, refusals: list[str]):
            self.refusals, self.closed = list(refusals), 0

        def close(self):
            if self.refusals:
                raise RuntimeError(self.refusals.pop(0))
            self.closed += 1

    alive = threading.Thread(target=threading.Event().wait, args=(5,), daemon=True)
    alive.start()
    engine = Engine([starting] * 3)
    close_engine(engine, alive, pause=0.01)
    assert engine.closed == 1 and not engine.refusals
    engine = Engine(["java.lang.IllegalStateException: Engine has been already shut down.", starting])
    close_engine(engine, alive, pause=0.01)
    assert engine.closed == 0 and engine.refusals == [starting]
    with pytest.raises(SourceError, match="did not finish starting within 0 s"):
        close_engine(Engine([starting] * 1000), alive, patience=0.05, pause=0.01)

def test_verify_names_rejected_values_apart_from_differences():
    """A value its lake type cannot hold (NULL, the exact value in __rejects) is no difference when the
    exact value is the database's: counted and named as rejected; anything else still differs."""
    from types import SimpleNamespace

    import pyarrow as pa

    from hudi_cdc.sources import typed_values as tv
    from hudi_cdc.sources.comparison import Column, VerifyResult, _row_digest, compare

    cols = [Column("ratio", "numeric", "decimal"), Column("d", "date", "date")]
    kinds = {"id": "plain", "ratio": "decimal", "d": "date"}
    db = {1: ("0.00023263811867095176", "2024-01-01"), 2: ("12345678901234567890.123", "2024-01-01"),
          3: ("0.5", "2024-01-01"), 4: ("0.00000000000000000001", "2024-01-02")}
    digests = {(k,): _row_digest([tv.db_value("decimal", r), tv.db_value("date", d)]) for k, (r, d) in db.items()}
    why = "does not fit decimal(38,18) exactly"
    rejects = [json.dumps({"ratio": {"value": "0.00023263811867095176", "reason": why}}), None,
               json.dumps({"ratio": {"value": "0.4", "reason": why}}),  # not the database's value
               json.dumps({"ratio": {"value": "0.00000000000000000001", "reason": why}})]
    lake = pa.table({"id": [1, 2, 3, 4], "ratio": pa.array([None, Decimal("12345678901234567890.123"), None, None],
                                                           pa.decimal128(38, 18)),
                     "d": pa.array([19723, 19723, 19723, 19723], pa.date32()), "__lsn": [10, 11, 12, 13],
                     "__rejects": rejects})
    t = SimpleNamespace(record_keys=["id"], deletes="hard", delete_field="__deleted")
    r = compare(lake, t, cols, kinds, digests, VerifyResult("t", "COPY_ON_WRITE", False, len(db), 0))
    assert r.rejected == 2 and r.rejected_columns == {"ratio": 2}
    assert r.rejected_values[0] == {"key": "1", "column": "ratio", "value": "0.00023263811867095176", "reason": why,
                                    "__lsn": 10}
    assert r.different == 2 and r.different_columns == {"3": ["ratio"], "4": ["d"]}  # 4: d differs, ratio rejected
    text = r.summary()
    assert "2 row(s) hold a value their lake type cannot hold" in text and "key 1 ratio = 0.000232" in text
    ok = pa.table({"id": [1], "ratio": pa.array([None], pa.decimal128(38, 18)), "d": pa.array([19723], pa.date32()),
                   "__rejects": rejects[:1]})
    r = compare(ok, t, cols, kinds, {(1,): digests[(1,)]}, VerifyResult("t", "COPY_ON_WRITE", False, 1, 0))
    assert r.equal and r.rejected == 1 and "equal (1 rows" in r.summary() and "in __rejects" in r.summary()
    # a value the round could not know (an unchanged TOAST value with no earlier one): NULL, named in
    # __rejects without a value; still a difference, and verify says why
    unknown = json.dumps({"d": {"reason": "unchanged TOAST value not known: no earlier value"}})
    lost = pa.table({"id": [1], "ratio": pa.array([Decimal("0.5")], pa.decimal128(38, 18)),
                     "d": pa.array([None], pa.date32()), "__rejects": [unknown]})
    r = compare(lost, t, cols, kinds, {(1,): digests[(3,)]}, VerifyResult("t", "COPY_ON_WRITE", False, 1, 0))
    assert not r.equal and r.different_columns == {"1": ["d"]} and r.unknown_values[0]["column"] == "d"
    assert "could not know (NULL there, named in __rejects): key 1 d (unchanged TOAST value not known" in r.summary()


# ------------------------------------------------------------------ real PostgreSQL + Debezium
def _sql(db: dict, *statements, params=None):
    import psycopg

    with psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                         password=os.environ[db["password_env"]]) as conn:
        with conn.transaction():
            for st in statements:
                conn.execute(st)
        return conn


def _load_moma(db: dict, artists: int = 300, artworks: int = 200) -> None:
    """The sample's first artists (hudi_cdc.demo.moma_db, shared with the demo) and artworks of
    every type verify normalises (price, dates, timestamps, real, boolean)."""
    import psycopg

    with psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                         password=os.environ[db["password_env"]]) as conn:
        moma_db.load_table(conn, "artists", limit=artists)
        conn.execute(ARTWORKS_DDL)
        ids = [r["artist_id"] for r in sample.snapshot_rows("artists")[:artists]]
        rows = [[i, f"work {i}", ids[i % len(ids)], ["Painting", "Print", "Photograph"][i % 3],
                 date(1990, 1, 1 + i % 28), Decimal(f"{i}.{i % 100:02d}"), datetime(2021, 12, 25, 10, 0, 0, i),
                 datetime(2021, 12, 25, 10, i % 60, 0, tzinfo=timezone.utc), 1.1 * i, i % 2 == 0]
                for i in range(1, artworks + 1)]
        moma_db.copy_rows(conn, "artworks", ["artwork_id", "title", "artist_id", "classification", "acquired", "price",
                                             "updated_at", "seen_at", "weight", "on_view"], rows)


def _write_pipeline(base: Path, db: dict, **kw):
    base.mkdir(parents=True, exist_ok=True)
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict(db, **kw), sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _files(pipeline, table):
    d = Path(pipeline.topic_dir(table)[len("file://"):])
    return sorted(d.glob("*.avro"))


def _records(paths):
    out = []
    for p in paths:
        with open(p, "rb") as fh:
            out.extend(fastavro.reader(fh))
    return out


@pytest.mark.postgres
def test_capture_lands_s3_sink_files_and_resumes(tmp_path, pg_database):
    """Snapshot into the S3 sink's layout with the real sink files' schema; a restart resumes
    without a new snapshot; offsets and modification times continue."""
    from hudi_cdc.capture.capture import capture_once

    db = pg_database("cap_files")
    _load_moma(db, artists=250, artworks=10)
    p = _write_pipeline(tmp_path, db, flush_size=100)
    notes = []
    first = capture_once(p, progress=notes.append, timeout_seconds=300)
    assert first.snapshot and first.events == 260
    files = _files(p, "artists")
    assert [f.name for f in files] == [f"moma.public.artists+0+{o:010d}.avro" for o in (0, 100, 200)]
    with open(files[0], "rb") as fh:
        schema = fastavro.reader(fh).writer_schema
    want = sample.schema("artists")
    assert schema["name"] == "moma.public.artists.Value"  # fastavro gives the full name
    assert schema["connect.name"] == want["connect.name"]
    # the very field types of the real S3-sink files (Debezium 3 puts __deleted before __op), and
    # source.sequence (add.fields: [last commit LSN before the change's transaction, its LSN])
    got = {f["name"]: f["type"] for f in schema["fields"]}
    assert got.pop("__sequence") == ["null", "string"]
    assert got == {f["name"]: f["type"] for f in want["fields"]}
    recs = _records(files)
    assert {r["__op"] for r in recs} == {"r"} and {r["__deleted"] for r in recs} == {"false"}
    assert len({r["artist_id"] for r in recs}) == 250 and all(r["__lsn"] and r["__source_ts_ms"] for r in recs)

    _sql(db, "UPDATE artists SET name = 'renamed' WHERE artist_id = (SELECT min(artist_id) FROM artists)")
    _sql(db, "DELETE FROM artists WHERE artist_id = (SELECT max(artist_id) FROM artists)")  # a second transaction
    second = capture_once(p, progress=notes.append, timeout_seconds=300)
    assert not second.snapshot and second.events == 2
    files2 = _files(p, "artists")
    assert files2[-1].name == "moma.public.artists+0+0000000250.avro"
    assert files2[-1].stat().st_mtime_ns > max(f.stat().st_mtime_ns for f in files)
    new = _records(files2[-1:])
    assert [(r["__op"], r["__deleted"]) for r in new] == [("u", "false"), ("d", "true")]
    assert new[1]["name"] is None  # key-only delete (REPLICA IDENTITY DEFAULT)
    assert new[0]["__lsn"] < new[1]["__lsn"]
    # the delete's transaction follows the update's: the last commit before it is the update's commit
    seq = [json.loads(r["__sequence"]) for r in new]
    assert [s[1] for s in seq] == [str(r["__lsn"]) for r in new] and int(seq[1][0]) > new[0]["__lsn"]
    assert seq[0][0] is None or int(seq[0][0]) < new[0]["__lsn"]

    third = capture_once(p, progress=notes.append, timeout_seconds=300)
    assert third.events == 0 and third.files == 0 and len(_files(p, "artists")) == 4
    assert not list(Path(p.topic_dir("artists")[len("file://"):]).glob(".*"))  # no temp files left


@pytest.mark.postgres
def test_capture_errors_are_one_line(tmp_path, postgres, pg_database):
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.errors import SourceError

    db = pg_database("cap_errors")
    _sql(db, ARTISTS_DDL, ARTWORKS_DDL, "CREATE PUBLICATION only_artists FOR TABLE artists")
    p = parse_pipeline(_pipeline_dict({**db, "publication": "only_artists"}), "x.yaml", str(tmp_path))
    with pytest.raises(SourceError, match=r"publication only_artists does not publish public\.artworks: "
                                          r"ALTER PUBLICATION only_artists ADD TABLE public\.artworks;"):
        capture_once(p, progress=lambda m: None)
    import psycopg

    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        conn.execute("SELECT pg_create_logical_replication_slot('hudi_cdc_elsewhere', 'pgoutput')")
    try:
        other = parse_pipeline(_pipeline_dict({**db, "slot": "hudi_cdc_elsewhere"}), "x.yaml", str(tmp_path))
        with pytest.raises(SourceError, match="replication slot hudi_cdc_elsewhere belongs to database postgres, "
                                              "not cap_errors"):
            capture_once(other, progress=lambda m: None)
    finally:
        with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
            conn.execute("SELECT pg_drop_replication_slot('hudi_cdc_elsewhere')")
    down = parse_pipeline(_pipeline_dict({**db, "port": 1}), "x.yaml", str(tmp_path))
    with pytest.raises(SourceError, match=r"cannot connect to hudi_cdc@127\.0\.0\.1:1/cap_errors"):
        capture_once(down, progress=lambda m: None)


def _cli(base: Path, *args):
    return run_cli("-c", str(base / "hudi-cdc.yaml"), *args, cwd=base, timeout=900)


@pytest.mark.postgres
@pytest.mark.spark
def test_database_to_lake_chain_verifies(tmp_path, pg_database, inprocess_jobs):
    """capture --once -> bootstrap -> a burst of SQL -> capture --once -> stream --once -> verify,
    for CoW and MoR; then a change the lake has not seen makes verify fail and name the key."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.sources.verify import verify

    db = pg_database("cap_chain")
    _load_moma(db)
    p = _write_pipeline(tmp_path, db, flush_size=100)
    log = []
    capture_once(p, progress=log.append, timeout_seconds=300)
    pipe.bootstrap(p, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
        assert r.db_rows == (300 if table == "artists" else 200)

    ids = [r["artist_id"] for r in sample.snapshot_rows("artists")[:300]]
    a1, a2, a3, a4, a5, a6, a7 = ids[:7]
    _sql(db, f"UPDATE artists SET name = 'Updated Name', death_year = 2001 WHERE artist_id = {a1}")
    _sql(db, f"DELETE FROM artists WHERE artist_id = {a2}")  # key-only delete event
    _sql(db, f"UPDATE artists SET nationality = 'Moved_Nationality' WHERE artist_id = {a3}")  # partition change
    # same transaction (one commit time, same millisecond): the last update must win, by LSN
    _sql(db, *[f"UPDATE artists SET birth_year = {1800 + i} WHERE artist_id = {a4}" for i in range(5)])
    # one transaction over both tables, with a price, a date, a timestamp and a partition move
    _sql(db, f"UPDATE artists SET gender = 'Female' WHERE artist_id = {a5}",
         "UPDATE artworks SET price = 99999.99, acquired = '2022-01-03', updated_at = '2022-01-03 04:05:06.789012', "
         "seen_at = '2022-01-03 04:05:06.5+02', weight = 0.25, on_view = NOT on_view WHERE artwork_id = 7",
         "UPDATE artworks SET classification = 'Sculpture' WHERE artwork_id = 8",
         "DELETE FROM artworks WHERE artwork_id = 9",
         "INSERT INTO artworks (artwork_id, title, artist_id, classification, price) "
         "VALUES (1000, 'new', 1, 'Print', 1.5)")
    _sql(db, "INSERT INTO artists VALUES (999999, 'Newcomer', 'Unknown', NULL, 2000, NULL)")
    # primary-key changes: Debezium emits a (key-only) delete of the old key and a create of the new
    # one; the second moves a row onto the key deleted above, and into another partition
    _sql(db, f"UPDATE artists SET artist_id = 777777 WHERE artist_id = {a6}")
    _sql(db, f"UPDATE artists SET artist_id = {a2}, nationality = 'Key_Moved' WHERE artist_id = {a7}")

    out = _cli(tmp_path, "capture", "--once", "-o", "json")
    assert out.returncode == 0, out.stderr
    captured = json.loads(out.stdout)
    assert not captured["snapshot"] and captured["events"] == 18
    pk = [(r["artist_id"], r["__op"], r["__deleted"]) for r in _records(_files(p, "artists")) if r["__op"] != "r"]
    assert pk[-4:] == [(a6, "d", "true"), (777777, "c", "false"), (a7, "d", "true"), (a2, "c", "false")]
    for table in p.tables:
        pipe.stream(p, table, once=True, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
    db_keys = set(_db_state(db, "artists", "artist_id"))
    assert 777777 in db_keys and a2 in db_keys and a6 not in db_keys and a7 not in db_keys

    # the lake made to differ: a change in the database that was never captured
    _sql(db, f"UPDATE artists SET name = 'not captured' WHERE artist_id = {a1}")
    r = verify(p, "artists", "MERGE_ON_READ")
    assert not r.equal and r.different == 1 and r.different_keys == [str(a1)]
    assert r.different_columns == {str(a1): ["name"]}
    out = _cli(tmp_path, "verify", "--table", "artists", "--type", "cow")
    assert out.returncode == 10
    assert f"1 different (e.g. key {a1})" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    out = _cli(tmp_path, "verify", "--table", "artworks", "--type", "mor", "-o", "json")
    assert out.returncode == 0 and json.loads(out.stdout)["equal"] is True


def _landed_state(pipeline, table, key):
    return {k: {c: v for c, v in r.items() if not c.startswith("__")}
            for k, r in sample.replay(_records(_files(pipeline, table)), key).items()}


def _db_state(db, table, key):
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                         password=os.environ[db["password_env"]], row_factory=dict_row) as conn:
        return {r[key]: r for r in conn.execute(f"SELECT * FROM {table}").fetchall()}


def _kill_after_files(base: Path, pipeline, table: str, files: int):
    """Start `capture --once` as its own process and kill -9 it once `files` new files landed."""
    import signal
    import time as _time

    before = len(_files(pipeline, table))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "hudi_cdc.cli", "-c", str(base / "hudi-cdc.yaml"), "capture", "--once"]
    proc = subprocess.Popen(argv,
                            cwd=base, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = _time.monotonic() + 600
    while len(_files(pipeline, table)) < before + files and proc.poll() is None and _time.monotonic() < deadline:
        _time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)
    return killed


@pytest.mark.postgres
@pytest.mark.spark
def test_kill_9_mid_capture_loses_nothing(tmp_path, pg_database, inprocess_jobs):
    """kill -9 of `capture --once` during the snapshot and again while streaming changes; the next
    run resumes from the committed offsets. Replaying every landed event (duplicates allowed, at
    least once) gives exactly the database's rows, and so does the lake: bootstrap after the first
    capture, stream --once after the second, then verify equal for CoW and MoR."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.sources.verify import verify

    db = pg_database("cap_kill")
    _sql(db, ARTISTS_DDL, ARTWORKS_DDL,
         "INSERT INTO artists SELECT g, 'name ' || g, 'N' || (g % 7), 'Male', 1900 + g % 90, NULL "
         "FROM generate_series(1, 6000) g")
    p = _write_pipeline(tmp_path, db, flush_size=500)
    killed_snapshot = _kill_after_files(tmp_path, p, "artists", 2)
    # rows the killed snapshot landed, deleted before the snapshot is taken again: the new snapshot has
    # no delete events for them, the truncate capture lands before it removes them (refill.py)
    _sql(db, "DELETE FROM artists WHERE artist_id <= 50")
    notes: list[str] = []
    capture_once(p, progress=notes.append, timeout_seconds=600)
    assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")
    if killed_snapshot:
        assert any("snapshot taken again: landed a truncate of artists" in n for n in notes), notes
    log: list[str] = []
    pipe.bootstrap(p, "artists", progress=log.append)  # artworks is empty: nothing landed for it

    for i in range(6):  # six transactions of 1,000 updates each, then deletes
        _sql(db, f"UPDATE artists SET name = name || '+', birth_year = birth_year + 1 WHERE artist_id % 6 = {i}")
    _sql(db, "DELETE FROM artists WHERE artist_id % 10 = 0")
    killed_stream = _kill_after_files(tmp_path, p, "artists", 3)
    capture_once(p, progress=lambda m: None, timeout_seconds=600)
    assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")
    assert killed_snapshot or killed_stream, "capture finished before it could be killed: make the tables larger"
    events = len(_records(_files(p, "artists")))
    assert events >= 5950 + 5950 + 595  # everything at least once (redelivered events come on top)
    pipe.stream(p, "artists", once=True, progress=log.append)
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        r = verify(p, "artists", tt)
        assert r.equal and r.db_rows == 5355, r.summary()


@pytest.mark.postgres
def test_kill_9_mid_blocking_snapshot_takes_it_up_again(tmp_path, pg_database):
    """kill -9 of `capture --once` while it reads a partitioned table's blocking snapshot (`capture snapshot
    --replace`): Debezium never resumes one. The next capture either gets the signal streamed again (the offsets
    committed before it) and counts the rows anew, or, its offsets past the signal, requests the snapshot again
    (capture/signals.py; which one depends on the offsets the killed run committed: both came in six runs). Either
    way the request completes with the table's row count (before, the rows landed before the kill were counted
    twice and the request ended early, or it stayed `signalled` with the lake copy truncated) and the landed events
    replay to exactly the database's rows (rows deleted while the capture was down are gone)."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.capture.snapshot_requests import request_snapshot, snapshot_status

    db = pg_database("cap_block")
    _sql(db, ARTISTS_DDL + " PARTITION BY RANGE (artist_id)",
         *[f"CREATE TABLE artists_{i} PARTITION OF artists FOR VALUES FROM ({i * 4000}) TO ({(i + 1) * 4000})"
           for i in range(3)], ARTWORKS_DDL,
         "INSERT INTO artists SELECT g, 'name ' || g, 'N' || (g % 7), 'Male', 1900 + g % 90, NULL "
         "FROM generate_series(1, 11000) g")
    p = _write_pipeline(tmp_path, db, flush_size=500)
    capture_once(p, progress=lambda m: None, timeout_seconds=600)
    _sql(db, "UPDATE artists SET name = name || '+' WHERE artist_id % 100 = 1")
    request_snapshot(p, "artists", replace=True, progress=lambda m: None)
    killed = _kill_after_files(tmp_path, p, "artists", 14)  # the update, the truncate, 12 x 500 rows
    assert killed, "the blocking snapshot finished before it could be killed: make the table larger"
    assert snapshot_status(p)[0]["state"] == "signalled"
    _sql(db, "DELETE FROM artists WHERE artist_id % 50 = 0",
         "UPDATE artists SET death_year = 2000 WHERE artist_id < 30")
    notes: list[str] = []
    capture_once(p, progress=notes.append, timeout_seconds=600)
    assert any("its blocking snapshot was under way when the last capture stopped" in n for n in notes), notes
    status = snapshot_status(p)[0]
    assert status["state"] == "completed" and status["rows"] == 11000 - 220, (status, notes)
    assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")


@pytest.mark.postgres
def test_truncated_offsets_file_is_restored_not_resnapshotted(tmp_path, pg_database):
    """Kafka's FileOffsetBackingStore writes its file in place and loads a truncated one as "no
    offsets": a kill during that write would make the next capture take a new snapshot, and rows deleted
    meanwhile would never get their delete events. The copy of the last finished run is restored."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.capture.offsets import offsets_file

    db = pg_database("cap_trunc")
    _sql(db, ARTISTS_DDL, ARTWORKS_DDL,
         "INSERT INTO artists SELECT g, 'name ' || g, 'N' || (g % 7), 'Male', 1900, NULL FROM generate_series(1, 50) g")
    p = _write_pipeline(tmp_path, db, flush_size=500)
    capture_once(p, progress=lambda m: None, timeout_seconds=600)
    _sql(db, "DELETE FROM artists WHERE artist_id <= 10")
    offsets_file(p).write_bytes(b"")  # what a kill during FileOffsetBackingStore.save leaves
    notes: list[str] = []
    capture_once(p, progress=notes.append, timeout_seconds=600)
    assert any("was truncated" in n for n in notes), notes
    assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")
