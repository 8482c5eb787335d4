"""The streamer's file selection, properties loading and input validation (no Spark)."""

import json
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from hudi_cdc.jobs import streamer

REAL = Path(__file__).resolve().parents[1] / "data" / "s3sink" / "moma.public.artists+0+0000000000.avro"


def touch(path: Path, mtime_ms: int, size: int = 10):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    return path


def test_list_source_files_follows_checkpoint_and_limit(tmp_path):
    a = touch(tmp_path / "a.avro", 1000)
    b = touch(tmp_path / "b.avro", 2000)
    c = touch(tmp_path / "c.avro", 2000)
    d = touch(tmp_path / "d.avro", 3000)
    touch(tmp_path / ".hidden.avro", 5000)
    touch(tmp_path / "_SUCCESS", 5000)
    files, cp = streamer.list_source_files(str(tmp_path), None, 10**9)
    assert [f[0] for f in files] == [str(a), str(b), str(c), str(d)] and cp == "3000"
    files, cp = streamer.list_source_files(f"file://{tmp_path}", "1000", 15)
    # b and c share a modification time: never split across rounds, even past the limit
    assert [f[0] for f in files] == [str(b), str(c)] and cp == "2000"
    files, cp = streamer.list_source_files(str(tmp_path), "3000", 15)
    assert files == [] and cp == "3000"
    files, _ = streamer.list_source_files(str(tmp_path), "0", 1)  # a file above the limit still goes
    assert [f[0] for f in files] == [str(a)]


def test_missing_landing_dir_is_named(tmp_path):
    with pytest.raises(streamer.JobInputError, match=r"landing directory .*nope does not exist"):
        streamer.list_source_files(str(tmp_path / "nope"), None, 10)


def test_properties_include_and_comments(tmp_path):
    (tmp_path / "base.properties").write_text("# c\na=1\nb=2\n")
    (tmp_path / "t.properties").write_text("include=base.properties\n\nb=3\nhoodie.x=y=z\n")
    assert streamer.load_properties(f"file://{tmp_path}/t.properties") == {"a": "1", "b": "3", "hoodie.x": "y=z"}
    (tmp_path / "bad.properties").write_text("novalue\n")
    with pytest.raises(streamer.JobInputError, match=r"bad\.properties:1: expected key=value"):
        streamer.load_properties(str(tmp_path / "bad.properties"))


def test_validate_accepts_the_real_s3_sink_file():
    schemas = streamer.validate_avro_files([(str(REAL), 0, REAL.stat().st_size)], ["artist_id", "__lsn"])
    assert [f["name"] for f in schemas[0][1]["fields"]][:2] == ["artist_id", "name"]


def test_validate_names_corrupt_truncated_and_keyless_files(tmp_path):
    trunc = tmp_path / "t.avro"
    trunc.write_bytes(REAL.read_bytes()[: REAL.stat().st_size // 2])
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*t\.avro"):
        streamer.validate_avro_files([(str(trunc), 0, 0)], ["artist_id"])
    junk = tmp_path / "j.avro"
    junk.write_bytes(b"not avro at all")
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*j\.avro"):
        streamer.validate_avro_files([(str(junk), 0, 0)], ["artist_id"])
    import fastavro  # a whole file whose schema no reader takes (Debezium's decimal(3,5) through Kafka Connect)

    odd = tmp_path / "d.avro"
    dec = {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 5}
    with open(odd, "wb") as fh:
        fastavro.writer(fh, {"type": "record", "name": "r", "fields": [{"name": "artist_id", "type": "int"},
                                                                      {"name": "d", "type": dec}]},
                        [{"artist_id": 1, "d": Decimal("0.00123")}])
    odd.write_bytes(odd.read_bytes().replace(b'"precision": 5', b'"precision": 3', 1))  # the header's length kept
    with pytest.raises(streamer.JobInputError, match=r"Avro file .*d\.avro has a schema no Avro reader takes"):
        streamer.validate_avro_files([(str(odd), 0, 0)], ["artist_id"])
    missing = r"field 'artwork_id' .* missing from the schema of .*0000000000\.avro"
    with pytest.raises(streamer.JobInputError, match=missing):
        streamer.validate_avro_files([(str(REAL), 0, 0)], ["artwork_id"])


def test_validate_names_a_file_cut_off_in_a_later_block(tmp_path):
    """Its first record decodes, and Spark would read its whole blocks without a word (2,720 of these 3,000
    records, measured): the missing sync marker at its end names it; the whole file and a header-only one pass."""
    import fastavro

    schema = {"type": "record", "name": "r",
              "fields": [{"name": "id", "type": "long"}, {"name": "s", "type": "string"}]}
    whole, empty, cut = tmp_path / "w.avro", tmp_path / "e.avro", tmp_path / "c.avro"
    with open(whole, "wb") as fh:
        fastavro.writer(fh, schema, [{"id": i, "s": "x" * 50} for i in range(3000)], sync_interval=16000)
    with open(empty, "wb") as fh:
        fastavro.writer(fh, schema, [])
    cut.write_bytes(whole.read_bytes()[:-40])
    assert len(streamer.validate_avro_files([(str(whole), 0, 0), (str(empty), 0, 0)], ["id"], every_record=False)) == 1
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*c\.avro: it does not end"):
        streamer.validate_avro_files([(str(cut), 0, 0)], ["id"], every_record=False)


def test_parse_argv_groups():
    ts = streamer.parse_argv(["--props", "p1", "--table-type", "COPY_ON_WRITE", "--target-base-path", "/a/",
                              "--target-table", "db.a", "--op", "BULK_INSERT", "--filter-dupes", "--next",
                              "--props", "p2", "--table-type", "MERGE_ON_READ", "--target-base-path", "/b",
                              "--target-table", "db.b", "--source-ordering-field", "__lsn", "--continuous",
                              "--hoodie-conf", "k=v"])
    assert [t.op for t in ts] == ["BULK_INSERT", "UPSERT"] and ts[0].target_base_path == "/a"
    assert ts[1].continuous and ts[1].source_ordering_fields == "__lsn" and ts[1].hoodie_conf == ["k=v"]


# ---- the table's state: failures surface, one line naming the table ---------------------------
def _table_dir(tmp_path: Path) -> Path:
    (tmp_path / ".hoodie").mkdir(parents=True)
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.name=t\n")
    return tmp_path


def test_checkpoint_without_hudi_rs_is_an_error_not_a_fresh_start(tmp_path, monkeypatch):
    base = _table_dir(tmp_path)
    monkeypatch.setitem(sys.modules, "hudi", None)  # `import hudi` raises ImportError
    with pytest.raises(streamer.TableReadError) as ei:
        streamer.read_checkpoint(str(base))
    msg = str(ei.value)
    assert str(base) in msg and "hudi package" in msg and "\n" not in msg


def test_checkpoint_of_a_new_table_is_none(tmp_path):
    assert streamer.read_checkpoint(str(tmp_path / "nothing-yet")) is None


def test_unreadable_table_fails_the_checkpoint_and_the_commit_lookup(tmp_path):
    base = _table_dir(tmp_path)  # hoodie.properties without a table behind it: hudi-rs refuses
    for call in (streamer.read_checkpoint, streamer.latest_instant):
        with pytest.raises(streamer.TableReadError) as ei:
            call(f"file://{base}")
        assert str(base) in str(ei.value) and "\n" not in str(ei.value)
    with pytest.raises(streamer.TableReadError, match="nope"):
        streamer.latest_instant(str(tmp_path / "nope"))


def test_checkpoint_keys_current_first_then_legacy():
    assert streamer.CHECKPOINT_KEY not in streamer.LEGACY_CHECKPOINT_KEYS
    assert streamer.checkpoint_of({"deltastreamer.checkpoint.key": "1", streamer.CHECKPOINT_KEY: "2"}) == "2"
    assert streamer.checkpoint_of({"deltastreamer.checkpoint.key": "1"}) == "1"
    assert streamer.checkpoint_of({"streamer.checkpoint.key": ""}) is None


def test_has_completed_commit_reads_both_timeline_layouts(tmp_path):
    assert not streamer.has_completed_commit(str(tmp_path))
    (tmp_path / ".hoodie" / "timeline").mkdir(parents=True)
    (tmp_path / ".hoodie" / "timeline" / "20250101000000000.deltacommit.inflight").write_text("")
    assert not streamer.has_completed_commit(str(tmp_path))
    (tmp_path / ".hoodie" / "timeline" / "20250101000000000_20250101000001000.deltacommit").write_text("")
    assert streamer.has_completed_commit(f"file://{tmp_path}")
    v6 = tmp_path / "v6"
    (v6 / ".hoodie").mkdir(parents=True)
    (v6 / ".hoodie" / "20211230132628.commit").write_text("")
    assert streamer.has_completed_commit(str(v6))


# ---- the job file spark-submit runs ------------------------------------------------------------
def test_job_imports_nothing_heavy():
    code = ("import sys, hudi_cdc.jobs.streamer; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('click', 'jinja2', 'pydantic', 'yaml', 'requests', 'boto3', 'pyspark')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_job_file_runs_as_a_script(tmp_path):
    proc = subprocess.run([sys.executable, streamer.__file__, "--props"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout.startswith(streamer.ERROR_MARK) and "bad streamer arguments" in proc.stdout


def test_tombstones_count_once_the_committed_checkpoint_reaches_them(tmp_path):
    """Written before the commit, named by the checkpoint the round commits: a crash after the commit
    (e.g. in inline compaction) keeps them; a failed round's file waits for a checkpoint past it."""
    from hudi_cdc.jobs.stream.tombstones import read_tombstones, write_tombstones

    base = str(tmp_path / "t")
    write_tombstones(base, "1700000000000", [{"id": 1, "__lsn": 10}])
    write_tombstones(base, "1700000005000", [{"id": 2, "__lsn": 20}])
    assert read_tombstones(base, None) == []
    assert read_tombstones(base, "1699999999999") == []
    assert read_tombstones(base, "1700000000000") == [{"id": 1, "__lsn": 10}]
    assert read_tombstones(base, "1700000009000") == [{"id": 1, "__lsn": 10}, {"id": 2, "__lsn": 20}]


def test_many_counted_tombstone_files_fold_into_one_newest_per_key(tmp_path):
    """A round reads every counted tombstone file: from FOLD_AT of them on, they become one (each key's newest,
    what drop_stale_after_delete compares with), written over the newest; a file not yet counted stays."""
    from hudi_cdc.jobs.stream import tombstones as tb

    base, n = str(tmp_path / "t"), tb.FOLD_AT + 3
    folder = tmp_path / "t" / ".hoodie" / ".aux" / "hudi-cdc-tombstones"
    for i in range(n):  # key i % 7 deleted again and again (newest last); key "k" newest in the first file
        tb.write_tombstones(base, str(1_700_000_000_000 + i), [{"id": i % 7, "__lsn": 100 + i},
                                                               {"id": "k", "__lsn": 1000 - i}])
    tb.write_tombstones(base, "1800000000000", [{"id": 1, "__lsn": 5000}])  # a round not committed (yet)
    checkpoint = str(1_700_000_000_000 + n - 1)
    want = {**{k: max(100 + i for i in range(n) if i % 7 == k) for k in range(7)}, "k": 1000}

    def newest(rows):
        return {r["id"]: r["__lsn"] for r in tb.newest_per_key(rows, ["id"], ["__lsn"])}

    assert len(tb.read_tombstones(base, checkpoint)) == 2 * n  # without the key fields: read, not folded
    assert len(list(folder.iterdir())) == n + 1
    folded = tb.read_tombstones(base, checkpoint, ["id"], ["__lsn"])
    assert len(folded) == 8 and newest(folded) == want
    assert sorted(p.name for p in folder.iterdir()) == [f"cp-0000000{checkpoint}.jsonl",
                                                        "cp-00000001800000000000.jsonl"]
    assert tb.read_tombstones(base, checkpoint, ["id"], ["__lsn"]) == folded  # read again: the same
    assert newest(tb.read_tombstones(base, "1800000000000", ["id"], ["__lsn"])) == {**want, 1: 5000}


def test_checkpoint_of_a_truncate_round_counts(tmp_path):
    """A TRUNCATE round commits a replacecommit (insert_overwrite_table): the next round starts after its
    checkpoint, not after the last plain commit's (it once read the truncate round's files again)."""
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    (hoodie / "hoodie.properties").write_text("hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\n"
                                              "hoodie.table.version=6\nhoodie.timeline.layout.version=1\n")
    for instant, action, cp in (("20250101000000000", "commit", "100"), ("20250101000001000", "replacecommit", "200")):
        (hoodie / f"{instant}.{action}").write_text(json.dumps({"extraMetadata": {streamer.CHECKPOINT_KEY: cp}}))
    assert streamer.read_checkpoint(f"file://{tmp_path}") == "200"
