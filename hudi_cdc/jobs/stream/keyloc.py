"""The round's stored rows from only the file groups that can hold its keys, through Hudi's
record-level index (RLI) in the metadata table.

A table written with `hoodie.metadata.global.record.level.index.enable=true` keeps, in its metadata
table, each record key's file group. A snapshot read with data skipping and a filter `key IN (...)`
on the record key field makes Hudi look the round's keys up in that index and list only the file
slices (base file and log files: a MoR table's logs count) of the file groups they live in
(RecordLevelIndexSupport). Everything else is the same snapshot read as the full one (redelivery.py).

Two details of Spark make this work:
- Spark's optimizer turns an IN of more than `spark.sql.optimizer.inSetConversionThreshold` (10)
  values into an InSet, which Hudi's RLI pruning does not take: the threshold is raised while the read
  is planned (and set back after);
- Spark evaluates an IN of thousands of values row by row (interpreted: 124 s for 1M rows and 10,000
  keys on this machine), so the planned scan is run by itself and the filter is left to the caller's
  semi-join (a hash lookup). The scan returns every row of the pruned file slices.

Used only where the index answers exactly what the full read would: one record key field, a Simple
or Nonpartitioned key generator (the RLI's keys are the field's value as text), a key column of string
or integral type, no column or partition stats index in the metadata table (Hudi 1.2 prunes by them
too and turns the IN into one OR per key: the planner's stack overflows from a few thousand keys), at
most MAX_KEYS distinct keys in the round (the IN list is planned on the driver). A table without the
index (never written with it, or its index still being built) takes the full read.

Hudi's RLI loses a key that one commit deletes and inserts (a partition move as located.py writes it),
so with the index a round commits its moves' deletes first (round.py)."""

from __future__ import annotations

from hudi_cdc.common import storage
from hudi_cdc.common.properties import local_path, parse_properties

RECORD_INDEX = "record_index"  # the metadata table partition of the record-level index
# Hudi 1.2 prunes by these whenever the table has them (whatever the read options say), and turns the
# round's IN into one OR per key, which overflows the planner's stack from a few thousand keys on
STATS_INDEXES = frozenset({"column_stats", "partition_stats"})
MAX_KEYS = 5_000
# data skipping by the record-level index only: the column and partition stats indexes (on by default
# with the metadata table) would turn the IN into one OR per key (a 10,000-key IN overflows the stack)
READ_OPTIONS = {"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true",
                "hoodie.metadata.index.column.stats.enable": "false",
                "hoodie.metadata.index.partition.stats.enable": "false"}
_IN_THRESHOLD = "spark.sql.optimizer.inSetConversionThreshold"
_KEYGEN_TYPES = ("SIMPLE", "NON_PARTITION")
_KEYGEN_CLASSES = ("org.apache.hudi.keygen.SimpleKeyGenerator", "org.apache.hudi.keygen.NonpartitionedKeyGenerator")
_KEY_TYPES = ("StringType", "IntegerType", "LongType", "ShortType", "ByteType")


def table_config(base_path: str) -> dict[str, str]:
    """The table's hoodie.properties ({} when there is none yet)."""
    data = storage.read_bytes(storage.join(local_path(base_path), ".hoodie", "hoodie.properties"))
    return parse_properties(data.decode("utf-8", "replace")) if data else {}


def _listed(config: dict[str, str], name: str) -> set[str]:
    return {p.strip() for p in (config.get(name) or "").split(",") if p.strip()}


def has_record_index(config: dict[str, str]) -> bool:
    """Does the table keep a record-level index (built, or being built)?"""
    return RECORD_INDEX in _listed(config, "hoodie.table.metadata.partitions") | \
        _listed(config, "hoodie.table.metadata.partitions.inflight")


def record_index_key(config: dict[str, str]) -> str | None:
    """The record key field when the table's record-level index can prune a lookup by it, else None."""
    built = _listed(config, "hoodie.table.metadata.partitions")
    if RECORD_INDEX not in built or RECORD_INDEX in _listed(config, "hoodie.table.metadata.partitions.inflight"):
        return None
    if built & STATS_INDEXES:
        return None  # their pruning turns an IN of thousands of keys into a deep OR: the planner's stack overflows
    keygen_type = (config.get("hoodie.table.keygenerator.type") or "").strip().upper()
    keygen_class = (config.get("hoodie.table.keygenerator.class") or "").strip()
    if keygen_type not in _KEYGEN_TYPES and keygen_class not in _KEYGEN_CLASSES:
        return None
    keys = sorted(_listed(config, "hoodie.table.recordkey.fields"))
    return keys[0] if len(keys) == 1 else None


def pruned_snapshot(spark, base_path: str, keys: list[str], round_keys, columns: list[str]):
    """The table's snapshot rows (`columns`, by their stored names) in the file groups the record-level
    index names for the round's keys (`round_keys`: a DataFrame of the key column, distinct), and how
    many files (file slices) the scan read; or None when the index cannot be used (the caller reads
    the whole snapshot). Rows of other keys in those file groups are included: the caller joins by key."""
    if len(keys) != 1 or record_index_key(table_config(base_path)) != keys[0]:
        return None
    key_type = {f.name: type(f.dataType).__name__ for f in round_keys.schema.fields}.get(round_keys.columns[0])
    if key_type not in _KEY_TYPES:
        return None
    values = [r[0] for r in round_keys.limit(MAX_KEYS + 1).collect() if r[0] is not None]
    if not values or len(values) > MAX_KEYS:
        return None
    return _scan_only(spark, base_path, keys[0], values, columns)


def _scan_only(spark, base_path: str, key: str, values: list, columns: list[str]):
    """Plan `key IN (values)` on the snapshot (Hudi prunes by its index while it plans), then run the
    plan's file scan alone as a DataFrame (without Spark's row-by-row IN)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    before = spark.conf.get(_IN_THRESHOLD, None)
    spark.conf.set(_IN_THRESHOLD, str(len(values) + 1))
    try:
        planned = (spark.read.format("hudi").options(**READ_OPTIONS).load(base_path)
                   .where(F.col("_hoodie_record_key").isin([str(v) for v in values]))
                   .select(*dict.fromkeys([key, *columns])))
        plan = planned._jdf.queryExecution().sparkPlan()  # Hudi lists the pruned file slices here
    finally:
        if before is None:
            spark.conf.unset(_IN_THRESHOLD)
        else:
            spark.conf.set(_IN_THRESHOLD, before)
    scan = _file_scan(plan)
    if scan is None:
        return None
    jvm = spark.sparkContext._jvm
    rows = jvm.org.apache.spark.sql.execution.ColumnarToRowExec(scan) if scan.supportsColumnar() else scan
    jdf = spark._jsparkSession.internalCreateDataFrame(rows.execute(), scan.schema(), False)
    metrics = scan.metrics()  # set while the scan listed its files, for the round's log
    files = int(metrics.apply("numFiles").value()) if metrics.contains("numFiles") else -1
    return DataFrame(jdf, spark), files


def _file_scan(plan):
    """The one file scan of a physical plan (None when there is not exactly one)."""
    found = []
    todo = [plan]
    while todo:
        node = todo.pop()
        if node.getClass().getSimpleName() == "FileSourceScanExec":
            found.append(node)
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return found[0] if len(found) == 1 else None


def files_read(df) -> int:
    """How many files (file slices for Hudi) the file scans of an executed DataFrame read: the scans'
    `numFiles` metric (what a full read lists, to compare with)."""
    total = 0
    todo = [df._jdf.queryExecution().executedPlan()]
    while todo:
        node = todo.pop()
        metrics = node.metrics()
        if metrics.contains("numFiles"):
            total += int(metrics.apply("numFiles").value())
        children = node.children()
        todo.extend(children.apply(i) for i in range(children.size()))
    return total
