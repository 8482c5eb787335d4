"""A small round's session (hudi_cdc/jobs/stream/small_session.py): small landed files run in the job session's
one-partition sibling (one per session, the same context), big ones and a limit of 0 keep the job's session.
Every small round of the suite runs in it; this pins the choice."""

import pytest

from hudi_cdc.jobs.stream import local_rows, small_session
from hudi_cdc.jobs.stream.errors import JobInputError


def test_small_files_take_the_one_partition_sibling(spark):
    assert spark.conf.get("spark.sql.shuffle.partitions") != "1"
    small = small_session.for_round(spark, [("a.avro", 1, 900), ("b.avro", 2, 1200)], {})
    assert small is not spark and small.sparkContext is spark.sparkContext
    assert small.conf.get("spark.sql.shuffle.partitions") == "1"
    assert small.conf.get("spark.sql.leafNodeDefaultParallelism") == "1"
    assert spark.conf.get("spark.sql.shuffle.partitions") != "1"  # the job's session keeps its partitions
    assert small_session.for_round(spark, [("c.avro", 3, 10)], {}) is small  # made once
    for session, partitions in ((small, 1), (spark, int(spark.conf.get("spark.sql.shuffle.partitions")))):
        rows = local_rows.frame(session, [(i,) for i in range(5)], ["id"], ["bigint"])  # as the driver lookup's
        assert rows.groupBy((rows.id % 2).alias("k")).count().rdd.getNumPartitions() == partitions

    big = [("d.avro", 4, small_session.SMALL_BYTES), ("e.avro", 5, 1)]
    assert small_session.for_round(spark, big, {}) is spark
    off = {"hoodie.streamer." + small_session.LIMIT_PROP: "0"}
    assert small_session.for_round(spark, [("f.avro", 6, 1)], off) is spark
    assert small_session.for_round(small, [("g.avro", 7, 1)], {}) is small  # already one partition
    with pytest.raises(JobInputError, match="small.round.bytes is 'lots'"):
        small_session.for_round(spark, [("h.avro", 8, 1)], {"hoodie.streamer." + small_session.LIMIT_PROP: "lots"})
