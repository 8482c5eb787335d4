"""A few driver-side rows as a Spark DataFrame that no Python worker reads (issue 38: a small round's fixed cost).

`spark.createDataFrame(rows)` parallelizes pickled rows that Python workers re-serialize, so every job
reading them (the broadcast of a lookup's few rows) starts Python workers: ~1 s a job on a loaded machine,
three times in a small located MoR round. Here the rows go to the JVM as one JSON string, a local relation
of one row, parsed by `from_json` with the given schema and exploded: read in the JVM alone. Only for
values JSON carries exactly (text, integers, booleans, nulls; arrays and maps of them), and bytes (as base64 text,
decoded in the plan)."""

from __future__ import annotations

import base64
import json
from typing import Any

# a Python value's Spark type as spark.createDataFrame infers it, for the values this module carries
_INFERRED = {str: "string", int: "bigint", bool: "boolean"}
_LONG = (-(2**63), 2**63 - 1)
# Spark types (by class name) a local relation carries exactly, as Spark SQL names them
_SIMPLE = {"StringType": "string", "IntegerType": "int", "LongType": "bigint", "ShortType": "smallint",
           "ByteType": "tinyint", "BooleanType": "boolean"}
KEY_TYPES = ("string", "int", "bigint", "smallint", "tinyint")
_VALUE = '{"type":"struct","fields":[{"name":"value","type":"string","nullable":false,"metadata":{}}]}'


def carried(dtype) -> str | None:
    """A Spark type as Spark SQL names it when a local relation carries its values exactly (text, integers,
    booleans, bytes; arrays of the first four; maps of text to them), else None."""
    name = type(dtype).__name__
    if name in _SIMPLE:
        return _SIMPLE[name]
    if name == "BinaryType":
        return "binary"
    if name == "ArrayType":
        inner = _SIMPLE.get(type(dtype.elementType).__name__)
        return f"array<{inner}>" if inner else None
    if name == "MapType" and type(dtype.keyType).__name__ == "StringType":
        inner = _SIMPLE.get(type(dtype.valueType).__name__)
        return f"map<string,{inner}>" if inner else None
    return None


def _jsonable(value: Any, kind: str) -> Any:
    """A value as JSON carries it for a column of Spark SQL type `kind` (bytes as base64; a map pyarrow gave as
    (key, value) pairs as an object)."""
    if value is None:
        return None
    if kind == "binary":
        return base64.b64encode(bytes(value)).decode()
    if kind.startswith("map<") and not isinstance(value, dict):
        return dict(value)
    return value


def frame(spark, rows: list[tuple], names: list[str], types: list[str]):
    """`rows` (tuples of values of the `types` carried(): str/int/bool/bytes/lists/maps or None) as a DataFrame of
    columns `names` of Spark SQL `types`."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    special = [i for i, t in enumerate(types) if t == "binary" or t.startswith("map<")]
    if special:
        rows = [tuple(_jsonable(v, types[i]) if i in special else v for i, v in enumerate(r)) for r in rows]
    binary = [n for n, t in zip(names, types, strict=True) if t == "binary"]
    schema = ", ".join(f"`{n}`: {'string' if t == 'binary' else t}" for n, t in zip(names, types, strict=True))
    jvm = spark.sparkContext._jvm
    text = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, 1)
    text[0] = json.dumps([dict(zip(names, row, strict=True)) for row in rows])
    # a local relation of one row built from a java Row (no encoder: Scala reflection costs ~1 s the first time)
    value = DataFrame(spark._jsparkSession.createDataFrame([jvm.org.apache.spark.sql.RowFactory.create(text)],
                                                           jvm.org.apache.spark.sql.types.DataType.fromJson(_VALUE)),
                      spark)
    out = value.select(F.inline(F.from_json("value", f"array<struct<{schema}>>")))
    if binary:
        out = out.select(*[F.unbase64(F.col(f"`{n}`")).alias(n) if n in binary else F.col(f"`{n}`") for n in names])
    return out


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
