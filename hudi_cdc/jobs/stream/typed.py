"""Typed columns every round: the landed Debezium encodings (int days, long micros, ISO strings,
{scale, value} numerics, ...) become the lake types of hudi_cdc/common/lake_types.py, the same for a bootstrap's
snapshot and for streamed events, CoW and MoR. A value a lake type cannot hold lands as NULL with its
exact source value in the row's ``__rejects`` column (the round counts them: round.py, status).

A table bootstrapped before typed columns keeps its encodings: per column, a round converts only when
the table is new, the column is new to it, or it already stores the typed form; the other columns are
written as landed, with one log line saying how to migrate (re-bootstrap). docs/types.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hudi_cdc.common import lake_types
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.spark_conf import TYPED_LAKE_CONF
from hudi_cdc.jobs.stream.errors import JobInputError, TableReadError
from hudi_cdc.jobs.stream.table import has_completed_commit


def round_schema(file_schemas: list[tuple[str, dict]], registry_schema: str | None) -> dict | None:
    """The schema the round's columns come from: the registry's, else the newest file's (the last one)."""
    if registry_schema:
        return json.loads(registry_schema)
    return file_schemas[-1][1] if file_schemas else None


def column_types(file_schemas: list[tuple[str, dict]], registry_schema: str | None, props: Mapping[str, str],
                 table: str) -> tuple[dict | None, list[lake_types.ColumnType]]:
    schema = round_schema(file_schemas, registry_schema)
    if schema is None:
        return None, []
    schema = with_source_values_field(schema, file_schemas)
    try:
        return schema, lake_types.schema_types(schema, table=table, props=props)
    except lake_types.LakeTypeError as exc:
        raise JobInputError(f"{table}: {exc}") from None


def with_source_values_field(schema: dict, file_schemas: list[tuple[str, dict]]) -> dict:
    """The round's schema with capture's ``__source_values`` field when any file of the round has it (it
    rides along the rows that need it only), so the reader keeps it and the typing reads it."""
    name = lake_types.SOURCE_VALUES_COLUMN
    if any(f["name"] == name for f in schema.get("fields", ())):
        return schema
    for _, fs in file_schemas:
        field = next((f for f in fs.get("fields", ()) if f["name"] == name), None)
        if field is not None:
            return {**schema, "fields": [*schema["fields"], field]}
    return schema


def with_reader_schema(reader, schema: dict | None, types: list[lake_types.ColumnType]):
    """The Avro reader, told to read fields spark-avro cannot take as written (a Decimal wider than 38
    digits, e.g. PostgreSQL money) as bytes, which the conversion then types exactly."""
    fixed = lake_types.reader_schema(schema, types) if schema else None
    return reader.option("avroSchema", json.dumps(fixed)) if fixed else reader


def _arrow_matches(arrow_type, lake_type: str) -> bool:
    """Does a stored (arrow) type hold the lake type already?"""
    import pyarrow as pa

    lt = lake_type.replace(" ", "")
    if lt.startswith("array<"):
        return (pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)) and \
            _arrow_matches(arrow_type.value_type, lt[len("array<"):-1])
    if lt.startswith("decimal("):
        return pa.types.is_decimal(arrow_type)
    if lt == "timestamp":
        return pa.types.is_timestamp(arrow_type)
    if lt == "date":
        return pa.types.is_date(arrow_type)
    if lt == "string":
        return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)
    if lt == "binary":
        return pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type)
    return True


def stored_schema(base_path: str):
    """The table's arrow schema (hudi-rs), None for a table without one."""
    from hudi_cdc.common import s3

    try:
        return s3.hudi_table_builder(base_path).build().get_schema()
    except Exception as exc:  # hudi-rs raises HudiCoreError and OSError
        raise TableReadError(f"{base_path}: hudi-rs cannot read the table's schema to keep its column types: "
                             f"{first_line(exc)}") from None


def legacy_columns(types: list[lake_types.ColumnType], stored) -> list[str]:
    """The converting columns the stored table holds in another (the landed, untyped) form."""
    if stored is None:
        return []
    names = set(stored.names)
    return [c.name for c in types if c.converts and c.name in names
            and not _arrow_matches(stored.field(c.name).type, c.lake_type)]


CONVERSION_MARK = "hudi-cdc: "


def raise_if_conversion_failed(exc: BaseException) -> None:
    """A conversion error marked ``hudi-cdc: `` as one line; nothing was written. (lake_types' own
    expressions no longer raise: a value a lake type cannot hold lands in ``__rejects``.)"""
    from hudi_cdc.common.causes import root_cause

    cause = root_cause(exc, 600)
    at = cause.find(CONVERSION_MARK)
    if at >= 0:
        raise JobInputError(cause[at + len(CONVERSION_MARK):] + "; nothing was written (docs/types.md)") from None


def configure_session(spark) -> None:
    """The typed lake's settings (spark_conf.TYPED_LAKE_CONF) in this session too, whatever built it:
    Hudi's Parquet writers read the list structure from the Hadoop configuration."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    for k, v in TYPED_LAKE_CONF.items():
        if k.startswith("spark.hadoop."):
            hadoop.set(k[len("spark.hadoop."):], v)
        else:
            spark.conf.set(k, v)


def apply(df, types: list[lake_types.ColumnType], *, table: str, base_path: str, log=print):
    """The round's events with every column in its lake type (legacy columns of an existing table kept)."""
    configure_session(df.sparkSession)
    converting = [c for c in types if c.converts and c.name in df.columns]
    extra = [c for c in df.columns if c == lake_types.SOURCE_VALUES_COLUMN]  # capture's, read here only
    if not converting:
        return df.drop(*extra)
    keep = legacy_columns(converting, stored_schema(base_path)) if has_completed_commit(base_path) else []
    if keep:
        log(f"{table}: column(s) {', '.join(keep)} keep Debezium's encodings (the table was written before "
            "hudi-cdc typed them); re-bootstrap the table (`hudi-cdc bootstrap --force`) to store them typed "
            "(docs/types.md)")
    by_name = {c.name: c for c in converting if c.name not in keep}
    if not by_name:
        return df.drop(*extra)
    items = [by_name[c].select() if c in by_name else lake_types.quote(c) for c in df.columns
             if c not in (lake_types.REJECTS_COLUMN, lake_types.SOURCE_VALUES_COLUMN)]
    rejects = lake_types.rejects_expr(list(by_name.values()))
    return df.selectExpr(*items, *([rejects] if rejects else []))
