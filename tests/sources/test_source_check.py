"""`hudi-cdc source check`: unit tests of the evaluation (facts -> checks and their fixes), and tests
against a real PostgreSQL 15 (mark postgres) where each failing check's printed fix, run as printed,
makes the check pass."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.sources.postgres.check import Facts, TableFacts, evaluate
from hudi_cdc.sources.tables import SourceTable

TABLES = {
    "artists": {"topic": "moma.public.artists", "record_key": "artist_id", "partition_field": "nationality"},
    "artworks": {"topic": "moma.public.artworks", "record_key": "artwork_id"},
}


def _pipeline_dict(db: dict, tables=None) -> dict:
    return {"pipeline": "chk", "source": {"root": "landing", "database": db},
            "lake": {"root": "lake", "hive_database": "chk"}, "tables": tables or TABLES}


def _facts(**kw) -> Facts:
    base = {"user": "u", "database": "moma", "wal_level": "logical", "max_replication_slots": 10,
            "max_wal_senders": 10, "slots_used": 0, "senders_used": 0, "replication": True, "rds": False,
            "publication": "hudi_cdc_chk", "publication_exists": True,
            "publication_actions": {"insert": True, "update": True, "delete": True},
            "published": {("public", "artists"), ("public", "artworks")}}
    return Facts(**{**base, **kw})


def _tables(ident="d", pk=True) -> list[TableFacts]:
    return [TableFacts(SourceTable("artists", "moma.public.artists", "public", "artists"), True, True,
                       ["artist_id"] if pk else [], ident),
            TableFacts(SourceTable("artworks", "moma.public.artworks", "public", "artworks"), True, True,
                       ["artwork_id"], "d")]


def _by_name(checks) -> dict:
    return {c.name: c for c in checks}


# ------------------------------------------------------------------ unit: facts -> checks
def test_a_ready_database_passes(tmp_path):
    p = parse_pipeline(_pipeline_dict({"name": "moma", "user": "u"}), "x.yaml", str(tmp_path))
    checks = _by_name(evaluate(p, _facts(tables=_tables())))
    assert all(c.status == "ok" for c in checks.values()), [c for c in checks.values() if c.status != "ok"]
    assert "GLOBAL_SIMPLE index finds the row in any partition" in checks["artists: partition field"].detail


def test_each_failure_names_its_fix(tmp_path):
    p = parse_pipeline(_pipeline_dict({"name": "moma", "user": "u"}), "x.yaml", str(tmp_path))
    f = _facts(wal_level="replica", max_replication_slots=2, slots_used=2, max_wal_senders=1, senders_used=1,
               replication=False, publication_actions={"insert": True, "update": True, "delete": False},
               published={("public", "artists")}, tables=_tables(ident="d", pk=False))
    checks = _by_name(evaluate(p, f))
    assert checks["wal_level"].status == "fail"
    assert checks["wal_level"].fix == ("ALTER SYSTEM SET wal_level = logical; then restart PostgreSQL (on RDS: "
                                       "rds.logical_replication = 1 in the DB parameter group, then reboot)")
    assert checks["max_replication_slots"].fix.startswith("ALTER SYSTEM SET max_replication_slots = 3;")
    assert checks["max_wal_senders"].fix.startswith("ALTER SYSTEM SET max_wal_senders = 2;")
    assert checks["replication role"].fix == "ALTER ROLE u WITH REPLICATION;"
    assert "insert, update, delete" in checks["publication"].fix
    assert checks["publication tables"].fix == "ALTER PUBLICATION hudi_cdc_chk ADD TABLE public.artworks;"
    assert checks["artists: replica identity"].fix == "ALTER TABLE public.artists REPLICA IDENTITY FULL;"
    assert checks["artists: primary key"].status == "warn"
    # on RDS the REPLICATION attribute is granted through a role
    assert _by_name(evaluate(p, _facts(replication=False, rds=True, tables=_tables())))[
        "replication role"].fix == "GRANT rds_replication TO u;"


def test_partition_field_with_a_non_global_index_warns(tmp_path):
    tables = {**TABLES, "artists": {**TABLES["artists"], "hudi_options": {"hoodie.index.type": "SIMPLE"}}}
    p = parse_pipeline(_pipeline_dict({"name": "moma", "user": "u"}, tables), "x.yaml", str(tmp_path))
    c = _by_name(evaluate(p, _facts(tables=_tables())))["artists: partition field"]
    assert c.status == "warn" and "null in delete events" in c.detail and "REPLICA IDENTITY FULL" in c.fix
    c = _by_name(evaluate(p, _facts(tables=_tables(ident="f"))))["artists: partition field"]
    assert c.status == "warn" and "a changed value duplicates the row" in c.detail


def test_toastable_columns_under_default_identity(tmp_path):
    """TOAST-able columns under REPLICA IDENTITY DEFAULT: hudi-cdc's streamer fills the placeholder (ok,
    said), the 0.14 HoodieDeltaStreamer engine cannot (warn, the fix FULL and what it costs)."""
    tables = _tables()
    tables[0].toastable, tables[0].rows, tables[0].heap_bytes, tables[0].toast_bytes = \
        ["bio text", "doc jsonb"], 1000, 4_096_000, 8_192_000
    p = parse_pipeline(_pipeline_dict({"name": "moma", "user": "u"}), "x.yaml", str(tmp_path))
    c = _by_name(evaluate(p, _facts(tables=tables)))["artists: TOAST"]
    assert c.status == "ok" and "bio text, doc jsonb" in c.detail and "hudi-cdc's streamer fills it" in c.detail
    assert "REPLICA IDENTITY FULL" in c.detail and "WAL" in c.detail
    assert _by_name(evaluate(p, _facts(tables=tables)))["artworks: TOAST"].detail == "no TOAST-able column"
    v014 = _pipeline_dict({"name": "moma", "user": "u"})
    v014["hudi"] = {"version": "0.14.0"}
    c = _by_name(evaluate(parse_pipeline(v014, "x.yaml", str(tmp_path)), _facts(tables=tables)))["artists: TOAST"]
    assert c.status == "warn" and c.fix == "ALTER TABLE public.artists REPLICA IDENTITY FULL;"
    assert "hoodiestreamer writes it into the lake" in c.detail
    assert "12.0 KiB per row" in c.detail or "per row" in c.detail
    tables[0].replica_identity = "f"
    c = _by_name(evaluate(parse_pipeline(v014, "x.yaml", str(tmp_path)), _facts(tables=tables)))["artists: TOAST"]
    assert c.status == "ok" and c.detail.startswith("REPLICA IDENTITY FULL")


# ------------------------------------------------------------------ real PostgreSQL
def _sql(postgres, dbname, *statements):
    import psycopg

    with psycopg.connect(postgres.dsn(dbname), autocommit=True) as conn:
        for s in statements:
            conn.execute(s)


def _check(tmp_path, db, capsys, *args, tables=None):
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(_pipeline_dict(db, tables)))
    code = main(["-c", str(cfg), "source", "check", "-o", "json", *args])
    out, err = capsys.readouterr()
    assert os.environ[db["password_env"]] not in out + err
    return code, _by_name_dicts(json.loads(out)), err


def _by_name_dicts(doc: dict) -> dict:
    return {c["name"]: c for c in doc["checks"]}


@pytest.mark.postgres
def test_source_check_against_a_real_database(tmp_path, capsys, postgres, pg_database):
    db = pg_database("srccheck")
    _sql(postgres, "srccheck", "SET ROLE hudi_cdc",
         "CREATE TABLE public.artists (artist_id integer PRIMARY KEY, name text, nationality text)",
         "CREATE TABLE public.artworks (artwork_id integer PRIMARY KEY, title text, "
         "code text GENERATED ALWAYS AS (upper(title)) STORED)",
         "CREATE TABLE public.loose (id integer, v text)")
    code, checks, err = _check(tmp_path, db, capsys)
    assert code == 0, err
    assert checks["wal_level"]["status"] == "ok" and checks["replication role"]["status"] == "ok"
    assert checks["publication"]["status"] == "warn"  # capture creates it
    assert checks["publication"]["fix"] == "CREATE PUBLICATION hudi_cdc_chk FOR TABLE public.artists, public.artworks;"
    assert checks["artists: replica identity"]["detail"] == "DEFAULT"
    assert "TOAST-able column(s) name text, nationality text" in checks["artists: TOAST"]["detail"]
    assert checks["slot"]["detail"] == "hudi_cdc_srccheck not created yet (capture creates it)"
    # a generated column the pipeline keeps: streamed as NULL (pgoutput leaves it out), said with the fix
    assert checks["artworks: generated columns"]["status"] == "warn"
    assert checks["artworks: generated columns"]["fix"].startswith("tables.artworks.columns: exclude code")

    # a table without a primary key: REPLICA IDENTITY DEFAULT carries no key -> exit 11 with the fix
    tables = {**TABLES, "loose": {"topic": "moma.public.loose", "record_key": "id"}}
    code, checks, err = _check(tmp_path, db, capsys, "--table", "loose", tables=tables)
    assert code == 11 and "source check: 1 check(s) failed: loose: replica identity" in err
    assert "artists: primary key" not in checks  # --table: only that table's checks
    fix = checks["loose: replica identity"]["fix"]
    # a publication without one of the tables, made by the table owner
    _sql(postgres, "srccheck", "SET ROLE hudi_cdc", fix, "CREATE PUBLICATION hudi_cdc_chk FOR TABLE public.artists")
    code, checks, err = _check(tmp_path, db, capsys, tables=tables)
    assert code == 11 and checks["loose: replica identity"]["detail"] == "FULL"
    assert checks["publication tables"]["fix"] == ("ALTER PUBLICATION hudi_cdc_chk ADD TABLE public.artworks, "
                                                   "public.loose;")
    _sql(postgres, "srccheck", "SET ROLE hudi_cdc", checks["publication tables"]["fix"])
    code, checks, err = _check(tmp_path, db, capsys, tables=tables)
    assert code == 0, err

    # a user without REPLICATION nor SELECT; an inactive slot retaining WAL
    _sql(postgres, "srccheck", f"CREATE ROLE chk_plain LOGIN PASSWORD '{os.environ[db['password_env']]}'",
         "SELECT pg_create_logical_replication_slot('chk_forgotten', 'pgoutput')")
    try:
        code, checks, err = _check(tmp_path, {**db, "user": "chk_plain"}, capsys)
        assert code == 11
        assert checks["replication role"]["fix"] == "ALTER ROLE chk_plain WITH REPLICATION;"
        assert checks["artists: privileges"]["fix"] == "GRANT SELECT ON public.artists TO chk_plain;"
        forgotten = checks["slot chk_forgotten"]
        assert forgotten["status"] == "warn" and forgotten["fix"].startswith(
            "SELECT pg_drop_replication_slot('chk_forgotten');")
        _sql(postgres, "srccheck", checks["replication role"]["fix"], checks["artists: privileges"]["fix"],
             checks["artworks: privileges"]["fix"])
        code, checks, err = _check(tmp_path, {**db, "user": "chk_plain"}, capsys)
        assert code == 0, err
    finally:
        _sql(postgres, "srccheck", "SELECT pg_drop_replication_slot('chk_forgotten')")


@pytest.mark.postgres
def test_source_check_text_output_and_unreachable_database(tmp_path, capsys, pg_database):
    db = pg_database("srccheck_text")
    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(yaml.safe_dump(_pipeline_dict(db)))
    assert main(["-c", str(cfg), "source", "check"]) == 11  # the tables do not exist
    out, err = capsys.readouterr()
    assert "| artists: table" in out and "fixes:" in out
    assert "fail artists: table: create it, or fix tables.artists.topic" in out
    cfg.write_text(yaml.safe_dump(_pipeline_dict({**db, "port": 1})))
    assert main(["-c", str(cfg), "source", "check"]) == 11
    err = capsys.readouterr().err
    assert err.startswith("error: cannot connect to hudi_cdc@127.0.0.1:1/srccheck_text") and err.count("\n") == 1
