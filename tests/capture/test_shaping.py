"""Shaping on real PostgreSQL + Debezium (docs/shaping.md): capture -> bootstrap -> stream -> verify with an
excluded column, a hashed and a redacted column, a row filter rows move in and out of, a derived day
partition and a lake type per column. Excluded and masked values are searched for in the bytes of every
landed and every lake file (uncompressed parquet here, so the search means something), the salt in every
file the pipeline wrote; Debezium's hash is checked against common/shaping.mask_hash, the function the
streamer and verify use. In the same run, routing: three shards with overlapping ids into one table by a pattern
(the third created after the first capture), changes in each, CoW and MoR, verify equal against the UNION of
the shards. (Config validation and the pure functions: tests/config/test_shaping.py, test_routing.py.)"""

from __future__ import annotations

from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc.common.shaping import REDACTED, mask_hash
from hudi_cdc.config import load_pipeline
from hudi_cdc.errors import ConfigError
from tests.capture.test_capture import _records, _sql

SALT_ENV = "HUDI_CDC_TEST_MASK_SALT"
SALT = "pepper-7f3a9c-salt"
DDL = ("CREATE TABLE public.customers (id integer PRIMARY KEY, name text, email text, ssn text, phone text, "
       "tenant text, amount numeric, created_at timestamp)")
# id, name, email, ssn, phone, tenant, amount, created_at
ROWS = [(1, "Ann", "ann.secret@example.org", "SSN-111-11-1111", "+1-555-0101", "acme", "12.5", "2024-03-01 10:00"),
        (2, "Bob", "bob.secret@example.org", "SSN-222-22-2222", "+1-555-0102", "acme", "7.125", "2024-03-01 23:59"),
        (3, "Cid", "cid.secret@example.org", "SSN-333-33-3333", "+1-555-0103", "other", "1", "2024-03-02 00:00"),
        (4, "Dee", "dee.secret@example.org", "SSN-444-44-4444", "+1-555-0104", "other", "2.5", "2024-03-02 08:00")]
NEW = (5, "Eve", "eve.secret@example.org", "SSN-555-55-5555", "+1-555-0105", "acme", "99.9999", "2024-03-03 12:00")
SECRETS = [r[3] for r in [*ROWS, NEW]] + [r[4] for r in [*ROWS, NEW]] + [r[2] for r in [*ROWS, NEW]]


def _pipeline(base: Path, db: dict):
    doc = {
        "pipeline": "shape",
        "source": {"root": "landing", "mask_salt_env": SALT_ENV, "database": {**db, "flush_size": 100}},
        "lake": {"root": "lake", "hive_database": "shape"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"customers": {
            "topic": "shp.public.customers", "record_key": "id", "table_types": ["COPY_ON_WRITE"],
            "columns": {"exclude": ["ssn"]}, "mask": {"email": "hash", "phone": "redact"},
            "filter": "tenant = 'acme'", "derive": {"day": "date_format(created_at, 'yyyy-MM-dd')"},
            "partition_field": "day",
            "types": {"amount": "decimal(20,4)", "day": "string"},
            "hudi_options": {"hoodie.parquet.compression.codec": "uncompressed"}},
            # routing: every public.orders_<x> (one created later) into one table, ids overlapping
            "orders": {"topic": "shp.public.orders", "record_key": "id", "route": {"pattern": r"public\.orders_[a-z]"},
                       "columns": {"exclude": ["note"]}, "filter": "qty > 0"}},
    }
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _round(spark, p, op: str, table: str = "customers", table_type: str = "COPY_ON_WRITE") -> list:
    """The streamer's round in the session's Spark (as tests/jobs/test_cdc_semantics.py runs it): the job's
    own code on the rendered properties, without a spark-submit per round."""
    from hudi_cdc.core import render
    from hudi_cdc.jobs import streamer

    props_dir = Path(p.base_dir) / "props"
    render.write_properties(p, props_dir)
    props = props_dir / render.props_filename(p, table, table_type)
    flags = render.streamer_flags(p, render.Job(table, table_type, op), f"file://{props}")
    for kv in render.LOCAL_HOODIE_CONF:
        flags += ["--hoodie-conf", kv]
    return streamer.run_targets(spark, [streamer.parse_argv(flags)[0]], log=lambda m: None)


def _v014_state(spark, base: Path) -> dict:
    """The same pipeline on the 0.14 engine: its transformer SQL (runners/deltastreamer/shaped_sql.py, with
    the typed SQL inside) over every landed file in the session's Spark, replayed as HoodieDeltaStreamer
    writes it (the newest event per key; deleted keys absent)."""
    import json

    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.runners.deltastreamer.submit import typed_job

    doc = yaml.safe_load((base / "hudi-cdc.yaml").read_text())
    doc14 = {**doc, "hudi": {"version": "0.14.0"}, "lake": {"root": "lake014"}}
    with pytest.raises(ConfigError, match=r"tables\.orders\.route: a routed table .* read by hudi-cdc's streamer only"):
        parse_pipeline(doc14, "x.yaml", str(base))  # the 0.14 engine reads one landing folder per table
    p14 = parse_pipeline({**doc14, "tables": {"customers": doc["tables"]["customers"]}}, "x.yaml", str(base))
    typed = typed_job(p14, "customers", "COPY_ON_WRITE")
    files = [f"file://{f}" for f in sorted((base / "landing" / "shp.public.customers").rglob("*.avro"))]
    spark.read.format("avro").option("avroSchema", json.dumps(typed.source)).load(files) \
        .createOrReplaceTempView("shaping_src")
    out = spark.sql(typed.sql.replace("<SRC>", "shaping_src"))
    assert out.columns == [f["name"] for f in typed.target["fields"]]  # the target schema HoodieStreamer gets
    latest: dict = {}
    for r in sorted(out.collect(), key=lambda r: r["__lsn"]):
        latest[r["id"]] = r
    return {k: r.asDict() for k, r in latest.items() if not r["_hoodie_is_deleted"]}


# three shards of one lake table, ids overlapping (orders_c is created after the first capture)
SHARDS_DDL = [*[f"CREATE TABLE public.orders_{x} (id integer PRIMARY KEY, item text, qty integer, note text)"
                for x in "ab"],
              "INSERT INTO orders_a VALUES (1, 'a1', 1, 'n'), (2, 'a2', 2, 'n'), (3, 'a3', 0, 'n')",
              "INSERT INTO orders_b VALUES (1, 'b1', 5, 'n'), (2, 'b2', 6, 'n')"]
ROUTED = ["COPY_ON_WRITE", "MERGE_ON_READ"]


def _routed_bootstrap(spark, p, db) -> None:
    """Two shards bootstrapped into one table (both types); then a third shard is created, and every shard
    changes. (verify runs after the stream only: each costs seconds)"""
    for tt in ROUTED:
        _round(spark, p, "BULK_INSERT", "orders", tt)
    assert _routed_rows(p) == {("public.orders_a", 1): "a1", ("public.orders_a", 2): "a2",
                               ("public.orders_b", 1): "b1", ("public.orders_b", 2): "b2"}
    _sql(db, "CREATE TABLE public.orders_c (id integer PRIMARY KEY, item text, qty integer, note text)",
         "UPDATE orders_a SET item = 'a1x' WHERE id = 1", "UPDATE orders_b SET qty = 0 WHERE id = 2",
         "DELETE FROM orders_a WHERE id = 2", "UPDATE orders_a SET qty = 4 WHERE id = 3")


def _new_shard_rows(db, log: list[str]):
    """capture's progress: once it has published the new shard (PostgreSQL then decodes its changes) and
    before Debezium streams, the new shard's rows are written, so the same capture run carries them."""
    def progress(line: str) -> None:
        log.append(line)
        if "added routed source table(s) public.orders_c" in line:
            _sql(db, "INSERT INTO orders_c VALUES (1, 'c1', 7, 'n'), (2, 'c2', 8, 'n')",
                 "UPDATE orders_c SET item = 'c2x' WHERE id = 2", "DELETE FROM orders_c WHERE id = 1")

    return progress


def _routed_stream(spark, p, log: list[str]) -> None:
    """The changes of every shard, the new one too, read in one round per type from the three folders."""
    from hudi_cdc.sources.verify import verify

    assert any("added routed source table(s) public.orders_c" in line for line in log)
    assert sorted(d.name.split(".")[-1] for d in (Path(p.base_dir) / "landing").glob("shp.public.orders_*")) \
        == ["orders_a", "orders_b", "orders_c"]
    for tt in ROUTED:
        r = _round(spark, p, "UPSERT", "orders", tt)[0]
        assert {f.split("/")[-3] for f in r.files} == {f"shp.public.orders_{x}" for x in "abc"}
        v = verify(p, "orders", tt)
        assert v.equal and v.db_rows == 4, v.summary()
    assert _routed_rows(p) == {("public.orders_a", 1): "a1x", ("public.orders_a", 3): "a3",
                               ("public.orders_b", 1): "b1", ("public.orders_c", 2): "c2x"}


def _routed_truncate(spark, p, db) -> None:
    """A TRUNCATE of one shard: its rows go (a row inserted just before it too), a row written after it stays,
    the other shards' rows stay (shard_truncate.py)."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.sources.verify import verify

    _sql(db, "INSERT INTO orders_b VALUES (3, 'b3', 1, 'n')", "TRUNCATE orders_b",
         "INSERT INTO orders_b VALUES (2, 'b2new', 1, 'n')", "UPDATE orders_a SET item = 'a3x' WHERE id = 3")
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    for tt in ROUTED:
        _round(spark, p, "UPSERT", "orders", tt)
        v = verify(p, "orders", tt)
        assert v.equal and v.db_rows == 4, v.summary()
    assert _routed_rows(p) == {("public.orders_a", 1): "a1x", ("public.orders_a", 3): "a3x",
                               ("public.orders_b", 2): "b2new", ("public.orders_c", 2): "c2x"}


def _routed_rows(p) -> dict:
    from hudi_cdc.lake.reader import read_arrow

    rows = read_arrow(p.base_path("orders", "COPY_ON_WRITE")).to_pylist()
    assert rows and all("note" not in r for r in rows)
    return {(r["__source_table"], r["id"]): r["item"] for r in rows}


def _no_secret_bytes(files: list[Path], secrets: list[str]) -> None:
    assert files
    for f in files:
        data = f.read_bytes()
        leaked = [s for s in secrets if s.encode() in data]
        assert not leaked, f"{f}: {leaked}"


def _lake_rows(base: Path) -> dict:
    import pyarrow.parquet as pq

    from hudi_cdc.lake.reader import read_arrow

    table = read_arrow(f"file://{base / 'lake' / 'customers_cow'}")
    files = [p for p in (base / "lake" / "customers_cow").rglob("*.parquet") if ".hoodie" not in p.parts]
    assert str(pq.read_schema(files[0]).field("amount").type) == "decimal128(20, 4)"
    return {r["id"]: r for r in table.to_pylist()}


@pytest.mark.postgres
@pytest.mark.spark
def test_shaped_capture_bootstrap_stream_verify(tmp_path, pg_database, spark, monkeypatch):
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.sources.verify import verify

    monkeypatch.setenv(SALT_ENV, SALT)
    db = pg_database("shp_chain")
    _sql(db, DDL, *[f"INSERT INTO customers VALUES ({r[0]}, '{r[1]}', '{r[2]}', '{r[3]}', '{r[4]}', '{r[5]}', "
                    f"{r[6]}, '{r[7]}')" for r in ROWS], *SHARDS_DDL)
    p = _pipeline(tmp_path, db)
    log: list[str] = []
    capture_once(p, progress=log.append, timeout_seconds=300)
    _round(spark, p, "BULK_INSERT")
    lake = _lake_rows(tmp_path)
    assert sorted(lake) == [1, 2]  # the filter: tenant acme only
    assert verify(p, "customers", "COPY_ON_WRITE").equal
    _routed_bootstrap(spark, p, db)

    _sql(db, "UPDATE customers SET tenant = 'other' WHERE id = 1",  # moves out of the filter: deleted
         "UPDATE customers SET tenant = 'acme' WHERE id = 4",  # moves in: inserted
         "DELETE FROM customers WHERE id = 3",  # never in the lake: nothing
         "UPDATE customers SET amount = 3.14159, created_at = '2024-03-05 01:00' WHERE id = 2",  # new day
         f"INSERT INTO customers VALUES ({NEW[0]}, '{NEW[1]}', '{NEW[2]}', '{NEW[3]}', '{NEW[4]}', '{NEW[5]}', "
         f"{NEW[6]}, '{NEW[7]}')",
         "INSERT INTO customers (id, name, tenant, created_at) VALUES (6, 'Nul', 'acme', '2024-03-03 13:00')")
    capture_once(p, progress=_new_shard_rows(db, log), timeout_seconds=300)  # orders_c joins the publication
    _routed_stream(spark, p, log)
    _routed_truncate(spark, p, db)
    result = _round(spark, p, "UPSERT")[0]
    assert (result.deletes, result.ignored_deletes) == (2, 1)  # id 1 left the filter; id 3 was never in the lake

    # what landed: no ssn field, Debezium's hash = mask_hash (what the streamer and verify compute), '****'
    landed = sorted((tmp_path / "landing" / "shp.public.customers").rglob("*.avro"))
    with open(landed[0], "rb") as fh:
        assert "ssn" not in {f["name"] for f in fastavro.reader(fh).writer_schema["fields"]}
    by_id = {r[0]: r for r in [*ROWS, NEW]}
    for rec in _records(landed):
        if rec["email"] is not None:
            assert rec["email"] == mask_hash(by_id[rec["id"]][2], SALT) and rec["phone"] == REDACTED
    _no_secret_bytes(landed, SECRETS)
    lake = _lake_rows(tmp_path)
    assert sorted(lake) == [2, 4, 5, 6]
    # NULL: a hash keeps it, Debezium's fixed mask does not
    assert (lake[6]["email"], lake[6]["phone"], lake[6]["amount"]) == (None, REDACTED, None)
    assert {k: (str(r["day"]), str(r["amount"]), r["email"] == mask_hash(by_id[k][2], SALT), r["phone"])
            for k, r in lake.items() if k != 6} == {2: ("2024-03-05", "3.1416", True, REDACTED),
                                          4: ("2024-03-02", "2.5000", True, REDACTED),
                                          5: ("2024-03-03", "99.9999", True, REDACTED)}
    assert "ssn" not in next(iter(lake.values()))
    v014 = _v014_state(spark, tmp_path)
    cols = ["name", "email", "phone", "tenant", "amount", "day"]
    assert {k: [r[c] for c in cols] for k, r in v014.items()} == {k: [r[c] for c in cols] for k, r in lake.items()}
    days = sorted(d.name for d in (tmp_path / "lake" / "customers_cow").glob("day=*"))
    # a derived string day: hudi-cdc locates keys itself, so the DELETE of a row never in the lake is nothing
    assert days == ["day=2024-03-01", "day=2024-03-02", "day=2024-03-03", "day=2024-03-05"]
    lake_files = [f for f in (tmp_path / "lake").rglob("*") if f.is_file()]
    _no_secret_bytes(lake_files, SECRETS)
    r = verify(p, "customers", "COPY_ON_WRITE")
    assert r.equal and r.db_rows == 4, r.summary()
    # the salt: in no file the pipeline wrote (properties, logs, offsets, landing, lake)
    _no_secret_bytes([f for f in tmp_path.rglob("*") if f.is_file()], [SALT])
    assert SALT not in "\n".join(log)
