"""Hive over the real stack: what HiveServer2 (Spark Thrift Server + Hive metastore) returns for the
tables the pipeline synced equals what hudi-rs reads from the same base paths.

One module-scoped lake: the MoMA artists table, bootstrapped through the CLI with its schema from
the real Apicurio and hive sync (hms mode) to the real metastore; then streamed twice with
compaction after 2 delta commits, so `_ro` lags `_rt` after the first round and catches up after
the second.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from hudi_cdc.cli import main
from hudi_cdc.config import load_pipeline
from hudi_cdc.hive import HiveClient, HiveError, hive_tables_of
from hudi_cdc.lake.reader import read_table

pytestmark = [pytest.mark.hive, pytest.mark.registry, pytest.mark.e2e]

KEY = "artist_id"


@pytest.fixture(scope="module")
def lake(tmp_path_factory, hive_stack, registry_url):
    d = tmp_path_factory.mktemp("hive-lake")
    assert main(["init", str(d), "--registry", registry_url, "--metastore", hive_stack.metastore_uri]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    doc["tables"] = {"artists": {**doc["tables"]["artists"], "compaction_delta_commits": 2}}
    doc["spark"] = {"master": "local[1]", "driver_memory": "1g", "shuffle_partitions": 2}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    c = str(cfg)
    assert main(["-c", c, "sample", "moma"]) == 0
    assert main(["-c", c, "schemas", "register"]) == 0
    assert main(["-c", c, "bootstrap"]) == 0
    return load_pipeline(c)


@pytest.fixture(scope="module")
def hive(hive_stack):
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as client:
        yield client


def _multiset(rows, columns) -> Counter:
    """Rows as a multiset of tuples: a key that appears twice (read-optimized after a partition
    move) must appear twice on both sides."""
    return Counter(tuple(r.get(c) for c in columns) for r in rows)


def _of_key(rows: Counter, cols, key) -> list:
    i = cols.index(KEY)
    return sorted((row for row in rows.elements() if row[i] == key), key=repr)


def _source_columns(rs_rows):
    return sorted(c for c in rs_rows[0] if not c.startswith("_hoodie_"))


PARTITION = "nationality"


def _hive_equals_hudi_rs(hive, table: str, base_path: str, read_optimized: bool = False):
    """Every row and column Hive returns equals hudi-rs' read of the base path, with one documented
    difference: an empty-string partition value is written to __HIVE_DEFAULT_PARTITION__ and Hive
    reads it back from the path as NULL, while the data file (and hudi-rs) keep ''."""
    rs_rows = read_table(base_path, read_optimized=read_optimized)
    cols = _source_columns(rs_rows)
    hive_rows = hive.query(f"SELECT {', '.join('`' + c + '`' for c in cols)} FROM {table}")
    assert len(hive_rows) == len(rs_rows)
    empty = {r[KEY] for r in rs_rows if r[PARTITION] == ""}
    assert {r[KEY] for r in hive_rows if r[PARTITION] is None} == empty
    expected = [{**r, PARTITION: None} if r[KEY] in empty else r for r in rs_rows]
    assert _multiset(hive_rows, cols) == _multiset(expected, cols)
    return _multiset(expected, cols), cols


def test_sync_created_every_table_with_partitions(lake, hive, hive_stack, capsys):
    wanted = {r["hive_table"] for r in hive_tables_of(lake)}
    assert wanted == {"moma_cow.artists", "moma_mor.artists_ro", "moma_mor.artists_rt"}
    for name in wanted:
        db, _, tbl = name.partition(".")
        assert tbl in hive.tables(db)
    on_disk = sorted(p.name for p in Path(lake.base_path("artists", "COPY_ON_WRITE")[len("file://"):]).iterdir()
                     if p.is_dir() and p.name.startswith("nationality="))
    assert sorted(hive.partitions("moma_cow.artists")) == on_disk
    assert sorted(hive.partitions("moma_mor.artists_rt")) == on_disk
    # the CLI over the same helpers
    capsys.readouterr()
    server = f"{hive_stack.host}:{hive_stack.thrift_port}"
    assert main(["-c", lake.source_file, "hive", "tables", "--server", server, "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {f"{r['database']}.{r['table']}" for r in rows if r["pipeline_table"]} == wanted
    assert main(["-c", lake.source_file, "hive", "partitions", "artists_rt", "--server", server, "-o", "json"]) == 0
    assert sorted(r["partition"] for r in json.loads(capsys.readouterr().out)) == on_disk
    assert main(["-c", lake.source_file, "hive", "describe", "moma_cow.artists", "--server", server, "-o", "json"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert {"section": "partition", "name": "nationality", "type": "string", "comment": ""} in described


def test_hive_cow_table_equals_hudi_rs(lake, hive):
    rows, cols = _hive_equals_hudi_rs(hive, "moma_cow.artists", lake.base_path("artists", "COPY_ON_WRITE"))
    assert sum(rows.values()) == 15089
    # the seed's data: 2486 artists without a nationality ('' in the source) sit in the default partition
    assert sum(n for v, n in rows.items() if v[cols.index(PARTITION)] is None) == 2486
    assert "nationality=__HIVE_DEFAULT_PARTITION__" in hive.partitions("moma_cow.artists")


def test_hive_mor_rt_table_equals_hudi_rs(lake, hive):
    _hive_equals_hudi_rs(hive, "moma_mor.artists_rt", lake.base_path("artists", "MERGE_ON_READ"))


def test_sql_errors_are_one_line(lake, hive, hive_stack, capsys):
    with pytest.raises(HiveError, match="TABLE_OR_VIEW_NOT_FOUND"):
        hive.query("SELECT * FROM moma_cow.no_such_table")
    code = main(["-c", lake.source_file, "hive", "sql", "SELECT * FROM nope.nope",
                 "--server", f"{hive_stack.host}:{hive_stack.thrift_port}"])
    err = capsys.readouterr().err
    assert code == 9 and len(err.strip().splitlines()) == 1


def test_standalone_sync_recreates_a_dropped_table(lake, hive):
    base = lake.base_path("artists", "COPY_ON_WRITE")
    before, _ = _hive_equals_hudi_rs(hive, "moma_cow.artists", base)
    hive.query("DROP TABLE moma_cow.artists")  # external: the metastore entry only
    assert "artists" not in hive.tables("moma_cow")
    assert (Path(base[len("file://"):]) / ".hoodie").is_dir()
    assert main(["-c", lake.source_file, "sync", "--table", "artists", "--type", "COPY_ON_WRITE"]) == 0
    assert "artists" in hive.tables("moma_cow")
    after, _ = _hive_equals_hudi_rs(hive, "moma_cow.artists", base)
    assert after == before


Q_299 = "SELECT nationality FROM moma_mor.artists_rt WHERE artist_id = 299"


@pytest.fixture(scope="module")
def round_1(lake, hive_stack):
    """One delta commit on the MoR table: the seed's changes up to artist 299's move American ->
    German (5 artworks files, then 4 of artists). Records what Hive answered around it: a session
    opened before the commit, a new one after, the first after REFRESH TABLE; and _rt / _ro."""
    seen = {}
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as old:
        seen["before"] = old.query(Q_299)
        assert main(["-c", lake.source_file, "sample", "moma", "--stage", "changes", "--count", "9"]) == 0
        assert main(["-c", lake.source_file, "stream", "--table", "artists", "--type", "mor", "--once"]) == 0
        seen["same_session"] = old.query(Q_299)
        with HiveClient(hive_stack.host, hive_stack.thrift_port) as fresh:
            seen["new_session"] = fresh.query(Q_299)
        old.query("REFRESH TABLE moma_mor.artists_rt")
        seen["after_refresh"] = old.query(Q_299)
    mor = lake.base_path("artists", "MERGE_ON_READ")
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        seen["rt"], seen["cols"] = _hive_equals_hudi_rs(hive, "moma_mor.artists_rt", mor)
        seen["ro"], _ = _hive_equals_hudi_rs(hive, "moma_mor.artists_ro", mor, read_optimized=True)
    return seen


@pytest.fixture(scope="module")
def round_2(lake, hive_stack, round_1):
    """The remaining change file (299 deleted): the second delta commit compacts inline."""
    assert main(["-c", lake.source_file, "sample", "moma", "--stage", "changes"]) == 0
    assert main(["-c", lake.source_file, "stream", "--table", "artists", "--type", "mor", "--once"]) == 0
    mor = lake.base_path("artists", "MERGE_ON_READ")
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        rt, _ = _hive_equals_hudi_rs(hive, "moma_mor.artists_rt", mor)
        ro, _ = _hive_equals_hudi_rs(hive, "moma_mor.artists_ro", mor, read_optimized=True)
    return {"rt": rt, "ro": ro}


def test_a_long_lived_session_needs_refresh_after_a_commit(round_1):
    """The Spark Thrift Server caches a table's file index per session: a session opened before a
    commit keeps seeing the old files until REFRESH TABLE; a new session sees the commit."""
    assert round_1["before"] == [{"nationality": "American"}]
    assert round_1["same_session"] == [{"nationality": "American"}]  # stale: same session
    assert round_1["new_session"] == [{"nationality": "German"}]
    assert round_1["after_refresh"] == [{"nationality": "German"}]


def test_ro_lags_rt_until_compaction(round_1, round_2):
    rt, ro, cols = round_1["rt"], round_1["ro"], round_1["cols"]
    assert rt != ro, "after one delta commit the read-optimized table must still show the base files"
    nat = cols.index("nationality")
    assert [r[nat] for r in _of_key(rt, cols, 299)] == ["German"]
    # the move is a delete log block in American and an insert into the log of German's file group
    # (log_inserts.py: no new base file), so the read-optimized view still has artist 299 where it
    # was until compaction
    assert [r[nat] for r in _of_key(ro, cols, 299)] == ["American"]
    assert round_2["ro"] == round_2["rt"], "after compaction _ro and _rt agree"
    assert _of_key(round_2["rt"], cols, 299) == [] and round_2["rt"] != rt
