"""What Hudi readers before 1.1 take from a version-6 table's hoodie.properties, and Hudi 1.2.0 leaves out.

- `hoodie.table.precombine.field`: Hudi 1.2.0 writing table version 6 stores the ordering field under
  `hoodie.table.ordering.fields` only (1.1's key), also when the write options name the old key (measured).
  Hudi 1.0.2 (EMR 7.11-7.13) reads the old key; without it its MoR snapshot read gives base rows no ordering
  value (an Integer 0) and fails comparing it with a log record's (`ClassCastException: class java.lang.Long
  cannot be cast to class java.lang.Integer`, tests/jobs/test_types_query.py; docs/query-the-lake.md).
- `hoodie.compaction.payload.class`: Hudi 1.2.0's 9 -> 6 downgrade leaves it out, and Hudi 0.14.0's MoR
  snapshot read then fails (NullPointerException in HoodieRecordUtils.loadPayload; tests/pipeline/test_downgrade.py).

Both are written with Hudi's own HoodieTableConfig.update (checksum and backup file as Hudi keeps them), in
a SparkSession with the Hudi 1.2.0 bundle, by the streamer after a round and by `table downgrade`.
"""

from __future__ import annotations

from hudi_cdc.common import storage
from hudi_cdc.errors import TableStateError

PRECOMBINE_KEY = "hoodie.table.precombine.field"
PAYLOAD_KEY = "hoodie.compaction.payload.class"
V6_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"  # hudi-cdc's event-time ordering


def _table_config(base_path: str) -> dict[str, str]:
    raw = storage.read_bytes(storage.join(storage.local(base_path), ".hoodie", "hoodie.properties"))
    if raw is None:  # called once a table exists: a path this process cannot read must not pass for "not 6"
        raise TableStateError(f"{base_path}: no .hoodie/hoodie.properties to read the table version from")
    # stdlib only (not common.properties.parse_properties, which needs javaproperties): this runs in the job on
    # EMR, whose requirements are job_package.JOB_REQUIREMENTS; the keys read here hold no escapes
    lines = raw.decode("utf-8", "replace").splitlines()
    return dict(ln.split("=", 1) for ln in lines if "=" in ln and not ln.lstrip().startswith("#"))


def missing(base_path: str, ordering_fields: str) -> dict[str, str]:
    """The reader keys a version-6 table lacks (none for another version)."""
    config = _table_config(base_path)
    if config.get("hoodie.table.version") != "6":
        return {}
    out = {}
    if not config.get(PAYLOAD_KEY):
        out[PAYLOAD_KEY] = V6_PAYLOAD
    if ordering_fields and not config.get(PRECOMBINE_KEY):
        out[PRECOMBINE_KEY] = ordering_fields
    return out


def ensure(spark, base_path: str, ordering_fields: str) -> dict[str, str]:
    """Write the keys a version-6 table lacks into its hoodie.properties; returns what was written."""
    keys = missing(base_path, ordering_fields)
    if not keys:
        return {}
    jvm = spark._jvm
    hudi = jvm.org.apache.hudi
    storage_conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(spark._jsc.hadoopConfiguration())
    meta = hudi.common.table.HoodieTableMetaClient.builder().setConf(storage_conf).setBasePath(base_path).build()
    props = jvm.java.util.Properties()
    for k, v in keys.items():
        props.setProperty(k, v)
    hudi.common.table.HoodieTableConfig.update(meta.getStorage(), meta.getMetaPath(), props)
    return keys
