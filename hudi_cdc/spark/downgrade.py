"""Hudi's own table version conversion, called in a SparkSession that has the Hudi 1.2.0 bundle:
``UpgradeDowngrade(metaClient, writeConfig, engineContext, SparkUpgradeDowngradeHelper).run(version)``,
the call Hudi's `downgrade_table` procedure makes (UpgradeOrDowngradeProcedure), made directly so that
its failure is an exception with a cause instead of the procedure's bare `false`, and so that a table
needs no catalog entry. Downgrading a MoR table from 8/9 compacts its pending logs (Hudi's
EightToSevenDowngradeHandler): the rows stay, the timeline is rewritten in layout 1."""

from __future__ import annotations

from hudi_cdc.common import reader_keys
from hudi_cdc.common.causes import first_line
from hudi_cdc.errors import JobError

VERSION_NAMES = {6: "SIX", 8: "EIGHT", 9: "NINE"}  # org.apache.hudi.common.table.HoodieTableVersion


def convert(spark, base_path: str, table_name: str, to_version: int, ordering_fields: str = "") -> None:
    """Convert the table at base_path (a Hadoop path: file:/..., s3a://...) to to_version; JobError in one
    line when Hudi refuses or fails. On 6, the payload class and the precombine field, when Hudi left them
    out, are written to hoodie.properties (common/reader_keys.py: what Hudi 0.14/1.0 readers need)."""
    jvm = spark._jvm
    hudi = jvm.org.apache.hudi
    try:
        storage_conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(spark._jsc.hadoopConfiguration())
        clean = (hudi.config.HoodieCleanConfig.newBuilder()
                 .withFailedWritesCleaningPolicy(hudi.common.model.HoodieFailedWritesCleaningPolicy.EAGER).build())
        config = (hudi.config.HoodieWriteConfig.newBuilder().forTable(table_name).withPath(base_path)
                  .withRollbackUsingMarkers(True).withCleanConfig(clean).build())
        meta = (hudi.common.table.HoodieTableMetaClient.builder().setConf(storage_conf).setBasePath(base_path)
                .setLoadActiveTimelineOnLoad(False).build())
        context = hudi.client.common.HoodieSparkEngineContext(spark._jsc)
        helper = hudi.table.upgrade.SparkUpgradeDowngradeHelper.getInstance()
        version = hudi.common.table.HoodieTableVersion.valueOf(VERSION_NAMES[to_version])
        hudi.table.upgrade.UpgradeDowngrade(meta, config, context, helper).run(version, None)
        if to_version == 6:
            reader_keys.ensure(spark, base_path, ordering_fields)
    except Exception as exc:  # py4j's Py4JJavaError: the Java exception's first line
        raise JobError(f"{base_path}: Hudi could not convert the table to version {to_version}: "
                       f"{first_line(exc, 300)}") from None

