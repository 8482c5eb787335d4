"""Unchanged TOASTed values and schema changes mid-stream, from a real PostgreSQL 15 through real
Debezium capture and hudi-cdc's streamer (CoW and MoR, MoR compacted along the way), the lake read
back with hudi-rs and compared with the database by key and every column after each round.

The values are random (incompressible), > 8 kB, so PostgreSQL stores them out of line: an UPDATE
that leaves them alone carries Debezium's placeholder under REPLICA IDENTITY DEFAULT.
Values are compared as text/bytes (jsonb as its text, numeric as its digits), not in any typed form.
"""

from __future__ import annotations

import json
import os
import secrets
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER, is_placeholder
from hudi_cdc.lake.reader import read_table, rows_by_key
from tests.shared import require

TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
DDL = ("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
       "CREATE TABLE docs (id integer PRIMARY KEY, kind text NOT NULL, n integer, price numeric(8,2), "
       "label varchar(20), m mood, body text, doc jsonb, blob bytea, tags text[])")


# ------------------------------------------------------------------ unit: the placeholder's forms
@pytest.mark.unit
def test_placeholder_forms():
    raw = DEFAULT_PLACEHOLDER.encode()
    import base64

    assert is_placeholder(DEFAULT_PLACEHOLDER) and is_placeholder(raw)
    assert is_placeholder(base64.b64encode(raw).decode()) and is_placeholder(raw.hex().upper())
    assert is_placeholder([DEFAULT_PLACEHOLDER]) and is_placeholder([raw]) and is_placeholder(list(raw))
    assert is_placeholder({DEFAULT_PLACEHOLDER: DEFAULT_PLACEHOLDER})
    assert not is_placeholder("text") and not is_placeholder(None) and not is_placeholder([1, 2])
    assert not is_placeholder(DEFAULT_PLACEHOLDER + "x")


@pytest.mark.unit
def test_schema_change_is_described():
    from hudi_cdc.jobs.stream.evolve import describe_change

    def schema(*names):
        return {"type": "record", "name": "v", "fields": [{"name": n, "type": ["null", "string"]} for n in names]}

    cols = ["_hoodie_commit_time", "id", "a", "b", "__lsn", "_hoodie_is_deleted"]
    assert describe_change(cols, schema("id", "a", "b", "__lsn")) == ""
    assert describe_change([*cols, "__rejects"], schema("id", "a", "b", "__lsn")) == ""  # typed.py's, not landed
    assert describe_change(cols, schema("id", "a", "b", "__lsn", "c")) == \
        "new column(s) c added to the lake (null for rows written before)"
    assert "b no longer in the landed files" in describe_change(cols, schema("id", "a", "__lsn"))
    assert describe_change(cols, schema("id", "a", "bb", "__lsn")).startswith("column b looks renamed to bb")


@pytest.mark.unit
def test_deltastreamer_engine_refuses_placeholders(tmp_path):
    """HoodieDeltaStreamer 0.14 cannot fill them: the files after the checkpoint are scanned and the
    job refused in one line naming the file, column and key."""
    import fastavro

    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.errors import DataError
    from hudi_cdc.runners.deltastreamer.toast_guard import refuse_placeholders

    p = parse_pipeline({"pipeline": "g", "source": {"root": str(tmp_path / "landing")},
                        "lake": {"root": str(tmp_path / "lake"), "hive_database": "g"},
                        "tables": {"docs": {"topic": "db.public.docs", "record_key": "id"}}}, "x.yaml", str(tmp_path))
    d = Path(p.topic_dir("docs")[len("file://"):])
    d.mkdir(parents=True)
    schema = {"type": "record", "name": "v", "fields": [
        {"name": "id", "type": "int"}, {"name": "blob", "type": ["null", "bytes"]},
        {"name": "tags", "type": ["null", {"type": "array", "items": ["null", "string"]}]},
        {"name": "__lsn", "type": "long"}]}

    def land(name, recs, mtime):
        with open(d / name, "wb") as fh:
            fastavro.writer(fh, schema, recs)
        os.utime(d / name, ns=(mtime * 1_000_000, mtime * 1_000_000))

    land("db.public.docs+0+0000000000.avro", [{"id": 1, "blob": b"x", "tags": ["a"], "__lsn": 1}], 1000)
    refuse_placeholders(p, "docs", None)  # nothing to refuse
    land("db.public.docs+0+0000000001.avro",
         [{"id": 2, "blob": b"y", "tags": [DEFAULT_PLACEHOLDER], "__lsn": 2}], 2000)
    with pytest.raises(DataError, match=r"^db\.public\.docs\+0\+0000000001\.avro: column tags of docs \(id=2\) "
                                        r"carries Debezium's unchanged-TOAST placeholder.*REPLICA IDENTITY FULL"):
        refuse_placeholders(p, "docs", None)
    refuse_placeholders(p, "docs", "2000")  # already consumed: not scanned again


# ------------------------------------------------------------------ real PostgreSQL + Debezium + Spark
def _conn(db):
    import psycopg

    return psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                           password=os.environ[db["password_env"]])


def _sql(db, *statements, params=None):
    with _conn(db) as conn:
        with conn.transaction():
            for st in statements:
                conn.execute(st, params)


def _big_text(n=12_000):
    return secrets.token_urlsafe(n)[:n]


def _row(i):
    return {"id": i, "kind": "ab"[i % 2], "n": i, "price": Decimal(f"{i}.25"), "label": f"l{i}", "m": "ok",
            "body": _big_text(), "doc": f'{{"k": "{_big_text()}", "i": {i}}}', "blob": secrets.token_bytes(12_000),
            "tags": [_big_text(5_000), _big_text(5_000)]}  # (NULL elements: issue 23 item 1)


def _insert(db, rows):
    cols = list(rows[0])
    with _conn(db) as conn:
        with conn.transaction():
            for r in rows:
                conn.execute(f"INSERT INTO docs ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                             [r[c] for c in cols])


def _norm(v):
    if isinstance(v, memoryview | bytearray):
        return bytes(v)
    if isinstance(v, Decimal):
        return str(v.normalize())
    if isinstance(v, list):
        return [_norm(x) for x in v]
    if isinstance(v, bool) or v is None or isinstance(v, bytes | str):
        return v
    if isinstance(v, int | float):
        return str(Decimal(str(v)).normalize())
    return str(v)


def _schema_of(path):
    import fastavro

    with open(path, "rb") as fh:
        return fastavro.reader(fh).writer_schema


def _db_rows(db):
    from psycopg.rows import dict_row

    with _conn(db) as conn:
        conn.row_factory = dict_row
        cols = [r["attname"] for r in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = 'docs'::regclass AND attnum > 0 "
            "AND NOT attisdropped ORDER BY attnum")]
        sel = ", ".join(f"{c}::text AS {c}" if c in ("doc", "m") else c for c in cols)
        return cols, {r["id"]: {c: _norm(r[c]) for c in cols} for r in conn.execute(f"SELECT {sel} FROM docs")}


class Stream:
    """The pipeline over the test database, its rendered properties, rounds on the shared session."""

    def __init__(self, tmp: Path, db: dict, spark, registry: str | None = None):
        self.tmp, self.spark, self.db = tmp, spark, db
        source = {"root": "landing", "database": {**db, "flush_size": 50}}
        if registry:
            source["schema_registry"] = registry
        doc = {"pipeline": "toast", "source": source,
               "lake": {"root": "lake", "hive_database": "toast"}, "spark": {"shuffle_partitions": 2},
               "tables": {"docs": {"topic": f"{db['name']}.public.docs", "record_key": "id", "partition_field": "kind",
                                   "table_types": list(TYPES), "compaction_delta_commits": 2}}}
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        self.p = load_pipeline(tmp / "hudi-cdc.yaml")
        self.props = tmp / "props"
        render.write_properties(self.p, self.props)
        self.log: list[str] = []
        # keys whose lake value of a column may be null while the database shows a value: rows not
        # written since an ADD COLUMN ... DEFAULT, or since a RENAME (documented effects)
        self.stale: dict[int, set[str]] = {}
        self.gone: dict[int, dict[str, object]] = {}  # lake-only columns (dropped/renamed): value per key

    def capture(self):
        from hudi_cdc.capture.capture import capture_once

        return capture_once(self.p, progress=self.log.append, timeout_seconds=300)

    def capture_until_snapshots_done(self, runs=8):
        """capture --once runs until every incremental snapshot capture asked for has completed."""
        from hudi_cdc.capture.snapshot_requests import snapshot_status

        status = []
        for _ in range(runs):
            self.capture()
            status = snapshot_status(self.p)
            if status and all(r["state"] == "completed" for r in status):
                return status
        raise AssertionError(f"incremental snapshots not completed after {runs} capture runs: {status}")

    def verify(self):
        """The project's verify, value by value, CoW and MoR."""
        from hudi_cdc.sources.verify import verify

        for tt in TYPES:
            r = verify(self.p, "docs", tt)
            assert r.equal and not r.rejected, r.summary()

    def run(self, op):
        targets = []
        for tt in TYPES:
            props = self.props / render.props_filename(self.p, "docs", tt)
            flags = render.streamer_flags(self.p, render.Job("docs", tt, op), f"file://{props}")
            for kv in render.LOCAL_HOODIE_CONF:
                flags += ["--hoodie-conf", kv]
            targets.append(streamer.parse_argv(flags)[0])
        return streamer.run_targets(self.spark, targets, log=self.log.append)

    def touched(self, *ids):
        for i in ids:
            self.stale.pop(i, None)

    def lake(self, tt):
        return rows_by_key(read_table(self.p.base_path("docs", tt)), "id")

    def assert_equal(self, extra_cols=()):
        cols, want = _db_rows(self.db)
        for tt in TYPES:
            got = self.lake(tt)
            assert sorted(got) == sorted(want), f"{tt}: keys differ"
            for k, row in want.items():
                lake_row = got[k]
                for c in cols:
                    v = _norm(lake_row.get(c))
                    assert not is_placeholder(v), f"{tt}: placeholder in {c} of key {k}"
                    if v is None and c in self.stale.get(k, ()):
                        continue
                    assert v == row[c], f"{tt}: key {k} column {c}: lake {str(v)[:60]!r} != db {str(row[c])[:60]!r}"
                for c in extra_cols:
                    assert c in lake_row, f"{tt}: lake lost column {c}"
                    assert not is_placeholder(lake_row[c])
            for r in got.values():
                for c, v in r.items():
                    assert not is_placeholder(v), f"{tt}: placeholder in {c}"


@pytest.mark.postgres
def test_toast_and_ddl_mid_stream(tmp_path, pg_database, spark):
    db = pg_database("toastdb")
    _sql(db, *DDL)
    _insert(db, [_row(i) for i in range(1, 7)])
    with _conn(db) as conn:  # the values really are out of line
        toast = conn.execute("SELECT pg_relation_size(reltoastrelid) FROM pg_class WHERE relname = 'docs'").fetchone()
        assert toast[0] > 6 * 3 * 8_000
    s = Stream(tmp_path, db, spark)
    assert s.capture().snapshot
    s.run("BULK_INSERT")
    s.assert_equal()

    # round 1: updates leaving every TOASTed column alone (the stored value must stay); a row
    # inserted and updated in the same round (filled from its insert); a row whose body changes and
    # then stays (filled from the round's newer event, not the older stored value)
    _sql(db, "UPDATE docs SET n = n + 100 WHERE id IN (1, 2)")
    _insert(db, [_row(7)])
    _sql(db, "UPDATE docs SET n = 700, price = 7.75 WHERE id = 7")
    _sql(db, "UPDATE docs SET body = %s WHERE id = 3", params=(_big_text(),))
    _sql(db, "UPDATE docs SET n = 300 WHERE id = 3", "UPDATE docs SET label = 'x3' WHERE id = 3")
    s.capture()
    res = s.run("UPSERT")
    assert all(r.toast_placeholders and not r.toast_unresolved for r in res), [r.as_dict() for r in res]
    assert res[0].toast_placeholders["blob"] >= 4 and res[0].toast_placeholders["tags"] >= 4
    s.assert_equal()

    # round 2: ADD COLUMN without and with a default (constant; volatile and NOT NULL: a table rewrite),
    # DML before and after (files of two schemas in one round: old-schema events in flight), unchanged
    # TOAST values across the DDL. No change event carries the defaults of the rows that existed:
    # capture sees the new columns, finds their defaults in the catalog and takes an incremental
    # snapshot of the table (capture/defaults.py), so the lake reads what PostgreSQL reads
    _sql(db, "UPDATE docs SET n = n + 1 WHERE id = 4")
    _sql(db, "ALTER TABLE docs ADD COLUMN score integer", "ALTER TABLE docs ADD COLUMN flag text DEFAULT 'yes'",
         "ALTER TABLE docs ADD COLUMN token text NOT NULL DEFAULT md5(random()::text)")
    _sql(db, "UPDATE docs SET score = 5 WHERE id = 1")
    _insert(db, [{**_row(8), "score": 8, "flag": "no"}])
    snaps = s.capture_until_snapshots_done()
    assert [r["table"] for r in snaps] == ["docs"] and snaps[0]["rows"] >= 8, snaps
    assert any("flag, token have a default" in m for m in s.log), [m for m in s.log if "default" in m]
    res = s.run("UPSERT")
    assert all("new column(s) score, flag, token" in r.schema_change for r in res), [r.schema_change for r in res]
    assert len({json.dumps(_schema_of(f), sort_keys=True) for f in res[0].files}) >= 2  # both schemas, one round
    s.assert_equal()
    s.verify()

    # round 3: type widening (int -> bigint, varchar(n) -> text, numeric precision up), an enum
    # label added and used, the TOASTed columns unchanged throughout
    _sql(db, "UPDATE docs SET n = n + 1 WHERE id = 5")
    _sql(db, "ALTER TABLE docs ALTER COLUMN n TYPE bigint", "ALTER TABLE docs ALTER COLUMN label TYPE text",
         "ALTER TABLE docs ALTER COLUMN price TYPE numeric(12,2)")
    _sql(db, "ALTER TYPE mood ADD VALUE 'ecstatic'")
    # a default set later changes no row (PostgreSQL's rows keep 'yes'): no snapshot either
    _sql(db, "ALTER TABLE docs ALTER COLUMN flag SET DEFAULT 'later'")
    _sql(db, "UPDATE docs SET n = 9876543210, price = 1234567890.12, label = %s, m = 'ecstatic' WHERE id = 2",
         params=("a label longer than twenty characters",))
    s.touched(2, 5)
    s.capture()
    s.run("UPSERT")
    s.assert_equal()
    from hudi_cdc.capture.snapshot_requests import snapshot_status

    assert snapshot_status(s.p) == snaps  # no new snapshot for SET DEFAULT

    # round 4: DROP COLUMN and RENAME COLUMN; the stream goes on, the lake keeps both old columns
    _sql(db, "ALTER TABLE docs DROP COLUMN label")
    _sql(db, "UPDATE docs SET n = n + 1 WHERE id = 6")
    _sql(db, "ALTER TABLE docs RENAME COLUMN score TO points")
    for k in range(1, 9):
        s.stale.setdefault(k, set()).add("points")
    _sql(db, "UPDATE docs SET points = 9, doc = '{\"small\": true}' WHERE id = 3")
    s.touched(3, 6)
    s.capture()
    res = s.run("UPSERT")
    assert any("looks renamed" in r.schema_change or "no longer in the landed files" in r.schema_change
               for r in res), [r.schema_change for r in res]
    s.assert_equal(extra_cols=("label", "score"))
    for tt in TYPES:
        lake = s.lake(tt)
        assert lake[6]["label"] is None and lake[1]["label"] == "l1"  # null for rows written after the drop
        assert lake[1]["score"] == 5 and lake[3]["points"] == 9

    # round 5: more unchanged-TOAST updates after all of it; MoR compacts (every 2 delta commits)
    _sql(db, "UPDATE docs SET n = n + 1")
    s.touched(*range(1, 9))
    s.capture()
    res = s.run("UPSERT")
    assert all(not r.toast_unresolved for r in res)
    s.assert_equal()
    from tests.shared import timeline_files

    names = timeline_files(s.p.base_path("docs", "MERGE_ON_READ"))
    assert any(n.endswith(".commit") for n in names), "MoR never compacted"

    # round 6: primary-key changes of rows whose TOASTed values stay (issue 36): Debezium sends a delete
    # of the old key and a create of the new one carrying the placeholder; capture lands the old key
    # beside it, and the round takes the values from the old key's row (its newest version stored in a
    # CoW base file or a MoR log / compacted file), and, for 5 -> 105 -> 205, from the round's own event
    _sql(db, "UPDATE docs SET id = 104 WHERE id = 4")
    _sql(db, "UPDATE docs SET id = 105, n = 5 WHERE id = 5", "UPDATE docs SET id = 205 WHERE id = 105")
    s.capture()
    res = s.run("UPSERT")
    assert all(r.toast_placeholders and not r.toast_unresolved for r in res), [r.as_dict() for r in res]
    s.assert_equal()
    s.verify()


# ------------------------------------------------------------------ Spark: the fill's rules on landed files
def test_fill_rules_on_landed_files(tmp_path, spark, monkeypatch):
    """The placeholder in a string column takes: the stored value (CoW base file, MoR log); the round's
    earlier value; the stored value when the stored row is newer than the round's earlier event (a late
    event landed after it); null, counted, for a key the table never held. The rounds take a wide table's
    path (materialize.py: the events and the filled events computed once, then released). The stored values are
    read in the driver (driver_values.py), then, for the key changes, past its size bound, through Spark."""
    from hudi_cdc.jobs.stream import driver_values, materialize
    from tests.jobs.test_cdc_semantics import SCHEMA, SNAPSHOT, Lake, ev

    monkeypatch.setattr(materialize, "WIDE", 0)  # as a table of more than 100 columns
    persisted = spark.sparkContext._jsc.getPersistentRDDs().size()
    lake = Lake(tmp_path, spark)
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    ph = DEFAULT_PLACEHOLDER
    lake.land([ev(1, 200, name=ph), ev(2, 300, name="two-new"), ev(2, 310, name=ph), ev(3, 500, name="three-500")])
    said: list[str] = []
    res = lake.run("UPSERT", log=said.append)
    assert [r.toast_placeholders for r in res] == [{"name": 2}] * 2 and not any(r.toast_unresolved for r in res)
    assert sum("2 stored row(s) of 2 key(s) read in the driver (hudi-rs, 3 column(s))" in m for m in said) == 2, said
    lake.land([ev(3, 400, name="three-400, late"), ev(3, 600, name=ph), ev(1, 610, name=ph, by=1901),
               ev(99, 700, name=ph, op="u"), ev(6, 650, name="six-log")])
    monkeypatch.setattr(driver_values, "MAX_BYTES", 1)  # the values through Spark (more than the driver keeps)
    res = lake.run("UPSERT", log=said.append)
    assert [r.toast_unresolved for r in res] == [{"name": 1}] * 2
    assert sum("stored values read through Spark (more than" in m for m in said) == 2, said
    monkeypatch.setattr(driver_values, "MAX_BYTES", 32 << 20)
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        t = lake.table(tt)
        assert t[1]["name"] == "artist 1" and t[1]["birth_year"] == 1901 and t[1]["__lsn"] == 610
        assert t[2]["name"] == "two-new" and t[3]["name"] == "three-500" and t[3]["__lsn"] == 600
        assert t[99]["name"] is None and json.loads(t[99]["__rejects"])["name"]["reason"].startswith(
            "unchanged TOAST value not known")  # flagged, never lost silently
        assert not any(is_placeholder(v) for r in t.values() for v in r.values())

    # key changes (capture lands the old key beside the placeholder, capture/oldkey.py): the value comes
    # from the old key's stored row (6: its newest version in the MoR log, written above), from the old key's earlier
    # event of the round (5, then a chain 5 -> 41 -> 42), and stays unknown, flagged, for an old key
    # nobody knows (77 -> 44)
    old = dict(SCHEMA, fields=[*SCHEMA["fields"], {"name": "__oldkey_artist_id", "type": ["null", "int"],
                                                   "default": None}])

    def move(frm, to, lsn):
        return [ev(frm, lsn, deleted=True), {**ev(to, lsn, name=ph, op="c"), "__oldkey_artist_id": frm}]

    lake.land([ev(5, 800, name="five-new"), *move(2, 40, 810), *move(6, 43, 820), *move(5, 41, 830),
               *move(41, 42, 840), *move(77, 44, 850)], schema=old)
    said.clear()
    res = lake.run("UPSERT", log=said.append)
    # the new keys' stored rows (none), then the old keys' (2, 5 and 6 stored; 41 and 77 not), in the driver
    assert [sum(f"{n} stored row(s) of 5 key(s) read in the driver" in m for m in said) for n in (0, 3)] == [2, 2], said
    assert [r.toast_unresolved for r in res] == [{"name": 1}] * 2, [r.toast_unresolved for r in res]
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        t = lake.table(tt)
        assert not {2, 5, 6, 41} & set(t)
        assert (t[40]["name"], t[43]["name"], t[42]["name"]) == ("two-new", "six-log", "five-new")
        assert t[40]["__rejects"] is None and t[44]["name"] is None and "name" in json.loads(t[44]["__rejects"])
        assert not any(c.startswith("__oldkey_") for c in t[40])  # capture's column never reaches the lake
    assert spark.sparkContext._jsc.getPersistentRDDs().size() == persisted  # every round released what it kept


@pytest.mark.postgres
@pytest.mark.deltastreamer
def test_deltastreamer_engine_follows_ddl(tmp_path, pg_database):
    """The real HoodieDeltaStreamer 0.14 (CoW, three JVMs: bootstrap and two rounds): ADD COLUMN and
    int -> bigint with events of both schemas in one round, then DROP COLUMN: the lake equals the
    database and keeps the dropped column (null for rows written after), as hudi-cdc's streamer does.
    Then an update leaving a TOASTed value alone (row 5, never updated before) is refused in one line
    before any job runs, and the lake still holds the stored values, no placeholder."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.errors import DataError
    from hudi_cdc.runners.deltastreamer import runtime

    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")
    db = pg_database("ddl014")
    _sql(db, "CREATE TABLE docs (id integer PRIMARY KEY, kind text NOT NULL, n integer, label varchar(20), t text, "
             "body text)",
         "INSERT INTO docs SELECT g, 'k' || (g % 2), g, 'l' || g, 't' || g FROM generate_series(1, 3) g")
    _sql(db, "INSERT INTO docs VALUES (5, 'k1', 5, 'l5', 't5', %s)", params=[_big_text()])  # TOASTed body
    doc = {"pipeline": "d014", "hudi": {"version": "0.14.0"},
           "source": {"root": "landing", "database": {**db, "flush_size": 50}},
           "lake": {"root": "lake", "hive_database": "d014"}, "spark": {"shuffle_partitions": 2},
           "tables": {"docs": {"topic": "ddl014.public.docs", "record_key": "id", "partition_field": "kind",
                               "table_types": ["COPY_ON_WRITE"]}}}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    quiet = lambda m: None  # noqa: E731

    def lake_equals_db(stale=()):
        from psycopg.rows import dict_row

        with _conn(db) as conn:
            conn.row_factory = dict_row
            want = {r["id"]: r for r in conn.execute("SELECT * FROM docs")}
        got = rows_by_key(read_table(p.base_path("docs", "COPY_ON_WRITE")), "id")
        assert sorted(got) == sorted(want)
        for k, row in want.items():
            for c, v in row.items():
                if (k, c) not in stale:
                    assert _norm(got[k][c]) == _norm(v), f"key {k} column {c}: lake {got[k][c]!r} != db {v!r}"
        return got

    capture_once(p, progress=quiet, timeout_seconds=300)
    pipe.bootstrap(p, "docs", progress=quiet)
    lake_equals_db()
    _sql(db, "UPDATE docs SET t = 'before' WHERE id = 1")
    _sql(db, "ALTER TABLE docs ADD COLUMN score integer", "ALTER TABLE docs ALTER COLUMN n TYPE bigint")
    _sql(db, "UPDATE docs SET score = 5, n = 9876543210 WHERE id = 2",
         "INSERT INTO docs VALUES (4, 'k0', 4, 'l4', 't4', 44)")
    capture_once(p, progress=quiet, timeout_seconds=300)
    pipe.stream(p, "docs", once=True, progress=quiet)
    lake_equals_db()
    _sql(db, "ALTER TABLE docs DROP COLUMN label", "UPDATE docs SET t = 'after' WHERE id = 3")
    capture_once(p, progress=quiet, timeout_seconds=300)
    pipe.stream(p, "docs", once=True, progress=quiet)
    got = lake_equals_db()
    assert got[3]["label"] is None and got[1]["label"] == "l1" and got[2]["n"] == 9876543210

    _sql(db, "UPDATE docs SET n = n + 1 WHERE id = 5")  # body left alone: Debezium's placeholder
    capture_once(p, progress=quiet, timeout_seconds=300)
    with pytest.raises(DataError, match=r"ddl014\.public\.docs\+0\+\d+\.avro: column body "
                                        r"of docs \(id=5\) carries Debezium's unchanged-TOAST placeholder"):
        pipe.stream(p, "docs", once=True, progress=quiet)
    after = rows_by_key(read_table(p.base_path("docs", "COPY_ON_WRITE")), "id")
    assert after == got and not any(is_placeholder(v) for r in after.values() for v in r.values())


@pytest.mark.unit
def test_deltastreamer_source_schema_keeps_dropped_fields(tmp_path):
    import fastavro

    from hudi_cdc.runners.deltastreamer.schema_union import union_schema

    def schema(*fields):
        return {"type": "record", "name": "v", "fields": list(fields)}

    old = schema({"name": "id", "type": "int"}, {"name": "label", "type": ["null", "string"], "default": None},
                 {"name": "n", "type": "int"})
    new = schema({"name": "id", "type": "int"}, {"name": "n", "type": "long"},
                 {"name": "score", "type": ["null", "int"], "default": None})
    with open(tmp_path / "a.avro", "wb") as fh:
        fastavro.writer(fh, old, [])
    got = union_schema(new, [tmp_path / "a.avro"])
    assert [(f["name"], f["type"]) for f in got["fields"]] == [
        ("id", "int"), ("n", "long"), ("score", ["null", "int"]), ("label", ["null", "string"])]
    assert got["fields"][-1]["default"] is None
    fastavro.parse_schema(got)
