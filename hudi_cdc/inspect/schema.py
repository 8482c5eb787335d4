"""`inspect schema`: the table's current Avro and Arrow schema (hudi-rs) and its table config."""

from __future__ import annotations

import json

from hudi_cdc.lake.table import Table, hudi_rs_errors

# Table config keys shown first, in the order hudi-cli's `desc` makes people look for them.
KEY_CONFIG = ["hoodie.table.name", "hoodie.table.type", "hoodie.table.version", "hoodie.timeline.layout.version",
              "hoodie.table.recordkey.fields", "hoodie.table.partition.fields", "hoodie.table.ordering.fields",
              "hoodie.table.precombine.field", "hoodie.table.keygenerator.class", "hoodie.table.keygenerator.type",
              "hoodie.record.merge.mode", "hoodie.table.base.file.format", "hoodie.table.log.file.format",
              "hoodie.table.metadata.partitions"]
HIDDEN = ("hoodie.table.create.schema",)  # shown parsed, as create_schema


@hudi_rs_errors
def schema_info(table: Table) -> dict[str, object]:
    """{"table": describe, "config": hoodie.properties, "fields": [...], "avro_schema": {...}}."""
    h = table.hudi
    arrow = h.get_schema()
    fields = [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in arrow]
    partition_fields = [f.name for f in h.get_partition_schema()]
    config = {k: table.config[k] for k in KEY_CONFIG if k in table.config}
    config.update({k: v for k, v in sorted(table.config.items()) if k not in config and k not in HIDDEN})
    return {
        "table": dict(table.describe(), partition_fields=partition_fields),
        "config": config,
        "fields": fields,
        "avro_schema": json.loads(h.get_schema_in_avro_str()),
    }
