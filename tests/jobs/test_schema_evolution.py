"""Schemas from the real Apicurio drive the pipeline: a column added in the source (a new schema
version registered mid-stream) flows into the Hudi table and into Hive; an incompatible change is
refused by the registry, and files carrying an unregistered field stop the round before any write."""

from __future__ import annotations

import copy
import json
import os

import fastavro
import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.cli import main
from hudi_cdc.config import load_pipeline, uri_to_path
from hudi_cdc.hive import HiveClient
from hudi_cdc.lake.reader import read_table, rows_by_key

pytestmark = [pytest.mark.hive, pytest.mark.registry, pytest.mark.e2e]

V1 = sample.schema("artists")
V2 = copy.deepcopy(V1)
V2["fields"].insert(6, {"name": "nickname", "type": ["null", "string"], "default": None})


def _commits(p):
    from tests.shared import timeline_files

    return [n for n in timeline_files(p.base_path("artists", "COPY_ON_WRITE")) if n.endswith(".commit")]


def _land(p, name, schema, records):
    d = uri_to_path(p.topic_dir("artists"))
    path = d / name
    with open(path, "wb") as fh:
        fastavro.writer(fh, schema, records)
    latest = max(f.stat().st_mtime_ns for f in d.glob("*.avro"))
    os.utime(path, ns=(latest + 1_000_000_000, latest + 1_000_000_000))
    return path


def _event(base, lsn, **changes):
    rec = dict(base, __op="u", __lsn=lsn, __source_ts_ms=lsn, __deleted="false")
    rec.update(changes)
    return rec


@pytest.fixture(scope="module")
def lake(tmp_path_factory, hive_stack, registry_url):
    d = tmp_path_factory.mktemp("evolve")
    assert main(["init", str(d), "--registry", registry_url, "--metastore", hive_stack.metastore_uri]) == 0
    cfg = d / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    doc["pipeline"] = "evolve"
    doc["lake"]["hive_database"] = "evolve"
    doc["tables"] = {"artists": {**doc["tables"]["artists"], "table_types": ["COPY_ON_WRITE"]}}
    doc["spark"] = {"master": "local[1]", "driver_memory": "1g", "shuffle_partitions": 2}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))
    c = str(cfg)
    root = d / "landing" / "topics"
    sample.land_snapshot(root, tables=("artists",))
    assert main(["-c", c, "schemas", "register"]) == 0
    assert main(["-c", c, "bootstrap"]) == 0
    return load_pipeline(c)


def test_added_column_flows_to_hudi_and_hive(lake, hive_stack, tmp_path, capsys):
    c = lake.source_file
    snap = {r["artist_id"]: r for r in sample.snapshot_rows("artists")}
    avsc = tmp_path / "artists-v2.avsc"
    avsc.write_text(json.dumps(V2))
    assert main(["-c", c, "schemas", "register", "--table", "artists", "--avsc", str(avsc)]) == 0
    # a v2 file (the source added `nickname`) and, after it, a late v1 file from an old producer
    _land(lake, "moma.public.artists+0+0000100000.avro", V2,
          [_event(dict(snap[1], nickname="Bob"), 4_000_000_000_000)])
    _land(lake, "moma.public.artists+0+0000100001.avro", V1,
          [_event(snap[2], 4_000_000_000_100, name="two, v1 producer")])
    assert main(["-c", c, "stream", "--table", "artists", "--once"]) == 0
    rows = rows_by_key(read_table(lake.base_path("artists", "COPY_ON_WRITE")), "artist_id")
    # the files were read with the registry's schema (v2): the v1 file's row has the column, null
    assert rows[1]["nickname"] == "Bob" and rows[2]["nickname"] is None and rows[2]["name"] == "two, v1 producer"
    assert rows[3]["nickname"] is None and len(rows) == len(snap)
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        got = hive.query("SELECT artist_id, nickname FROM evolve_cow.artists WHERE artist_id IN (1, 2) "
                         "ORDER BY artist_id")
    assert got == [{"artist_id": 1, "nickname": "Bob"}, {"artist_id": 2, "nickname": None}]


def test_incompatible_change_is_refused_before_any_write(lake, tmp_path, capsys):
    c = lake.source_file
    before = _commits(lake)
    v3 = copy.deepcopy(V2)
    for f in v3["fields"]:
        if f["name"] == "birth_year":
            f["type"] = ["null", "string"]  # int -> string: not BACKWARD compatible
    avsc = tmp_path / "artists-v3.avsc"
    avsc.write_text(json.dumps(v3))
    capsys.readouterr()
    assert main(["-c", c, "schemas", "register", "--table", "artists", "--avsc", str(avsc)]) == 7
    err = capsys.readouterr().err
    assert "incompatible" in err.lower() and "moma.public.artists-value" in err

    # files that carry a field the registry does not know stop the round by name, nothing written
    snap = sample.snapshot_rows("artists")[0]
    unregistered = copy.deepcopy(V2)
    unregistered["fields"].insert(7, {"name": "secret_field", "type": ["null", "string"], "default": None})
    bad = _land(lake, "moma.public.artists+0+0000100002.avro", unregistered,
                [_event(dict(snap, nickname=None, secret_field="x"), 4_000_000_000_200)])
    try:
        assert main(["-c", c, "stream", "--table", "artists", "--once"]) == 3
        err = capsys.readouterr().err
        assert "secret_field" in err and "register the new schema version first" in err
        assert _commits(lake) == before
    finally:
        bad.unlink()
