"""The streamer's own key lookup (hudi_cdc/jobs/stream/located.py): which tables it takes, that the
record keys and partition paths it computes are the ones Hudi's key generators write, and that a
round with every kind of change is one commit whose result equals the replayed events and the
result through Hudi's index."""

from __future__ import annotations

import pytest

from hudi_cdc.jobs.stream import located
from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake, ev

SIMPLE = {
    "hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": "true",
    "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
    "hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
    "hoodie.datasource.write.hive_style_partitioning": "true",
}


@pytest.mark.unit
def test_key_shape_of_what_hudi_cdc_renders():
    shape, why = located.key_shape(SIMPLE)
    assert shape == located.KeyShape(("id",), ("p",), complex_key=False, hive_style=True) and why == ""
    complex_ = {**SIMPLE, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
                "hoodie.datasource.write.recordkey.field": "a, b"}
    assert located.key_shape(complex_)[0] == located.KeyShape(("a", "b"), ("p",), True, True)
    flat = {**SIMPLE, "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            "hoodie.datasource.write.partitionpath.field": ""}
    assert located.key_shape(flat)[0] == located.KeyShape(("id",), (), False, True)
    flat_two = {**flat, "hoodie.datasource.write.recordkey.field": "a,b"}  # `a:1,b:2`, as the Complex one writes
    assert located.key_shape(flat_two)[0] == located.KeyShape(("a", "b"), (), True, True)
    bloom = {**SIMPLE, "hoodie.index.type": "GLOBAL_BLOOM", "hoodie.bloom.index.update.partition.path": "true"}
    assert located.key_shape(bloom)[0] is not None


@pytest.mark.unit
@pytest.mark.parametrize(("change", "why"), [
    ({"hoodie.streamer.hudi_cdc.locations": "index"}, "locations=index"),
    ({"hoodie.index.type": "RECORD_INDEX"}, "RECORD_INDEX"),
    ({"hoodie.index.type": "SIMPLE"}, "not a global index"),
    ({"hoodie.simple.index.update.partition.path": "false"}, "not a global index that moves rows"),
    ({"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator"}, "key generator"),
    ({"hoodie.datasource.write.partitionpath.urlencode": "true"}, "URL-encoded"),
    ({"hoodie.datasource.write.recordkey.field": "a,b"}, "record key"),
])
def test_key_shape_refuses_what_it_cannot_reproduce(change, why):
    shape, reason = located.key_shape({**SIMPLE, **change})
    assert shape is None and why in reason


def _written_keys(spark, tmp_path, rows, schema, options):
    """Write rows with Hudi's own key generator; return (stored meta keys, keys located.py computes)."""
    from pyspark.sql import functions as F

    path = f"file://{tmp_path}/t"
    df = spark.createDataFrame(rows, schema)
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.operation": "bulk_insert",
            "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.metadata.enable": "false", **options}
    df.write.format("hudi").options(**opts).mode("overwrite").save(path)
    shape, why = located.key_shape({**SIMPLE, **options})
    assert shape is not None, why
    got = spark.read.format("hudi").load(path).select(
        "_hoodie_record_key", "_hoodie_partition_path",
        located.record_key_column(shape).alias("key"), located.partition_path_column(shape).alias("pp"))
    rows = got.orderBy(F.col("_hoodie_record_key")).collect()
    return [(r[0], r[1]) for r in rows], [(r[2], r[3]) for r in rows]


@pytest.mark.parametrize("case", ["simple-hive", "simple-plain", "complex", "nonpartitioned", "int-partition"])
def test_computed_keys_are_hudis_own(spark, tmp_path, case):
    """Null, empty and spaced partition values, integer partitions, two-field keys: what Hudi 1.2.0's
    key generators wrote equals what located.py computes from the same columns."""
    values = ["DE", "", None, "a b", "x-y"]
    if case == "simple-hive":
        rows, schema, options = [(i, v, 1) for i, v in enumerate(values)], "id long, p string, o long", {}
    elif case == "simple-plain":
        rows, schema = [(i, v, 1) for i, v in enumerate(values)], "id long, p string, o long"
        options = {"hoodie.datasource.write.hive_style_partitioning": "false"}
    elif case == "complex":
        rows, schema = [(i, f"k{i}", v, 1) for i, v in enumerate(values)], "a int, b string, p string, o long"
        options = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.ComplexKeyGenerator",
                   "hoodie.datasource.write.recordkey.field": "a,b"}
    elif case == "nonpartitioned":
        rows, schema = [(f"id-{i}", v, 1) for i, v in enumerate(values)], "id string, p string, o long"
        options = {"hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
                   "hoodie.datasource.write.partitionpath.field": ""}
    else:
        rows, schema, options = [(i, i % 3 - 1, 1) for i in range(5)], "id long, p int, o long", {}
    options = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "p",
               "hoodie.datasource.write.hive_style_partitioning": "true", "hoodie.table.ordering.fields": "o",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator", **options}
    stored, computed = _written_keys(spark, tmp_path, rows, schema, options)
    assert stored == computed


def test_prepped_writes_option_is_hudis(spark):
    """The writer option located.py relies on is the one Hudi 1.2.0's Spark SQL UPDATE uses."""
    jvm_key = spark.sparkContext._jvm.org.apache.hudi.DataSourceWriteOptions.SPARK_SQL_WRITES_PREPPED_KEY()
    assert jvm_key == located.PREPPED_OPTION


def test_local_rows_are_what_create_dataframe_makes(spark):
    """The lookup's few driver-side rows (insert targets, logged file groups, tombstones) become a local relation
    no Python worker reads (local_rows.py), with createDataFrame's values and inferred types; other values keep
    createDataFrame."""
    from hudi_cdc.jobs.stream import local_rows

    names = ["k", "n", "b", "s"]
    rows = [("a/b=1", 0, True, None), ('line\n"quoted" é 😀', -(2**63), False, "x" * 20_000), ("", 2**63 - 1, None, "")]
    types = local_rows.inferred_types(rows, names)
    made = local_rows.frame(spark, rows, names, types)
    expected = spark.createDataFrame(rows, names)
    assert made.schema == expected.schema and made.collect() == expected.collect()
    plan = made._jdf.queryExecution().executedPlan().toString()
    assert "LocalTableScan" in plan and "ExistingRDD" not in plan  # createDataFrame's: a Python RDD
    assert "ExistingRDD" in expected._jdf.queryExecution().executedPlan().toString()
    assert local_rows.frame(spark, [], names, types).collect() == []
    for other in ([(1.5,)], [(1,), ("1",)], [(None,)], [(2**63,)], []):
        assert local_rows.inferred_types(other, ["v"]) is None


def test_local_rows_carry_bytes_arrays_and_maps(spark):
    """A TOASTed column's stored values (bytea, text[] / int[], an hstore as a map) as a local relation
    (driver_values.py), equal to what Spark makes of them; a type JSON does not carry exactly is not carried."""
    from pyspark.sql import types as T

    from hudi_cdc.jobs.stream import local_rows

    schema = T.StructType([T.StructField("b", T.BinaryType()), T.StructField("a", T.ArrayType(T.StringType())),
                           T.StructField("i", T.ArrayType(T.IntegerType())),
                           T.StructField("m", T.MapType(T.StringType(), T.StringType()))])
    rows = [(bytes(range(256)), ["x", None, 'q"\n'], [1, -(2**31)], {"k": "v", "n": None}),
            (b"", [], None, {}), (None, None, [None], None)]
    types = [local_rows.carried(f.dataType) for f in schema.fields]
    assert types == ["binary", "array<string>", "array<int>", "map<string,string>"]
    as_arrow = [(b, a, i, list(m.items()) if m is not None else None) for b, a, i, m in rows]  # pyarrow's maps
    made = local_rows.frame(spark, as_arrow, [f.name for f in schema.fields], types)
    assert made.schema == schema and made.collect() == spark.createDataFrame(rows, schema).collect()
    for other in (T.DecimalType(10, 2), T.TimestampType(), T.ArrayType(T.BinaryType()),
                  T.MapType(T.IntegerType(), T.StringType()), T.DoubleType()):
        assert local_rows.carried(other) is None


def _every_kind_of_change(lake):
    lake.land(SNAPSHOT[:20])
    lake.run("BULK_INSERT")
    # update in place, partition move, key-only delete, delete of a key never stored, delete older than
    # the stored row, redelivery, stale update, insert, insert with a null partition, a key moved twice
    lake.land([ev(1, 200, nat="French", name="updated"), ev(2, 201, nat="Spanish", name="moved"),
               ev(3, 202, deleted=True), ev(99, 203, deleted=True), ev(4, 90, deleted=True),
               SNAPSHOT[5], ev(8, 50, name="stale"),
               ev(40, 204, nat="German", op="c"), ev(41, 205, nat=None, op="c"),
               ev(7, 206, nat="Spanish"), ev(7, 207, nat="German", name="moved twice")])
    return lake.run("UPSERT")


def _comparable(rows):
    """Rows without what differs between two writes of the same data (commit times, file names)."""
    skip = {"_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_file_name"}
    return {k: {c: v for c, v in row.items() if c not in skip} for k, row in rows.items()}


def test_one_commit_per_round_equal_to_the_index_path(tmp_path, spark):
    mine = Lake(tmp_path / "snapshot", spark)
    theirs = Lake(tmp_path / "index", spark, hudi_options={"hoodie.streamer.hudi_cdc.locations": "index"})
    results = _every_kind_of_change(mine)
    _every_kind_of_change(theirs)
    for lake in (mine, theirs):
        lake.assert_matches()  # hudi-rs read == the replayed events, both table types
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        assert len(mine.commits(tt)) == 2, f"{tt}: bootstrap + one commit for the round"
        assert _comparable(mine.table(tt)) == _comparable(theirs.table(tt)), tt
    assert len(theirs.commits("MERGE_ON_READ")) == 3  # through the index: upserts, then deletes
    for r in results:
        assert (r.moves, r.unchanged_ignored, r.ignored_deletes) == (2, 2, 2), r
    # a second round on keys whose newest version is in a MoR log file (or a file the first round made)
    for lake in (mine, theirs):
        lake.land([ev(1, 300, nat="French", name="again"), ev(2, 301, nat="French", name="moved back"),
                   ev(40, 302, deleted=True), ev(7, 303, nat="German", name="third"), ev(41, 304, nat="Irish")])
        lake.run("UPSERT")
        lake.assert_matches()
    assert len(mine.commits("COPY_ON_WRITE")) == 3
    assert len([c for c in mine.commits("MERGE_ON_READ") if c.endswith(".deltacommit")]) == 2  # one per round
    for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        assert _comparable(mine.table(tt)) == _comparable(theirs.table(tt)), tt
    cow = mine.table("COPY_ON_WRITE")
    assert cow[2]["_hoodie_partition_path"] == "nationality=French" and 40 not in cow
    assert cow[41]["_hoodie_partition_path"] == "nationality=Irish"


def test_first_round_layout(tmp_path, spark):
    """Where the first round put moved, deleted and new keys (hudi-rs read of the CoW table)."""
    mine = Lake(tmp_path, spark, types=("COPY_ON_WRITE",))
    _every_kind_of_change(mine)
    cow = mine.table("COPY_ON_WRITE")
    assert cow[2]["_hoodie_partition_path"] == "nationality=Spanish"
    assert cow[41]["_hoodie_partition_path"] == "nationality=__HIVE_DEFAULT_PARTITION__"
    assert cow[7]["_hoodie_partition_path"] == "nationality=German" and cow[7]["name"] == "moved twice"
    assert 3 not in cow and 99 not in cow and 4 in cow


def test_unsupported_partition_type_goes_through_the_index(spark, tmp_path):
    """A partition column whose text form located.py does not reproduce (a date): Hudi's index."""
    from pyspark.sql import functions as F

    events = spark.createDataFrame([(1, "2024-01-01", 5, False)],
                                   "id long, d string, o long, _hoodie_is_deleted boolean")
    events = events.withColumn("d", F.to_date("d"))
    shape = located.KeyShape(("id",), ("d",), False, True)
    assert located.locate(spark, events, f"file://{tmp_path}/none", shape, ["o"]) is None


def test_typed_keys_are_hudis_own_and_located(spark, tmp_path):
    """A key of a date, a decimal and a timestamp (sub-millisecond, before 1970, whole seconds) in an unpartitioned
    table (the Nonpartitioned key generator writes `f1:v1,f2:v2` too): the record keys
    the bootstrap's row writer and an upsert's Avro path write (with the streamer's options) are the ones
    located.py computes, and a round on them is located; a decimal below 10^-6 with scale 7 (Java writes 1E-7)
    is one keytext.py does not write (its round goes through Hudi's index)."""
    from datetime import date, datetime, timezone
    from decimal import Decimal

    from pyspark.sql import functions as F

    from hudi_cdc.jobs.stream import keytext
    from hudi_cdc.jobs.stream.keytext import CONSISTENT_TIMESTAMP

    path, utc = f"file://{tmp_path}/t", timezone.utc
    schema = "d date, k decimal(20,7), tz timestamp, o long, _hoodie_is_deleted boolean"
    first = [(date(2024, 2, 29), Decimal("12.5"), datetime(2024, 1, 1, 8, 0, 0, 123456, utc), 1, False),
             (date(1960, 1, 1), Decimal("-0.01"), datetime(1960, 1, 1, 0, 0, 0, 1500, utc), 1, False)]
    then = [(date(1999, 12, 31), Decimal("1"), datetime(2000, 1, 1, tzinfo=utc), 2, False)]
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "COPY_ON_WRITE",
            "hoodie.metadata.enable": "false", "hoodie.table.ordering.fields": "o",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            "hoodie.datasource.write.recordkey.field": "d,k,tz", "hoodie.datasource.write.partitionpath.field": "",
            "hoodie.index.type": "GLOBAL_SIMPLE", CONSISTENT_TIMESTAMP: "true"}
    for rows, op in ((first, "bulk_insert"), (then, "upsert")):
        spark.createDataFrame(rows, schema).write.format("hudi").options(
            **opts, **{"hoodie.datasource.write.operation": op}).mode("append").save(path)
    shape, why = located.key_shape({**SIMPLE, **opts})
    assert shape is not None, why
    table = spark.read.format("hudi").load(path)
    types = {f.name: f.dataType for f in table.schema.fields}
    got = {(r[0], r[1]) for r in table.select("_hoodie_record_key", located.record_key_column(shape, types=types))
           .collect()}
    assert len(got) == 3 and all(stored == computed for stored, computed in got), got
    assert "tz:1960-01-01 00:00:00.002" in str(got) and "tz:2000-01-01 00:00:00.0" in str(got), got  # Java's / 1000
    events = spark.createDataFrame([first[0][:3] + (3, False), then[0][:3] + (3, False)], schema)
    round_ = located.locate(spark, events, path, shape, ["o"])
    assert round_ is not None and round_.kept == 2
    round_.cached.unpersist()
    tiny = events.select(F.lit(Decimal("0.0000001")).cast("decimal(20,7)").alias("k"))
    assert tiny.select(keytext.unwritable(F.col("k"), tiny.schema["k"].dataType)).first()[0]


def test_a_binary_key_has_one_text_from_bootstrap_to_upserts(spark, tmp_path):
    """A binary record key (bytea, VARBINARY, BINARY(16) UUIDs): Hudi 1.2.0's row writer would store Java's text of
    the byte array (`[B@...`, different in every JVM); written without it (keytext.row_writer_options), the
    bootstrap's key is the hex the upserts' Avro path makes, so an update and a delete find their rows."""
    from hudi_cdc.jobs.stream import keytext

    path = f"file://{tmp_path}/t"
    schema = "k binary, v string, o long, _hoodie_is_deleted boolean"
    opts = {"hoodie.table.name": "t", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.metadata.enable": "false", "hoodie.table.ordering.fields": "o",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            "hoodie.datasource.write.recordkey.field": "k", "hoodie.datasource.write.partitionpath.field": "",
            "hoodie.index.type": "GLOBAL_SIMPLE"}
    boot = spark.createDataFrame([(b"\x00\xff\x10", "a", 1, False), (b"abc", "b", 1, False)], schema)
    assert keytext.row_writer_options(boot.schema, ["k"]) == {keytext.ROW_WRITER: "false"}
    assert keytext.row_writer_options(boot.schema, ["v"]) == {}
    boot.write.format("hudi").options(**opts, **keytext.row_writer_options(boot.schema, ["k"]), **{
        "hoodie.datasource.write.operation": "bulk_insert"}).mode("append").save(path)
    spark.createDataFrame([(b"\x00\xff\x10", None, 2, True), (b"abc", "b2", 2, False)], schema).write.format(
        "hudi").options(**opts, **{"hoodie.datasource.write.operation": "upsert"}).mode("append").save(path)
    got = sorted((r[0], bytes(r[1]), r[2]) for r in spark.read.format("hudi").load(path).select(
        "_hoodie_record_key", "k", "v").collect())
    assert got == [("616263", b"abc", "b2")], got
