"""`hudi-cdc table downgrade` on tables the previous default wrote (Hudi 1.2.0, table version 9, LSM
timeline) with MoR log files not compacted yet: Hudi's own downgrade (spark/downgrade.py) under the
writer locks turns them into version 6 (layout 1 timeline), the rows read back equal to the replayed
state, status names the version before and after, a second run is a no-op, and the pipeline's writers
(hudi.table_version 6) go on writing them; Hudi 0.14.0 (Athena's reader release) then reads them equal."""

from __future__ import annotations

import pytest

from hudi_cdc.lake.reader import read_table
from hudi_cdc.lake.status import pipeline_status
from hudi_cdc.lake.version import version_on_disk
from hudi_cdc.pipeline import plan_stream
from hudi_cdc.pipeline.downgrade import AT_VERSION, CONVERT, downgrade
from hudi_cdc.runners.deltastreamer import runtime
from tests.jobs.test_cdc_semantics import DATA_COLS, SNAPSHOT, Lake, ev
from tests.plugins.hudi_readers import read_with_hudi_014
from tests.shared import require

pytestmark = pytest.mark.spark
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"


@pytest.mark.deltastreamer
def test_downgrade_a_v9_lake_with_pending_logs_to_v6(tmp_path, spark):
    require(runtime.is_ready(), "no Hudi 0.14.0 runtime: run scripts/install-deltastreamer.sh")
    lake = Lake(tmp_path, spark, table_version=9)  # the default before hudi.table_version
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    lake.land([ev(1, 200, nat="German", name="moved"), ev(3, 210, deleted=True), ev(31, 220, op="c")])
    lake.run("UPSERT")  # MoR: a delta commit whose logs wait for compaction (after 3 delta commits)
    lake.assert_matches()
    mor = lake.pipeline.base_path("artists", MOR)
    assert list((tmp_path / "lake" / "artists_mor").glob("*/.*.log.*")), "no MoR log file pending"
    assert {version_on_disk(lake.pipeline.base_path("artists", tt)) for tt in (COW, MOR)} == {9}

    v6 = lake.pipeline.model_copy(update={"hudi": lake.pipeline.hudi.model_copy(update={"table_version": 6})})
    assert [s.table_version for s in pipeline_status(v6)] == [9, 9]
    assert all("is Hudi table version 9" in s.breaches[0] for s in pipeline_status(v6))
    plan = downgrade(v6, dry_run=True)
    assert [(c.table_type, c.found, c.wanted, c.action) for c in plan] == [(COW, 9, 6, CONVERT), (MOR, 9, 6, CONVERT)]
    assert version_on_disk(mor) == 9  # a dry run converts nothing

    said: list[str] = []
    done = downgrade(v6, spark=spark, progress=said.append)
    assert [(c.table_type, c.done) for c in done] == [(COW, True), (MOR, True)], said
    for tt in (COW, MOR):
        base = lake.pipeline.base_path("artists", tt)
        assert version_on_disk(base) == 6
        props = (tmp_path / "lake" / f"artists_{'cow' if tt == COW else 'mor'}" / ".hoodie" /
                 "hoodie.properties").read_text()
        assert "hoodie.timeline.layout.version=1" in props
    lake.pipeline = v6
    lake.assert_matches()  # every row kept, the pending logs included
    assert [s.table_version for s in pipeline_status(v6)] == [6, 6]
    assert all(not s.breaches for s in pipeline_status(v6))
    assert [c.action for c in downgrade(v6, spark=spark)] == [AT_VERSION, AT_VERSION]  # idempotent

    from hudi_cdc.core import render

    render.write_properties(v6, lake.props_dir)  # the writers of hudi.table_version 6 go on
    assert len(plan_stream(v6, "artists", once=True)) == 2
    lake.land([ev(5, 300, nat="French", name="five-after"), ev(2, 310, deleted=True)])
    lake.run("UPSERT")
    lake.assert_matches()
    assert {version_on_disk(lake.pipeline.base_path("artists", tt)) for tt in (COW, MOR)} == {6}

    # Hudi 0.14.0 on Spark 3.4 (refuses a version 9 table) reads the converted tables, and tables created
    # at 6 by the default pipeline: CoW and MoR snapshots equal the replayed state, the MoR read-optimized
    # view equals hudi-rs' read-optimized read
    fresh = Lake(tmp_path / "fresh", spark)  # hudi.table_version's default: 6 from the first commit
    fresh.land(SNAPSHOT)
    fresh.run("BULK_INSERT")
    fresh.land([ev(1, 200, nat="German", name="moved"), ev(3, 210, deleted=True), ev(31, 220, op="c")])
    fresh.run("UPSERT")
    reads = [(base, q) for lk in (lake, fresh) for base, q in (
        (lk.pipeline.base_path("artists", COW), "snapshot"), (lk.pipeline.base_path("artists", MOR), "snapshot"),
        (lk.pipeline.base_path("artists", MOR), "read_optimized"))]
    got = read_with_hudi_014(tmp_path, reads)

    def state(rows):
        assert isinstance(rows, list), rows  # else {"error": ...}: Hudi 0.14.0 refused the read
        return sorted(tuple(r.get(c) for c in DATA_COLS) for r in rows)

    for i, lk in enumerate((lake, fresh)):
        want = sorted(tuple(v[c] for c in DATA_COLS) for v in lk.expected().values())
        cow, mor, ro = reads[3 * i:3 * i + 3]
        assert state(got[cow]) == want and state(got[mor]) == want, ("converted", "fresh")[i]
        assert state(got[ro]) == state(read_table(ro[0], read_optimized=True)), ("converted", "fresh")[i]
