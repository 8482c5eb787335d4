"""The source database's life around the pipeline (issue 24), on a real PostgreSQL 15 and real
Debezium: TRUNCATE, heartbeats and the slot's retained WAL, tables without a usable replica identity.

Unit tests check the pieces without a database (properties, the streamer's truncate split rules);
tests marked ``postgres`` (and ``spark``) run the real chain: capture -> landed files -> bootstrap /
stream (Hudi 1.2; the local runner's jobs on the shared SparkSession, tests/plugins/inprocess_jobs.py) ->
verify (hudi-rs against the database).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline, parse_pipeline
from tests.capture.test_capture import _files, _records
from tests.cli import cli_env, run_cli

ROOT = Path(__file__).resolve().parents[2]


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


def _cli(base: Path, *args):
    return run_cli("-c", str(base / "hudi-cdc.yaml"), *args, cwd=base, timeout=900)


# ------------------------------------------------------------------ unit
def test_capture_keeps_truncates_and_sends_heartbeats(tmp_path):
    from hudi_cdc.capture.capture import engine_properties
    from hudi_cdc.capture.unwrap import split_transforms
    from hudi_cdc.connect.connectors import source_connector

    db = {"name": "shop", "user": "u"}
    p = parse_pipeline(_pipeline_dict(db), "x.yaml", str(tmp_path))
    props = engine_properties(p, None)
    assert props["skipped.operations"] == "none"
    assert props["heartbeat.interval.ms"] == "10000"
    # the default action: a logical decoding message at the server's position, which capture accepts
    assert props["heartbeat.action.query"] == ("SELECT pg_logical_emit_message(false, 'hudi_cdc.hudi_cdc_life"
                                               ".heartbeat', now()::text)")
    assert props["message.prefix.include.list"] == r"hudi_cdc\.hudi_cdc_life,hudi_cdc\.hudi_cdc_life\.heartbeat"
    engine, smt = split_transforms(props)
    assert not any(k.startswith("transforms") for k in engine)
    assert smt["type"] == "io.debezium.transforms.ExtractNewRecordState"
    assert smt["add.fields"] == "op,db,table,schema,lsn,source.ts_ms,sequence"
    q = "UPDATE public.hudi_cdc_heartbeat SET ts = now() WHERE id = 1"
    p2 = parse_pipeline(_pipeline_dict({**db, "heartbeat_interval_ms": 2500, "heartbeat_action_query": q}),
                        "x.yaml", str(tmp_path))
    props2 = engine_properties(p2, None)
    assert props2["heartbeat.interval.ms"] == "2500" and props2["heartbeat.action.query"] == q
    cfg = source_connector(p2)["config"]
    assert cfg["heartbeat.interval.ms"] == "2500" and cfg["heartbeat.action.query"] == q
    off = engine_properties(parse_pipeline(_pipeline_dict({**db, "heartbeat_interval_ms": 0}), "x.yaml",
                                           str(tmp_path)), None)
    assert "heartbeat.interval.ms" not in off and "heartbeat.action.query" not in off
    none = engine_properties(parse_pipeline(_pipeline_dict({**db, "heartbeat_action_query": ""}), "x.yaml",
                                            str(tmp_path)), None)
    assert none["heartbeat.interval.ms"] == "10000" and "heartbeat.action.query" not in none


def test_source_check_heartbeat_advice(tmp_path):
    from types import SimpleNamespace

    from hudi_cdc.sources.postgres.check import _heartbeat_checks

    def check(error=None, **db):
        p = parse_pipeline(_pipeline_dict({"name": "shop", "user": "u", **db}), "x.yaml", str(tmp_path))
        (c,) = _heartbeat_checks(p, SimpleNamespace(heartbeat_query_error=error))
        return c

    assert check().status == "ok" and "capture's logical decoding message" in check().detail
    assert check(heartbeat_interval_ms=0).status == "warn"
    none = check(heartbeat_action_query="")
    assert none.status == "warn" and "CREATE TABLE IF NOT EXISTS public.hudi_cdc_heartbeat" in none.fix
    bad = check('relation "hb" does not exist', heartbeat_action_query="UPDATE hb SET ts = now()")
    assert bad.status == "fail" and 'relation "hb" does not exist' in bad.detail
    assert "CREATE TABLE IF NOT EXISTS public.hudi_cdc_heartbeat (id int PRIMARY KEY, ts timestamptz NOT NULL)" in \
        bad.fix


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
def test_truncate_empties_the_lake_as_of_its_lsn(tmp_path, pg_database, inprocess_jobs):
    """500 rows, bootstrap; then changes, TRUNCATE, 10 new rows and a change after it: the lake holds
    exactly the database's 10 rows (CoW and MoR, verify through hudi-rs), the round is one
    insert_overwrite_table commit with the truncate's LSN in its metadata. A redelivered file from
    before the truncate changes nothing; a later round applies normally."""
    from hudi_cdc import pipeline as pipe
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.lake.reader import read_table
    from hudi_cdc.query.api import changes, history
    from hudi_cdc.sources.verify import verify

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
    pre_truncate = _files(p, "items")
    got = capture_once(p, progress=log.append, timeout_seconds=300)
    new = _records(_files(p, "items")[len(pre_truncate):])
    assert got.events == len(new) == 35
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
        # history and changes name it: a row the truncate removed, the commit that applied it
        states = history(base, "100", engine="native").states
        assert [st["change"] for st in states] == ["insert", "truncate"]
        assert states[-1]["operation"] == "insert_overwrite_table"
        ch = changes(base, "2000-01-01", engine="native")
        assert [c["truncated_at"] for c in ch.commits][-1] == str(trunc[0]["__lsn"])

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

    # a TRUNCATE alone: nothing after it in the round, the lake ends empty as the database
    _sql(db, "TRUNCATE items")
    capture_once(p, progress=log.append, timeout_seconds=300)
    for table in p.tables:
        pipe.stream(p, table, once=True, progress=log.append)
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
        assert r.db_rows == 0 and read_table(p.base_path(table, tt)) == []


def _last_commit_meta(base: str) -> dict:
    """The newest completed write's action and commit metadata, read by hudi-rs (inspect/)."""
    from hudi_cdc.lake.metadata import commit_metadata
    from hudi_cdc.lake.table import open_table
    from hudi_cdc.lake.timeline import completed_writes, read_timeline

    table = open_table(base)
    last = completed_writes(read_timeline(table))[-1]
    return {"action": last.action, **commit_metadata(table, [last])[0]}


@pytest.mark.postgres
def test_heartbeats_let_an_idle_slot_release_wal(tmp_path, postgres, pg_database):
    """Only an idle captured table, a continuous capture, and tens of MB written to a table it does not
    capture: the slot's retained WAL falls back (heartbeats, capture's own logical message as the
    action) instead of growing; no heartbeat becomes a landed row; `status` and `source check` show
    the slot's retained WAL."""
    import signal

    import psycopg

    from hudi_cdc.sources import source_check

    db = pg_database("life_heartbeat")
    _sql(db, "CREATE TABLE quiet (id int PRIMARY KEY, v text)", "INSERT INTO quiet VALUES (1, 'a'), (2, 'b')",
         "CREATE TABLE noise (id bigserial PRIMARY KEY, pad text)")
    tables = {"quiet": {"topic": "life_heartbeat.public.quiet", "record_key": "id",
                        "table_types": ["COPY_ON_WRITE"]}}
    base = tmp_path
    cfg = _pipeline_dict({**db, "heartbeat_interval_ms": 1000}, tables=tables)
    base.mkdir(parents=True, exist_ok=True)
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    p = load_pipeline(base / "hudi-cdc.yaml")

    def slot():
        with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
            return conn.execute(
                "SELECT active, pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint FROM pg_replication_slots "
                "WHERE slot_name = %s", (p.slot_name,)).fetchone()

    proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(base / "hudi-cdc.yaml"), "capture",
                             "--rotate-seconds", "1", "-o", "json"], cwd=base, env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(what, check, seconds=300):
        deadline = time.monotonic() + seconds
        while not check():
            assert proc.poll() is None, f"capture exited while waiting for {what}: {proc.communicate()}"
            assert time.monotonic() < deadline, f"no {what} within {seconds} s (slot: {slot()})"
            time.sleep(0.5)

    written = 0
    try:
        wait_for("the snapshot", lambda: len(_records(_files(p, "quiet"))) == 2 and (slot() or (False,))[0])
        landed_before = _files(p, "quiet")
        with _connect(db) as conn:
            for _ in range(8):  # ~45 MB of WAL into a table the pipeline does not capture
                conn.execute("INSERT INTO noise (pad) SELECT repeat(md5(g::text), 16) FROM generate_series(1, 10000) g")
        peak = slot()[1]
        written = peak
        assert peak > 30 * 1024 * 1024, peak
        # bounded wait, no timing assert: the retained WAL falls back below a tenth of what was written
        wait_for("the slot's retained WAL to fall back", lambda: slot()[1] < peak // 10)
        assert _files(p, "quiet") == landed_before  # heartbeats never become landed rows
        checks = {c.name: c for c in source_check(p)}
        assert checks["slot"].status == "ok" and "retains" in checks["slot"].detail
        assert checks["heartbeat"].status == "ok" and "every 1000 ms" in checks["heartbeat"].detail
        out = _cli(base, "status")
        assert f"slot {p.slot_name}: retains" in out.stderr and ", active" in out.stderr
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    assert written > 0
    # heartbeat records are not landed anywhere (no topic folder of their own)
    # (beside it, capture's transaction cuts: tests/jobs/test_transactions.py)
    assert sorted(d.name for d in (base / "landing").iterdir() if d.name[0] != "_") == ["life_heartbeat.public.quiet"]


HISTORY_DDL = ("CREATE TABLE public.history (tid int, bid int, aid int, delta int, mtime timestamp, "
               "filler char(22))")  # pgbench_history: no primary key


def _publications(db: dict) -> list[str]:
    with _connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT pubname FROM pg_publication ORDER BY 1")]


@pytest.mark.postgres
def test_keyless_table_is_refused_before_the_publication_is_touched(tmp_path, pg_database):
    """A pipeline table without a usable replica identity (pgbench_history-like): capture and
    source check refuse in one line naming the table and the fix, exit 11, and no publication is
    created, so the application's UPDATE and DELETE keep working. The same for a table an existing
    publication already publishes besides the pipeline's."""
    db = pg_database("life_keyless")
    _sql(db, HISTORY_DDL, "INSERT INTO history VALUES (1, 1, 1, 5, now(), 'x'), (2, 1, 2, -3, now(), 'y')",
         "CREATE TABLE accounts (aid int PRIMARY KEY, abalance int)", "INSERT INTO accounts VALUES (1, 0), (2, 0)")
    tables = {"history": {"topic": "life_keyless.public.history", "record_key": ["tid", "aid", "mtime"],
                          "table_types": ["COPY_ON_WRITE"]},
              "accounts": {"topic": "life_keyless.public.accounts", "record_key": "aid",
                           "table_types": ["COPY_ON_WRITE"]}}
    _write_pipeline(tmp_path, db, tables=tables)
    out = _cli(tmp_path, "capture", "--once")
    assert out.returncode == 11, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "public.history has no primary key (REPLICA IDENTITY DEFAULT)" in line
    assert "PostgreSQL would reject its UPDATE and DELETE; nothing was changed" in line
    assert "ALTER TABLE public.history REPLICA IDENTITY FULL;" in line
    assert _publications(db) == []
    _sql(db, "UPDATE history SET delta = delta + 1", "DELETE FROM history WHERE tid = 2")  # still accepted
    check = _cli(tmp_path, "source", "check")
    assert check.returncode == 11
    assert "history: replica identity" in check.stdout and "ALTER TABLE public.history REPLICA IDENTITY FULL;" in \
        check.stdout

    # the pipeline captures accounts only, but its (existing) publication also publishes history
    _sql(db, "CREATE PUBLICATION hudi_cdc_life FOR TABLE accounts, history")
    with _connect(db) as conn:
        conn.execute("ALTER PUBLICATION hudi_cdc_life SET (publish = 'insert')")  # so far harmless
    only_accounts = {"accounts": tables["accounts"]}
    _write_pipeline(tmp_path, db, tables=only_accounts)
    with _connect(db) as conn:
        conn.execute("ALTER PUBLICATION hudi_cdc_life SET (publish = 'insert, update, delete')")
    # the application is refused by PostgreSQL now (what capture must never cause) ...
    import psycopg

    with pytest.raises(psycopg.errors.ObjectNotInPrerequisiteState, match="does not have a replica identity"):
        _sql(db, "UPDATE history SET delta = 0")
    # ... and capture names it before it starts
    cfg = yaml.safe_load((tmp_path / "hudi-cdc.yaml").read_text())
    cfg["source"]["database"]["publication"] = "hudi_cdc_life"
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    out = _cli(tmp_path, "capture", "--once")
    assert out.returncode == 11 and "public.history has no primary key" in out.stderr
    check = _cli(tmp_path, "source", "check")
    assert check.returncode == 11 and "publication member public.history" in check.stdout


@pytest.mark.postgres
def test_unique_index_offered_as_replica_identity_and_record_key(tmp_path, capsys, pg_database):
    """A table without a primary key but with a unique index on NOT NULL columns: init --from-database
    takes the index's columns as record key and prints the REPLICA IDENTITY USING INDEX to run;
    capture refuses until it is run, then captures updates and deletes carrying that key."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.cli import main

    db = pg_database("life_unique")
    _sql(db, "CREATE TABLE ledger (entry_no bigint NOT NULL, branch int NOT NULL, amount int, note text)",
         "CREATE UNIQUE INDEX ledger_entry ON ledger (branch, entry_no)",
         "CREATE UNIQUE INDEX ledger_note ON ledger (note)",  # nullable: not usable
         "INSERT INTO ledger SELECT g, g % 3, g * 10, NULL FROM generate_series(1, 30) g",
         HISTORY_DDL)
    d = tmp_path / "p"
    code = main(["init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--port",
                 str(db["port"]), "--password-env", db["password_env"]])
    _, err = capsys.readouterr()
    assert code == 0, err
    text = (d / "hudi-cdc.yaml").read_text()
    assert "    record_key: [branch, entry_no]  # the unique index ledger_entry\n" in text
    assert "# no primary key: before capture, ALTER TABLE public.ledger REPLICA IDENTITY USING INDEX ledger_entry;" \
        in text
    assert ("public.ledger: no primary key; record_key branch, entry_no from unique index ledger_entry. Before "
            "capture: ALTER TABLE public.ledger REPLICA IDENTITY USING INDEX ledger_entry;") in err
    # history (no key, no unique index) is offered as an append-only raw history (tests/jobs/test_transactions.py)
    assert "public.history: no primary key: added as an append-only raw history" in err and "  history:" in text
    _sql(db, "ALTER TABLE history REPLICA IDENTITY FULL")
    p = load_pipeline(d / "hudi-cdc.yaml")
    from hudi_cdc.errors import SourceError

    with pytest.raises(SourceError, match=r"public\.ledger has no primary key .*REPLICA IDENTITY USING INDEX "
                                          r"ledger_entry; \(record_key: branch, entry_no;"):
        capture_once(p, progress=lambda m: None, timeout_seconds=300)
    assert _publications(db) == []
    _sql(db, "ALTER TABLE ledger REPLICA IDENTITY USING INDEX ledger_entry")
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _sql(db, "UPDATE ledger SET amount = -1 WHERE entry_no = 4", "DELETE FROM ledger WHERE entry_no = 5")
    got = capture_once(p, progress=lambda m: None, timeout_seconds=300)
    assert got.events == 2
    recs = _records(_files(p, "ledger"))[-2:]
    assert [(r["__op"], r["branch"], r["entry_no"], r["amount"]) for r in recs] == [("u", 1, 4, -1), ("d", 2, 5, None)]


@pytest.mark.spark
@pytest.mark.deltastreamer
def test_deltastreamer_refuses_a_landed_truncate(tmp_path):
    """The 0.14 HoodieDeltaStreamer cannot apply a TRUNCATE: a round whose unread files hold one is
    refused before any job runs, in one line naming the file, with the re-snapshot recovery; the
    table keeps its timeline and checkpoint."""
    from hudi_cdc.errors import DataError
    from hudi_cdc.runners.deltastreamer import runtime, submit
    from tests.runners.test_deltastreamer_real import SNAPSHOT, Lake, ev
    from tests.shared import require

    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")
    lake = Lake(tmp_path, types=("COPY_ON_WRITE",))
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    base = lake.base("COPY_ON_WRITE")
    before = submit.completed_instants(base)
    truncate_row = {**ev(0, 400, deleted=True), "__op": "t"}  # as capture lands it (unwrap.py)
    path = lake.land([ev(1, 390, name="gone"), truncate_row, ev(40, 410, op="c")])
    with pytest.raises(DataError) as err:
        lake.run("UPSERT")
    msg = str(err.value)
    assert msg.startswith(f"{path.name}: record 1 is a TRUNCATE of public.artists at __lsn 400, which "
                          "HoodieDeltaStreamer 0.14.0 cannot apply; nothing was written.")
    assert "hudi-cdc capture --drop-slot" in msg and "bootstrap --table artists --force" in msg
    assert "\n" not in msg
    assert submit.completed_instants(base) == before


@pytest.mark.spark
def test_truncate_in_bootstrap_and_late_events_after_it(tmp_path, spark):
    """hudi-cdc's streamer on landed files (in-process Spark, CoW and MoR): a bootstrap whose files
    hold a TRUNCATE takes only what follows it; late events from before it and a redelivered copy of
    the file change nothing; a newer event applies."""
    from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake, ev

    lake = Lake(tmp_path, spark)
    lake.land(SNAPSHOT)
    truncate_row = {**ev(0, 200, deleted=True), "__op": "t"}  # as capture lands it (unwrap.py)
    after = [ev(1, 150, name="before the truncate"), truncate_row, ev(40, 210, nat="French", op="c"),
             ev(41, 220, nat="German", op="c"), ev(40, 230, deleted=True)]
    truncate_file = lake.land(after)

    def keys():
        return {tt: {k: v["name"] for k, v in lake.table(tt).items()} for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}

    res = lake.run("BULK_INSERT")
    assert [(r.records_written, r.truncated_at) for r in res] == [(1, [200]), (1, [200])]
    assert keys() == {tt: {41: "artist 41"} for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}

    lake.land([ev(2, 120, name="late"), ev(5, 180, nat="German", op="c"), ev(41, 190, name="older")])
    res = lake.run("UPSERT")
    assert all(r.truncated_at is None for r in res)
    assert keys() == {tt: {41: "artist 41"} for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}

    lake.land(after)  # the truncate's file delivered again: at the floor, ignored
    lake.run("UPSERT")
    assert keys() == {tt: {41: "artist 41"} for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}
    assert truncate_file.exists()

    lake.land([ev(2, 300, name="two is back", op="c")])
    lake.run("UPSERT")
    assert keys() == {tt: {41: "artist 41", 2: "two is back"} for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}
