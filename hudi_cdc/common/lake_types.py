"""The one type mapping of the lake: from a landed Avro field schema (Debezium's encoding, named by
``connect.name`` and ``connect.parameters``) to the type a lake user reads and the Spark SQL expression
that turns the encoding into it. Every engine uses it: hudi-cdc's streamer every round
(jobs/stream/typed.py), the 0.14 HoodieDeltaStreamer and EMR's HoodieStreamer through the transformer
SQL rendered from the landed schema, and ``verify`` (the kinds it compares). The expressions themselves
are in lake_types_sql.py. docs/types.md is the user's page of the same rules.

The expressions never depend on Spark's session time zone (timestamp_micros, date_from_unix_date and
ISO strings carrying their offset), so a job in any time zone writes the same instants.

Policies (docs/types.md): PostgreSQL ``infinity`` / ``-infinity`` dates and timestamps land as
9999-12-31 (23:59:59.999999) / 0001-01-01 (00:00:00); ``time`` as the string HH:MM:SS.ffffff;
unconstrained ``numeric`` as decimal(38, 18) (scale per table or column:
``hoodie.streamer.hudi_cdc.numeric.scale[.<column>]``); a Decimal wider than 38 digits (``money``) as
decimal(38, s). A value the lake type cannot hold (a numeric that does not fit exactly: never rounded)
never fails a round: the typed column gets NULL and the row's ``__rejects`` column keeps the exact
source value and the reason (``rejects_expr``; verify and status read it).

Standard library only: the streamer job (hudi_cdc/jobs/) imports it in the Spark driver.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace

from hudi_cdc.common.lake_types_sql import (
    MAX_PRECISION,
    Refusal,
    bits_expr,
    date_expr,
    decimal_from_bytes_expr,
    duration_expr,
    sql_text,
    time_expr,
    timestamp_expr,
    zoned_timestamp_expr,
)

REJECTS_COLUMN = "__rejects"  # {column: {value, reason}} as JSON; NULL when every value of the row fit
# the old key of a primary-key change, landed beside a TOAST placeholder (capture/oldkey.py); never in the lake
OLDKEY_PREFIX = "__oldkey_"
# values the row's event could not carry (PostgreSQL numeric NaN/Infinity), as capture read them from the
# database: JSON {column: exact text} (capture/specials.py); the typed column stays NULL, __rejects gets them
SOURCE_VALUES_COLUMN = "__source_values"
_READ = "capture read it from the database"
SOURCE_VALUE_REASONS = {  # lake kind -> why a value in __source_values has no value of the lake type
    "numeric": f"numeric NaN/Infinity has no decimal value (Debezium sends NULL; {_READ})",
    "decimal": f"numeric NaN/Infinity has no decimal value (Debezium sends NULL; {_READ})",
    "date": f"a zero date has no date value (Debezium sends NULL, a default or the epoch; {_READ})",
    "timestamp": f"a zero date has no timestamp value (Debezium sends NULL, a default or the epoch; {_READ})",
    "timestamptz": f"a zero date has no timestamp value (Debezium sends NULL, a default or the epoch; {_READ})",
    "array<numeric>": f"a numeric[] element NaN/Infinity has no decimal value, a multi-dimensional array no list value "
                      f"(Debezium sends NULL elements; {_READ})",
    "array<decimal>": f"a numeric[] element NaN/Infinity has no decimal value, a multi-dimensional array no list value "
                      f"(Debezium sends NULL elements; {_READ})",
}
# any other array: a multi-dimensional array (PostgreSQL's '{{1,2},{3,4}}') has no value of a list type
ARRAY_SOURCE_VALUE_REASON = f"a multi-dimensional array has no list value (Debezium sends NULL elements; {_READ})"

DEFAULT_NUMERIC_SCALE = 18
NUMERIC_SCALE_KEY = "hoodie.streamer.hudi_cdc.numeric.scale"

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_SPARK_PRIMITIVE = {"boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
                    "bytes": "binary", "string": "string"}


class LakeTypeError(ValueError):
    """A landed field whose encoding the mapping cannot take."""


@dataclass(frozen=True)
class ColumnType:
    """One landed column: the lake type, the Spark SQL expression giving it (``None``: the landed value
    is already it), and what it is (``kind``, for verify and the docs)."""

    name: str
    lake_type: str  # Spark SQL type, e.g. date, timestamp, decimal(12,2), array<date>, string
    kind: str  # date, timestamp, timestamptz, time, decimal, numeric, interval, json, binary, plain, ...
    expr: str | None = None  # over the quoted column; None: unchanged
    reader_type: object | None = None  # the Avro type to read the column with, when not the landed one
    refusal: Refusal | None = None  # when expr gives NULL for a value its type cannot hold

    @property
    def converts(self) -> bool:
        return self.expr is not None

    def select(self) -> str:
        q = quote(self.name)
        return f"{self.expr} AS {q}" if self.expr is not None else q


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _unwrap(t):
    """The non-null branch of ["null", X] (X itself otherwise)."""
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        if len(rest) != 1:
            return t
        return rest[0]
    return t


def _named(t, names: dict) -> object:
    """A named reference ("io.debezium.data.VariableScaleDecimal" inside an array) resolved."""
    if isinstance(t, str) and t not in PRIMITIVES:
        return names.get(t, t)
    return t


def _collect_names(t, names: dict) -> None:
    if isinstance(t, list):
        for b in t:
            _collect_names(b, names)
    elif isinstance(t, dict):
        if t.get("type") in ("record", "enum", "fixed") and t.get("name"):
            names[t["name"]] = t
            if t.get("namespace") and "." not in t["name"]:
                names[f"{t['namespace']}.{t['name']}"] = t
        for f in t.get("fields", ()) if t.get("type") == "record" else ():
            _collect_names(f.get("type"), names)
        if t.get("type") == "array":
            _collect_names(t.get("items"), names)
        if t.get("type") == "map":
            _collect_names(t.get("values"), names)


def numeric_scale(props: Mapping[str, str] | None, column: str) -> int:
    props = props or {}
    raw = props.get(f"{NUMERIC_SCALE_KEY}.{column}", props.get(NUMERIC_SCALE_KEY, str(DEFAULT_NUMERIC_SCALE)))
    try:
        scale = int(raw)
    except ValueError:
        raise LakeTypeError(f"{NUMERIC_SCALE_KEY}: {raw!r} is no number (a scale 0..{MAX_PRECISION})") from None
    if not 0 <= scale <= MAX_PRECISION:
        raise LakeTypeError(f"{NUMERIC_SCALE_KEY}: {scale} is no scale 0..{MAX_PRECISION}")
    return scale


# ---------------------------------------------------------------- one Avro type -> (lake, kind, expr, reader)
def _spark_type(t, names: dict) -> str:
    """The Spark SQL type spark-avro reads an (unconverted) Avro type as."""
    t = _named(_unwrap(t), names)
    if isinstance(t, str):
        return _SPARK_PRIMITIVE.get(t, "string")
    if isinstance(t, dict):
        lt = t.get("logicalType")
        if lt == "decimal":
            return f"decimal({t.get('precision')},{t.get('scale', 0)})"
        if lt == "date":
            return "date"
        if lt in ("timestamp-millis", "timestamp-micros"):
            return "timestamp"
        if t.get("type") == "array":
            return f"array<{_spark_type(t['items'], names)}>"
        if t.get("type") == "record":
            return "struct<" + ",".join(f"{quote(f['name'])}:{_spark_type(f['type'], names)}"
                                        for f in t.get("fields", ())) + ">"
        if t.get("type") == "map":
            return f"map<string,{_spark_type(t['values'], names)}>"
        if t.get("type") in ("enum",):
            return "string"
        if t.get("type") == "fixed":
            return "binary"
        return _spark_type(t.get("type"), names)
    return "string"


def _array_refusal(x: str, var: str, item: Refusal | None) -> Refusal | None:
    """An array is refused when one of its elements is: its exact text is PostgreSQL's ('{1.5,NULL,2}')."""
    if item is None:
        return None
    text = f"concat('{{', concat_ws(',', transform({x}, {var} -> coalesce({item.exact}, 'NULL'))), '}}')"
    return Refusal(f"coalesce(exists({x}, {var} -> {item.refused}), false)", text, f"an element {item.reason}")


def _convert(t, x: str, scale: int, names: dict, depth: int = 0, decimals_as_bytes: bool = False) -> tuple:
    """(lake type, kind, expr or None, reader type or None, Refusal or None) of one value x of Avro type t."""
    t = _named(_unwrap(t), names)
    if isinstance(t, list):  # a union of several branches: left as spark-avro reads it
        return _spark_type(t, names), "plain", None, None, None
    if isinstance(t, str):
        return _SPARK_PRIMITIVE.get(t, "string"), ("binary" if t == "bytes" else "plain"), None, None, None
    if t.get("type") == "array":
        var = f"e{depth}"
        lake, kind, expr, reader, refusal = _convert(t["items"], var, scale, names, depth + 1, decimals_as_bytes)
        items_reader = None
        if reader is not None:
            items_reader = ["null", reader] if isinstance(t["items"], list) and "null" in t["items"] else reader
        arr_reader = {**t, "items": items_reader} if items_reader is not None else None
        if expr is None:
            return f"array<{lake}>", f"array<{kind}>", None, arr_reader, None
        return (f"array<{lake}>", f"array<{kind}>", f"transform({x}, {var} -> {expr})", arr_reader,
                _array_refusal(x, var, refusal))
    return _convert_one(t, x, scale, names, decimals_as_bytes)


def _convert_one(t: dict, x: str, scale: int, names: dict, decimals_as_bytes: bool) -> tuple:
    """_convert of one (non-array) value x of the Avro type t."""
    cname = t.get("connect.name", "")
    base = t.get("type")
    if cname == "io.debezium.time.Date":
        expr, refusal = date_expr(x)
        return "date", "date", expr, None, refusal
    if cname in ("io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp"):
        unit = {"io.debezium.time.Timestamp": "millis", "io.debezium.time.MicroTimestamp": "micros"}.get(cname, "nanos")
        expr, maybe = timestamp_expr(x, unit)
        return "timestamp", "timestamp", expr, None, maybe
    if cname == "io.debezium.time.ZonedTimestamp":
        expr, refusal = zoned_timestamp_expr(x)
        return "timestamp", "timestamptz", expr, None, refusal
    if cname in ("io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime"):
        unit = {"io.debezium.time.Time": "millis", "io.debezium.time.MicroTime": "micros"}.get(cname, "nanos")
        return "string", "time", time_expr(x, unit), None, None
    if cname == "io.debezium.time.ZonedTime":
        return "string", "timetz", None, None, None
    if cname == "io.debezium.time.Interval":
        return "string", "interval", None, None, None
    if cname == "io.debezium.time.MicroDuration":
        return "string", "duration", duration_expr(x), None, None
    if cname == "io.debezium.data.VariableScaleDecimal" or (base == "record" and t.get("name", "").endswith(
            "VariableScaleDecimal")):
        expr, refusal = decimal_from_bytes_expr(f"{x}.value", f"{x}.scale", scale,
                                                null_when=f"{x} IS NULL OR {x}.value IS NULL")
        return f"decimal({MAX_PRECISION},{scale})", "numeric", expr, None, refusal
    if t.get("logicalType") == "decimal" or cname == "org.apache.kafka.connect.data.Decimal":
        p = int(t.get("precision") or (t.get("connect.parameters") or {}).get("connect.decimal.precision") or 64)
        s = int(t.get("scale") or (t.get("connect.parameters") or {}).get("scale") or 0)
        if p <= MAX_PRECISION and t.get("logicalType") == "decimal" and not decimals_as_bytes:
            return f"decimal({p},{s})", "decimal", None, None, None
        # wider than Spark's decimals (PostgreSQL money, numeric(50,2)), or an engine whose Avro reader
        # cannot take Avro decimals (HoodieDeltaStreamer 0.14): read as bytes, converted exactly
        reader = {k: v for k, v in t.items() if k not in ("logicalType", "precision", "scale")}
        s = min(s, MAX_PRECISION)
        p = min(max(p, s), MAX_PRECISION)
        expr, refusal = decimal_from_bytes_expr(x, str(s), s, precision=p)
        return f"decimal({p},{s})", "decimal", expr, reader, refusal
    if cname == "io.debezium.data.Bits":
        length = int((t.get("connect.parameters") or {}).get("length") or 0)
        return "string", "bits", bits_expr(x, length), None, None
    if cname == "io.debezium.data.Json":
        return "string", "json", None, None, None
    if cname in ("io.debezium.data.Uuid", "io.debezium.data.Enum", "io.debezium.data.Xml", "io.debezium.data.Ltree",
                 "io.debezium.data.EnumSet"):
        return "string", cname.rsplit(".", 1)[1].lower(), None, None, None
    if base == "bytes":
        return "binary", "binary", None, None, None
    if t.get("logicalType") == "date":
        return "date", "date", None, None, None
    if t.get("logicalType") in ("timestamp-millis", "timestamp-micros"):
        return "timestamp", "timestamp", None, None, None
    return _spark_type(t, names), "plain", None, None, None


def column_type(name: str, avro_type, *, table: str = "", props: Mapping[str, str] | None = None,
                names: dict | None = None, decimals_as_bytes: bool = False) -> ColumnType:
    """The lake type of one landed field (its Avro type as in the file's schema). decimals_as_bytes: every
    Decimal is read as its bytes and converted in SQL (for HoodieDeltaStreamer 0.14's Avro reader)."""
    named: dict = dict(names or {})
    _collect_names(avro_type, named)
    lake, kind, expr, reader, refusal = _convert(avro_type, quote(name), numeric_scale(props, name), named,
                                                 decimals_as_bytes=decimals_as_bytes)
    if reader is not None and isinstance(avro_type, list):
        reader = [reader if _unwrap(avro_type) is b or b == _unwrap(avro_type) else b for b in avro_type]
    return ColumnType(name, lake, kind, expr, reader, refusal)


def schema_types(schema: Mapping, *, table: str = "", props: Mapping[str, str] | None = None,
                 decimals_as_bytes: bool = False) -> list[ColumnType]:
    """Every field of a landed record schema, in order."""
    names: dict = {}
    out = []
    for f in schema.get("fields", ()):
        _collect_names(f.get("type"), names)
        if f["name"] == SOURCE_VALUES_COLUMN:
            continue
        out.append(column_type(f["name"], f["type"], table=table, props=props, names=names,
                               decimals_as_bytes=decimals_as_bytes))
    if any(f["name"] == SOURCE_VALUES_COLUMN for f in schema.get("fields", ())):
        out = [with_source_values(c) for c in out]
    return out


def with_source_values(c: ColumnType) -> ColumnType:
    """A column whose value the landed ``__source_values`` may hold (capture/specials.py: a numeric NaN or
    Infinity, a MySQL zero date): NULL and refused then, that text its exact value."""
    reason = SOURCE_VALUE_REASONS.get(c.kind) or (ARRAY_SOURCE_VALUE_REASON if c.kind.startswith("array<") else None)
    if reason is None:
        return c
    sv = f"get_json_object({quote(SOURCE_VALUES_COLUMN)}, {sql_text('$.' + c.name)})"
    r = c.refusal
    refused = f"({sv} IS NOT NULL)" + (f" OR ({r.refused})" if r else "")
    exact = f"coalesce({sv}, {r.exact})" if r else sv
    why = f"CASE WHEN {sv} IS NOT NULL THEN {sql_text(reason)}" + (f" ELSE {r.reason_expr()} END" if r else " END")
    # a NOT NULL zero date comes as the column's default or the epoch: NULL in the lake (a numeric[] with a
    # NaN element too, as any array with an element its lake type cannot hold)
    expr = f"CASE WHEN {sv} IS NOT NULL THEN NULL ELSE {c.expr or quote(c.name)} END"
    return replace(c, expr=expr, refusal=Refusal(refused, exact, r.reason if r else reason, why))


def reader_schema(schema: Mapping, types: list[ColumnType]) -> dict | None:
    """The landed schema with the fields spark-avro cannot read as written (decimals wider than 38
    digits) read as bytes; None when every field reads as written."""
    fixes = {c.name: c.reader_type for c in types if c.reader_type is not None}
    if not fixes:
        return None
    out = copy.deepcopy(dict(schema))
    out["fields"] = [{**f, "type": fixes[f["name"]]} if f["name"] in fixes else f for f in out["fields"]]
    return out


def refusing(types: list[ColumnType], keep: set[str] | frozenset[str] = frozenset()) -> list[ColumnType]:
    """The converted columns (not in keep) whose conversion can refuse a value."""
    return [c for c in types if c.converts and c.refusal is not None and c.name not in keep]


def rejects_expr(types: list[ColumnType], keep: set[str] | frozenset[str] = frozenset()) -> str | None:
    """The SELECT item of the row's ``__rejects`` column: NULL when every value fit its lake type, else
    JSON ``{"<column>": {"value": "<exact source value>", "reason": "..."}}`` naming each value the
    conversion refused (its typed column is NULL); None when no column can refuse one."""
    cols = refusing(types, keep)
    if not cols:
        return None
    any_refused = " OR ".join(f"({c.refusal.refused})" for c in cols if c.refusal)
    fields = ", ".join(f"{sql_text(c.name)}, CASE WHEN {c.refusal.refused} THEN named_struct('value', "
                       f"{c.refusal.exact}, 'reason', {c.refusal.reason_expr()}) END" for c in cols if c.refusal)
    return f"CASE WHEN {any_refused} THEN to_json(named_struct({fields})) END AS {quote(REJECTS_COLUMN)}"


def select_list(types: list[ColumnType], keep: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The SELECT items giving every column its lake type (columns in keep left as landed), and the
    ``__rejects`` column when a conversion can refuse a value."""
    rejects = rejects_expr(types, keep)
    items = [quote(c.name) if c.name in keep else c.select() for c in types if c.name != REJECTS_COLUMN]
    return items + ([rejects] if rejects else [])


def transformer_sql(schema: Mapping, *, table: str = "", props: Mapping[str, str] | None = None,
                    extra: str = "", source: str = "<SRC>") -> str:
    """SqlQueryBasedTransformer SQL typing every column of the landed schema (an explicit column list over
    the <SRC> view), plus ``extra`` select items (e.g. the delete flag)."""
    items = select_list(schema_types(schema, table=table, props=props))
    if extra:
        items.append(extra)
    return f"SELECT {', '.join(items)} FROM {source}"


def kinds_by_column(schema: Mapping, props: Mapping[str, str] | None = None) -> dict[str, str]:
    """{column: kind} of a landed schema (verify and the docs)."""
    return {c.name: c.kind for c in schema_types(schema, props=props)}


def avro_type(lake_type: str) -> object:
    """The Avro type (nullable) of a lake type: what a target schema gives HoodieStreamer for the typed
    columns (date and timestamp-micros logical types, decimals as bytes with the decimal logical type)."""
    lt = lake_type.replace(" ", "")
    if lt.startswith("array<") and lt.endswith(">"):
        return ["null", {"type": "array", "items": avro_type(lt[len("array<"):-1])}]
    if lt == "date":
        t: object = {"type": "int", "logicalType": "date"}
    elif lt == "timestamp":
        t = {"type": "long", "logicalType": "timestamp-micros"}
    elif lt.startswith("decimal("):
        p, s = (int(v) for v in lt[len("decimal("):-1].split(","))
        t = {"type": "bytes", "logicalType": "decimal", "precision": p, "scale": s}
    elif lt == "binary":
        t = "bytes"
    elif lt in ("string", "boolean", "int", "float", "double"):
        t = lt
    elif lt == "bigint":
        t = "long"
    else:
        raise LakeTypeError(f"no Avro type for lake type {lake_type}")
    return ["null", t]


def typed_schema(schema: Mapping, types: list[ColumnType], keep: set[str] | frozenset[str] = frozenset()) -> dict:
    """The landed record schema with every converted column (except those in keep) in its lake type, and
    the ``__rejects`` column (rejects_expr) when a conversion can refuse a value."""
    out = copy.deepcopy(dict(schema))
    by_name = {c.name: c for c in types}
    fields = []
    for f in out["fields"]:
        c = by_name.get(f["name"])
        if f["name"] in (REJECTS_COLUMN, SOURCE_VALUES_COLUMN):
            continue
        if c is not None and c.converts and c.name not in keep:
            f = {"name": f["name"], "type": avro_type(c.lake_type), "default": None}
        fields.append(f)
    if refusing(types, keep):
        fields.append({"name": REJECTS_COLUMN, "type": ["null", "string"], "default": None})
    out["fields"] = fields
    return out
