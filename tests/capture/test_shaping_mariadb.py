"""Shaping and routing on a real MariaDB + Debezium's MariaDB connector (docs/shaping.md, docs/mysql.md): one
capture (snapshot) -> bootstrap -> one round of changes -> capture (binlog) -> stream -> verify, with an
excluded column, a hashed and a redacted column, a row filter rows move in and out of (and a DELETE of a
row never in the lake), a derived day partition and a lake type per column; excluded and masked values are
searched for in the bytes of every landed Avro file and every lake file (uncompressed parquet), the salt in
every file the pipeline wrote. In the same run two shards with overlapping ids routed into one table by a
pattern (resolved against information_schema at each capture start: a third shard created between the two
captures joins), on CoW; verify (MySQL's SQL: sources/mysql/shaped.py, routed.py) equal.
Capture runs as a subprocess (the MariaDB connector's JVM is its own, sources/mysql/binlog.py); the rounds
run in the session's Spark (tests/capture/test_shaping.py's _round). The PostgreSQL twin:
tests/capture/test_shaping.py; the SQL verify builds: tests/config/test_shaping.py."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc.common.shaping import REDACTED, mask_hash
from hudi_cdc.config import load_pipeline
from tests.capture.test_capture import _records
from tests.capture.test_capture_mysql import _sql
from tests.capture.test_shaping import NEW, ROWS, SALT_ENV, SECRETS, _no_secret_bytes, _round  # the same rows
from tests.cli import run_cli

SALT = "pepper-maria-41c7-salt"
DB = "shp_maria"
DDL = ("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20), email VARCHAR(100), ssn VARCHAR(20), "
       "phone VARCHAR(20), tenant VARCHAR(10), amount DECIMAL(12,5), created_at DATETIME)")
SHARD = "CREATE TABLE orders_{} (id INT PRIMARY KEY, item VARCHAR(10), qty INT, note VARCHAR(10))"
# CoW only: routing on MoR (merged shard folders, one checkpoint) is proven on PostgreSQL
# (tests/capture/test_shaping.py); the MariaDB side of routing (pattern resolution, verify's UNION ALL) does not
# depend on the table type
ROUTED = ["COPY_ON_WRITE"]


def _values(r: tuple) -> str:
    return f"({r[0]}, '{r[1]}', '{r[2]}', '{r[3]}', '{r[4]}', '{r[5]}', {r[6]}, '{r[7]}')"


def _pipeline(base: Path, db: dict):
    doc = {
        "pipeline": "shapem",
        "source": {"root": "landing", "mask_salt_env": SALT_ENV, "database": {**db, "flush_size": 100}},
        "lake": {"root": "lake", "hive_database": "shapem"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"customers": {
            "topic": f"shp.{DB}.customers", "record_key": "id", "table_types": ["COPY_ON_WRITE"],
            "columns": {"exclude": ["ssn"]}, "mask": {"email": "hash", "phone": "redact"},
            "filter": "tenant = 'acme'", "derive": {"day": "date_format(created_at, 'yyyy-MM-dd')"},
            "partition_field": "day", "types": {"amount": "decimal(20,4)", "day": "string"},
            "hudi_options": {"hoodie.parquet.compression.codec": "uncompressed"}},
            # routing: every shp_maria.orders_<x> (one created between the captures) into one table, ids overlapping
            "orders": {"topic": f"shp.{DB}.orders", "record_key": "id", "route": {"pattern": DB + r"\.orders_[a-z]"},
                       "columns": {"exclude": ["note"]}, "filter": "qty > 0"}},
    }
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _capture(base: Path, log: list[str]) -> dict:
    proc = run_cli("capture", "--once", "--timeout", "300", "-o", "json", cwd=base, check=True)
    log += [proc.stdout, proc.stderr]
    return json.loads(proc.stdout)


def _lake_rows(base: Path) -> dict:
    import pyarrow.parquet as pq

    from hudi_cdc.lake.reader import read_arrow

    files = [p for p in (base / "lake" / "customers_cow").rglob("*.parquet") if ".hoodie" not in p.parts]
    assert str(pq.read_schema(files[0]).field("amount").type) == "decimal128(20, 4)"
    return {r["id"]: r for r in read_arrow(f"file://{base / 'lake' / 'customers_cow'}").to_pylist()}


def _routed_rows(p) -> dict:
    from hudi_cdc.lake.reader import read_arrow

    rows = read_arrow(p.base_path("orders", "COPY_ON_WRITE")).to_pylist()
    assert rows and all("note" not in r for r in rows)
    return {(r["__source_table"].split(".")[1], r["id"]): r["item"] for r in rows}


def _verified(p, table: str, table_type: str, rows: int) -> None:
    from hudi_cdc.sources.verify import verify

    v = verify(p, table, table_type)
    assert v.equal and v.db_rows == rows, v.summary()


@pytest.mark.mariadb
@pytest.mark.spark
def test_shaped_and_routed_mariadb_capture_bootstrap_stream_verify(tmp_path, mariadb, mariadb_database, spark,
                                                                   monkeypatch):
    monkeypatch.setenv(SALT_ENV, SALT)  # capture's subprocess and verify read it from the environment
    db = mariadb_database(DB)
    _sql(mariadb, DB, DDL, "INSERT INTO customers VALUES " + ", ".join(_values(r) for r in ROWS),
         SHARD.format("a"), SHARD.format("b"),
         "INSERT INTO orders_a VALUES (1, 'a1', 1, 'n'), (2, 'a2', 2, 'n'), (3, 'a3', 0, 'n')",
         "INSERT INTO orders_b VALUES (1, 'b1', 5, 'n'), (2, 'b2', 6, 'n')")
    p = _pipeline(tmp_path, db)
    log: list[str] = []
    assert _capture(tmp_path, log)["events"] == 4 + 3 + 2
    _round(spark, p, "BULK_INSERT")
    assert sorted(_lake_rows(tmp_path)) == [1, 2]  # the filter: tenant acme only
    _verified(p, "customers", "COPY_ON_WRITE", 2)
    for tt in ROUTED:
        _round(spark, p, "BULK_INSERT", "orders", tt)
    assert _routed_rows(p) == {("orders_a", 1): "a1", ("orders_a", 2): "a2", ("orders_b", 1): "b1",
                               ("orders_b", 2): "b2"}

    _sql(mariadb, DB,
         "UPDATE customers SET tenant = 'other' WHERE id = 1",  # moves out of the filter: deleted
         "UPDATE customers SET tenant = 'acme' WHERE id = 4",  # moves in: inserted
         "DELETE FROM customers WHERE id = 3",  # never in the lake: nothing
         "UPDATE customers SET amount = 3.14159, created_at = '2024-03-05 01:00' WHERE id = 2",  # a new day
         f"INSERT INTO customers VALUES {_values(NEW)}",
         "INSERT INTO customers (id, name, tenant, created_at) VALUES (6, 'Nul', 'acme', '2024-03-03 13:00')",
         "UPDATE orders_a SET item = 'a1x' WHERE id = 1", "UPDATE orders_b SET qty = 0 WHERE id = 2",
         "DELETE FROM orders_a WHERE id = 2", "UPDATE orders_a SET qty = 4 WHERE id = 3",
         # a shard created while capture is stopped: the next capture's pattern has it, its CREATE TABLE and
         # rows are in the binlog after the offsets
         SHARD.format("c"), "INSERT INTO orders_c VALUES (1, 'c1', 7, 'n'), (2, 'c2', 8, 'n')",
         "UPDATE orders_c SET item = 'c2x' WHERE id = 2", "DELETE FROM orders_c WHERE id = 1")
    assert _capture(tmp_path, log)["events"] == 6 + 4 + 4
    assert sorted(d.name for d in (tmp_path / "landing").glob(f"shp.{DB}.orders_*")) == \
        [f"shp.{DB}.orders_{x}" for x in "abc"]
    for tt in ROUTED:
        r = _round(spark, p, "UPSERT", "orders", tt)[0]
        assert {f.split("/")[-3] for f in r.files} == {f"shp.{DB}.orders_{x}" for x in "abc"}
        _verified(p, "orders", tt, 4)
    assert _routed_rows(p) == {("orders_a", 1): "a1x", ("orders_a", 3): "a3", ("orders_b", 1): "b1",
                               ("orders_c", 2): "c2x"}
    result = _round(spark, p, "UPSERT")[0]
    assert (result.deletes, result.ignored_deletes) == (2, 1)  # id 1 left the filter; id 3 was never in the lake

    # what landed: no ssn field, Debezium's hash = mask_hash (what the streamer and verify compute), '****'
    landed = sorted((tmp_path / "landing" / f"shp.{DB}.customers").rglob("*.avro"))
    with open(landed[0], "rb") as fh:
        assert "ssn" not in {f["name"] for f in fastavro.reader(fh).writer_schema["fields"]}
    by_id = {r[0]: r for r in [*ROWS, NEW]}
    recs = _records(landed)
    assert {r["__op"] for r in recs} == {"r", "u", "d", "c"}  # the snapshot's rows and the binlog's alike
    for rec in recs:
        if rec["email"] is not None:
            assert rec["email"] == mask_hash(by_id[rec["id"]][2], SALT) and rec["phone"] == REDACTED
    _no_secret_bytes(landed, SECRETS)
    lake = _lake_rows(tmp_path)
    assert sorted(lake) == [2, 4, 5, 6]
    assert (lake[6]["email"], lake[6]["phone"], lake[6]["amount"]) == (None, REDACTED, None)
    assert {k: (str(r["day"]), str(r["amount"]), r["email"] == mask_hash(by_id[k][2], SALT), r["phone"])
            for k, r in lake.items() if k != 6} == {2: ("2024-03-05", "3.1416", True, REDACTED),
                                                    4: ("2024-03-02", "2.5000", True, REDACTED),
                                                    5: ("2024-03-03", "99.9999", True, REDACTED)}
    assert sorted(d.name for d in (tmp_path / "lake" / "customers_cow").glob("day=*")) == \
        ["day=2024-03-01", "day=2024-03-02", "day=2024-03-03", "day=2024-03-05"]
    _no_secret_bytes([f for f in (tmp_path / "lake").rglob("*") if f.is_file()], SECRETS)
    _verified(p, "customers", "COPY_ON_WRITE", 4)
    # the salt: in no file the pipeline wrote (properties, logs, offsets, schema history, landing, lake)
    _no_secret_bytes([f for f in tmp_path.rglob("*") if f.is_file()], [SALT])
    assert SALT not in "\n".join(log)
