"""The MoMA sample as PostgreSQL tables and seed 001's SQL (hudi_cdc/demo/moma_db.py), and the
parts of `hudi-cdc demo --from-postgres` that need no database (unit; the whole command runs in
tests/demo/test_demo_postgres.py)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from hudi_cdc import sample
from hudi_cdc.config import parse_pipeline
from hudi_cdc.demo import moma_db
from hudi_cdc.errors import ConfigError
from tests.shared import seed_text

_STATEMENT = re.compile(r"^(?:UPDATE (?:public\.)?(\w+) SET (\w+) = (.+) WHERE (\w+) = (\d+)|"
                        r"DELETE FROM (?:public\.)?(\w+) WHERE (\w+) = (\d+));$")


def _parse(statement: str) -> tuple:
    m = _STATEMENT.match(statement)
    assert m, statement
    if m.group(1):
        value = m.group(3)
        value = value[1:-1].replace("''", "'") if value.startswith("'") else int(value)
        return m.group(1), int(m.group(5)), "u", {m.group(2): value}
    return m.group(6), int(m.group(8)), "d", None


def test_tables_follow_the_sample_schemas():
    assert moma_db.ddl("artists") == (
        "CREATE TABLE IF NOT EXISTS public.artists (artist_id integer PRIMARY KEY, name text, nationality text, "
        "gender text, birth_year integer, death_year integer)")
    cols = moma_db.columns("artworks")
    names = [f["name"] for f in sample.schema("artworks")["fields"] if not f["name"].startswith("__")]
    assert [c[0] for c in cols] == names
    assert ("artist_id", "integer", False) in cols and ("date", "integer", True) in cols
    assert "artwork_id integer PRIMARY KEY" in moma_db.ddl("artworks")
    assert any(r["artwork_id"] == 128447 for r in sample.snapshot_rows("artworks"))  # the seed's row is loaded
    assert any(r["artist_id"] == 299 for r in sample.snapshot_rows("artists"))


def test_seed_statements_are_the_sample_change_events():
    """The SQL the demo runs makes exactly the changes the MoMA demo lands as files, in order."""
    events = [(f["table"], e["key"], e["op"], e.get("set")) for f in sample.seed_changes()["files"]
              for e in f["events"]]
    assert [_parse(s) for s in moma_db.SEED_STATEMENTS] == events
    assert moma_db.SEED_STATEMENTS[-1].startswith("DELETE") and "299" in moma_db.SEED_STATEMENTS[-1]


def test_seed_statements_are_the_seeds_text():
    text = " ".join(seed_text("001").split())
    for st in moma_db.SEED_STATEMENTS:
        if "date = 1960" in st:
            assert "changing the date field from 1959 to 1960" in text  # the seed says it in prose only
            continue
        assert st in text, st


def test_database_block_from_a_dsn():
    from hudi_cdc.demo.postgres import database_from_dsn, database_line
    from hudi_cdc.demo.workspace import sample_pipeline_text

    db = database_from_dsn("host=db.example port=6543 dbname=moma user=hudi", None)
    assert db == {"host": "db.example", "port": 6543, "name": "moma", "user": "hudi", "password_env": "PGPASSWORD"}
    assert database_from_dsn("postgresql://u@h/d", "MY_PW")["password_env"] == "MY_PW"
    with pytest.raises(ConfigError, match="holds a password"):
        database_from_dsn("host=h dbname=d user=u password=s3cret", None)
    with pytest.raises(ConfigError, match="needs user"):
        database_from_dsn("host=h dbname=d", None)
    with pytest.raises(ConfigError, match="not a libpq connection string"):
        database_from_dsn("host", None)
    text = sample_pipeline_text(database=database_line(db, "a comment"))
    import yaml

    p = parse_pipeline(yaml.safe_load(text), "x.yaml")
    assert p.source.database is not None and p.source.database.port == 6543
    assert p.source.database.password_env == "PGPASSWORD" and p.slot_name == "hudi_cdc_moma"


def test_own_cluster_port_is_rewritten(tmp_path):
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.demo.postgres import _set_port, _write_pipeline

    db = {"host": "127.0.0.1", "port": 5999, "name": "moma", "user": "hudi_cdc", "password_env": "X_PW"}
    path = _write_pipeline(tmp_path, db, "the demo own cluster", "", "")
    _set_port(path, 6001)
    got = load_pipeline(path).source.database
    assert got is not None and got.port == 6001 and got.name == "moma"
    assert "X_PW" in path.read_text() and "password:" not in path.read_text()


def test_demo_options_need_from_postgres():
    from hudi_cdc.cli import cli

    out = CliRunner().invoke(cli, ["demo", "d", "--keep-db"])
    assert out.exit_code == 2 and "--keep-db: only with --from-postgres" in out.output
    out = CliRunner().invoke(cli, ["demo", "d", "--from-postgres", "--password-env", "PW"])
    assert out.exit_code == 2 and "--password-env: only with --pg-dsn" in out.output


def test_demo_exits_10_naming_every_table_that_differs():
    """The demo's outcome from verify's own results (the rows are shown before it, in run_postgres_demo):
    nothing when every table is equal, else TablesDiffer (exit 10) with each differing table's summary."""
    from hudi_cdc.demo.postgres import raise_if_differ
    from hudi_cdc.sources.verify import TablesDiffer, VerifyResult

    def result(table, tt, **diff):
        return VerifyResult(table, tt, equal=not diff, db_rows=3, lake_rows=3, **diff)

    equal = [result("artists", "COPY_ON_WRITE"), result("artists", "MERGE_ON_READ")]
    raise_if_differ(equal)  # no error
    raise_if_differ([])
    differ = [*equal, result("artworks", "COPY_ON_WRITE", different=1, different_keys=["7"]),
              result("artworks", "MERGE_ON_READ", missing=2, missing_keys=["8", "9"])]
    with pytest.raises(TablesDiffer) as exc:
        raise_if_differ(differ)
    assert exc.value.exit_code == 10
    assert str(exc.value) == ("verify: 2 of 4 tables differ from the database: "
                              "artworks (COPY_ON_WRITE): DIFFERS: 1 different (e.g. key 7); "
                              "artworks (MERGE_ON_READ): DIFFERS: 2 missing in the lake (e.g. key 8, 9)")
