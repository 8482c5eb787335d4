"""The round's key lookup through Hudi's record-level index (hudi_cdc/jobs/stream/keyloc.py): which
tables it takes, that it reads fewer files than the table has and the same rows as the full read, and
that a round with every kind of change through it equals the replayed events."""

from __future__ import annotations

import pytest

from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream import keyloc
from tests.jobs.test_cdc_semantics import Lake, ev
from tests.jobs.test_located import _every_kind_of_change

# what a table's hudi_options need for the lookup (docs/key-location.md)
RLI = {"hoodie.metadata.enable": "true", "hoodie.metadata.global.record.level.index.enable": "true",
       "hoodie.metadata.index.column.stats.enable": "false", "hoodie.metadata.index.partition.stats.enable": "false"}
CONFIG = {"hoodie.table.metadata.partitions": "files,record_index", "hoodie.table.recordkey.fields": "id",
          "hoodie.table.keygenerator.type": "SIMPLE"}


@pytest.mark.unit
@pytest.mark.parametrize(("change", "key"), [
    ({}, "id"),
    ({"hoodie.table.keygenerator.type": "NON_PARTITION"}, "id"),
    ({"hoodie.table.keygenerator.type": "", "hoodie.table.keygenerator.class":
      "org.apache.hudi.keygen.SimpleKeyGenerator"}, "id"),
    ({"hoodie.table.metadata.partitions": "files"}, None),  # written without the index
    ({"hoodie.table.metadata.partitions.inflight": "record_index"}, None),  # the index still being built
    ({"hoodie.table.metadata.partitions": "files,record_index,partition_stats"}, None),
    ({"hoodie.table.metadata.partitions": "column_stats,files,record_index"}, None),
    ({"hoodie.table.keygenerator.type": "COMPLEX"}, None),
    ({"hoodie.table.recordkey.fields": "a,b"}, None),
])
def test_which_tables_the_index_serves(change, key):
    assert keyloc.record_index_key({**CONFIG, **change}) == key


def _write(spark, path, rows, op, options):
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.partitionpath.field": "p",
            "hoodie.datasource.write.hive_style_partitioning": "true",
            "hoodie.table.ordering.fields": "o", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": "true",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
            "hoodie.datasource.write.operation": op, **options}
    spark.createDataFrame(rows, "id long, p string, o long, v string").write.format("hudi").options(**opts) \
        .mode("overwrite" if op == "bulk_insert" else "append").save(path)


def test_lookup_reads_only_the_file_groups_of_the_keys(spark, tmp_path, monkeypatch):
    """A MoR table of 3 partitions x 2 file groups, one key's newest version in a log file: the lookup of
    keys in one file group reads that file slice only, and finds what the full snapshot read finds."""
    from pyspark.sql import functions as F

    path = f"file://{tmp_path}/t"
    # bulk insert sorted by key, 2 tasks: 2 file groups per partition, keys 0..299 and 300..599 apart
    _write(spark, path, [(i, str(i % 3), 1, "a") for i in range(600)], "bulk_insert", RLI)
    _write(spark, path, [(3, "0", 2, "b")], "upsert", RLI)  # a log file in key 3's file group
    full = spark.read.format("hudi").load(path).select("id")
    full.collect()
    total = keyloc.files_read(full)
    assert total == 6
    wanted = [0, 3, 6, 9, 10_000]  # partition 0, one file group; 10,000 is not stored
    round_keys = spark.createDataFrame([(k,) for k in wanted], "k long")
    cols = ["id", "o", "v", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]
    pruned = keyloc.pruned_snapshot(spark, path, ["id"], round_keys, cols)
    assert pruned is not None
    table, files = pruned
    assert files == 1 < total
    got = {r["id"]: r.asDict() for r in table.where(F.col("id").isin(wanted)).select(*cols).collect()}
    want = {r["id"]: r.asDict() for r in spark.read.format("hudi").load(path)
            .where(F.col("id").isin(wanted)).select(*cols).collect()}
    assert got == want and sorted(got) == [0, 3, 6, 9] and got[3]["o"] == 2 and got[3]["v"] == "b"
    # more keys than MAX_KEYS, or a table without the index: the full read (None)
    monkeypatch.setattr(keyloc, "MAX_KEYS", 3)
    assert keyloc.pruned_snapshot(spark, path, ["id"], round_keys, cols) is None
    monkeypatch.undo()
    plain = f"file://{tmp_path}/plain"
    _write(spark, plain, [(1, "0", 1, "a")], "bulk_insert", {"hoodie.metadata.enable": "false"})
    assert keyloc.pruned_snapshot(spark, plain, ["id"], round_keys, cols) is None


def test_round_through_the_record_index_equals_the_events(tmp_path, spark):
    """Updates, partition moves, key-only deletes, deletes of unknown or newer keys, redeliveries, stale
    events, inserts: located through the index, both table types equal the replayed events, also for
    keys whose newest version is in a MoR log file or that moved in the round before, and the index
    still holds every key."""
    lake = Lake(tmp_path, spark, hudi_options=RLI)
    results = _every_kind_of_change(lake)
    lake.assert_matches()
    for r in results:
        assert (r.moves, r.unchanged_ignored, r.ignored_deletes) == (2, 2, 2), r
    lake.land([ev(1, 300, nat="French", name="again"), ev(2, 301, nat="French", name="moved back"),
               ev(40, 302, deleted=True), ev(7, 303, nat="German", name="third"), ev(41, 304, nat="Irish")])
    said: list[str] = []
    streamer.run_targets(spark, lake.targets("UPSERT"), log=said.append)
    lake.assert_matches()
    assert sum("keys located through the record-level index" in m for m in said) == 2, said
    # with the index, a round with partition moves commits the moves' deletes first: Hudi's index would
    # drop a key deleted and inserted in one commit (the second round then missed key 2)
    assert len(lake.commits("COPY_ON_WRITE")) == 5  # bootstrap + two commits per round
    assert len([c for c in lake.commits("MERGE_ON_READ") if c.endswith(".deltacommit")]) == 4  # (+ compaction)
    index = spark.read.format("hudi").load(lake.pipeline.base_path("artists", "MERGE_ON_READ") + "/.hoodie/metadata")
    keys = {r["key"] for r in index.where("type = 5").select("key").collect()}
    assert keys == {str(k) for k in lake.expected()}  # the index holds exactly the table's keys
