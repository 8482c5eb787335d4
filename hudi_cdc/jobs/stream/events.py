"""A round's events (round.py): the landed files read (the registry's schema when one is named) and checked,
typed, through the table's SQL transformer and shaping, summarized in one pass, TOAST placeholders filled,
and the latest event per key kept."""

from __future__ import annotations

import json
import threading
import time

from hudi_cdc.common import storage
from hudi_cdc.common.lake_types import OLDKEY_PREFIX
from hudi_cdc.jobs.stream import evolve, keytext, materialize, routed, shape, shard_truncate, toast, truncate, typed
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.files import validate_avro_files
from hudi_cdc.jobs.stream.props import streamer_prop
from hudi_cdc.jobs.stream.schema_registry import check_registry_compat, registry_schema
from hudi_cdc.jobs.stream.summary import summary_columns
from hudi_cdc.jobs.stream.table import has_completed_commit


def fields_of(text: str | None) -> list[str]:
    return [f.strip() for f in (text or "").split(",") if f.strip()]


def read_events(spark, t: Target, props: dict[str, str], root: str, files, ordering: list[str], result,
                 held: materialize.Held, log=print, every_event: list | None = None):
    """The round's events: the files read (registry schema if any), transformed (computed once in a wide table's
    small round: `held`, materialize.py), latest per key (and, into `every_event`, all of them, for history)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    record_keys = fields_of(props.get("hoodie.datasource.write.recordkey.field"))
    if not record_keys:
        raise JobInputError(f"{t.props}: hoodie.datasource.write.recordkey.field is not set")
    reg_url = streamer_prop(props, "schemaprovider.registry.url")
    schema_text = registry_schema(reg_url) if reg_url else None
    reader_schema = json.loads(schema_text) if schema_text else None
    route = routed.route_of(props)
    landed_keys = [k for k in record_keys if route is None or k != route.column]  # the source column: routed.py
    groups: dict[str, list[str]] = {}
    file_schemas = validate_avro_files(files, landed_keys + ordering, landed_keys, reader_schema, every_record=False,
                                       groups=groups)
    reader = spark.read.format("avro")
    if schema_text:
        check_registry_compat(schema_text, file_schemas)
        reader = reader.option("avroSchema", schema_text)
    lake_schema, lake_columns = typed.column_types(file_schemas, schema_text, props, t.target_table)
    reader = typed.with_reader_schema(reader, lake_schema, lake_columns)

    def name_the_problem() -> None:
        """Spark's pass found an unreadable file or a record without a key: fastavro reads every
        record again to raise the one-line error that names the file and record."""
        raise_if_vanished(files)
        validate_avro_files(files, record_keys + ordering, record_keys, reader_schema)

    # One pass over the files (transformed, as Hudi gets them): the count, the records whose key
    # fields are all null or empty (what validate_avro_files checks record by record when asked to),
    # how many keys, and the round's summary (summarize)
    keyless = F.lit(True)
    for k in record_keys:
        keyless = keyless & (F.col(k).isNull() | (F.col(k).cast("string") == ""))
    try:
        # files of several schemas (a DDL mid-round) are read one schema at a time (evolve.py)
        df = transformed(spark, t, props, reader, files, groups, schema_text, lake_columns, record_keys, held, log)
        # (a bootstrap's snapshot rarely repeats a key, so it counts keys too, to skip the window below)
        bulk = t.op == "BULK_INSERT"
        more = [F.countDistinct(*[F.col(k) for k in record_keys]).alias("keys")] if bulk else []
        more += toast.count_columns(df, record_keys, ordering, toast.placeholder_of(props), held.enabled)  # toast.py
        keyless = keyless & ~truncate.is_truncate(df)  # a truncate row's key is a placeholder
        parts = keytext.parts_to_count(props, record_keys, bulk)
        counts = df.agg(*summary_columns(df, ordering, parts), F.sum(F.when(keyless, 1).otherwise(0)).alias("keyless"),
                        *more, *truncate.summary_columns(df, ordering)).first().asDict()
    except Exception:
        name_the_problem()
        raise
    result.records_in = int(counts["n"])
    result.truncate_seen = truncate.newest_truncate(counts, ordering)
    if route is not None and result.truncate_seen is not None:  # one shard's TRUNCATE (shard_truncate.py)
        result.shard_truncates, result.truncate_seen = shard_truncate.cuts(df, route, ordering), None
    if counts["keyless"]:
        name_the_problem()
        raise JobInputError(f"{counts['keyless']} record(s) in {len(files)} file(s) under {root} have no record key: "
                            f"{', '.join(record_keys)} null or empty")
    stored_at = t.target_base_path if t.op != "BULK_INSERT" and has_completed_commit(t.target_base_path) else None
    if stored_at:
        shaped = routed.landed_schema(route, shape.landed_schema(shape.shape_of(props), record_keys))
        df, result.schema_change = evolve.follow(spark, df, stored_at, groups, files[-1][0], t.target_table, log,
                                                 shaped=shaped)
    # unchanged TOASTed values (Debezium's placeholder) take the key's earlier or stored value (toast.py)
    df, filled = toast.fill(spark, df, record_keys, ordering, stored_at, counts, props, t.target_table, held, log)
    result.toast_placeholders, result.toast_unresolved = filled.placeholders, filled.unresolved
    df = df.drop(*[c for c in df.columns if c.startswith(OLDKEY_PREFIX)])  # capture's, for the fill only
    if every_event is not None:  # read once for both tables (not a bootstrap's snapshot: see run_round)
        df = df if t.op == "BULK_INSERT" else df.cache()
        every_event.append(df)
    # Latest event per key within the round (Debezium may deliver several changes of one row in
    # one file, and Kafka Connect may redeliver): the largest ordering value wins, as Hudi's
    # event-time ordering would decide between rounds. Not when no key repeats (a snapshot): the
    # window would shuffle every row for nothing, and the pass above summarized the round already.
    if ordering and counts.get("keys", -1) < counts["n"]:
        w = Window.partitionBy(*record_keys).orderBy(*[F.col(o).desc_nulls_last() for o in ordering])
        df = df.withColumn("__hudi_cdc_rn", F.row_number().over(w)).where("__hudi_cdc_rn = 1").drop("__hudi_cdc_rn")
        return df, record_keys, None
    return df, record_keys, counts


def landed_uri(path: str) -> str:
    return path if "://" in path else f"file://{path}"


def transformed(spark, t: Target, props: dict[str, str], reader, files, groups, schema_text, lake_columns,
                record_keys: list[str], held: materialize.Held, log, source=None):
    """The files read (files of several schemas, a DDL mid-round, one schema at a time: evolve.py), typed,
    through the table's SQL transformer and its shaping (shape.py), as Hudi gets them (a wide table's small
    round: computed now, materialize.py). `source`: the files' records already read (driver_round.py)."""
    if source is not None:
        df = source
    else:
        df = reader.load([landed_uri(f[0]) for f in files]) if schema_text else \
            evolve.read_grouped(reader, groups, landed_uri)
    route = routed.route_of(props)
    if route is not None:  # each row's shard, from its file's folder (routed.py)
        df = routed.with_source_column(df, route)
    df = typed.apply(df, lake_columns, table=t.target_table, base_path=t.target_base_path, log=log)
    sql = streamer_prop(props, "transformer.sql")
    if sql:
        view = f"hudi_cdc_src_{int(time.time() * 1000)}_{threading.get_ident()}"  # stream --all: threads
        df.createOrReplaceTempView(view)
        df = spark.sql(sql.replace("<SRC>", view))
    return held.once(shape.apply(df, shape.shape_of(props), t.target_table, record_keys, toast.placeholder_of(props)))


def raise_if_vanished(files) -> None:
    """A file Spark could not read because it is gone since it was checked: one line naming it."""
    gone = [f[0] for f in files if not storage.exists(f[0])]
    if gone:
        raise JobInputError(f"landing file {gone[0]} vanished between listing and reading (moved or deleted "
                            "by another process); nothing was written, the next round lists again")
