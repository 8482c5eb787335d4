"""Schema changes in the source (ALTER TABLE) while the stream runs, with no manual step.

Debezium sends the new columns with the first event after a DDL; capture starts a new landed file
whenever a table's schema changes, so a round may read files of several schemas (old-schema events
still in flight next to new ones). Spark's Avro reader takes one schema for all the files it reads
(a column only the newer files carry would be lost, or a file missing one would fail), so such a
round reads each schema's files alone and unions them by column name: a column a file does not
carry is null for its events, and int/bigint or decimal(p,s)/decimal(p',s) differences widen.

What the table does with it (Hudi 1.2.0 schema evolution on write, README / docs/schema-changes.md):
- a new column is appended to the table (null for the rows written before it);
- a column the files no longer carry (DROP COLUMN, or the old name of a RENAME) stays in the table,
  null for rows written after (`follow` adds it to the round as a typed null; HoodieStreamer jobs get
  `hoodie.write.set.null.for.missing.columns=true` in base.properties);
- int -> bigint, float -> double, decimal precision up: the table's column is widened;
- varchar(n) -> text, a new enum label: still strings, nothing changes in the lake.
Each round logs what differs between its newest file schema and the table's columns.

stdlib + pyspark (+ hudi-rs for the table's columns) only: the Spark job imports it.
"""

from __future__ import annotations

import json

from hudi_cdc.common.lake_types import OLDKEY_PREFIX, REJECTS_COLUMN, SOURCE_VALUES_COLUMN

# in base.properties for HoodieStreamer; the streamer does it itself (follow) and drops it for prepped writes
SET_NULL_OPTION = "hoodie.write.set.null.for.missing.columns"


def read_grouped(reader, groups: dict[str, list[str]], uri):
    """The round's files read one schema at a time, unioned by column name (one read when all the
    files share a schema). `groups`: schema JSON -> paths in landing order; `uri` turns a path into
    what Spark loads."""
    ordered = list(groups.values())  # insertion order: the first file of each schema, oldest first
    if len(ordered) <= 1:
        return reader.load([uri(p) for paths in ordered for p in paths])
    df = None
    for paths in ordered:
        part = reader.load([uri(p) for p in paths])
        df = part if df is None else df.unionByName(part, allowMissingColumns=True)
    return df


def _fields(schema: dict) -> dict[str, str]:
    """name -> a short type text of an Avro record schema's fields (union with null unwrapped)."""
    out = {}
    for f in schema.get("fields", []):
        t = f["type"]
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), "null")
        if isinstance(t, dict):
            t = t.get("connect.name") or t.get("logicalType") or t.get("type")
            if isinstance(t, dict):
                t = t.get("type")
        out[f["name"]] = str(t)
    return out


def describe_change(old_columns: list[str], newest_schema: dict) -> str:
    """What the round's newest landed schema changes against the table's data columns, in words
    ('' when nothing): added columns, columns no longer landed, and a likely RENAME (one column
    gone and one new in its place)."""
    new = {n: t for n, t in _fields(newest_schema).items()  # capture's extra columns: never in the lake
           if not n.startswith(OLDKEY_PREFIX) and n != SOURCE_VALUES_COLUMN}
    old = [c for c in old_columns if not c.startswith("_hoodie") and c != REJECTS_COLUMN]  # not landed columns
    added = [c for c in new if c not in old]
    gone = [c for c in old if c not in new]
    parts = []
    if len(added) == 1 and len(gone) == 1 and list(new).index(added[0]) == old.index(gone[0]):
        parts.append(f"column {gone[0]} looks renamed to {added[0]} (RENAME COLUMN): the lake adds {added[0]} "
                     f"and keeps {gone[0]} for the rows written before, null after")
    else:
        if added:
            parts.append(f"new column(s) {', '.join(added)} added to the lake (null for rows written before)")
        if gone:
            parts.append(f"column(s) {', '.join(gone)} no longer in the landed files (dropped or renamed in the "
                         "source): kept in the lake, null for rows written after")
    return "; ".join(parts)


def table_columns(base_path: str) -> list[str] | None:
    """The table's column names from its latest schema (hudi-rs, no JVM), or None when unknown."""
    try:
        from hudi_cdc.common import s3

        schema = s3.hudi_table_builder(base_path).build().get_schema()
        return list(schema.names)
    except Exception:  # noqa: BLE001 - only for a log line: an unreadable schema changes nothing
        return None


def follow(spark, df, base_path: str, groups: dict[str, list[str]], newest_file: str, table: str, log=print,
           shaped=None):
    """The round's events with every table column they lack (dropped, or renamed, in the source) as a
    typed null, so the write keeps the column and sets it null for these rows (Hudi's own
    hoodie.write.set.null.for.missing.columns does not take the prepped records of located.py);
    and the round's schema change in words, logged. Returns (events, text)."""
    from pyspark.sql import functions as F

    cols = table_columns(base_path)
    if not cols:
        return df, ""
    newest = next((json.loads(text) for text, paths in groups.items() if newest_file in paths), None)
    if newest and shaped is not None:  # the landed schema as shaped (shape.py): columns kept, derived ones
        newest = shaped(newest)
    text = describe_change(cols, newest) if newest else ""
    if text:
        log(f"{table}: schema change in the source: {text}")
    missing = [c for c in cols if c not in df.columns and not c.startswith("_hoodie")]
    if missing:
        types = spark.read.format("hudi").load(base_path).schema
        df = df.select("*", *[F.lit(None).cast(types[c].dataType).alias(c) for c in missing])
    return df, text
