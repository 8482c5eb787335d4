"""A small located MoR round committed by Hudi's Java write client in the driver (issue 38): the
round's records (already located: each carries its file group, or is an insert) are collected once
into the driver JVM, made into Hudi records there the way Hudi's Spark writer makes prepped records
(`HoodieCreateRecordUtils`: meta fields give key and location, the delete marker the delete), and
appended to their file groups' logs in one delta commit with the round's metadata, then synced to
the metastore as Hudi's Spark writer syncs. No Spark job writes: a round of a few events no longer
pays for the Spark write's stages, tasks and plans. The collected rows also make the delta commit's key file
(logkeys.py), so the round's plan is not run a second time for it.

Taken only when it cannot change the result: a MERGE_ON_READ table, a located round of one commit,
few bytes landed (small_session.py's bound), no record-level index, no clustering or inline compaction in the commit (a
compacting commit rewrites file groups: Spark's parallel compaction does it), the round's
columns exactly the table's (no schema change), Hudi's Java write client on the classpath. Anything else, or any
error before the commit starts, and the round writes through Spark as before (`why_not`, `prepare`). An
error after the commit started fails the round: Hudi rolls back the unfinished commit, as it does
a failed Spark write's. `hoodie.streamer.hudi_cdc.driver.write: false` (a table's hudi_options) turns
it off for that table."""

from __future__ import annotations

import json

from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.instants import table_instants
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream import driver_java, keyloc
from hudi_cdc.jobs.stream.compaction import TRIGGER_PROP, pending_in
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.props import streamer_prop

ENABLED = "hudi_cdc.driver.write"  # hoodie.streamer.hudi_cdc.driver.write

# settings of the driver's write client: no timeline server of its own for each round's client, markers
# as files; the Java client knows none of Spark's repartitioning sort modes (hudi-cdc renders one)
_CLIENT_SETTINGS = {"hoodie.embed.timeline.server": "false", "hoodie.write.markers.type": "DIRECT",
                    "hoodie.bulkinsert.sort.mode": "NONE"}

def enabled(props: dict[str, str]) -> bool:
    value = (streamer_prop(props, ENABLED) or "true").strip().lower()
    if value not in ("true", "false"):
        raise JobInputError(f"hoodie.streamer.{ENABLED} must be true or false, not {value!r}")
    return value == "true"


def why_not(t, opts: dict[str, str], located, parts: int) -> str:
    """Why a small round's write goes through Spark ('' when the driver can make it)."""
    if t.table_type != "MERGE_ON_READ" or located is None or parts != 1:
        return "not a located MoR round of one commit"
    if (opts.get("hoodie.clustering.inline") or "").strip().lower() == "true":
        return "the commit clusters"
    if keyloc.has_record_index(keyloc.table_config(t.target_base_path)):
        return "the table keeps a record-level index"  # its upkeep by the Java client is not proven here
    if _compacts_in_commit(t.target_base_path, opts):
        return "the commit compacts"  # Spark's compaction uses every core; the Java client's one thread
    return ""


def _inline_compaction(opts: dict[str, str]) -> bool:
    """Hudi's Spark writer compacts a MoR table inline unless told otherwise (or async); the Java client not."""
    unset = "false" if (opts.get("hoodie.datasource.compaction.async.enable") or "").lower() == "true" else "true"
    return (opts.get("hoodie.compact.inline") or unset).strip().lower() == "true"


def _compacts_in_commit(base_path: str, opts: dict[str, str]) -> bool:
    """Whether Hudi would compact inline in this round's commit: its delta commits since the last compaction
    reach hoodie.compact.inline.max.delta.commits (another trigger, or a compaction pending: assumed so)."""
    if not _inline_compaction(opts):
        return False
    if (opts.get(TRIGGER_PROP) or "NUM_COMMITS").strip().upper() != "NUM_COMMITS":
        return True
    limit = int(opts.get("hoodie.compact.inline.max.delta.commits") or 5)
    instants = table_instants(local_path(base_path))
    if pending_in(instants):
        return True
    last = max((i.requested_time for i in instants if i.is_completed and i.action == "commit"), default="")
    since = sum(1 for i in instants if i.is_completed and i.action == "deltacommit" and i.requested_time > last)
    return since + 1 >= limit


def wrote(part, t, opts: dict[str, str], located, parts: int, log):
    """Commit a small round's located records from the driver. Returns the committed rows as a local frame
    (their key file is written from it, logkeys.py: the round's plan is not run again), or None when the
    driver cannot commit them (nothing written: Spark writes the round)."""
    if why_not(t, opts, located, parts):
        return None
    spark = part.sparkSession
    try:
        prepared = prepare(spark, part, t.target_base_path, opts)
    except Exception as exc:  # noqa: BLE001 - nothing is written yet: the round writes through Spark
        prepared = root_cause(exc)
    if isinstance(prepared, str):
        log(f"{t.target_table}: written through Spark, not from the driver ({prepared})")
        return None
    instant = commit(spark, prepared)
    log(f"{t.target_table}: delta commit {instant} made in the driver (Hudi's Java write client, no Spark write)")
    return prepared.frame


class Prepared:
    """A driver commit's client, records, commit metadata and the properties its metastore sync takes, made
    before anything is written (`prepare` returns why not instead when the driver cannot make it)."""

    def __init__(self, client, records, instant_extra, props, base_path: str, sync: bool, frame):
        self.client, self.records, self.extra = client, records, instant_extra
        self.props, self.base_path, self.sync = props, base_path, sync
        self.frame = frame  # the records' rows as one local DataFrame (their key file is written from it)


def prepare(spark, part, base_path: str, opts: dict[str, str]) -> Prepared | str:
    """The write client and the round's Hudi records, or why the driver cannot write it."""
    from pyspark.sql import DataFrame

    cls = driver_java.helper(spark)
    if isinstance(cls, str):
        return cls
    jvm = spark._jvm
    storage, meta, table_schema, writer = _table_schema(spark, base_path)
    why = _differs(spark, cls, part, writer)
    if why:
        return why
    ds = part.select(*_names(writer))._jdf
    props = jvm.org.apache.hudi.common.config.TypedProperties()
    props.putAll(meta.getTableConfig().getProps())
    inline = {"hoodie.compact.inline": str(_inline_compaction(opts)).lower()}  # as Spark's writer would
    for k, v in {**opts, **inline, **_CLIENT_SETTINGS}.items():
        props.setProperty(k, v)
    config = jvm.org.apache.hudi.config.HoodieWriteConfig.newBuilder().withPath(base_path).withProps(props) \
        .withSchema(table_schema.toString()).build()
    rows = driver_java.call(spark, cls, "collect", ds)  # the round's one Spark job
    records = driver_java.call(spark, cls, "records", ds, rows, writer, config, meta.getTableConfig())
    frame = DataFrame(driver_java.call(spark, cls, "frame", ds, rows), spark)
    extra = jvm.org.apache.hudi.DataSourceUtils.getExtraMetadata(_java_map(jvm, opts))
    engine = jvm.org.apache.hudi.client.common.HoodieJavaEngineContext(storage)
    client = jvm.org.apache.hudi.client.HoodieJavaWriteClient(engine, config)
    return Prepared(client, records, extra, props, base_path, _syncs(opts), frame)


def _table_schema(spark, base_path: str):
    """The table's storage configuration, meta client, schema and writer schema (with Hudi's meta fields)."""
    jvm = spark._jvm
    storage = jvm.org.apache.hudi.storage.hadoop.HadoopStorageConfiguration(spark._jsc.hadoopConfiguration())
    meta = jvm.org.apache.hudi.common.table.HoodieTableMetaClient.builder().setConf(storage) \
        .setBasePath(base_path).build()
    table_schema = jvm.org.apache.hudi.common.table.TableSchemaResolver(meta).getTableSchema(False)
    writer = jvm.org.apache.hudi.common.schema.HoodieSchemaUtils.addMetadataFields(table_schema)
    return storage, meta, table_schema, writer


def _names(writer) -> list[str]:
    return [f["name"] for f in json.loads(writer.toString())["fields"]]


def _differs(spark, cls, part, writer) -> str:
    if sorted(_names(writer)) != sorted(part.columns):
        return "the round's columns are not the table's"
    return str(driver_java.call(spark, cls, "mismatch", part.select(*_names(writer))._jdf.schema(), writer) or "")


def columns_differ(spark, part, base_path: str) -> str:
    """Why `part` (Hudi's meta columns, then a round's) does not hold the table's columns and types ('' when it does:
    no schema change)."""
    cls = driver_java.helper(spark)
    if isinstance(cls, str):
        return cls
    return _differs(spark, cls, part, _table_schema(spark, base_path)[3])


def commit(spark, prepared: Prepared) -> str:
    """The delta commit of the prepared records; the instant. Errors: the commit did not complete."""
    jvm = spark._jvm
    client = prepared.client
    try:
        instant = client.startCommit()
        client.transitionInflight(instant)  # the Java client's prepped delta commit does not do it itself
        statuses = client.upsertPreppedRecords(prepared.records, instant)
        for s in statuses:
            if s.hasErrors():
                error = s.getGlobalError() or next(iter(s.getErrors().values()), None)
                raise RuntimeError(f"the driver's delta commit {instant} failed to write: {error}")
        if not client.commit(instant, statuses, jvm.org.apache.hudi.common.util.Option.of(prepared.extra)):
            raise RuntimeError(f"the driver's delta commit {instant} was not completed")
    finally:
        client.close()
    if prepared.sync:
        _meta_sync(spark, prepared)
    return instant


def _syncs(opts: dict[str, str]) -> bool:
    return "true" in (opts.get("hoodie.datasource.hive_sync.enable"), opts.get("hoodie.datasource.meta.sync.enable"))


def _meta_sync(spark, prepared: Prepared) -> None:
    """After the commit, the metastore sync Hudi's Spark writer runs after its own (HoodieSparkSqlWriter's
    metaSync: each sync tool with the writer's properties, then the synced tables refreshed in Spark's
    catalog); an error fails the round as it fails a Spark write's."""
    jvm = spark._jvm
    props = prepared.props
    props.setProperty("hoodie.datasource.hive_sync.schema_string_length_thresh",
                      str(spark.conf.get("spark.sql.sources.schemaStringLengthThreshold", "4000")))
    props.setProperty("hoodie.meta_sync.spark.version", spark.version)
    props.setProperty("hoodie.meta.sync.metadata_file_listing", props.getProperty("hoodie.metadata.enable", "true"))
    tools = {t.strip() for t in (props.getProperty("hoodie.meta.sync.client.tool.class") or "").split(",") if t.strip()}
    if (props.getProperty("hoodie.datasource.hive_sync.enable") or "").lower() == "true":
        tools.add("org.apache.hudi.hive.HiveSyncTool")
    if (props.getProperty("hoodie.datasource.hive_sync.mode") or "").upper() == "GLUE":
        tools.add("org.apache.hudi.aws.sync.AwsGlueCatalogSyncTool")
    conf = spark._jsc.hadoopConfiguration()
    fs = jvm.org.apache.hadoop.fs.Path(prepared.base_path).getFileSystem(conf)
    file_format = props.getProperty("hoodie.datasource.hive_sync.base_file_format") or "PARQUET"
    for tool in sorted(tools):
        jvm.org.apache.hudi.sync.common.util.SyncUtilHelpers.runHoodieMetaSync(
            tool, props, fs.getConf(), fs, prepared.base_path, file_format)
    db = props.getProperty("hoodie.datasource.hive_sync.database") or "default"
    table = props.getProperty("hoodie.datasource.hive_sync.table")
    if table and spark.catalog.databaseExists(db):
        ro = "" if (props.getProperty("hoodie.datasource.hive_sync.skip_ro_suffix") or "").lower() == "true" else "_ro"
        for name in (f"{db}.{table}{ro}", f"{db}.{table}_rt"):
            if spark.catalog.tableExists(name):
                spark.catalog.refreshTable(name)


def _java_map(jvm, d: dict[str, str]):
    m = jvm.java.util.HashMap()
    for k, v in d.items():
        m.put(k, v)
    return m
