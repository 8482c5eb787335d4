"""`hudi-cdc inspect` over the real Hudi fixture tables (versions 6, 8, 9; CoW and MoR), read by hudi-rs.

Expected figures come from the tables' own files (timeline file names, sizes on disk, the fixtures'
README) rather than from the code under test."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hudi_cdc.cli import main
from hudi_cdc.common.instants import parse_instant_file
from hudi_cdc.common.properties import parse_properties
from hudi_cdc.errors import TableStateError
from hudi_cdc.inspect import (
    commit_rows,
    compaction_rows,
    file_size_stats,
    file_slice_rows,
    open_table,
    read_timeline,
    schema_info,
    write_amplification,
)
from hudi_cdc.inspect.stats import hudi_waf, size_summary
from tests.plugins.inspect_fixtures import FIXTURE_ZIPS, fixture_zips

ALL = [z.relative_to(FIXTURE_ZIPS).with_suffix("").as_posix() for z in fixture_zips()]
EMPTY = [n for n in ALL if n.endswith("_empty")]
WRITTEN = [n for n in ALL if n not in EMPTY]
MOR = [n for n in WRITTEN if "/mor/" in n]
COW = [n for n in WRITTEN if "/cow/" in n]

# Completed write instants (commit + deltacommit + replacecommit) per the fixtures' README.
WRITE_INSTANTS = {
    "quickstart_trips_table/mor/avro/v6_trips_8i1u": 2,
    "quickstart_trips_table/mor/avro/v6_trips_8i3d": 2,
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d": 7,
    "sample_table/cow/v6_complexkeygen_hivestyle": 2,
    "sample_table/cow/v6_nonpartitioned": 2,
    "sample_table/cow/v6_simplekeygen_nonhivestyle": 2,
    "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable": 3,
    "sample_table/cow/v8_complexkeygen_hivestyle": 2,
    "sample_table/cow/v8_nonpartitioned": 2,
    "sample_table/cow/v8_simplekeygen_nonhivestyle": 2,
    "sample_table/cow/v9_txns_simple_nometa": 12,
    "sample_table/mor/parquet/v6_nonpartitioned": 2,
    "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle": 2,
    "sample_table/mor/parquet/v6_nonpartitioned_rollback": 2,
    "sample_table/mor/avro/v9_txns_simple_nometa": 13,
    "sample_table/mor/avro/v9_txns_simple_meta": 13,
}


def test_every_fixture_zip_is_covered():
    assert sorted(WRITTEN) == sorted(WRITE_INSTANTS)


def _version(name: str) -> int:
    return int(name.rsplit("/", 1)[1].split("_")[0][1:])


def _completed_files(table_path: Path, version: int):
    """(requested, completion, action) of completed instants, straight from the timeline folder."""
    out = []
    if version >= 8:
        for p in (table_path / ".hoodie" / "timeline").iterdir():
            stem, _, action = p.name.partition(".")
            if "_" in stem and "." not in action:
                req, done = stem.split("_")
                out.append((req, done, action))
    else:
        for p in (table_path / ".hoodie").iterdir():
            stem, _, action = p.name.partition(".")
            if stem.isdigit() and action and "." not in action and action != "inflight":
                out.append((stem, None, action))
    return sorted(out)


# ---- commits ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", WRITTEN)
def test_commits_one_row_per_completed_write_instant_oldest_first(hudi_fixture_tables, name):
    path = hudi_fixture_tables[name]
    rows = commit_rows(open_table(str(path)))
    assert len(rows) == WRITE_INSTANTS[name]
    on_disk = [t for t in _completed_files(path, _version(name)) if t[2] in ("commit", "deltacommit", "replacecommit")]
    assert [(r["requested_time"], r["completion_time"], r["action"]) for r in rows] == on_disk
    for r in rows:
        assert r["operation"]
        assert r["bytes_written"] > 0 or r["records_deleted"] > 0
        assert r["partitions_written"] == len(r["partitions"]) >= 1
        if r["completion_time"]:
            assert r["completion_time"] > r["requested_time"]


@pytest.mark.parametrize("name", [n for n in WRITTEN if _version(n) >= 8])
def test_commits_report_completion_times_on_v8_plus(hudi_fixture_tables, name):
    rows = commit_rows(open_table(str(hudi_fixture_tables[name])))
    assert all(r["completion_time"] and len(r["completion_time"]) == 17 for r in rows)


def test_commits_count_inserts_updates_deletes(hudi_fixture_tables):
    rows = commit_rows(open_table(str(hudi_fixture_tables["sample_table/cow/v6_nonpartitioned"])))
    first, second = rows
    assert (first["records_inserted"], first["records_updated"], first["files_added"]) == (3, 0, 1)
    # the second INSERT upserts id 1 and adds id 4 into the same file group
    assert (second["records_inserted"], second["records_updated"], second["files_updated"]) == (1, 1, 1)
    assert second["records_written"] == 4
    assert second["bytes_written"] == os.path.getsize(
        next(hudi_fixture_tables["sample_table/cow/v6_nonpartitioned"].glob("*_20240418173551906.parquet")))

    deletes = commit_rows(open_table(str(hudi_fixture_tables["quickstart_trips_table/mor/avro/v6_trips_8i3d"])))
    assert deletes[-1]["records_deleted"] == 3  # riders A, C and D

    txns = commit_rows(open_table(str(hudi_fixture_tables["sample_table/mor/avro/v9_txns_simple_nometa"])))
    ops = [r["operation"] for r in txns]
    assert ops.count("COMPACT") == 1 and ops.count("CLUSTER") == 1 and ops.count("INSERT_OVERWRITE") == 1
    assert sum(r["records_deleted"] for r in txns if r["action"] == "deltacommit") == 2
    compaction = txns[ops.index("COMPACT")]
    assert (compaction["action"], compaction["planned_action"]) == ("commit", "compaction")
    overwrite = txns[ops.index("INSERT_OVERWRITE")]
    assert overwrite["files_replaced"] == 2


def test_rollback_is_on_the_timeline_not_in_commits(hudi_fixture_tables):
    t = open_table(str(hudi_fixture_tables["sample_table/mor/parquet/v6_nonpartitioned_rollback"]))
    assert [i.action for i in read_timeline(t)] == ["deltacommit", "rollback", "deltacommit"]
    assert [r["action"] for r in commit_rows(t)] == ["deltacommit", "deltacommit"]


# ---- stats --------------------------------------------------------------------------------------

def test_write_amplification_text_matches_hudi_decimal_format():
    assert hudi_waf(7, 1) == "7.00"
    assert hudi_waf(7, 3) == "2.33"
    assert hudi_waf(1, 2) == ".50"  # DecimalFormat("#.00") drops the leading zero
    assert hudi_waf(5, 0) == "0"
    assert hudi_waf(40, 3) == "13.33"


@pytest.mark.parametrize("name", WRITTEN)
def test_stats_follow_hudi_cli_definition(hudi_fixture_tables, name):
    t = open_table(str(hudi_fixture_tables[name]))
    wa = write_amplification(t)
    commits = [r for r in commit_rows(t) if r["action"] in ("commit", "replacecommit")]
    assert [r["requested_time"] for r in wa[:-1]] == [r["requested_time"] for r in commits]
    total = wa[-1]
    assert total["requested_time"] == "Total"
    assert total["records_written"] == sum(r["records_written"] for r in commits)
    assert total["records_upserted"] == sum(r["records_updated"] for r in commits)
    assert total["bytes_written"] == sum(r["bytes_written"] for r in commits)
    sizes = file_size_stats(t)
    on_disk = sum(r["total_bytes"] for r in file_slice_rows(t))
    assert sizes["all_files"]["total_bytes"] == on_disk


def test_stats_figures(hudi_fixture_tables):
    wa = write_amplification(open_table(str(hudi_fixture_tables["sample_table/cow/v6_nonpartitioned"])))
    assert [(r["records_upserted"], r["records_written"], r["write_amplification"]) for r in wa] == [
        (0, 3, "0"), (1, 4, "4.00"), (1, 7, "7.00")]
    s = size_summary([1, 2, 3, 4, 100])
    assert (s["files"], s["min"], s["p50"], s["max"], s["total_bytes"]) == (5, 1, 3.0, 100, 110)


# ---- compactions --------------------------------------------------------------------------------

def test_compactions_of_mor_tables(hudi_fixture_tables):
    v9 = compaction_rows(open_table(str(hudi_fixture_tables["sample_table/mor/avro/v9_txns_simple_nometa"])))
    assert [(r["requested_time"], r["completion_time"], r["state"]) for r in v9] == [
        ("20260307135839895", "20260307135840408", "COMPLETED")]
    assert v9[0]["file_groups"] == 2 and v9[0]["partitions"] == 2
    v8 = compaction_rows(open_table(str(hudi_fixture_tables["quickstart_trips_table/mor/avro/v8_trips_8i3u1d"])))
    assert len(v8) == 1 and v8[0]["file_groups"] == 3 and v8[0]["state"] == "COMPLETED"
    assert compaction_rows(open_table(str(hudi_fixture_tables["sample_table/mor/parquet/v6_nonpartitioned"]))) == []


@pytest.mark.parametrize("name", MOR)
def test_compactions_work_on_every_mor_table(hudi_fixture_tables, name):
    rows = compaction_rows(open_table(str(hudi_fixture_tables[name])))
    assert all(r["state"] in ("REQUESTED", "INFLIGHT", "COMPLETED") for r in rows)


@pytest.mark.parametrize("name", COW + EMPTY)
def test_compactions_refused_on_cow(hudi_fixture_tables, name):
    with pytest.raises(TableStateError, match="MERGE_ON_READ"):
        compaction_rows(open_table(str(hudi_fixture_tables[name])))


# ---- files and schema ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", WRITTEN)
def test_files_sizes_match_disk(hudi_fixture_tables, name):
    path = hudi_fixture_tables[name]
    rows = file_slice_rows(open_table(str(path)))
    assert rows
    for r in rows:
        part = path / r["partition"] if r["partition"] else path
        if r["base_file"]:
            assert r["base_bytes"] == os.path.getsize(part / r["base_file"])
        assert r["log_bytes"] == sum(os.path.getsize(part / n) for n in r["log_file_names"])
        assert r["total_bytes"] == r["base_bytes"] + r["log_bytes"]


def test_files_of_mor_table_with_logs(hudi_fixture_tables):
    rows = file_slice_rows(open_table(str(hudi_fixture_tables["sample_table/mor/parquet/v6_nonpartitioned_rollback"])))
    assert [r["log_files"] for r in rows] == [3]  # rolled-back block, rollback command block, update


@pytest.mark.parametrize("name", ALL)
def test_schema_and_config(hudi_fixture_tables, name):
    path = hudi_fixture_tables[name]
    info = schema_info(open_table(str(path)))
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_text())
    assert info["table"]["version"] == int(props["hoodie.table.version"]) == _version(name)
    assert info["config"]["hoodie.table.type"] == props["hoodie.table.type"]
    create = json.loads(props["hoodie.table.create.schema"]) if "hoodie.table.create.schema" in props else None
    if create:
        assert [f["name"] for f in info["fields"]] == [f["name"] for f in create["fields"]]
    assert info["avro_schema"]["type"] == "record"


def test_partition_fields(hudi_fixture_tables):
    info = schema_info(open_table(str(hudi_fixture_tables["sample_table/cow/v8_complexkeygen_hivestyle"])))
    assert info["table"]["partition_fields"] == ["byteField", "shortField"]


# ---- errors -------------------------------------------------------------------------------------

def test_not_a_hudi_table(tmp_path):
    with pytest.raises(TableStateError, match="is not a Hudi table"):
        open_table(str(tmp_path))


def test_unsupported_version(hudi_fixture_tables, tmp_path):
    copy = tmp_path / "v5"
    shutil.copytree(hudi_fixture_tables["sample_table/cow/v6_nonpartitioned"], copy)
    props = copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.version=6", "hoodie.table.version=5"))
    with pytest.raises(TableStateError, match="version 5 is not supported"):
        open_table(str(copy))


@pytest.mark.parametrize("name", EMPTY)
@pytest.mark.parametrize("func", [commit_rows, write_amplification, file_size_stats, file_slice_rows])
def test_empty_table(hudi_fixture_tables, name, func):
    with pytest.raises(TableStateError, match="table is empty"):
        func(open_table(str(hudi_fixture_tables[name])))


def test_instant_file_names():
    i = parse_instant_file("20260307135839895_20260307135840408.commit")
    assert (i.requested_time, i.completion_time, i.action, i.state) == (
        "20260307135839895", "20260307135840408", "commit", "COMPLETED")
    p = parse_instant_file("20260307135839895.compaction.requested")
    assert (p.action, p.planned_action, p.state) == ("commit", "compaction", "REQUESTED")
    assert parse_instant_file("20240418173213674.inflight").state == "INFLIGHT"
    assert parse_instant_file("hoodie.properties") is None


# ---- CLI ----------------------------------------------------------------------------------------

def test_cli_commits_json_is_a_list_oldest_first(hudi_fixture_tables, capsys):
    path = hudi_fixture_tables["sample_table/cow/v9_txns_simple_nometa"]
    assert main(["inspect", "commits", "--path", str(path), "--output", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert isinstance(rows, list) and len(rows) == 12
    assert [r["requested_time"] for r in rows] == sorted(r["requested_time"] for r in rows)
    assert {"requested_time", "completion_time", "action", "operation", "records_inserted", "records_updated",
            "records_deleted", "files_added", "files_updated", "bytes_written", "partitions"} <= set(rows[0])


@pytest.mark.parametrize("cmd", ["commits", "stats", "compactions", "files", "schema", "timeline"])
def test_cli_text_output(hudi_fixture_tables, capsys, cmd):
    path = hudi_fixture_tables["sample_table/mor/avro/v9_txns_simple_meta"]
    assert main(["inspect", cmd, "--path", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(("+", "Write", "v9_txns"))


@pytest.mark.parametrize("args, message", [
    (["--path", "{tmp}"], "is not a Hudi table"),
    (["--path", "{empty}"], "the table is empty"),
])
def test_cli_one_line_errors(hudi_fixture_tables, tmp_path, capsys, args, message):
    args = [a.format(tmp=tmp_path, empty=hudi_fixture_tables["sample_table/cow/v8_empty"]) for a in args]
    assert main(["inspect", "commits", *args]) == TableStateError.exit_code
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("error: ")


def test_cli_table_from_pipeline_file(hudi_fixture_tables, tmp_path, capsys, monkeypatch):
    lake = tmp_path / "lake"
    lake.mkdir()
    shutil.copytree(hudi_fixture_tables["sample_table/mor/avro/v9_txns_simple_nometa"], lake / "artists_mor")
    (tmp_path / "hudi-cdc.yaml").write_text(
        "pipeline: moma\nsource: {root: landing}\nlake: {root: lake}\n"
        "tables:\n  artists: {topic: moma.public.artists, record_key: artist_id}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["inspect", "compactions", "--table", "artists", "--type", "mor", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["state"] == "COMPLETED"
    # two table types and no --type: a usage error that names the way out
    assert main(["inspect", "commits", "--table", "artists"]) == 2
    assert "--type" in capsys.readouterr().err
    # the cow table was never written: not a Hudi table
    assert main(["inspect", "commits", "--table", "artists", "--type", "cow"]) == TableStateError.exit_code
    assert "artists_cow is not a Hudi table" in capsys.readouterr().err


def test_corrupt_commit_file_is_one_line_error(hudi_fixture_tables, tmp_path, capsys):
    copy = tmp_path / "corrupt"
    shutil.copytree(hudi_fixture_tables["sample_table/cow/v8_nonpartitioned"], copy)
    first = sorted((copy / ".hoodie" / "timeline").glob("*_*.commit"))[0]
    first.write_text("garbage")
    with pytest.raises(TableStateError, match="hudi-rs: .*metadata"):
        commit_rows(open_table(str(copy)))
    assert main(["inspect", "commits", "--path", str(copy)]) == TableStateError.exit_code
    assert capsys.readouterr().err.count("\n") == 1
