"""`hudi-cdc init --from-database`: the tables section from a real PostgreSQL 15 (mark postgres): keys
from the primary key, the ordering field, partition fields only when given (candidates in a comment,
warnings as comments), tables without a primary key left out with the fix; idempotent (a second run
changes nothing, an existing file keeps its lines and gains only new tables); --dry-run writes nothing;
the written file passes `source check`. Plus unit tests of where new entries go in an existing file."""

from __future__ import annotations

import os

import pytest

from hudi_cdc.cli import main
from hudi_cdc.config import load_pipeline
from hudi_cdc.sources.init import _insert_entries


def test_entries_go_to_the_end_of_the_tables_block():
    text = "pipeline: p\ntables:\n  a:  # mine\n    topic: x.s.a\n    record_key: id\n\nspark:\n  master: local[1]\n"
    got = _insert_entries(text, "  b:\n    topic: x.s.b\n")
    assert got == ("pipeline: p\ntables:\n  a:  # mine\n    topic: x.s.a\n    record_key: id\n  b:\n    topic: x.s.b\n"
                   "\nspark:\n  master: local[1]\n")
    assert _insert_entries("pipeline: p\ntables: {}\n", "  b: {}\n") == "pipeline: p\ntables:\n  b: {}\n"


def test_an_empty_pipeline_file_is_written_anew(tmp_path):
    """`hudi-cdc init --from-database ... > hudi-cdc.yaml` (the shell makes the file empty before init runs): init
    takes the empty file for no file and its options for the database, where it once failed with "the pipeline
    file must be a YAML mapping"."""
    from hudi_cdc.sources.init import has_pipeline_file, new_database

    (tmp_path / "hudi-cdc.yaml").write_text("\n")
    assert not has_pipeline_file(tmp_path)
    db, _ = new_database(tmp_path, "127.0.0.1", 5432, "shop", "postgres", None)
    assert db is not None and db.name == "shop"
    (tmp_path / "hudi-cdc.yaml").write_text("pipeline: p\n")
    assert has_pipeline_file(tmp_path) and new_database(tmp_path, "h", 1, "shop", "u", None) == (None, None)


def test_a_new_file_carries_the_registry_and_metastore(tmp_path):
    """`init --from-database --registry/--metastore` puts them in the new file (they were once ignored:
    a pipeline with no Hive sync); for an existing file they are refused, naming the key to edit."""
    import yaml

    from hudi_cdc.config.settings import DatabaseSettings
    from hudi_cdc.demo.workspace import sample_pipeline_text
    from hudi_cdc.errors import ConfigError
    from hudi_cdc.sources.init import _new_file, init_from_database

    db = DatabaseSettings.model_validate({"host": "db", "name": "shop", "user": "u"})
    doc = yaml.safe_load(_new_file(db, "shop", "  t: {topic: shop.public.t, record_key: id}\n",
                                   "http://r:8080/apis/ccompat/v7", "thrift://m:9083"))
    assert doc["source"]["schema_registry"] == "http://r:8080/apis/ccompat/v7"
    assert doc["lake"]["hive_metastore"] == "thrift://m:9083" and doc["source"]["database"]["name"] == "shop"
    assert "schema_registry" not in yaml.safe_load(_new_file(db, "shop", ""))["source"]
    (tmp_path / "hudi-cdc.yaml").write_text(sample_pipeline_text())
    with pytest.raises(ConfigError, match="--metastore is for a new pipeline file; .* set lake.hive_metastore"):
        init_from_database(tmp_path, None, None, metastore="thrift://m:9083")


def test_signal_tables_are_not_offered_as_tables(tmp_path):
    """The signal table capture creates for incremental snapshots (Debezium's id/type/data, `<slot>_signal`)
    is skipped by init, with a line saying what it is; a user's table of another shape is kept."""
    from hudi_cdc.sources.db_tables import DbTable
    from hudi_cdc.sources.init import InitResult, _without_signal_tables

    cols = [("id", "character varying(42)"), ("type", "character varying(32)"), ("data", "character varying(2048)")]
    signal = DbTable("public", "hudi_cdc_shop_signal", cols, ["id"], "d")
    mine = DbTable("public", "traffic_signal", [("id", "integer"), ("color", "text")], ["id"], "d")
    result = InitResult(tmp_path / "hudi-cdc.yaml", "", False)
    assert _without_signal_tables([signal, mine], result) == [mine]
    assert result.skipped == ["public.hudi_cdc_shop_signal: a signal table of incremental snapshots (capture's own)"]


def test_lake_table_names_never_differ_only_in_case():
    """Hive's table names are case-insensitive: `Orders` and `orders` (one schema, or two) get names that differ in
    more than case, and a name Hive or a path cannot hold gets `_`; the pipeline file refuses two names differing in
    case only."""
    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.errors import ConfigError
    from hudi_cdc.sources.db_tables import DbTable
    from hudi_cdc.sources.init import _table_name

    found = [DbTable("public", t, [("id", "int")], ["id"], "d") for t in ("Orders", "orders", "Order Items")]
    found.append(DbTable("Sales", "ORDERS", [("id", "int")], ["id"], "d"))
    taken: set[str] = set()
    for t in found:
        taken.add(_table_name(t, taken, found))
    assert sorted(taken) == ["Order_Items", "Sales_ORDERS", "public_Orders", "public_orders_"]
    doc = {"pipeline": "p", "source": {"root": "l"}, "lake": {"root": "k", "hive_database": "d"},
           "tables": {"Orders": {"topic": "p.public.Orders", "record_key": "id"},
                      "orders": {"topic": "p.public.orders", "record_key": "id"}}}
    with pytest.raises(ConfigError, match="tables Orders and orders differ only in case"):
        parse_pipeline(doc, "p.yaml", ".")


def _sql(postgres, db, *statements):
    import psycopg

    with psycopg.connect(postgres.dsn(db), autocommit=True) as conn:
        conn.execute("SET ROLE hudi_cdc")
        for s in statements:
            conn.execute(s)


def _init(capsys, directory, *args):
    code = main(["init", str(directory), "--from-database", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.postgres
def test_init_from_database(tmp_path, capsys, postgres, pg_database):
    db = pg_database("initdb")
    _sql(postgres, "initdb",
         "CREATE TABLE public.artists (artist_id integer PRIMARY KEY, name text, nationality text, birth_year int)",
         "CREATE TABLE public.artworks (artwork_id bigint, edition int, title text, acquired date, "
         "price numeric(12,2), price_x2 numeric GENERATED ALWAYS AS (price * 2) STORED, "
         "PRIMARY KEY (artwork_id, edition))",
         "CREATE TABLE public.loose (id integer, v text)",
         'CREATE TABLE public.twins (id integer PRIMARY KEY, "Name" text, name text)',
         "CREATE SCHEMA other", "CREATE TABLE other.hidden (id integer PRIMARY KEY)")
    conn_args = ["--dbname", "initdb", "--user", "hudi_cdc", "--port", str(db["port"]),
                 "--password-env", db["password_env"]]
    d = tmp_path / "p"
    code, out, err = _init(capsys, d, *conn_args, "--partition-field", "artists=nationality", "--dry-run")
    assert code == 0, err
    assert not (d / "hudi-cdc.yaml").exists()  # --dry-run writes nothing
    # no primary key: offered as an append-only raw history (tests/jobs/test_transactions.py)
    assert "public.loose: no primary key: added as an append-only raw history" in err
    # columns differing only in case: Debezium would stop its connector for every table (capture skips it too)
    assert "skipped public.twins: columns Name, name differ only in case, which Debezium refuses" in err
    assert "twins:" not in out
    assert "    record_key: [__lsn, id, v]  # the event position, then the row\n" in out
    assert os.environ[db["password_env"]] not in out + err
    assert "    password_env: HUDI_CDC_TEST_PGPASSWORD" in out
    assert "  artists:  # public.artists: 4 columns, REPLICA IDENTITY DEFAULT\n" in out
    assert "    partition_field: nationality\n" in out
    assert "    # nationality is null in key-only deletes (REPLICA IDENTITY not FULL)" in out
    assert "    # nationality can change (not in the primary key): the global index moves the row" in out
    assert "    # partition_field: <column>  # candidates: title, acquired\n" in out  # artworks
    assert "    columns: {exclude: [price_x2]}  # generated column(s): PostgreSQL's logical decoding" in out
    assert "hidden" not in out  # schema public only, by default

    code, _, err = _init(capsys, d, *conn_args, "--partition-field", "artists=nationality")
    assert code == 0 and err.strip().endswith("added artists, artworks, loose")
    written = (d / "hudi-cdc.yaml").read_text()
    assert written == out
    p = load_pipeline(d / "hudi-cdc.yaml")
    assert p.table("artists").partition_field == "nationality" and p.table("artists").record_keys == ["artist_id"]
    assert p.table("artworks").record_keys == ["artwork_id", "edition"] and p.table("artworks").partition_field is None
    assert p.table("artists").topic == "initdb.public.artists" and p.table("artworks").ordering_fields == ["__lsn"]

    # idempotent: nothing new -> the file is left byte for byte
    code, _, err = _init(capsys, d)
    assert code == 0 and "unchanged: every table is in it (public.artists, public.artworks, public.loose)" in err
    assert (d / "hudi-cdc.yaml").read_text() == written

    # a user's edits stay; a new table (its own schema, named) is added at the end of the tables block
    edited = written.replace("  artists:", "  artists:  # edited by hand", 1) + "spark:\n  master: local[1]\n"
    (d / "hudi-cdc.yaml").write_text(edited)
    _sql(postgres, "initdb", "CREATE TABLE public.exhibitions (exhibition_id int PRIMARY KEY, title text)")
    code, _, err = _init(capsys, d, "--schema", "public", "--schema", "other", "--table", "public.exhibitions")
    assert code == 0 and err.strip().endswith(": added exhibitions"), err
    now = (d / "hudi-cdc.yaml").read_text()
    assert now.startswith(edited.split("spark:")[0]) and now.endswith("spark:\n  master: local[1]\n")
    assert "  exhibitions:  # public.exhibitions" in now and "hidden" not in now
    assert load_pipeline(d / "hudi-cdc.yaml").table("exhibitions").record_keys == ["exhibition_id"]

    # the file it writes passes source check (the publication is a warning: capture creates it), once
    # the statement init printed for the raw history table ran
    _sql(postgres, "initdb", "ALTER TABLE public.loose REPLICA IDENTITY FULL")
    assert main(["-c", str(d / "hudi-cdc.yaml"), "source", "check"]) == 0, capsys.readouterr()
    capsys.readouterr()

    # errors: one line, exit 2
    code, _, err = _init(capsys, tmp_path / "q", *conn_args, "--partition-field", "artists=nope")
    assert code == 2 and "error: --partition-field artists=nope: public.artists has no column nope" in err
    code, _, err = _init(capsys, tmp_path / "q", *conn_args, "--table", "nope")
    assert code == 2 and "error: --table: no such table in the database: public.nope" in err
    assert not (tmp_path / "q" / "hudi-cdc.yaml").exists()
