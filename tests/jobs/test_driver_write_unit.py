"""When a small round may commit from the driver (hudi_cdc/jobs/stream/driver_write.py), without a JVM:
the table's switch, the kinds of rounds and commits that keep Spark's write, and the inline compaction's
trigger read from the timeline."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hudi_cdc.jobs.stream import driver_write
from hudi_cdc.jobs.stream.errors import JobInputError

MOR = SimpleNamespace(table_type="MERGE_ON_READ", target_base_path="")
LOCATED = object()


def _timeline(tmp_path, *names):
    hoodie = tmp_path / ".hoodie"
    hoodie.mkdir(parents=True, exist_ok=True)
    (hoodie / "hoodie.properties").write_text("hoodie.table.version=6\n")
    for n in names:
        (hoodie / n).write_text("")
    return SimpleNamespace(table_type="MERGE_ON_READ", target_base_path=str(tmp_path))


def test_the_switch_is_on_by_default_and_takes_only_true_or_false():
    assert driver_write.enabled({})
    assert not driver_write.enabled({"hoodie.streamer.hudi_cdc.driver.write": "False"})
    assert not driver_write.enabled({"hoodie.deltastreamer.hudi_cdc.driver.write": "false"})
    with pytest.raises(JobInputError, match="hoodie.streamer.hudi_cdc.driver.write must be true or false"):
        driver_write.enabled({"hoodie.streamer.hudi_cdc.driver.write": "yes"})


def test_only_a_located_mor_round_of_one_commit_without_clustering(tmp_path):
    t = _timeline(tmp_path)
    assert driver_write.why_not(t, {}, LOCATED, 1) == ""
    assert driver_write.why_not(SimpleNamespace(table_type="COPY_ON_WRITE", target_base_path=""), {}, LOCATED, 1)
    assert driver_write.why_not(t, {}, None, 1)  # keys located by Hudi's index
    assert driver_write.why_not(t, {}, LOCATED, 2)  # a record-level index's moves first
    assert driver_write.why_not(t, {"hoodie.datasource.hive_sync.enable": "true"}, LOCATED, 1) == ""  # synced after
    assert driver_write.why_not(t, {"hoodie.clustering.inline": "true"}, LOCATED, 1) == "the commit clusters"
    (tmp_path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.metadata.partitions=files,record_index\n")
    assert driver_write.why_not(t, {}, LOCATED, 1) == "the table keeps a record-level index"


def test_a_commit_reaching_the_inline_compaction_goes_through_spark(tmp_path):
    inline = {"hoodie.compact.inline": "true", "hoodie.compact.inline.max.delta.commits": "3"}
    t = _timeline(tmp_path, "20260101000001000.deltacommit", "20260101000002000.compaction.requested",
                  "20260101000002000.compaction.inflight", "20260101000002000.commit", "20260101000003000.deltacommit")
    assert driver_write.why_not(t, inline, LOCATED, 1) == ""  # one delta commit since the compaction, this the 2nd
    assert driver_write.why_not(t, {**inline, "hoodie.compact.inline": "false"}, LOCATED, 1) == ""
    (tmp_path / ".hoodie" / "20260101000004000.deltacommit").write_text("")
    assert driver_write.why_not(t, inline, LOCATED, 1) == "the commit compacts"  # the 3rd
    unset = {"hoodie.compact.inline.max.delta.commits": "3"}  # Hudi's Spark writer compacts a MoR table inline
    assert driver_write.why_not(t, unset, LOCATED, 1) == "the commit compacts"
    assert driver_write.why_not(t, {**unset, "hoodie.datasource.compaction.async.enable": "true"}, LOCATED, 1) == ""
    t = _timeline(tmp_path / "b", "20260101000001000.deltacommit", "20260101000002000.compaction.requested")
    assert driver_write.why_not(t, inline, LOCATED, 1) == "the commit compacts"  # a compaction pending
    t = _timeline(tmp_path / "c", "20260101000001000.deltacommit")
    assert driver_write.why_not(t, {**inline, "hoodie.compact.inline.trigger.strategy": "TIME_ELAPSED"}, LOCATED, 1)
