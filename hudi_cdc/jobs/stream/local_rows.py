"""A few driver-side rows as a Spark DataFrame that no Python worker reads (issue 38: a small round's fixed cost).

`spark.createDataFrame(rows)` parallelizes pickled rows that Python workers re-serialize, so every job
reading them (the broadcast of a lookup's few rows) starts Python workers: ~1 s a job on a loaded machine,
three times in a small located MoR round. Here the rows go to the JVM as one JSON string, a local relation
of one row, parsed by `from_json` with the given schema and exploded: read in the JVM alone. Only for
values JSON carries exactly (text, integers, booleans, nulls)."""

from __future__ import annotations

import json

# a Python value's Spark type as spark.createDataFrame infers it, for the values this module carries
_INFERRED = {str: "string", int: "bigint", bool: "boolean"}
_LONG = (-(2**63), 2**63 - 1)
_VALUE = '{"type":"struct","fields":[{"name":"value","type":"string","nullable":false,"metadata":{}}]}'


def frame(spark, rows: list[tuple], names: list[str], types: list[str]):
    """`rows` (tuples of str/int/bool/None) as a DataFrame of columns `names` of Spark SQL `types`."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    schema = ", ".join(f"`{n}`: {t}" for n, t in zip(names, types, strict=True))
    jvm = spark.sparkContext._jvm
    text = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 1)
    text[0] = json.dumps([dict(zip(names, row, strict=True)) for row in rows])
    # a local relation of one row built from a java Row (no encoder: Scala reflection costs ~1 s the first time)
    value = DataFrame(spark._jsparkSession.createDataFrame([jvm.org.apache.spark.sql.RowFactory.create(text)],
                                                           jvm.org.apache.spark.sql.types.DataType.fromJson(_VALUE)),
                      spark)
    return value.select(F.inline(F.from_json("value", f"array<struct<{schema}>>")))


def inferred_types(rows: list[tuple], names: list[str]) -> list[str] | None:
    """The column types spark.createDataFrame(rows, names) infers, when every column holds one of text, integers
    (within a long) or booleans, plus nulls; else None (the caller keeps createDataFrame)."""
    if not rows:
        return None
    types = []
    for i in range(len(names)):
        kinds = {type(r[i]) for r in rows if r[i] is not None}
        if len(kinds) != 1 or next(iter(kinds)) not in _INFERRED:
            return None
        kind = next(iter(kinds))
        if kind is int and not all(r[i] is None or _LONG[0] <= r[i] <= _LONG[1] for r in rows):
            return None
        types.append(_INFERRED[kind])
    return types
