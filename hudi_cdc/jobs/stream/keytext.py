"""A record key field's text as Hudi's key generators write it, for the key columns located.py takes.

Hudi turns a key value into text with Java's ``toString`` of its logical value (BuiltinKeyGenerator's
``convertToLogicalDataType`` on the bulk insert's row writer, HoodieAvroUtils' ``convertValueForAvroLogicalTypes``
on an upsert's Avro records):
- strings, integers, booleans: their text (Spark's cast to string is the same);
- a date: ``LocalDate.toString``, ``2024-02-29`` (Spark's cast, for years 1 to 9999);
- a decimal: ``BigDecimal.toString``: plain (Spark's cast) unless it is below 10^-6 with a scale above 6
  (``1E-7``, ``0E-7``), which this module does not write;
- a timestamp: ``java.sql.Timestamp(micros / 1000).toString`` in the JVM's time zone, milliseconds kept and
  trailing zeros dropped (``2024-01-01 08:00:00.12``, ``2000-01-01 00:00:00.0``); on the upsert's path only
  with ``hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled`` (else the micros as a
  number), which the streamer sets (round.writer_options) so that a bootstrapped row and its updates carry
  one record key. Written here for years 1900 to 9999 (earlier ones meet Java's Julian calendar and local
  mean times).

A binary key (bytea, VARBINARY, BINARY(16) UUIDs): the upsert's Avro records give its bytes as lower-case hex
(Hudi's ``StringUtils.objToString`` of a ByteBuffer), but the bulk insert's row writer gives Java's ``toString`` of
the byte array, ``[B@2e440a02``, a different text in every JVM: no later change of that row would find it. So a
bootstrap whose record key holds a binary column is written without the row writer (``row_writer_options``), and
this module does not write binary keys (their rounds go through Hudi's index).

A record key of several fields in a table without partitions (the Nonpartitioned key generator; every history
table): the Avro path writes an empty or NULL part as ``__empty__`` / ``__null__`` (KeyGenUtils), but the row
writer's path refuses it ("Record key has to be non-null!", BuiltinKeyGenerator.combineRecordKeyInternal in Hudi
1.2.0), so a bulk insert holding such a row goes without the row writer too (``empty_parts`` counts them in a pass
the round makes anyway). The Complex key generator's row path writes them as the Avro path does.

``unwritable`` is the condition of a value outside those ranges: a round holding one goes through Hudi's
index instead (located.py), which renders it itself.
"""

from __future__ import annotations

from typing import Any

PLAIN = ("StringType", "IntegerType", "LongType", "ShortType", "ByteType", "BooleanType")
TYPED = ("DateType", "DecimalType", "TimestampType")
CONSISTENT_TIMESTAMP = "hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled"


ROW_WRITER = "hoodie.datasource.write.row.writer.enable"


def type_name(dtype: Any) -> str:
    return type(dtype).__name__


KEYGEN = "hoodie.datasource.write.keygenerator.class"
NONPARTITIONED = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
EMPTY_PARTS = "empty_key_parts"  # the summary's count of rows with an empty or NULL part of a composite key


def parts_to_count(props: dict[str, str], keys: list[str], bulk: bool) -> list[str] | None:
    """The record key fields whose empty or NULL parts a round's summary counts (empty_parts, above): a bulk
    insert's composite key under the Nonpartitioned key generator; None otherwise."""
    nonpartitioned = (props.get(KEYGEN) or "").strip() == NONPARTITIONED
    return keys if bulk and len(keys) > 1 and nonpartitioned else None


def empty_parts(keys: list[str]):
    """The aggregate Column (named EMPTY_PARTS) of the rows with an empty or NULL part among `keys`."""
    from pyspark.sql import functions as F

    cond = F.lit(False)
    for k in keys:
        cond = cond | F.col(k).isNull() | (F.col(k).cast("string") == "")
    return F.sum(F.when(cond, 1).otherwise(0)).alias(EMPTY_PARTS)


def row_writer_options(schema: Any, keys: list[str], empty: int | None = 0) -> dict[str, str]:
    """A bulk insert's options for the row writer: off when a record key field (`keys`) is binary, or when `empty`
    (empty_parts' count) rows have an empty or NULL part of a composite key (above)."""
    types = {f.name: type_name(f.dataType) for f in schema.fields}
    return {ROW_WRITER: "false"} if empty or any(types.get(k) == "BinaryType" for k in keys) else {}


def text(col, dtype: Any, zones: tuple[str, str] = ("UTC", "UTC")):
    """The Column of Hudi's text of `col` (a Column of Spark type `dtype`); `zones`: the Spark session's time
    zone and the JVM's (zones())."""
    from pyspark.sql import functions as F

    if type_name(dtype) != "TimestampType":
        return col.cast("string")
    micros = F.unix_micros(col)
    millis = F.when(micros >= 0, F.floor(micros / 1000)).otherwise(-F.floor(-micros / 1000))  # Java's /: to zero
    wall = F.timestamp_millis(millis)  # date_format renders in the session's zone: shifted to the JVM's
    if zones[0] != zones[1]:
        wall = F.from_utc_timestamp(F.to_utc_timestamp(wall, zones[0]), zones[1])
    frac = F.regexp_replace(F.lpad(F.pmod(millis, F.lit(1000)).cast("string"), 3, "0"), "0+$", "")
    return F.concat(F.date_format(wall, "yyyy-MM-dd HH:mm:ss"), F.lit("."),
                    F.when(frac == "", F.lit("0")).otherwise(frac))


def unwritable(col, dtype: Any):
    """The Column (boolean) of a value whose text this module does not write as Hudi does; None: none can be."""
    from pyspark.sql import functions as F

    name = type_name(dtype)
    if name == "DateType":
        return (F.year(col) < 1) | (F.year(col) > 9999)
    if name == "TimestampType":
        return (F.year(col) < 1900) | (F.year(col) > 9999)
    if name == "DecimalType" and dtype.scale > 6:
        return F.abs(col) < F.lit(1e-6)
    return None


def zones(spark) -> tuple[str, str]:
    """The session's time zone (Spark renders in it) and the driver JVM's default one (java.sql.Timestamp's
    toString renders in it)."""
    jvm = str(spark.sparkContext._jvm.java.util.TimeZone.getDefault().getID())
    return str(spark.conf.get("spark.sql.session.timeZone", jvm)), jvm
