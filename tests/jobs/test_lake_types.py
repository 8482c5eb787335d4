"""The type mapping itself (hudi_cdc/common/lake_types.py, expressions in lake_types_sql.py): landed Avro
field -> lake type, the expressions' shape, reader and target schemas, the per-table numeric scale. No JVM:
Spark runs them in tests/jobs/test_types_real.py."""

from __future__ import annotations

import pytest

from hudi_cdc.common import lake_types as lt
from hudi_cdc.common import lake_types_sql as lts

DATE = {"connect.version": 1, "connect.name": "io.debezium.time.Date", "type": "int"}
MICRO_TS = {"connect.version": 1, "connect.name": "io.debezium.time.MicroTimestamp", "type": "long"}
MILLI_TS = {"connect.version": 1, "connect.name": "io.debezium.time.Timestamp", "type": "long"}
ZONED = {"connect.version": 1, "connect.name": "io.debezium.time.ZonedTimestamp", "type": "string"}
MICRO_TIME = {"connect.version": 1, "connect.name": "io.debezium.time.MicroTime", "type": "long"}
DECIMAL = {"scale": 2, "precision": 12, "connect.version": 1, "connect.name": "org.apache.kafka.connect.data.Decimal",
           "connect.parameters": {"scale": "2", "connect.decimal.precision": "12"}, "logicalType": "decimal",
           "type": "bytes"}
MONEY = {"scale": 2, "precision": 64, "connect.version": 1, "connect.parameters": {"scale": "2"},
         "connect.name": "org.apache.kafka.connect.data.Decimal", "logicalType": "decimal", "type": "bytes"}
VSD = {"connect.doc": "Variable scaled decimal", "connect.version": 1,
       "connect.name": "io.debezium.data.VariableScaleDecimal",
       "type": "record", "name": "io.debezium.data.VariableScaleDecimal",
       "fields": [{"name": "scale", "type": "int"}, {"name": "value", "type": "bytes"}]}
SCHEMA = {"type": "record", "name": "Value", "namespace": "db.public.t", "fields": [
    {"name": "id", "type": "int"},
    {"name": "d", "type": ["null", DATE], "default": None},
    {"name": "ts", "type": ["null", MICRO_TS], "default": None},
    {"name": "ts3", "type": ["null", MILLI_TS], "default": None},
    {"name": "tstz", "type": ["null", ZONED], "default": None},
    {"name": "tm", "type": ["null", MICRO_TIME], "default": None},
    {"name": "n", "type": ["null", DECIMAL], "default": None},
    {"name": "m", "type": ["null", MONEY], "default": None},
    {"name": "nfree", "type": ["null", VSD], "default": None},
    {"name": "nfarr", "type": ["null", {"type": "array", "items": ["null", "io.debezium.data.VariableScaleDecimal"]}],
     "default": None},
    {"name": "darr", "type": ["null", {"type": "array", "items": ["null", DATE]}], "default": None},
    {"name": "tarr", "type": ["null", {"type": "array", "items": ["null", "string"]}], "default": None},
    {"name": "iv", "type": ["null", {"connect.name": "io.debezium.time.Interval", "type": "string"}], "default": None},
    {"name": "dur", "type": ["null", {"connect.name": "io.debezium.time.MicroDuration", "type": "long"}],
     "default": None},
    {"name": "j", "type": ["null", {"connect.name": "io.debezium.data.Json", "type": "string"}], "default": None},
    {"name": "b", "type": ["null", "bytes"], "default": None},
    {"name": "__lsn", "type": ["null", "long"], "default": None},
]}


def _by_name(**kw):
    return {c.name: c for c in lt.schema_types(SCHEMA, table="t", **kw)}


def test_every_landed_encoding_has_its_lake_type():
    c = _by_name()
    assert {n: c[n].lake_type for n in c} == {
        "id": "int", "d": "date", "ts": "timestamp", "ts3": "timestamp", "tstz": "timestamp", "tm": "string",
        "n": "decimal(12,2)", "m": "decimal(38,2)", "nfree": "decimal(38,18)", "nfarr": "array<decimal(38,18)>",
        "darr": "array<date>", "tarr": "array<string>", "iv": "string", "dur": "string", "j": "string",
        "b": "binary", "__lsn": "bigint"}
    assert {n for n in c if c[n].converts} == {"d", "ts", "ts3", "tstz", "tm", "m", "nfree", "nfarr", "darr", "dur"}
    assert c["tstz"].kind == "timestamptz" and c["darr"].kind == "array<date>" and c["j"].kind == "json"


def test_expressions_do_not_depend_on_the_session_time_zone():
    c = _by_name()
    sql = " ".join(x.expr for x in c.values() if x.expr)
    for tz_dependent in ("to_timestamp(", "from_utc_timestamp", "to_utc_timestamp", "current_timezone",
                         "TIMESTAMP '", "DATE '"):
        assert tz_dependent not in sql
    assert "timestamp_micros(`ts`)" in c["ts"].expr and "timestamp_millis(`ts3`)" in c["ts3"].expr
    assert "date_from_unix_date(`d`)" in c["d"].expr
    assert f"timestamp_micros({lts.TS_MAX_MICROS})" in c["ts"].expr  # +infinity by policy
    assert "transform(`darr`, e0 ->" in c["darr"].expr and "e0 IS NULL THEN NULL" in c["darr"].expr


def test_numerics_never_fail_a_round_and_keep_the_refused_value():
    """Issue 36: no expression raises; a value its lake type cannot hold gives NULL, and the row's
    __rejects names the column, its exact source value and the reason."""
    types = lt.schema_types(SCHEMA, table="t")
    c = {x.name: x for x in types}
    assert not [x.name for x in types if x.expr and "raise_error" in x.expr]
    assert {x.name for x in lt.refusing(types)} == {"d", "ts", "ts3", "tstz", "m", "nfree", "nfarr", "darr"}
    assert "does not fit decimal(38,18) exactly" == c["nfree"].refusal.reason
    assert c["m"].refusal.reason == "does not fit decimal(38,2) exactly"
    assert c["nfarr"].refusal.reason == "an element does not fit decimal(38,18) exactly"
    assert "exists(`nfarr`, e0 -> " in c["nfarr"].refusal.refused and "concat('{'" in c["nfarr"].refusal.exact
    rejects = lt.rejects_expr(types)
    assert rejects.endswith("END AS `__rejects`") and rejects.startswith("CASE WHEN (")
    assert "to_json(named_struct('d', CASE WHEN " in rejects and "'nfree', CASE WHEN " in rejects
    assert "named_struct('value', " in rejects and "'reason', 'does not fit decimal(38,18) exactly'" in rejects
    # the typed column: NULL (never rounded) when the value does not fit
    assert "ELSE NULL END" in c["nfree"].expr and "AS DECIMAL(38,18)" in c["nfree"].expr
    # a column kept as landed (a legacy table) refuses nothing; no refusing column, no __rejects
    assert "'nfree'" not in lt.rejects_expr(types, keep={"nfree"})
    plain = {**SCHEMA, "fields": [f for f in SCHEMA["fields"] if f["name"] in ("id", "tm", "n", "j")]}
    assert lt.rejects_expr(lt.schema_types(plain)) is None
    assert "__rejects" not in lt.transformer_sql(plain)
    scaled = _by_name(props={lt.NUMERIC_SCALE_KEY: "6", f"{lt.NUMERIC_SCALE_KEY}.nfarr": "2"})
    assert scaled["nfree"].lake_type == "decimal(38,6)" and scaled["nfarr"].lake_type == "array<decimal(38,2)>"
    assert scaled["nfree"].refusal.reason == "does not fit decimal(38,6) exactly"
    with pytest.raises(lt.LakeTypeError, match="no scale 0..38"):
        _by_name(props={lt.NUMERIC_SCALE_KEY: "39"})
    with pytest.raises(lt.LakeTypeError, match="is no number"):
        _by_name(props={lt.NUMERIC_SCALE_KEY: "six"})


def test_exact_text_of_a_refused_numeric():
    """The exact text keeps PostgreSQL's form: sign, the scale's digits, a leading 0; > 38 digits as hex."""
    text = lts.decimal_text_expr("b", "s")
    assert "lpad(CAST(abs(" in text and "greatest(length(" in text and "concat('0x', hex(b), 'E-'" in text
    from decimal import Decimal

    from hudi_cdc.sources import typed_values as tv

    assert tv.exact_decimal("0.00023263811867095176") == Decimal("0.00023263811867095176")
    big = 10**45 + 7
    hexed = "0x" + big.to_bytes(20, "big", signed=True).hex().upper() + "E-3"
    assert tv.exact_decimal(hexed) == Decimal("1000000000000000000000000000000000000000000.007")
    assert tv.exact_decimal("0x" + (-5).to_bytes(1, "big", signed=True).hex() + "E-1") == Decimal("-0.5")
    assert tv.rejected_value("decimal", "0.000230") == tv.db_value("decimal", "0.00023")
    assert tv.rejected_value("array:decimal", "{1.5,NULL,0.1}") == tv.db_value("array:decimal", ["1.50", None, "0.1"])
    assert tv.rejected_value("date", "-3000000").startswith(tv.UNTYPED)  # no date PostgreSQL holds


def test_reader_schema_reads_wide_decimals_as_bytes():
    types = lt.schema_types(SCHEMA, table="t")
    reader = lt.reader_schema(SCHEMA, types)
    m = next(f for f in reader["fields"] if f["name"] == "m")
    assert m["type"] == ["null", {k: v for k, v in MONEY.items() if k not in ("logicalType", "precision", "scale")}]
    n = next(f for f in reader["fields"] if f["name"] == "n")
    assert n["type"] == ["null", DECIMAL]  # spark-avro reads decimal(12,2) as written
    narrow = {**SCHEMA, "fields": [f for f in SCHEMA["fields"] if f["name"] != "m"]}
    assert lt.reader_schema(narrow, lt.schema_types(narrow)) is None


def test_typed_schema_and_transformer_sql():
    types = lt.schema_types(SCHEMA, table="t")
    typed = {f["name"]: f["type"] for f in lt.typed_schema(SCHEMA, types, keep={"ts"})["fields"]}
    assert typed["d"] == ["null", {"type": "int", "logicalType": "date"}]
    assert typed["tstz"] == ["null", {"type": "long", "logicalType": "timestamp-micros"}]
    assert typed["nfree"] == ["null", {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 18}]
    assert typed["darr"] == ["null", {"type": "array", "items": ["null", {"type": "int", "logicalType": "date"}]}]
    assert typed["ts"] == ["null", MICRO_TS] and typed["n"] == ["null", DECIMAL]  # kept / unchanged
    assert typed["__rejects"] == ["null", "string"] and list(typed)[-1] == "__rejects"
    sql = lt.transformer_sql(SCHEMA, table="t", extra="(`__deleted` = 'true') AS _hoodie_is_deleted")
    assert sql.startswith("SELECT `id`, CASE WHEN `d` IS NULL") and sql.endswith("AS _hoodie_is_deleted FROM <SRC>")
    assert " AS `d`, " in sql and "`__lsn`, CASE WHEN " in sql and " END AS `__rejects`, (`__deleted`" in sql


def test_policy_values_and_sentinels():
    from datetime import date, datetime, timezone

    assert lts.DATE_MAX_DAYS == (date(9999, 12, 31) - date(1970, 1, 1)).days
    assert lts.DATE_MIN_DAYS == (date(1, 1, 1) - date(1970, 1, 1)).days
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    top = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc) - epoch
    assert lts.TS_MAX_MICROS == (top.days * 86400 + top.seconds) * 1_000_000 + top.microseconds
    expr, refusal = lts.date_expr("x")
    assert f"x < {lts.PG_MIN_DAYS}" in refusal.refused and refusal.exact == "CAST(x AS STRING)"
    for v in (*lts.DATE_POS_INF, *lts.DATE_NEG_INF):
        assert str(v) in expr or str(v - 2) in expr


def test_decimals_as_bytes_for_the_014_deltastreamer():
    """0.14's Avro source refuses Debezium's decimals: every Decimal is read as bytes, typed in SQL."""
    types = {c.name: c for c in lt.schema_types(SCHEMA, table="t", decimals_as_bytes=True)}
    assert types["n"].lake_type == "decimal(12,2)" and types["n"].converts
    assert "AS DECIMAL(12,2)" in types["n"].expr and types["n"].refusal.reason == "does not fit decimal(12,2) exactly"
    reader = lt.reader_schema(SCHEMA, list(types.values()))
    n = next(f for f in reader["fields"] if f["name"] == "n")
    assert "logicalType" not in n["type"][1] and n["type"][1]["type"] == "bytes"


# What Debezium 3 lands for the PostgreSQL types beyond the main table (measured on PostgreSQL 15 with
# pgoutput; docs/types.md): each gets a lake type, never a raw encoding.
def _bits(n: int) -> dict:
    return {"connect.version": 1, "connect.parameters": {"length": str(n)}, "connect.name": "io.debezium.data.Bits",
            "type": "bytes"}


MORE = {"type": "record", "name": "Value", "fields": [
    {"name": "b8", "type": ["null", _bits(8)]},
    {"name": "vb0", "type": ["null", _bits(2147483647)]},
    {"name": "b1", "type": ["null", "boolean"]},
    {"name": "tsv", "type": ["null", {"connect.version": 1, "connect.name": "io.debezium.data.Tsvector",
                                      "type": "string"}]},
    {"name": "ci", "type": ["null", "string"]},
    {"name": "r4", "type": ["null", "string"]},
    {"name": "pt", "type": ["null", {"connect.name": "io.debezium.data.geometry.Point", "type": "record",
                                     "name": "io.debezium.data.geometry.Point", "fields": [
                                         {"name": "x", "type": "double"}, {"name": "y", "type": "double"},
                                         {"name": "wkb", "type": ["null", "bytes"]},
                                         {"name": "srid", "type": ["null", "int"]}]}]},
    {"name": "tzarr", "type": ["null", {"type": "array", "items": ["null", ZONED]}]},
    {"name": "uarr", "type": ["null", {"type": "array", "items": [
        "null", {"connect.version": 1, "connect.name": "io.debezium.data.Uuid", "type": "string"}]}]},
    {"name": "tmarr", "type": ["null", {"type": "array", "items": ["null", MICRO_TIME]}]},
    {"name": "narr", "type": ["null", {"type": "array", "items": ["null", DECIMAL]}]},
    {"name": "barr", "type": ["null", {"type": "array", "items": ["null", "bytes"]}]},
]}


def test_more_postgresql_types_have_lake_types():
    c = {x.name: x for x in lt.schema_types(MORE, table="t")}
    assert {n: c[n].lake_type for n in c} == {
        "b8": "string", "vb0": "string", "b1": "boolean", "tsv": "string", "ci": "string", "r4": "string",
        "pt": "struct<`x`:double,`y`:double,`wkb`:binary,`srid`:int>", "tzarr": "array<timestamp>",
        "uarr": "array<string>", "tmarr": "array<string>", "narr": "array<decimal(12,2)>", "barr": "array<binary>"}
    assert c["b8"].kind == "bits" and c["tzarr"].kind == "array<timestamptz>" and c["tmarr"].kind == "array<time>"
    assert {n for n in c if c[n].converts} == {"b8", "vb0", "tzarr", "tmarr"}
    # bit(n): n characters, the highest bit first; an unbounded varbit drops leading zeros
    assert "sequence(8 - 1, 0, -1)" in c["b8"].expr and "regexp_replace" not in c["b8"].expr
    assert "length(`vb0`) * 8" in c["vb0"].expr and "'^0+'" in c["vb0"].expr
    assert c["tzarr"].expr.startswith("transform(`tzarr`, e0 -> ")


def test_verify_canonical_forms_of_bit_strings():
    import pyarrow as pa

    from hudi_cdc.sources import typed_values as tv

    assert tv.kind_of("bit(8)") == "bits:8" and tv.kind_of("bit varying(16)") == "bits:16"
    assert tv.kind_of("bit varying") == "bits:" and tv.kind_of("bit(1)") == tv.kind_of("bit") == "bit1"
    # arrays of bits (and points): capture reads PostgreSQL's element texts (capture/pg_arrays.py), compared as text
    assert tv.kind_of("bit(8)[]") == tv.kind_of("bit varying[]") == tv.kind_of("point[]") == "array:text"
    assert tv.select_sql('"b"', "bit(8)") == '"b"::text'
    assert tv.db_value("bits:8", "10110001") == tv.lake_value("bits:8", pa.string(), "10110001")
    assert tv.db_value("bits:16", "101") == "0000000000000101"  # Debezium carries no varbit length
    assert tv.db_value("bits:", "00001000") == "1000" and tv.db_value("bits:", "000") == ""
    assert tv.db_value("bit1", "1") is True and tv.db_value("bit1", "0") is False
    assert tv.lake_value("bits:8", pa.binary(), b"\xb1") != tv.db_value("bits:8", "10110001")


def test_timestamps_debezium_overflowed_are_refused_not_taken_for_infinity():
    """Issue 36 (measured): PostgreSQL's 294276-12-31 23:59:59.999999 arrives as -9223372036853775810 micros,
    21 s below pgjdbc's -infinity sentinel; it lands NULL with that long in __rejects, never as 0001-01-01."""
    overflowed = -9_223_372_036_853_775_810
    assert overflowed < lts.PG_MIN_MICROS and overflowed != lts.TS_NEG_INF_MICROS
    expr, refusal = lts.timestamp_expr("x", "micros")
    assert f"WHEN x = {lts.TS_NEG_INF_MICROS} THEN timestamp_micros({lts.TS_MIN_MICROS})" in expr
    assert f"WHEN x < {lts.PG_MIN_MICROS} THEN NULL" in expr and "x <= " not in expr
    assert refusal.refused == f"coalesce(x < {lts.PG_MIN_MICROS} AND x <> {lts.TS_NEG_INF_MICROS}, false)"
    assert refusal.exact == "CAST(x AS STRING)" and "294247 AD" in refusal.reason
    expr, refusal = lts.timestamp_expr("x", "millis")
    assert f"x = {lts.TS_NEG_INF_MICROS // 1000}" in expr and f"x < {lts.PG_MIN_MICROS // 1000}" in refusal.refused
    assert lts.timestamp_expr("x", "nanos")[1] is None  # other connectors' nanos: no PostgreSQL sentinel
    # 4714-11-24 BC, PostgreSQL's first day: the earliest timestamp still lands
    assert lts.PG_MIN_MICROS == lts.PG_MIN_DAYS * 86_400_000_000


def test_verify_reads_debeziums_iso_timestamps_beyond_year_9999():
    """A timestamptz Spark cannot parse is kept as Debezium's ISO text ('+294276-...Z'); verify reads it as
    the database's value, so it is a rejected value, not a difference; ISO's negative years are BC."""
    from hudi_cdc.sources import typed_values as tv

    top = tv.db_value("timestamptz", "294276-12-31 23:59:59.999999+00")
    assert tv.rejected_value("timestamptz", "+294276-12-31T23:59:59.999999Z") == top
    assert tv.timestamp_micros("-4712-01-01T00:00:00Z") == tv.timestamp_micros("4713-01-01 00:00:00+00 BC")
    assert tv.date_days("+5874897-12-31") == tv.date_days("5874897-12-31")


def test_mysql_verify_reads_bit_and_point_as_the_lake_holds_them():
    """BIT(n) lands as its text '10110' (lake_types.bits_expr), BIT(1) as a boolean, POINT as {x, y, wkb}, the
    other geometries as {wkb, srid}: pymysql's bytes (big-endian bits; MySQL's SRID + WKB) are compared in those
    forms."""
    import struct

    import pyarrow as pa

    from hudi_cdc.sources import typed_values as tv
    from hudi_cdc.sources.mysql import verify as mv

    assert mv.kind_of("bit", "bit(5)", None) == "bits:5" and mv.kind_of("bit", "bit(1)", None) == "bit1"
    assert mv.kind_of("point", "point", None) == "point"
    assert mv.value("bits:5", b"\x1f") == tv.lake_value("bits:5", pa.string(), "11111")
    assert mv.value("bits:64", b"\x00" * 8) == "0" * 64 and mv.value("bits:10", b"\x02\x05") == "1000000101"
    assert mv.value("bit1", b"\x01") is True and mv.value("bit1", b"\x00") is False
    wkb = b"\x01\x01\x00\x00\x00" + struct.pack("<dd", 1.0, 2.0)
    assert mv.value("point", b"\x00\x00\x00\x00" + wkb) == ("point", 1.0, 2.0)
    # GEOMETRY / LINESTRING / POLYGON ...: Debezium's {wkb, srid}, its SRID null where the database's is 0
    assert {mv.kind_of(t, t, None) for t in ("geometry", "linestring", "polygon", "multipolygon")} == {"geometry"}
    line = b"\x01\x02\x00\x00\x00\x02\x00\x00\x00" + struct.pack("<dddd", 0.0, 0.0, 1.0, 1.0)
    lake = pa.struct([("wkb", pa.binary()), ("srid", pa.int32())])
    # FLOAT at the 6 significant digits MySQL / MariaDB show (the snapshot's text protocol) and the binlog's float
    assert mv.kind_of("float", "float", None) == "float6"
    assert mv.value("float6", 0.0333333) == tv.lake_value("float6", pa.float32(), 0.03333333507180214)
    assert mv.value("float6", 3.40282e38) == tv.lake_value("float6", pa.float32(), 3.4028234663852886e38)
    assert mv.value("float6", 0.0333334) != tv.lake_value("float6", pa.float32(), 0.03333333507180214)

    def lake_geometry(wkb_bytes, srid):
        return tv.lake_value("geometry", lake, {"wkb": wkb_bytes, "srid": srid})

    assert mv.value("geometry", b"\x00\x00\x00\x00" + line) == lake_geometry(line, None)
    assert mv.value("geometry", b"\xe6\x10\x00\x00" + line) == lake_geometry(line, 4326)
    assert mv.value("geometry", b"\x00\x00\x00\x00" + line) != lake_geometry(line, 4326)
    assert mv.value("geometry", b"\x00\x00\x00\x00" + wkb) != lake_geometry(line, 0)


def test_values_the_events_cannot_carry_are_refused_from_source_values():
    """capture's __source_values (numeric NaN/Infinity, MySQL zero dates: capture/specials.py) makes the column
    NULL and puts the text in __rejects; the field itself never becomes a lake column; verify reads the same
    text from the database (zero dates as pymysql gives them, geometric values by punctuation and numbers)."""
    from hudi_cdc.sources import typed_values as tv
    from hudi_cdc.sources.mysql import verify as mv

    landed = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": lt.SOURCE_VALUES_COLUMN, "type": ["null", "string"]}]}
    types = {c.name: c for c in lt.schema_types(landed, table="t")}
    sql = lt.transformer_sql(landed)
    assert lt.SOURCE_VALUES_COLUMN not in types and not sql.startswith("SELECT `__source_values`")
    assert ", `__source_values`," not in sql and "AS `__source_values`" not in sql  # read, never selected
    for name in ("n", "nfree", "d", "ts", "tstz"):  # decimals, dates, timestamps
        c = types[name]
        assert c.converts and c.expr.startswith("CASE WHEN get_json_object(`__source_values`, '$." + name), c.expr
        assert "__source_values" in c.refusal.refused and "__source_values" in c.refusal.exact
    assert types["j"] == _by_name()["j"]
    # a numeric[] NaN element (Debezium: a NULL element): refused as an element beyond its decimal is
    nfarr = types["nfarr"]
    assert nfarr.expr.startswith("CASE WHEN get_json_object(`__source_values`, '$.nfarr')"), nfarr.expr
    assert "__source_values" in nfarr.refusal.refused and "__source_values" in nfarr.refusal.exact
    assert tv.rejected_value("array:decimal", "{NULL,1.5,NaN}") == [None, ("dec", "1.5"), ("dec", "NaN")]
    target = lt.typed_schema(landed, list(types.values()))
    assert [f["name"] for f in target["fields"]][-2:] == ["__lsn", lt.REJECTS_COLUMN]
    assert tv.rejected_value("decimal", "NaN") == tv.db_value("decimal", "NaN") == ("dec", "NaN")
    assert tv.rejected_value("date", "0000-00-00") == mv.value("date", "0000-00-00") == ("zero-date", "0000-00-00")
    assert tv.db_value("geometric", "(1.5,1),(0,0)") == tv.lake_value("geometric", None, "(1.5,1.0),(0.0,0.0)")
    assert tv.db_value("geometric", "[(0,0),(1,1)]") != tv.db_value("geometric", "((0,0),(1,1))")  # open path
