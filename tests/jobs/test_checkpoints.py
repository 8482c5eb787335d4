"""The one reader of commit extra metadata (hudi_cdc/common/checkpoints.py): every checkpoint key Hudi's
streamers have used, and its three users (hudi-cdc's streamer, the 0.14 engine, `status`)."""

from __future__ import annotations

import json
import os

import fastavro
import pytest

from hudi_cdc import sample
from hudi_cdc.common import checkpoints as cps
from hudi_cdc.jobs import streamer
from hudi_cdc.lake.status import landed_source_ts
from hudi_cdc.runners.deltastreamer import submit

# (metadata key, Hudi release that writes it) as in apache/hudi's source
EVERY_KEY = {
    "streamer.checkpoint.key.v2": "StreamerCheckpointV2 (1.x, table version 8+)",
    "deltastreamer.checkpoint.key": "DeltaSync 0.x, StreamSync 0.14, StreamerCheckpointV1",
}


@pytest.mark.parametrize("key", sorted(EVERY_KEY))
def test_every_checkpoint_key_is_read(key):
    cp = cps.checkpoint_in({key: "1700000000123"})
    assert (cp.value, cp.key) == ("1700000000123", key)
    assert cps.checkpoint_of({key: "1700000000123"}) == "1700000000123"
    assert streamer.checkpoint_of({key: "1700000000123"}) == "1700000000123"


def test_the_keys_are_the_ones_hudi_writes():
    assert cps.CHECKPOINT_KEYS == ("streamer.checkpoint.key.v2", "deltastreamer.checkpoint.key")
    assert cps.RESET_KEYS == ("streamer.checkpoint.reset.key.v2", "deltastreamer.checkpoint.reset_key")
    assert cps.IGNORE_KEY == "deltastreamer.checkpoint.ignore_key"
    assert streamer.CHECKPOINT_KEY == cps.KEY_V2 and streamer.LEGACY_CHECKPOINT_KEYS == (cps.KEY_V1,)
    assert submit.CHECKPOINT_KEY == cps.KEY_V1  # what HoodieDeltaStreamer 0.14 writes


def test_v2_wins_over_v1_in_one_commit_and_reset_and_ignore_are_kept():
    extra = {cps.KEY_V1: "1", cps.KEY_V2: "2", cps.RESET_KEY_V1: "r1", cps.RESET_KEY_V2: "r2", cps.IGNORE_KEY: "i"}
    assert cps.checkpoint_in(extra) == cps.Checkpoint(value="2", key=cps.KEY_V2, reset="r2", ignore="i")
    assert cps.checkpoint_in({cps.RESET_KEY_V1: "r1"}) == cps.Checkpoint(value=None, key=None, reset="r1")


@pytest.mark.parametrize("extra", [{}, {cps.KEY_V2: ""}, {cps.KEY_V1: None}, {"streamer.checkpoint.key": "5"}])
def test_empty_or_unknown_keys_carry_no_checkpoint(extra):
    assert cps.checkpoint_of(extra) is None


def test_extra_metadata_in_both_spellings():
    assert cps.extra_metadata({"extraMetadata": {"a": "1"}}) == {"a": "1"}
    assert cps.extra_metadata({"extra_metadata": {"a": "1"}}) == {"a": "1"}  # hudi-rs
    assert cps.extra_metadata(None) == {} and cps.extra_metadata({"extraMetadata": None}) == {}


def test_newest_commit_with_a_checkpoint_wins():
    metas = [{"extraMetadata": {}},  # newest: a compaction carries none
             {"extraMetadata": {cps.KEY_V1: "30"}},
             {"extra_metadata": {cps.KEY_V2: "20"}}]
    found = cps.newest_checkpoint(metas)
    assert found is not None and (found.value, found.key) == ("30", cps.KEY_V1)
    assert cps.newest_checkpoint([{}, None]) is None
    assert cps.newest_value([{"extraMetadata": {cps.SOURCE_TS_KEY: ""}}, {"extraMetadata": {cps.SOURCE_TS_KEY: "7"}}],
                            cps.SOURCE_TS_KEY) == "7"


@pytest.mark.parametrize("key", sorted(EVERY_KEY))
def test_the_014_engine_reads_every_key_from_the_timeline(tmp_path, key):
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir()
    (hoodie / "001.deltacommit").write_text(json.dumps({"extraMetadata": {key: "5"}}))
    (hoodie / "002.commit").write_text('{"extraMetadata": {}}')
    assert submit.checkpoint(tmp_path, submit.completed_instants(tmp_path)) == "5"


def test_landed_source_ts_reads_the_newest_covered_file(tmp_path):
    schema = sample.schema("artists")
    rec = {"artist_id": 1, "name": "a", "nationality": "x", "gender": "g", "birth_year": 1, "death_year": None,
           "__op": "c", "__db": "d", "__table": "t", "__schema": "s", "__lsn": 1, "__deleted": "false"}
    root = tmp_path / "landing"
    root.mkdir()
    for i, (mtime_ms, ts) in enumerate([(1000, [5, 9]), (2000, [40, 30]), (3000, [99])]):
        path = root / f"f{i}.avro"
        with open(path, "wb") as fh:
            fastavro.writer(fh, schema, [dict(rec, __source_ts_ms=t) for t in ts])
        os.utime(path, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
    header_only = root / "f9.avro"  # a header-only file is skipped for an older one with records
    with open(header_only, "wb") as fh:
        fastavro.writer(fh, schema, [])
    os.utime(header_only, ns=(2500 * 1_000_000, 2500 * 1_000_000))
    assert landed_source_ts(str(root), "2500") == 40  # the file at 3000 is not consumed yet
    assert landed_source_ts(str(root), "3000") == 99
    assert landed_source_ts(str(root), "999") is None
    assert landed_source_ts(str(root), None) is None
    assert landed_source_ts(str(root), "3000", field_name="no_such_field") is None
