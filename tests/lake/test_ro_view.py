"""The read-optimized view's freshness (hudi_cdc/lake/ro_view.py) and a quiet table's overdue compaction
(hudi_cdc/jobs/stream/compaction.py: `overdue`), on hand-made commit metadata and timeline files."""

from __future__ import annotations

from hudi_cdc.common.checkpoints import SOURCE_TS_KEY
from hudi_cdc.common.instants import Instant
from hudi_cdc.jobs.stream import compaction
from hudi_cdc.lake.ro_view import last_compaction, ro_source_ts, wrote_logs


def _meta(ts: int | None, *paths: str) -> dict:
    return {"partitionToWriteStats": {"p": [{"path": f"p/{p}"} for p in paths]},
            "extraMetadata": {SOURCE_TS_KEY: str(ts)} if ts is not None else {}}


BASE = "f1-0_0-1-2_20260101000000000.parquet"
LOG = ".f1-0_20260101000000000.log.1_0-1-2"


def _writes(*times: str) -> list[Instant]:
    return [Instant(t, "deltacommit", "COMPLETED") for t in times]


def test_a_write_is_in_the_read_optimized_view_once_its_logs_are_compacted():
    assert wrote_logs(_meta(1, LOG)) and not wrote_logs(_meta(1, BASE)) and not wrote_logs({})
    writes = _writes("20260101000000000", "20260101000100000", "20260101000200000", "20260101000300000")
    metas = [_meta(1000, BASE), _meta(2000, LOG), _meta(3000, BASE), _meta(4000, LOG)]
    # no compaction: the bootstrap's base files only; three writes wait (one of them wrote base files only,
    # but it comes after a write whose logs wait, and the view is complete only through the first gap)
    assert ro_source_ts(writes, metas, "") == (1000, 3)
    # a compaction planned after the second write merged its logs: complete through the third
    assert ro_source_ts(writes, metas, "20260101000150000") == (3000, 1)
    assert ro_source_ts(writes, metas, "20260101000400000") == (4000, 0)


def test_last_compaction_is_the_newest_completed_one():
    tl = [Instant("20260101000100000", "commit", "COMPLETED", planned_action="compaction"),
          Instant("20260101000300000", "commit", "INFLIGHT", planned_action="compaction"),
          Instant("20260101000200000", "deltacommit", "COMPLETED")]
    assert last_compaction(tl) == "20260101000100000"
    assert last_compaction(tl[1:]) == ""


def _timeline(tmp_path, *names: str) -> str:
    hoodie = tmp_path / "t" / ".hoodie"
    hoodie.mkdir(parents=True)
    for n in names:
        (hoodie / n).write_text("")
    return str(tmp_path / "t")


PROPS = {compaction.TRIGGER_PROP: "NUM_OR_TIME", compaction.MAX_SECONDS_PROP: "600"}
T0 = 1767225600.0  # 2026-01-01 00:00:00 UTC


def test_a_quiet_tables_logs_are_overdue_after_compaction_max_seconds(tmp_path):
    base = _timeline(tmp_path, "20260101000000000.deltacommit", "20260101000100000.compaction.requested",
                     "20260101000100000.compaction.inflight", "20260101000100000.commit",
                     "20260101000200000.deltacommit")
    assert compaction.overdue(base, PROPS, now=T0 + 120 + 599) is None, "waited less than 600 s"
    assert compaction.overdue(base, PROPS, now=T0 + 120 + 600) == "20260101000200000"
    assert compaction.overdue(base, {}, now=T0 + 9999) is None, "no time trigger: only Hudi's count"
    assert compaction.overdue(base, {**PROPS, compaction.TRIGGER_PROP: "NUM_COMMITS"}, now=T0 + 9999) is None


def test_nothing_is_overdue_without_waiting_delta_commits_or_with_a_compaction_pending(tmp_path):
    done = _timeline(tmp_path / "a", "20260101000000000.deltacommit", "20260101000100000.compaction.requested",
                     "20260101000100000.commit")
    assert compaction.overdue(done, PROPS, now=T0 + 9999) is None
    pending = _timeline(tmp_path / "b", "20260101000000000.deltacommit", "20260101000100000.compaction.requested")
    assert compaction.overdue(pending, PROPS, now=T0 + 9999) is None
    sql = compaction.procedure_sql("/t", {"hoodie.write.table.version": "6", "hoodie.write.auto.upgrade": "false"},
                                   "scheduleAndExecute")
    assert "op => 'scheduleAndExecute'" in sql
    assert "hoodie.write.table.version=6" in sql and "hoodie.write.auto.upgrade=false" in sql, \
        "the procedure's write client keeps the table's version"
