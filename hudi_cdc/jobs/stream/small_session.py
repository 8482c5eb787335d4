"""A small round's Spark session: the job's SparkContext, one shuffle partition.

Every shuffle of a round (the lookup's joins, the summary's aggregates, Hudi's own) runs as many tasks as
`spark.sql.shuffle.partitions` says (4 by default, a cluster's pipeline often more), and each task
deserializes its stage's plan and, for Hudi's, the table's Hadoop configuration: on a round of a few dozen
events that is most of what the executors do (a profile of a long `stream --all`: a third of the executor
threads' CPU in task deserialization). A round whose landed files are small enough runs in a sibling
session with one shuffle partition instead: a round of 20 events into a 5,000-row MoR table ran ~50 tasks
instead of ~85, with a third less task deserialization CPU (docs/measurements.md; the rounds a minute of a
long `stream --all` moved within that benchmark's noise). Big rounds keep the job's session and its
partitions, so a drain or a bootstrap still uses every core.

The sibling shares the context, the cache and the catalog, not the SQL settings: `newSession()` starts from
the context's `spark.sql.*` settings (the pipeline's `spark.conf`, Hudi's extensions), typed.py sets the
typed lake's settings on whichever session a round uses, and a file scan or a Spark-built local relation
there has no more than one partition as its fewest (`spark.sql.leafNodeDefaultParallelism`; PySpark's `range`
and `createDataFrame` of Python rows take the context's default parallelism instead).
"""

from __future__ import annotations

import threading
import weakref

from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.props import streamer_prop

# landed bytes up to which a round runs in the one-partition session (~10,000-50,000 Debezium events)
SMALL_BYTES = 4 << 20
PARTITIONS_KEY = "spark.sql.shuffle.partitions"
# a file scan's and a Spark-built local relation's fewest partitions
LEAF_KEY = "spark.sql.leafNodeDefaultParallelism"
# `hoodie.streamer.hudi_cdc.small.round.bytes`: the limit above, per table (0: never)
LIMIT_PROP = "hudi_cdc.small.round.bytes"

_lock = threading.Lock()
_siblings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # job session -> its sibling


def is_small(files, props: dict[str, str]) -> bool:
    """Whether a round of `files` ([(path, mtime, size)]) is small: its landed bytes within the limit."""
    text = streamer_prop(props, LIMIT_PROP)
    try:
        limit = SMALL_BYTES if text in (None, "") else int(text)
    except ValueError:
        raise JobInputError(f"hoodie.streamer.{LIMIT_PROP} is {text!r}, not a number of bytes") from None
    return sum(f[2] for f in files) <= limit


def for_round(spark, files, props: dict[str, str]):
    """The session a round of `files` ([(path, mtime, size)]) runs in: the one-partition sibling when the
    files are small and the job's session has more partitions, else the job's session."""
    if not is_small(files, props) or str(spark.conf.get(PARTITIONS_KEY)) == "1":
        return spark
    return sibling(spark)


def sibling(spark):
    """The job session's one-partition sibling (made once per session)."""
    with _lock:
        small = _siblings.get(spark)
        if small is None:
            small = spark.newSession()
            small.conf.set(PARTITIONS_KEY, "1")
            small.conf.set(LEAF_KEY, "1")
            _siblings[spark] = small
        return small
