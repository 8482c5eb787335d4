"""storage.land, the last step of every file capture lands: whole, durable, newer than everything
before it, on a local root and on S3 (moto in this process: no endpoint runs); capture's next file
offset from what a landing root holds, local or S3."""

from __future__ import annotations

import io
import os

import fastavro
import pytest

from hudi_cdc.capture.landing import next_offset
from hudi_cdc.common import s3, storage

SCHEMA = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "int"}]}


def _avro(n: int) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, SCHEMA, [{"id": i} for i in range(n)], codec="null")
    return buf.getvalue()


def _staged(folder, name: str, data: bytes):
    p = folder / f".{name}.tmp"
    p.write_bytes(data)
    return p


def test_local_land_renames_into_place_with_increasing_times(tmp_path):
    d = tmp_path / "t" / "partition=0"
    d.mkdir(parents=True)
    future = (os.stat(d).st_mtime_ns // 1_000_000) + 3_600_000  # a root whose newest file is "ahead"
    first = storage.land(_staged(d, "a.avro", b"1"), str(d / "a.avro"), future)
    second = storage.land(_staged(d, "b.avro", b"2"), str(d / "b.avro"), first)
    assert first == future + 1 and second == first + 1
    assert os.stat(d / "b.avro").st_mtime_ns == second * 1_000_000
    assert sorted(os.listdir(d)) == ["a.avro", "b.avro"]  # no temp file left
    assert storage.newest_mtime_ms(str(tmp_path)) == second


@pytest.fixture
def bucket(monkeypatch):
    from moto import mock_aws

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    for v in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(v, raising=False)
    s3.use(None)
    s3._clients.clear()
    with mock_aws():
        s3.client().create_bucket(Bucket="land")
        yield "land"
    s3._clients.clear()


def test_s3_land_is_one_put_in_a_later_second(bucket, tmp_path):
    root = f"s3://{bucket}/topics"
    d = f"{root}/x.t/partition=0"
    first = storage.land(_staged(tmp_path, "a", _avro(3)), f"{d}/x.t+0+0000000000.avro", 0)
    second = storage.land(_staged(tmp_path, "b", _avro(2)), f"{d}/x.t+0+0000000003.avro", first)
    assert second // 1000 > first // 1000  # S3 lists times to the second: never two files in one
    assert not list(tmp_path.iterdir())  # the staged files are gone
    assert storage.listdir(d) == ["x.t+0+0000000000.avro", "x.t+0+0000000003.avro"]
    assert storage.newest_mtime_ms(root) == second
    assert next_offset(d, "x.t", 0) == 5  # 3 + the 2 records of the last file
    assert next_offset(f"{root}/other/partition=0", "other", 0) == 0


def test_delete_removes_a_file_locally_and_on_s3_and_a_missing_one_is_no_error(bucket, tmp_path):
    for uri in (str(tmp_path / "d" / "f.jsonl"), f"s3://{bucket}/d/f.jsonl"):
        storage.write_bytes(uri, b"x")
        assert storage.read_bytes(uri) == b"x"
        storage.delete(uri)
        assert storage.read_bytes(uri) is None
        storage.delete(uri)


def test_s3_land_refuses_an_endpoint_clock_stuck_behind(bucket, tmp_path, monkeypatch):
    monkeypatch.setattr(s3, "modified_ms", lambda uri, ep=None: 1_000)
    monkeypatch.setattr(storage.time, "sleep", lambda s: None)
    with pytest.raises(s3.S3Problem, match=r"s3://land/k\.avro on AWS S3 \(us-east-1\): its modification time "
                                           r"stays at or before 5000 ms"):
        storage.land(_staged(tmp_path, "k", b"x"), "s3://land/k.avro", 5_000, attempts=2)


def test_local_next_offset_counts_the_last_files_records(tmp_path):
    d = tmp_path / "x.t" / "partition=0"
    d.mkdir(parents=True)
    assert next_offset(str(d), "x.t", 0) == 0
    (d / "x.t+0+0000000000.avro").write_bytes(_avro(4))
    (d / "x.t+0+0000000004.avro").write_bytes(_avro(6))
    (d / ".x.t+0+0000000010.avro.tmp").write_bytes(b"half")
    assert next_offset(str(d), "x.t", 0) == 10
