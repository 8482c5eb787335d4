"""The streamer's file selection, properties loading and input validation (no Spark)."""

import os
from pathlib import Path

import pytest

from hudi_cdc.jobs import streamer

REAL = Path(__file__).parent / "data" / "s3sink" / "moma.public.artists+0+0000000000.avro"


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
    assert [f["name"] for f in schemas[0]["fields"]][:2] == ["artist_id", "name"]


def test_validate_names_corrupt_truncated_and_keyless_files(tmp_path):
    trunc = tmp_path / "t.avro"
    trunc.write_bytes(REAL.read_bytes()[: REAL.stat().st_size // 2])
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*t\.avro"):
        streamer.validate_avro_files([(str(trunc), 0, 0)], ["artist_id"])
    junk = tmp_path / "j.avro"
    junk.write_bytes(b"not avro at all")
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*j\.avro"):
        streamer.validate_avro_files([(str(junk), 0, 0)], ["artist_id"])
    missing = r"field 'artwork_id' .* missing from the schema of .*0000000000\.avro"
    with pytest.raises(streamer.JobInputError, match=missing):
        streamer.validate_avro_files([(str(REAL), 0, 0)], ["artwork_id"])


def test_parse_argv_groups():
    ts = streamer.parse_argv(["--props", "p1", "--table-type", "COPY_ON_WRITE", "--target-base-path", "/a/",
                              "--target-table", "db.a", "--op", "BULK_INSERT", "--filter-dupes", "--next",
                              "--props", "p2", "--table-type", "MERGE_ON_READ", "--target-base-path", "/b",
                              "--target-table", "db.b", "--source-ordering-field", "__lsn", "--continuous",
                              "--hoodie-conf", "k=v"])
    assert [t.op for t in ts] == ["BULK_INSERT", "UPSERT"] and ts[0].target_base_path == "/a"
    assert ts[1].continuous and ts[1].source_ordering_fields == "__lsn" and ts[1].hoodie_conf == ["k=v"]
