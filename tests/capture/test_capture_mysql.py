"""Change capture from a real MariaDB (Debezium's MariaDB connector, binlog ROW/FULL).

Unit tests: the source.database block of MySQL-family kinds, the binlog ordering value, the --once end
test, the schema-history guard. Tests marked ``mariadb`` start Debian's MariaDB (tests/plugins/mariadb.py)
and run `hudi-cdc capture` as a subprocess: the MariaDB connector runs on Debezium 3.5.0's jars, in a JVM
of its own (sources/mysql/binlog.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import fastavro
import pytest
import yaml

from hudi_cdc.config import load_pipeline, parse_pipeline
from hudi_cdc.errors import ConfigError, SourceError
from hudi_cdc.sources.mysql import binlog as mysql
from tests.capture.test_capture import _records
from tests.cli import run_cli, run_main

SHOP_DDL = ("CREATE TABLE items (item_id INT PRIMARY KEY, name VARCHAR(40), category VARCHAR(20), "
            "price DECIMAL(10,2), on_sale TINYINT(1), size ENUM('S','M','L'), tags SET('new','hot'), "
            "made DATE, updated_at DATETIME(3), seen_at TIMESTAMP(6) NULL, doc JSON, blob_col BLOB, "
            "big BIGINT UNSIGNED)")


def _pipeline_dict(db: dict, flush_size=100) -> dict:
    return {
        "pipeline": "shop",
        "source": {"root": "landing", "database": {**db, "flush_size": flush_size}},
        "lake": {"root": "lake", "hive_database": "shop"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"items": {"topic": f"shop.{db['name']}.items", "record_key": "item_id",
                             "partition_field": "category"}},
    }


# ------------------------------------------------------------------ unit
def test_mysql_kinds_in_the_database_block(tmp_path):
    p = parse_pipeline(_pipeline_dict({"kind": "mariadb", "name": "shop", "user": "u"}), "x.yaml", str(tmp_path))
    assert p.source.database.kind == "mariadb" and p.source.database.port == 3306
    p = parse_pipeline(_pipeline_dict({"name": "shop", "user": "u"}), "x.yaml", str(tmp_path))
    assert p.source.database.kind == "postgresql" and p.source.database.port == 5432
    with pytest.raises(ConfigError, match=r"source\.database\.kind: Input should be 'postgresql', 'mysql' or "
                                          r"'mariadb' \(x\.yaml\)"):
        parse_pipeline(_pipeline_dict({"kind": "oracle", "name": "shop", "user": "u"}), "x.yaml")


def test_engine_properties_of_a_binlog_source(tmp_path):
    from hudi_cdc.capture.capture import engine_properties

    db = {"kind": "mariadb", "name": "shop", "user": "u", "port": 3307, "server_id": 77}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict(db)))
    props = engine_properties(load_pipeline(tmp_path / "hudi-cdc.yaml"), "pw")
    assert props["connector.class"] == "io.debezium.connector.mariadb.MariaDbConnector"
    assert props["database.port"] == "3307" and props["database.server.id"] == "77"
    assert props["database.include.list"] == "shop" and props["table.include.list"] == r"shop\.items"
    assert props["schema.history.internal"] == "io.debezium.storage.file.history.FileSchemaHistory"
    hist = Path(props["schema.history.internal.file.filename"])
    assert hist.parent == Path(props["offset.storage.file.filename"]).parent  # beside the offsets
    assert props["transforms.unwrap.add.fields"] == "op,db,table,file,pos,row,source.ts_ms"
    assert "slot.name" not in props and "publication.name" not in props
    # incremental snapshots (`capture snapshot`, sources/mysql/signals.py): signals read from the binlog
    assert props["signal.enabled.channels"] == "source"
    assert props["signal.data.collection"] == "shop.hudi_cdc_shop_signal"
    assert props["notification.enabled.channels"] == "sink"
    assert props["notification.sink.topic.name"] == "shop.hudi_cdc_notifications"
    assert props["driver.yearIsDateType"] == "false"  # YEAR 0000 read as a number (docs/types.md, edge values)
    assert props["provide.transaction.metadata"] == "true"  # BEGIN/END records: transaction cuts (capture/txn.py)
    db["kind"] = "mysql"
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict(db)))
    props = engine_properties(load_pipeline(tmp_path / "hudi-cdc.yaml"), None)
    assert props["connector.class"] == "io.debezium.connector.mysql.MySqlConnector"
    assert "database.password" not in props


def test_a_once_run_finishes_the_snapshots_it_carries_out(tmp_path, monkeypatch):
    """No database: a binlog --once run goes on past its end while a table it captures has a snapshot
    requested, waiting or signalled (its chunk windows are always past that end), not once it completed, and
    never for ever (a snapshot that does not move for STALLED_SECONDS lets it end, in one line)."""
    from hudi_cdc.capture import signals
    from hudi_cdc.capture.snapshot_requests import requests_dir, write_json

    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict({"kind": "mariadb", "name": "shop",
                                                                           "user": "u"})))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    said: list[str] = []
    assert not signals.Snapshots(p, said.append).under_way()
    write_json(requests_dir(p) / "items.json", {"table": "items", "replace": False, "id": "x"})
    assert signals.Snapshots(p, said.append).under_way()  # requested
    (requests_dir(p) / "items.json").unlink()
    state = {"items": {"qualified": "shop.items", "floor": 41, "state": "signalled", "rows": 0, "id": "x"}}
    write_json(requests_dir(p) / "state.json", state)
    snaps = signals.Snapshots(p, said.append)
    assert snaps.under_way()
    snaps.notification({"aggregate_type": "Incremental Snapshot", "type": "TABLE_SCAN_COMPLETED",
                        "additional_data": {"data_collection": "shop.items"}})
    assert not snaps.under_way() and snaps.state["items"]["state"] == "completed"
    write_json(requests_dir(p) / "state.json", state)
    monkeypatch.setattr(signals, "STALLED_SECONDS", -1)
    assert not signals.Snapshots(p, said.append).under_way()
    assert said[-1].startswith("capture snapshot: no snapshot row for -1 s: this --once run ends")


def test_a_table_dropped_and_created_again_is_read_from_the_schema_history(tmp_path):
    """A DROP table change read from the binlog (not the snapshot's DROP TABLE IF EXISTS) is what names a table
    dropped and created again (sources/mysql/tablelife.py): its newest one per table, a partial line skipped."""
    from hudi_cdc.sources.mysql import tablelife

    def rec(position, ddl, change):
        return json.dumps({"position": position, "ddl": ddl, "tableChanges": [{"type": change, "id": '"shop"."dr"'}]})

    hist = tmp_path / "schema-history.dat"
    lines = [rec({"file": "b.000001", "pos": 4, "snapshot": "INITIAL"}, "DROP TABLE IF EXISTS `shop`.`dr`", "DROP"),
             rec({"file": "b.000001", "pos": 4, "snapshot": "INITIAL"}, "CREATE TABLE dr (id INT)", "CREATE"),
             rec({"file": "b.000001", "pos": 900}, "DROP TABLE `shop`.`dr`", "DROP"),
             rec({"file": "b.000002", "pos": 77}, "DROP TABLE `shop`.`dr`", "DROP"),
             '{"position": {"file": "b.0']  # a partial last line
    hist.write_text("\n".join(lines))
    assert tablelife._dropped(hist) == {"shop.dr": json.dumps({"file": "b.000002", "pos": 77}, sort_keys=True)}
    assert tablelife._dropped(tmp_path / "none.dat") == {}


def test_binlog_ordering_value_increases_along_the_binlog():
    # row events at 5641 (two rows) and 5886, then the next file
    values = [mysql.lsn("mariadb-bin.000001", 5641, 0), mysql.lsn("mariadb-bin.000001", 5641, 1),
              mysql.lsn("mariadb-bin.000001", 5886, 0), mysql.lsn("mariadb-bin.000002", 4, 0),
              mysql.lsn("mysql-bin-changelog.000002", 389, 0)]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert mysql.lsn("mariadb-bin.999999", 2**32 - 2, 1) < 2**63  # fits the long __lsn is
    with pytest.raises(SourceError, match="binlog file name 'nonumber'"):
        mysql.binlog_number("nonumber")


def test_once_ends_at_the_binlog_position_or_gtid_of_the_start():
    target = mysql.Target("mariadb-bin.000002", 899, "0-1-26")
    assert not mysql.reached({"file": "mariadb-bin.000002", "pos": "690", "gtids": "0-1-25", "event": "2"}, target)
    assert mysql.reached({"file": "mariadb-bin.000002", "pos": "899", "gtids": "0-1-26"}, target)
    assert mysql.reached({"file": "mariadb-bin.000003", "pos": "4"}, target)
    # a rotation (FLUSH LOGS) moves the file, not the GTID: the GTID says caught up
    assert mysql.reached({"file": "mariadb-bin.000001", "pos": "4", "gtids": "0-1-26"}, target)
    # snapshot records are never the end
    assert not mysql.reached({"file": "mariadb-bin.000009", "pos": "4", "snapshot": "INITIAL"}, target)
    assert mysql.covers("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7-9", "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-9")
    assert not mysql.covers("0-1-5,1-2-9", "0-1-6")


def test_history_guard_cuts_a_partial_last_record(tmp_path):
    hist, offsets = tmp_path / "h.dat", tmp_path / "o.dat"
    hist.write_bytes(b'{"a": 1}\n{"b": 2}\n{"c": ')
    notes: list[str] = []
    mysql.guard_history(hist, offsets, notes.append)
    assert hist.read_bytes() == b'{"a": 1}\n{"b": 2}\n' and "partial last record" in notes[0]
    mysql.guard_history(hist, offsets, notes.append)  # whole: unchanged, nothing said
    assert len(notes) == 1
    hist.write_bytes(b'{"a": 1}\nxx\n{"b": 2}\n')
    with pytest.raises(SourceError, match="line 2 of the schema history is not JSON"):
        mysql.guard_history(hist, offsets, notes.append)
    hist.unlink()
    offsets.write_bytes(b"x")
    with pytest.raises(SourceError, match="schema history is missing but offsets exist"):
        mysql.guard_history(hist, offsets, notes.append)


def test_demo_from_mariadb_options_and_pipeline_file(tmp_path):
    from click.testing import CliRunner

    from hudi_cdc.cli import cli
    from hudi_cdc.demo.mariadb import PASSWORD_ENV, pipeline_text

    out = CliRunner().invoke(cli, ["demo", "d", "--from-mariadb", "--from-postgres", "--pg-dsn", "x"])
    assert out.exit_code == 2 and "--from-postgres, --pg-dsn: not with --from-mariadb" in out.output
    (tmp_path / "hudi-cdc.yaml").write_text(pipeline_text(3399))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    db = p.source.database
    assert (db.kind, db.port, db.password_env) == ("mariadb", 3399, PASSWORD_ENV)
    assert p.table("orders").topic == "shop.shop.orders" and p.table("orders").partition_field == "region"


# ------------------------------------------------------------------ a real MariaDB
def _sql(mariadb, database: str, *statements):
    conn = mariadb.connect(database)
    with conn.cursor() as cur:
        for st in statements:
            cur.execute(st)
    conn.close()


def _write(base: Path, db: dict, **kw):
    base.mkdir(parents=True, exist_ok=True)
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(_pipeline_dict(db, **kw), sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _capture(base: Path, *args: str) -> dict:
    proc = run_cli("capture", "--once", "--timeout", "300", "-o", "json", *args, cwd=base, check=True)
    return json.loads(proc.stdout)


def _files(pipeline) -> list[Path]:
    return sorted(Path(pipeline.topic_dir("items")[len("file://"):]).glob("*.avro"))


@pytest.mark.mariadb
def test_capture_from_mariadb_snapshot_binlog_restart(tmp_path, mariadb, mariadb_database):
    """Snapshot, then the binlog: one landed record per row change in the S3 sink's layout with the unwrap
    fields, __lsn from the binlog strictly increasing in commit order (same-second updates, multi-row
    transactions), a restart resumes without a new snapshot, a quiet server ends a --once run."""
    db = mariadb_database("cap_shop")
    _sql(mariadb, "cap_shop", SHOP_DDL,
         *[f"INSERT INTO items VALUES ({i}, 'item {i}', '{['a', 'b', 'c'][i % 3]}', {i}.25, {i % 2}, 'M', 'new,hot', "
           f"'2024-02-29', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05.123456', '{{\"k\": {i}}}', x'00ff', "
           f"18446744073709551615)" for i in range(1, 151)])
    p = _write(tmp_path, db, flush_size=100)
    first = _capture(tmp_path)
    assert first["snapshot"] and first["events"] == 150
    files = _files(p)
    assert [f.name for f in files] == [f"shop.cap_shop.items+0+{o:010d}.avro" for o in (0, 100)]
    with open(files[0], "rb") as fh:
        schema = fastavro.reader(fh).writer_schema
    names = [f["name"] for f in schema["fields"]]
    assert {"__op", "__db", "__table", "__lsn", "__source_ts_ms", "__deleted"} <= set(names)
    assert not {"__file", "__pos", "__row"} & set(names)
    recs = _records(files)
    assert {r["__op"] for r in recs} == {"r"} and len({r["item_id"] for r in recs}) == 150
    assert {r["__db"] for r in recs} == {"cap_shop"} and {r["__table"] for r in recs} == {"items"}
    snap_lsn = {r["__lsn"] for r in recs}
    assert len(snap_lsn) == 1 and snap_lsn.pop() > 0  # the snapshot's binlog position
    assert recs[0]["big"] is not None  # BIGINT UNSIGNED above 2^63 is a decimal, not a negative long

    _sql(mariadb, "cap_shop",
         "UPDATE items SET name = 'renamed' WHERE item_id = 1",
         "UPDATE items SET name = 'renamed again' WHERE item_id = 1",  # same second, same key
         "START TRANSACTION", "INSERT INTO items (item_id, name, category) VALUES (500, 'x', 'a'), (501, 'y', 'b')",
         "UPDATE items SET category = 'a' WHERE item_id = 2", "COMMIT",  # a partition move
         "DELETE FROM items WHERE item_id = 3")
    second = _capture(tmp_path)
    assert not second["snapshot"] and second["events"] == 6
    new = _records(_files(p)[2:])
    assert [(r["__op"], r["item_id"]) for r in new] == [("u", 1), ("u", 1), ("c", 500), ("c", 501), ("u", 2), ("d", 3)]
    assert new[1]["name"] == "renamed again" and new[5]["__deleted"] == "true"
    lsns = [r["__lsn"] for r in new]
    assert lsns == sorted(lsns) and len(set(lsns)) == 6 and lsns[0] > max(r["__lsn"] for r in recs)

    # DDL from the binlog without a manual step (DROP, RENAME, MODIFY widening), then TRUNCATE TABLE,
    # which lands as one __op='t' row in the table's landed schema, in binlog order
    _sql(mariadb, "cap_shop",
         "ALTER TABLE items DROP COLUMN tags", "ALTER TABLE items RENAME COLUMN name TO title",
         "ALTER TABLE items MODIFY price DECIMAL(14,2)", "ALTER TABLE items MODIFY on_sale INT",
         # MySQL's own types, as Debezium encodes them (docs/mysql.md): YEAR, BIT(n), BIT(1), a spatial type,
         # zero dates (NOT NULL: the epoch; nullable: null), TIME beyond a day
         "ALTER TABLE items ADD COLUMN yr YEAR, ADD COLUMN bits BIT(10), ADD COLUMN bit1 BIT(1), ADD COLUMN pt POINT, "
         "ADD COLUMN zero_nn DATE NOT NULL DEFAULT '0000-00-00', ADD COLUMN zero_null DATETIME NULL, "
         "ADD COLUMN long_time TIME",
         "UPDATE items SET title = 't5', price = 123456789012.34, on_sale = 70000, yr = 2024, bits = b'1000000101', "
         "bit1 = 1, pt = ST_GeomFromText('POINT(1 2)'), zero_null = '0000-00-00 00:00:00', long_time = '-838:59:59' "
         "WHERE item_id = 5",
         "TRUNCATE TABLE items", "INSERT INTO items (item_id, title, category) VALUES (900, 'after', 'a')")
    landed_before = len(_files(p))
    proc = run_cli("capture", "--once", "--timeout", "300", "-o", "json", cwd=tmp_path, check=True)
    third = json.loads(proc.stdout)
    assert third["events"] == 3 and not third["snapshot"]
    # the rows that existed read the NOT NULL column's default, which no binlog event carried: capture asks for
    # an incremental snapshot of the table (issue 36), naming exactly that column; this capture user may not
    # create the signal table: one line with the DDL and the GRANT, and capture goes on
    assert "items: new column(s) zero_nn have a default (or are generated) in cap_shop.items" in proc.stderr
    assert "WARNING items: new column(s) zero_nn: could not give the rows that existed their value" in proc.stderr
    assert "cannot create or write the signal table cap_shop.hudi_cdc_cap_shop_signal" in proc.stderr, proc.stderr
    files = _files(p)
    after = _records(files[landed_before:])
    assert [(r["__op"], r["item_id"]) for r in after] == [("u", 5), ("t", 0), ("c", 900)]
    assert after[0]["title"] == "t5" and after[0]["on_sale"] == 70000
    assert str(after[0]["price"]) == "123456789012.34"
    u = after[0]
    assert (u["yr"], u["bits"], u["bit1"], u["zero_nn"], u["zero_null"]) == (2024, b"\x05\x02", True, 0, None), u
    assert u["long_time"] == -(838 * 3600 + 59 * 60 + 59) * 10**6  # MicroTime, below -24 h
    import struct
    assert struct.unpack("<bIdd", u["pt"]["wkb"]) == (1, 1, 1.0, 2.0)  # WKB of POINT(1 2), little-endian
    assert after[1]["__deleted"] == "true" and after[1]["__table"] == "items" and after[1]["title"] is None
    lsns = [r["__lsn"] for r in after]
    assert lsns == sorted(lsns) and len(set(lsns)) == 3 and lsns[0] > max(r["__lsn"] for r in new)
    with open(files[-1], "rb") as fh:
        fields = {f["name"]: f["type"] for f in fastavro.reader(fh).writer_schema["fields"]}
    assert "title" in fields and "name" not in fields and "tags" not in fields
    price = next(b for b in fields["price"] if isinstance(b, dict))
    assert price["connect.parameters"]["connect.decimal.precision"] == "14"

    fourth = _capture(tmp_path)  # nothing new: the server's heartbeats end the run
    assert fourth["events"] == 0 and fourth["files"] == 0 and not fourth["snapshot"]
    hist = Path(p.base_dir) / ".hudi-cdc" / "capture" / f"schema-history-{p.slot_name}.dat"
    assert hist.exists() and "items" in hist.read_text()


ORDERS_DDL = ("CREATE TABLE orders (order_id INT PRIMARY KEY, customer VARCHAR(40), region VARCHAR(10) NOT NULL, "
              "qty INT, price DECIMAL(10,2), flag TINYINT(1), placed DATE, logged DATETIME(3), updated_at DATETIME(6), "
              "seen_at TIMESTAMP(6) NULL, at_time TIME(6), size ENUM('S','M','L'), tags SET('new','hot'), "
              "raw VARBINARY(8), big BIGINT UNSIGNED, ratio FLOAT, doc JSON)")
TYPED = ("'2024-02-29', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05.123456', '2024-06-01 12:00:00.5', "
         "'13:14:15.000016', 'M', 'new,hot', x'00ff10', 18446744073709551615, 0.25, '{\"k\": [1, 2]}'")
ORDER_COLUMNS = ("order_id", "customer", "region", "qty", "price", "flag")


def _orders_pipeline(db: dict) -> dict:
    return {
        "pipeline": "orders",
        "source": {"root": "landing", "database": {**db, "flush_size": 40}},
        "lake": {"root": "lake", "hive_database": "orders"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"orders": {"topic": f"shop.{db['name']}.orders", "record_key": "order_id",
                              "partition_field": "region", "compaction_delta_commits": 2}},
    }


def _db_rows(mariadb, database: str) -> dict:
    conn = mariadb.connect(database)
    with conn.cursor() as cur:
        cur.execute(f"SELECT {', '.join(ORDER_COLUMNS)} FROM orders")
        rows = {r[0]: dict(zip(ORDER_COLUMNS, r, strict=True)) for r in cur.fetchall()}
    conn.close()
    return rows


@pytest.mark.mariadb
@pytest.mark.spark
def test_mariadb_to_lake_reads_back_equal(tmp_path, mariadb, mariadb_database, inprocess_jobs):
    """capture --once -> bootstrap -> a burst of DML (same-second updates of one key in one transaction,
    a key-only delete, a partition move, a primary-key change, a multi-row transaction) -> capture --once
    -> stream --once; the CoW and MoR tables read with hudi-rs equal the MariaDB table by key and column."""
    from hudi_cdc.lake.reader import read_table

    db = mariadb_database("lake_shop")
    _sql(mariadb, "lake_shop", ORDERS_DDL,
         "INSERT INTO orders VALUES " + ", ".join(
             f"({i}, 'customer {i}', '{['eu', 'us', 'ap'][i % 3]}', {i}, {i}.5, {i % 2}, {TYPED})"
             for i in range(1, 101)))
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(_orders_pipeline(db), sort_keys=False))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    assert _capture(tmp_path)["events"] == 100
    run_main("bootstrap", cwd=tmp_path)

    _sql(mariadb, "lake_shop",
         # a widening from the binlog, then TRUNCATE TABLE (every row of the lake gone as of it) and 90 rows back:
         # keys 91-100 exist only before the truncate
         "ALTER TABLE orders MODIFY qty BIGINT", "TRUNCATE TABLE orders",
         "INSERT INTO orders VALUES " + ", ".join(
             f"({i}, 'again {i}', '{['eu', 'us', 'ap'][i % 3]}', {i + 2**40}, {i}.5, {i % 2}, {TYPED})"
             for i in range(1, 91)),
         "START TRANSACTION", *[f"UPDATE orders SET qty = {1000 + i} WHERE order_id = 1" for i in range(5)], "COMMIT",
         "DELETE FROM orders WHERE order_id = 2",
         "UPDATE orders SET region = 'moved' WHERE order_id = 3",
         "UPDATE orders SET order_id = 777 WHERE order_id = 4",
         "START TRANSACTION", f"INSERT INTO orders VALUES (500, 'new', 'eu', 1, 0.01, 1, {TYPED}), "
         "(501, NULL, 'us', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
         "UPDATE orders SET placed = '1969-12-31', logged = '1970-01-01 00:00:00.001', updated_at = NOW(6), "
         "seen_at = '2038-01-19 03:14:07.999999', at_time = '-838:59:59', size = 'L', tags = '', raw = x'', "
         "big = 0, ratio = -1.5 WHERE order_id = 6",
         "UPDATE orders SET price = 99999999.99, customer = 'ü – 日本' WHERE order_id = 5", "COMMIT",
         "UPDATE orders SET flag = 1 - flag WHERE order_id BETWEEN 10 AND 19",
         # DROP COLUMN: the lake keeps `ratio`, null for rows written after it
         "ALTER TABLE orders DROP COLUMN ratio", "UPDATE orders SET customer = 'after drop' WHERE order_id = 8")
    assert _capture(tmp_path)["events"] == 1 + 90 + 5 + 1 + 1 + 2 + 2 + 1 + 1 + 10 + 1
    run_main("stream", "--table", "orders", "--once", cwd=tmp_path)

    want = _db_rows(mariadb, "lake_shop")
    assert 777 in want and 4 not in want and 2 not in want and want[1]["qty"] == 1004 and 95 not in want
    assert want[9]["qty"] == 9 + 2**40 and len(want) == 91
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        rows = read_table(p.base_path("orders", tt), columns=list(ORDER_COLUMNS))
        got = {r["order_id"]: r for r in rows}
        assert sorted(got) == sorted(want), tt
        for key, row in want.items():
            assert got[key] == row, (tt, key)
        ratio = {r["order_id"]: r["ratio"]
                 for r in read_table(p.base_path("orders", tt), columns=["order_id", "ratio"])}
        assert (ratio[6], ratio[9], ratio[8]) == (-1.5, 0.25, None), tt  # kept; null for the row written after
    # verify: every column, typed as Debezium encodes it, for both table types
    for tt in ("cow", "mor"):
        out = run_cli("verify", "--table", "orders", "--type", tt, "-o", "json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["equal"] and result["db_rows"] == len(want) and not result["not_in_lake"], result
        assert "ratio" not in result["columns"] and "qty" in result["columns"]
        assert result["lake_max_lsn"] <= result["db_lsn"]
    _sql(mariadb, "lake_shop", "UPDATE orders SET at_time = '01:02:03' WHERE order_id = 7")  # never captured
    out = run_cli("verify", "--table", "orders", "--type", "mor", cwd=tmp_path)
    assert out.returncode == 10 and "1 different (e.g. key 7)" in out.stderr


def _kill_after_files(base: Path, pipeline, files: int) -> bool:
    """Start `capture --once` as its own process and kill -9 it once `files` new files landed."""
    import os
    import signal
    import subprocess
    import sys
    import time as _time

    from tests.cli import cli_env

    before = len(_files(pipeline))
    proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "capture", "--once"], cwd=base, env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = _time.monotonic() + 600
    while len(_files(pipeline)) < before + files and proc.poll() is None and _time.monotonic() < deadline:
        _time.sleep(0.05)
    killed = proc.poll() is None
    if killed:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(60)
    return killed


def _landed_state(pipeline) -> dict:
    from hudi_cdc import sample

    return {k: {c: v for c, v in r.items() if not c.startswith("__")}
            for k, r in sample.replay(_records(_files(pipeline)), "item_id").items()}


def _items_state(mariadb, database: str) -> dict:
    import pymysql

    conn = mariadb.connect(database)
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SELECT item_id, name, category, qty FROM items")
        rows = {r["item_id"]: r for r in cur.fetchall()}
    conn.close()
    return rows


@pytest.mark.mariadb
@pytest.mark.spark
def test_kill_9_mid_mariadb_capture_loses_nothing(tmp_path, mariadb, mariadb_database, inprocess_jobs):
    """kill -9 of `capture --once` during the snapshot and again while streaming binlog changes (after a DDL
    the schema history must carry); the next run resumes from the committed offsets without a new snapshot.
    Replaying every landed event (at least once) gives exactly the database's rows, and so does the lake:
    bootstrap, stream --once, verify equal for CoW and MoR."""
    db = mariadb_database("kill_shop")
    _sql(mariadb, "kill_shop",
         "CREATE TABLE items (item_id INT PRIMARY KEY, name VARCHAR(60), category VARCHAR(10), qty INT)",
         "INSERT INTO items SELECT seq, CONCAT('name ', seq), CONCAT('c', seq % 7), seq % 90 FROM seq_1_to_6000")
    p = _write(tmp_path, {**db}, flush_size=500)
    killed_snapshot = _kill_after_files(tmp_path, p, 2)
    first = _capture(tmp_path)
    keys = ("item_id", "name", "category", "qty")
    assert _landed_state(p) == {k: {c: r[c] for c in keys} for k, r in _items_state(mariadb, "kill_shop").items()}
    run_main("bootstrap", cwd=tmp_path)

    _sql(mariadb, "kill_shop", "ALTER TABLE items ADD COLUMN note VARCHAR(20) DEFAULT 'x'")
    for i in range(6):  # six transactions of 1,000 updates each, then deletes
        _sql(mariadb, "kill_shop", f"UPDATE items SET name = CONCAT(name, '+'), qty = qty + 1 WHERE item_id % 6 = {i}")
    _sql(mariadb, "kill_shop", "DELETE FROM items WHERE item_id % 10 = 0")
    killed_stream = _kill_after_files(tmp_path, p, 3)
    second = _capture(tmp_path)
    assert not second["snapshot"], "a restart after kill -9 took a new snapshot"
    landed = _landed_state(p)
    state = _items_state(mariadb, "kill_shop")
    assert {k: {c: r[c] for c in keys} for k, r in landed.items()} == {k: {c: r[c] for c in keys}
                                                                       for k, r in state.items()}
    assert {r["note"] for r in landed.values()} == {"x"}  # the column the DDL added, decoded through the history
    assert killed_snapshot or killed_stream, "capture finished before it could be killed: make the table larger"
    # (whether the run after the first kill reports a snapshot depends on whether Debezium had flushed
    # snapshot offsets before the kill: either way every row and change is landed at least once)
    assert first is not None and len(_records(_files(p))) >= 6000 + 6000 + 600
    run_main("stream", "--table", "items", "--once", cwd=tmp_path)
    for tt in ("cow", "mor"):
        out = run_cli("verify", "--table", "items", "--type", tt, "-o", "json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["equal"] and result["db_rows"] == 5400 and "note" in result["columns"], result


@pytest.mark.mariadb
def test_a_type_debezium_cannot_parse_stops_no_other_table(tmp_path, mariadb, mariadb_database):
    """MariaDB's INET6 / INET4 columns: Debezium's DDL parser refuses the table's CREATE and, before, stopped the
    connector for every table (`no viable alternative at input ... inet6`), for good: at the snapshot for a table of
    the pipeline, in the binlog for any table of the database. Now such a table of the pipeline is left out of
    each run with one line naming the column, another table's DDL of such a type is skipped, the other tables are
    captured; `init --from-database` leaves the table out, saying why. A system-versioned table likewise: its binlog
    rows carry hidden columns Debezium's schema lacks (it stopped the connector for every table)."""
    db = mariadb_database("inet_shop")
    _sql(mariadb, "inet_shop", "CREATE TABLE items (item_id INT PRIMARY KEY, category VARCHAR(10))",
         "CREATE TABLE hosts (id INT PRIMARY KEY, ip INET6)", "INSERT INTO items VALUES (1, 'a')",
         "INSERT INTO hosts VALUES (1, '2001:db8::1')",
         "CREATE TABLE versioned (id INT PRIMARY KEY, v VARCHAR(10)) WITH SYSTEM VERSIONING",
         "INSERT INTO versioned VALUES (1, 'a')")
    doc = _pipeline_dict(db)
    doc["tables"]["hosts"] = {"topic": f"shop.{db['name']}.hosts", "record_key": "id"}
    doc["tables"]["versioned"] = {"topic": f"shop.{db['name']}.versioned", "record_key": "id"}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    out = run_cli("capture", "--once", "--timeout", "300", cwd=tmp_path, check=True)
    assert f"table {db['name']}.hosts is not captured: ip is INET6" in out.stderr, out.stderr
    assert f"table {db['name']}.versioned is not captured: WITH SYSTEM VERSIONING" in out.stderr, out.stderr
    # another table's DDL with such a type, mid-stream: skipped, the pipeline's tables go on (a versioned table's
    # rows in the binlog too)
    _sql(mariadb, "inet_shop", "CREATE TABLE other (id INT PRIMARY KEY, ip INET4)", "INSERT INTO items VALUES (2, 'b')",
         "UPDATE versioned SET v = 'b' WHERE id = 1")
    run_cli("capture", "--once", "--timeout", "300", cwd=tmp_path, check=True)
    assert sorted(r["item_id"] for r in _records(_files(p))) == [1, 2]
    made = run_cli("init", str(tmp_path / "fresh"), "--from-database", "--kind", "mariadb", "--dbname", db["name"],
                   "--user", db["user"], "--host", db["host"], "--port", str(db["port"]), "--password-env",
                   db["password_env"], cwd=tmp_path, check=True)
    assert f"{db['name']}.hosts: ip is INET6, a type Debezium's DDL parser does not know" in made.stderr, made.stderr
    assert f"skipped {db['name']}.versioned: WITH SYSTEM VERSIONING" in made.stderr, made.stderr
    fresh = yaml.safe_load((tmp_path / "fresh" / "hudi-cdc.yaml").read_text())["tables"]
    assert not {"hosts", "versioned"} & set(fresh), fresh


@pytest.mark.mariadb
def test_a_capture_stopped_while_the_server_is_busy_exits(tmp_path, mariadb, mariadb_database):
    """A continuous capture SIGTERMed while two writers keep the binlog busy exits (Debezium's binlog reader,
    blocked on the engine's full queue once nobody polls it, used to keep the JVM, and the process, alive for
    ever; capture now interrupts it: engine.stop_lingering_threads), and the next run lands every row: nothing
    the stop cut short is lost."""
    import signal
    import subprocess
    import sys
    import threading
    import time

    from tests.cli import cli_env

    db = mariadb_database("busy_shop")
    _sql(mariadb, "busy_shop", "CREATE TABLE items (item_id INT PRIMARY KEY AUTO_INCREMENT, category VARCHAR(10), "
         "v VARCHAR(200), n INT)")
    p = _write(tmp_path, {**db}, flush_size=1000)
    _capture(tmp_path)
    written = [0]

    def writer():  # 30,000 rows each, as fast as the server takes them: a backlog capture is behind on
        conn = mariadb.connect("busy_shop")
        with conn.cursor() as cur:
            for _ in range(30):
                cur.execute("INSERT INTO items (category, v, n) SELECT 'c', REPEAT('y', 100), seq FROM seq_1_to_1000")
                written[0] += 1000
        conn.close()

    writers = [threading.Thread(target=writer) for _ in range(2)]
    for t in writers:
        t.start()
    try:
        capture = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "capture", "--rotate-seconds", "1"],
                                   cwd=tmp_path, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
        time.sleep(15)  # streaming, far behind: Debezium's queue full
        capture.send_signal(signal.SIGTERM)
        try:
            _, err = capture.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            capture.kill()
            raise AssertionError("capture did not exit within 120 s of SIGTERM under load") from None
    finally:
        for t in writers:
            t.join()
    assert capture.returncode == 0, err
    run_cli("capture", "--once", "--timeout", "900", cwd=tmp_path, check=True)
    assert len({r["item_id"] for r in _records(_files(p))}) == written[0], written


# ------------------------------------------------------------------ source check
def _facts(pipeline, **kw):
    from hudi_cdc.sources.mysql import check as check_mysql
    from hudi_cdc.sources.tables import source_tables

    t = source_tables(pipeline)[0]
    base = {"user": "'cdc'@'%'", "rds": False,
            "settings": {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL", "server_id": "1",
                         "binlog_expire_logs_seconds": "604800"},
            "grants": ["GRANT SELECT, RELOAD, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `cdc`@`%`",
                       "GRANT INSERT ON `shop`.`hudi_cdc_shop_signal` TO `cdc`@`%`"],
            "tables": [check_mysql.TableFacts(t, True, "InnoDB", ["item_id"])]}
    base.update(kw)
    return check_mysql.Facts(**base)


def test_mysql_source_check_names_each_fix(tmp_path):
    from hudi_cdc.sources.mysql import check as check_mysql

    p = parse_pipeline(_pipeline_dict({"kind": "mysql", "name": "shop", "user": "u"}), "x.yaml", str(tmp_path))
    assert all(c.status == "ok" for c in check_mysql.evaluate(p, _facts(p))), check_mysql.evaluate(p, _facts(p))
    bad = _facts(p, settings={"log_bin": "ON", "binlog_format": "MIXED", "binlog_row_image": "MINIMAL",
                              "server_id": "0", "gtid_mode": "OFF", "binlog_order_commits": "OFF"},
                 grants=["GRANT SELECT ON `other`.* TO `cdc`@`%`"], rds=True, rds_retention_hours=None,
                 binlogs=["mysql-bin-changelog.000009"], offsets_file="mysql-bin-changelog.000003",
                 tables=[check_mysql.TableFacts(_facts(p).tables[0].table, True, "MyISAM", [])])
    checks = {c.name: c for c in check_mysql.evaluate(p, bad)}
    failed = sorted(n for n, c in checks.items() if c.status == "fail")
    assert failed == ["binlog_format", "binlog_retention", "binlog_row_image", "capture_position",
                      "primary_key:shop.items", "replication_client", "replication_slave", "select:shop", "server_id"]
    assert "parameter group" in checks["binlog_format"].fix
    assert checks["binlog_retention"].fix == "CALL mysql.rds_set_configuration('binlog retention hours', 72);"
    assert checks["replication_slave"].fix == "GRANT REPLICATION SLAVE ON *.* TO 'cdc'@'%';"
    assert checks["select:shop"].fix == "GRANT SELECT ON `shop`.* TO 'cdc'@'%';"
    assert "--drop-slot" in checks["capture_position"].fix
    assert {checks["gtid_mode"].status, checks["reload"].status, checks["engine:shop.items"].status,
            checks["binlog_order_commits"].status} == {"warn"}
    # incremental snapshots write the signal table: a warning with both ways to allow it
    assert checks["signal_table"].status == "warn"
    assert checks["signal_table"].fix.startswith("GRANT CREATE, INSERT ON `shop`.* TO 'cdc'@'%'; (or, as an admin: "
                                                 "CREATE TABLE IF NOT EXISTS shop.hudi_cdc_shop_signal (")


@pytest.mark.mariadb
def test_mysql_source_check_against_a_real_mariadb(tmp_path, mariadb, mariadb_database):
    import os

    db = mariadb_database("check_shop")
    _sql(mariadb, "check_shop", "CREATE TABLE items (item_id INT PRIMARY KEY, name TEXT)")
    _write(tmp_path, db)
    out = run_cli("source", "check", "-o", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    checks = {c["name"]: c["status"] for c in json.loads(out.stdout)["checks"]}
    assert checks["binlog_format"] == "ok" and checks["replication_slave"] == "ok"
    assert checks["select:check_shop"] == "ok" and checks["primary_key:check_shop.items"] == "ok"
    # a user with SELECT only: the replication rights fail, each with its GRANT
    conn = mariadb.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY 'pw'")
        cur.execute("GRANT SELECT ON check_shop.* TO 'reader'@'127.0.0.1'")
    conn.close()
    _write(tmp_path, {**db, "user": "reader", "password_env": "READER_PW"})
    out = run_cli("source", "check", cwd=tmp_path, env={**os.environ, "READER_PW": "pw"})
    assert out.returncode == 11
    assert "GRANT REPLICATION SLAVE ON *.* TO 'reader'@'127.0.0.1';" in out.stdout
    assert out.stderr.strip().splitlines()[-1].startswith("error: source check: ")


# ------------------------------------------------------------------ init --from-database
@pytest.mark.mariadb
def test_init_from_a_real_mariadb(tmp_path, mariadb, mariadb_database):
    """`init --from-database --kind mariadb`: each table of the database with its key as record_key and its
    `<prefix>.<database>.<table>` topic; a table keyed by a unique NOT NULL index gets the ADD PRIMARY KEY
    fix; a keyless one is left out with its fix; the file loads; a second run changes nothing."""
    import os

    db = mariadb_database("init_shop")
    _sql(mariadb, "init_shop",
         "CREATE TABLE orders (order_id INT PRIMARY KEY, region VARCHAR(10) NOT NULL, status ENUM('new','done'), "
         "placed DATE, total DECIMAL(10,2), doc JSON)",
         "CREATE TABLE order_lines (order_id INT, line_no SMALLINT, sku VARCHAR(20), PRIMARY KEY (order_id, line_no))",
         "CREATE TABLE codes (code VARCHAR(8) NOT NULL, label TEXT, note VARCHAR(9), UNIQUE KEY by_note (note), "
         "UNIQUE KEY by_code (code))",
         "CREATE TABLE audit (at DATETIME, what TEXT)")
    out_dir = tmp_path / "p"
    args = ["init", str(out_dir), "--from-database", "--kind", "mariadb", "--port", str(db["port"]), "--dbname",
            "init_shop", "--user", db["user"], "--password-env", db["password_env"], "--partition-field",
            "orders=region"]
    proc = run_cli(*args, cwd=tmp_path, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert ("skipped init_shop.audit: no primary key (ALTER TABLE init_shop.audit ADD PRIMARY KEY (...); or a unique "
            "index on NOT NULL columns)") in proc.stderr
    text = (out_dir / "hudi-cdc.yaml").read_text()
    assert "kind: mariadb" in text and "ALTER TABLE init_shop.codes ADD PRIMARY KEY (code);" in text
    assert "password_env: HUDI_CDC_TEST_MYSQL_PASSWORD" in text and "capture-test-password" not in text
    p = load_pipeline(out_dir / "hudi-cdc.yaml")
    assert p.source.database.kind == "mariadb" and p.source.database.port == db["port"]
    got = {n: (t.topic, t.record_keys, t.partition_field) for n, t in p.tables.items()}
    assert got == {"codes": ("init_shop.init_shop.codes", ["code"], None),
                   "order_lines": ("init_shop.init_shop.order_lines", ["order_id", "line_no"], None),
                   "orders": ("init_shop.init_shop.orders", ["order_id"], "region")}
    assert "# partition_field: <column>  # candidates: sku" in text  # order_lines: the text column
    again = run_cli(*args[:2], "--from-database", cwd=tmp_path, env=dict(os.environ))
    assert again.returncode == 0 and "unchanged" in again.stderr
    assert (out_dir / "hudi-cdc.yaml").read_text() == text


@pytest.mark.mariadb
@pytest.mark.spark
def test_mariadb_columns_avro_cannot_name_land_and_verify(tmp_path, mariadb, mariadb_database, inprocess_jobs):
    """Columns named `Order Date`, `user-id` and `1st` land as Order_Date, user_id and _1st (Avro's names);
    verify compares each MariaDB column with its lake column, CoW and MoR, after snapshot and binlog changes."""
    db = mariadb_database("odd_shop")
    _sql(mariadb, "odd_shop",
         "CREATE TABLE odd (id INT PRIMARY KEY, `Order Date` DATE, `user-id` VARCHAR(10), `1st` INT, "
         "region VARCHAR(4) NOT NULL)",
         "INSERT INTO odd VALUES " + ", ".join(
             f"({i}, '2024-03-{i:02d}', 'u-{i}', {i * 10}, '{['eu', 'us'][i % 2]}')" for i in range(1, 21)))
    doc = {"pipeline": "odd", "source": {"root": "landing", "database": {**db, "flush_size": 40}},
           "lake": {"root": "lake", "hive_database": "odd"}, "spark": {"shuffle_partitions": 2},
           "tables": {"odd": {"topic": f"shop.{db['name']}.odd", "record_key": "id", "partition_field": "region"}}}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    assert _capture(tmp_path)["events"] == 20
    run_main("bootstrap", cwd=tmp_path)
    _sql(mariadb, "odd_shop", "UPDATE odd SET `user-id` = 'renamed', `Order Date` = '1999-12-31' WHERE id <= 5",
         "UPDATE odd SET `1st` = NULL WHERE id = 6", "DELETE FROM odd WHERE id = 7",
         "INSERT INTO odd VALUES (100, NULL, 'new', 1, 'ap')")
    _capture(tmp_path)
    run_main("stream", "--table", "odd", "--once", cwd=tmp_path)
    for tt in ("cow", "mor"):
        out = run_cli("verify", "--table", "odd", "--type", tt, "-o", "json", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert result["equal"] and result["db_rows"] == 20 and not result["not_in_lake"], result
        assert {"Order_Date", "user_id", "_1st"} <= set(result["columns"]), result
    _sql(mariadb, "odd_shop", "UPDATE odd SET `user-id` = 'uncaptured' WHERE id = 9")  # never captured
    out = run_cli("verify", "--table", "odd", "--type", "cow", cwd=tmp_path)
    assert out.returncode == 10 and "1 different (e.g. key 9)" in out.stderr
