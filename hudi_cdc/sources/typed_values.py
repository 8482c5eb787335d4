"""The values ``verify`` compares, in the types a lake user reads: one canonical form per PostgreSQL kind,
from the database's text (read with DateStyle ISO, IntervalStyle iso_8601, TimeZone UTC) and from the
lake's typed columns as hudi-rs reads them (arrow). A lake column still in a Debezium encoding (int days,
long micros, an ISO string for timestamptz, a {scale, value} struct) is no typed value: it never equals.

The policies of hudi_cdc/common/lake_types.py hold on the database side: +-infinity dates and timestamps are
9999-12-31 / 0001-01-01; BC dates are proleptic Gregorian (astronomical year numbering, 1 BC = year 0);
``time`` is HH:MM:SS.ffffff; numeric NaN/Infinity have no lake value (NULL, their text in __rejects:
capture/specials.py).
"""

from __future__ import annotations

import json
import re
import struct
from decimal import Decimal, InvalidOperation

from hudi_cdc.common.lake_types_sql import DATE_MAX_DAYS, DATE_MIN_DAYS, TS_MAX_MICROS, TS_MIN_MICROS
from hudi_cdc.sources.array_text import array_elements, parse_array

UNTYPED = "<untyped>"
SESSION_SQL = ("SET TIME ZONE 'UTC'", "SET DateStyle = 'ISO, YMD'", "SET IntervalStyle = 'iso_8601'",
               "SET extra_float_digits = 3")


def kind_of(type_name: str) -> str:
    """The comparison kind of a PostgreSQL column (format_type()); arrays are 'array:<kind>'."""
    t = type_name.lower().strip()
    if t.endswith("[]"):  # arrays capture reads as PostgreSQL's element texts (capture/pg_arrays.py): as text
        return "array:" + ("text" if t.startswith(("bit", "point")) or t[:-2] in GEOMETRIC else kind_of(t[:-2]))
    if t == "date":
        return "date"
    if t.rsplit(".", 1)[-1] == "hstore":
        return "json"  # Debezium's hstore.handling.mode=json (its default): {"a":"1","b":null}; read as hstore_to_json
    if t.startswith("timestamp"):
        return "timestamptz" if "with time zone" in t else "timestamp"
    if t.startswith("time"):
        return "timetz" if "with time zone" in t else "time"
    if t.startswith("numeric") or t == "money":
        return "decimal"
    if t.startswith("interval"):
        return "interval"
    if t == "real":
        return "float4"
    if t == "double precision":
        return "float8"
    if t == "bytea":
        return "bytes"
    if t in ("bit", "bit(1)"):
        return "bit1"  # Debezium lands bit(1) as a boolean
    if t.startswith("bit varying"):
        return f"bits:{t[len('bit varying('):-1]}" if "(" in t else "bits:"  # lake_types.bits_expr's policy
    if t.startswith("bit("):
        return f"bits:{t[len('bit('):-1]}"
    if t in ("json", "jsonb"):
        return "json"
    if t == "point":
        return "point"  # Debezium's io.debezium.data.geometry.Point: a struct {x, y, wkb, srid}
    if t in GEOMETRIC:
        return "geometric"  # capture lands pgjdbc's text of them ("(1.0,1.0),(0.0,0.0)"): capture/textforms.py
    if t in ("smallint", "integer", "bigint", "boolean", "text") or t.startswith(("character", "varchar")):
        return "plain"  # read as they are (char(n) keeps its padding, as Debezium sends it)
    return "text"


def select_sql(name_sql: str, type_name: str) -> str:
    """The SELECT expression reading a column in the form ``db_value`` takes."""
    k = kind_of(type_name)
    base = k.split(":")[-1]
    arr = k.startswith("array:")
    if base in ("plain", "float4", "float8", "bytes"):
        return name_sql
    if base == "text" and type_name.lower().startswith(("inet", "cidr", "uuid")):
        return name_sql  # psycopg's objects print as PostgreSQL's output (text(inet) would add /128)
    if type_name.lower().startswith("money"):
        return f"{name_sql}::numeric{'[]' if arr else ''}::text{'[]' if arr else ''}"
    if not arr and type_name.lower().rsplit(".", 1)[-1] == "hstore":  # the extension's schema, when not on the path
        schema = type_name.rsplit(".", 1)[0] + "." if "." in type_name else ""
        return f"{schema}hstore_to_json({name_sql})::text"
    return f"{name_sql}::text{'[]' if arr else ''}"


# ---------------------------------------------------------------- calendar arithmetic (any year)
def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 1 BC is 0)."""
    y -= m <= 2
    era = y // 400  # floor division (Hinnant's days_from_civil)
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_DATE = re.compile(r"^([+-]?)(\d+)-(\d\d)-(\d\d)")  # a sign: ISO-8601's astronomical year (Debezium's)
_CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d)(?:\.(\d+))?")
_OFFSET = re.compile(r"([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?$")


def _year(text: str, y: int) -> int:
    return 1 - y if text.endswith(" BC") else y


def date_days(text: str) -> int:
    if text == "infinity":
        return DATE_MAX_DAYS
    if text == "-infinity":
        return DATE_MIN_DAYS
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"not a date: {text!r}")
    year = -int(m.group(2)) if m.group(1) == "-" else int(m.group(2))
    return days_from_civil(_year(text, year), int(m.group(3)), int(m.group(4)))


def _clock_micros(m: re.Match) -> int:
    frac = (m.group(4) or "").ljust(6, "0")[:6]
    return ((int(m.group(1)) * 60 + int(m.group(2))) * 60 + int(m.group(3))) * 1_000_000 + int(frac or 0)


def timestamp_micros(text: str) -> int:
    """'YYYY-MM-DD HH:MM:SS[.f][+00][ BC]' (PostgreSQL's ISO text, UTC) -> microseconds since 1970."""
    if text == "infinity":
        return TS_MAX_MICROS
    if text == "-infinity":
        return TS_MIN_MICROS
    days = date_days(text)
    body = text[:-3] if text.endswith(" BC") else text
    clock = _CLOCK.search(body)
    micros = days * 86_400_000_000 + (_clock_micros(clock) if clock else 0)
    off = _OFFSET.search(body[clock.end():] if clock else "")
    if off:
        sign = -1 if off.group(1) == "-" else 1
        secs = int(off.group(2)) * 3600 + int(off.group(3) or 0) * 60 + int(off.group(4) or 0)
        micros -= sign * secs * 1_000_000
    return micros


_TIME = re.compile(r"^(-?)(\d\d+):(\d\d):(\d\d)(?:\.(\d+))?")


def time_text(text: str) -> str:
    """'[-]HH:MM:SS.ffffff' (hours may be more than two digits: MySQL's TIME spans +-838 hours)."""
    m = _TIME.match(text)
    if not m:
        raise ValueError(f"not a time: {text!r}")
    return f"{m.group(1)}{m.group(2)}:{m.group(3)}:{m.group(4)}.{(m.group(5) or '').ljust(6, '0')[:6]}"


def timetz_micros(text: str) -> int:
    """A time with zone ('13:14:15.5+02' or Debezium's '11:14:15.5Z') -> UTC microseconds of the day."""
    m = _CLOCK.match(text)
    if not m:
        raise ValueError(f"not a time with time zone: {text!r}")
    micros = _clock_micros(m)
    off = _OFFSET.search(text[m.end():])
    if off:
        sign = -1 if off.group(1) == "-" else 1
        micros -= sign * (int(off.group(2)) * 3600 + int(off.group(3) or 0) * 60 + int(off.group(4) or 0)) * 1_000_000
    return micros % 86_400_000_000


_ISO_INTERVAL = re.compile(r"^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?"
                           r"(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$")


def interval_parts(text: str) -> tuple[int, int, int]:
    """An ISO-8601 interval (PostgreSQL's iso_8601 style, Debezium's interval.handling.mode=string) ->
    (months, days, microseconds)."""
    m = _ISO_INTERVAL.match(text.strip())
    if not m:
        raise ValueError(f"not an ISO-8601 interval: {text!r}")
    y, mo, w, d, h, mi, s = m.groups()
    months = int(y or 0) * 12 + int(mo or 0)
    days = int(w or 0) * 7 + int(d or 0)
    sec = Decimal(s or 0)
    micros = (int(h or 0) * 3600 + int(mi or 0) * 60) * 1_000_000 + int(sec * 1_000_000)
    return months, days, micros


def decimal_text(v) -> str:
    if isinstance(v, str):
        if v in ("NaN", "Infinity", "-Infinity"):
            return v
        v = Decimal(v)
    if isinstance(v, Decimal):
        if v.is_nan():
            return "NaN"
        if v.is_infinite():
            return "Infinity" if v > 0 else "-Infinity"
        if v == 0:
            return "0"
        text = format(v, "f")  # exact (Decimal.normalize() would round to the context's 28 digits)
        return text.rstrip("0").rstrip(".") if "." in text else text
    return f"{UNTYPED}{v!r}"


def json_value(text: str):
    try:
        return json.dumps(json.loads(text, parse_float=Decimal, parse_int=Decimal), sort_keys=True, default=str)
    except (ValueError, InvalidOperation):
        return text


GEOMETRIC = ("box", "circle", "line", "lseg", "path", "polygon")
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|-?Infinity|NaN")


def geometric_value(text: str):
    """A geometric value's text, PostgreSQL's ('(1,1),(0,0)') or pgjdbc's ('(1.0,1.0),(0.0,0.0)'), as its
    punctuation and its numbers (floats)."""
    return ("geometric", _NUMBER.sub("#", text).replace(" ", ""), tuple(float(n) for n in _NUMBER.findall(text)))


def geometry_value(wkb: bytes, srid: int | None) -> tuple:
    """A geometry as (WKB, SRID): Debezium's Geometry struct leaves the SRID null where the database's is 0."""
    return ("geometry", bytes(wkb).hex(), srid or 0)


def _float4(v):
    return struct.unpack("f", struct.pack("f", v))[0] if isinstance(v, float) else v


def _float6(v):
    """A MySQL / MariaDB FLOAT as the server shows it: 6 significant digits (FLT_DIG). Its text protocol, which
    the snapshot's and an incremental snapshot's SELECT read and verify reads too, gives that (0.0333333), the
    binlog the whole float (0.033333335): both are the one value at the precision the database gives its users."""
    return ("float6", f"{float(v):.6g}") if isinstance(v, (float, int)) else v


# ---------------------------------------------------------------- database side
def db_value(kind: str, v):
    """A database value (as ``select_sql`` reads it) in its canonical typed form."""
    if v is None:
        return None
    if kind.startswith("array:"):  # a multi-dimensional array: psycopg's nested lists
        if not isinstance(v, list):
            return f"{UNTYPED}{v!r}"
        return [db_value(kind, e) if isinstance(e, list) else db_value(kind[6:], e) for e in v]
    if kind == "date":
        return ("date", date_days(v))
    if kind in ("timestamp", "timestamptz"):
        return ("ts", timestamp_micros(v))
    if kind == "time":
        return time_text(v)
    if kind == "timetz":
        return ("timetz", timetz_micros(v))
    if kind == "decimal":
        return ("dec", decimal_text(v))
    if kind == "interval":
        return ("interval", interval_parts(v))
    if kind == "float4":
        return _float4(v)
    if kind == "float6":
        return _float6(v)
    if kind == "json":
        return ("json", json_value(v))
    if kind == "bytes":
        return bytes(v)
    if kind == "bit1":
        return str(v) == "1"
    if kind.startswith("bits:"):
        n = kind[len("bits:"):]
        return str(v).rjust(int(n), "0") if n else str(v).lstrip("0")
    if kind == "point":
        x, y = str(v).strip("()").split(",")
        return ("point", float(x), float(y))
    if kind == "geometric":
        return geometric_value(str(v))
    if kind == "text":
        return str(v)
    return v


# ---------------------------------------------------------------- lake side (arrow, hudi-rs)
def _safe_type(t):
    """An arrow type Python can always hold: dates as int32 days, timestamps as int64 in their unit."""
    import pyarrow as pa

    if pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_date64(t) or pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        inner = _safe_type(t.value_type)
        return pa.list_(inner) if inner != t.value_type else t
    return t


def lake_column(array) -> tuple[object, list]:
    """(arrow type, Python values) of a lake column, dates and timestamps as numbers."""
    t = array.type
    safe = _safe_type(t)
    return t, (array.cast(safe) if safe != t else array).to_pylist()


def _ts_micros(t, v: int) -> int:
    unit = getattr(t, "unit", "ms")  # date64 is milliseconds
    return {"s": v * 1_000_000, "ms": v * 1000, "us": v, "ns": v // 1000}[unit]


def lake_value(kind: str, arrow_type, v):
    """A lake value (from ``lake_column``) in the canonical form of ``db_value``; a value the lake does not
    hold typed (a Debezium encoding) is marked untyped, so it never equals."""
    import pyarrow as pa

    if v is None:
        return None
    if kind.startswith("array:"):
        if not (pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)) or not isinstance(v, list):
            return f"{UNTYPED}{v!r}"
        return [lake_value(kind[6:], arrow_type.value_type, e) for e in v]
    if kind == "date":
        return ("date", v) if pa.types.is_date32(arrow_type) else f"{UNTYPED}{v!r}"
    if kind in ("timestamp", "timestamptz"):
        return ("ts", _ts_micros(arrow_type, v)) if pa.types.is_timestamp(arrow_type) else f"{UNTYPED}{v!r}"
    if kind == "time":
        return time_text(v) if isinstance(v, str) else f"{UNTYPED}{v!r}"
    if kind == "timetz":
        return ("timetz", timetz_micros(v)) if isinstance(v, str) else f"{UNTYPED}{v!r}"
    if kind == "decimal":
        return ("dec", decimal_text(v)) if isinstance(v, Decimal) else f"{UNTYPED}{v!r}"
    if kind == "interval":
        return ("interval", interval_parts(v)) if isinstance(v, str) else f"{UNTYPED}{v!r}"
    if kind == "float4":
        return _float4(v)
    if kind == "float6":
        return _float6(v)
    if kind == "json":
        return ("json", json_value(v)) if isinstance(v, str) else f"{UNTYPED}{v!r}"
    if kind == "bytes":
        return bytes(v) if isinstance(v, (bytes, bytearray)) else f"{UNTYPED}{v!r}"
    if kind == "point":
        return ("point", float(v["x"]), float(v["y"])) if isinstance(v, dict) else f"{UNTYPED}{v!r}"
    if kind == "geometry" and isinstance(v, dict) and isinstance(v.get("wkb"), (bytes, bytearray)):
        return geometry_value(v["wkb"], v.get("srid"))
    if kind == "geometric":
        return geometric_value(v) if isinstance(v, str) else f"{UNTYPED}{v!r}"
    if kind == "text":
        return str(v)
    return v


# ---------------------------------------------------------------- __rejects (lake_types.rejects_expr)
ZERO_DATE = re.compile(r"^[0-9]+-(00-|[0-9]{2}-00)")  # MySQL's zero dates: a zero month or day


def zero_date(text: str):
    """A MySQL zero date ('0000-00-00', '0000-00-00 00:00:00.000000') as the database prints it."""
    return ("zero-date", text)


def exact_decimal(text: str) -> Decimal:
    """A rejected numeric's exact text: PostgreSQL's form, or '0x<two's-complement bytes>E-<scale>' for an
    unscaled value of more than 38 digits."""
    if text.startswith("0x"):
        digits, _, scale = text[2:].partition("E-")
        unscaled = int.from_bytes(bytes.fromhex(digits), "big", signed=True)
        return Decimal(f"{unscaled}E-{int(scale)}")  # exact (no context rounding)
    return Decimal(text)


def _nested(kind: str, v):
    return [_nested(kind, e) if isinstance(e, list) else rejected_value(kind, e) for e in v]


def rejected_value(kind: str, text: str | None):
    """A value the lake type could not hold, from its exact text in __rejects, in the canonical form of
    ``db_value`` (so verify can tell it is the database's value); None when it has no such form."""
    if text is None:
        return None
    if kind in ("date", "timestamp", "timestamptz") and ZERO_DATE.match(text):
        return zero_date(text)
    try:
        if kind.startswith("array:") and text.lstrip().startswith(("{{", "[")):  # two or more dimensions
            return _nested(kind[6:], parse_array(text))
        if kind.startswith("array:"):
            return [rejected_value(kind[6:], e) for e in array_elements(text)]
        if kind == "decimal":
            return ("dec", decimal_text(exact_decimal(text)))
        return db_value(kind, text)
    except (ValueError, ArithmeticError):
        return f"{UNTYPED}{text!r}"
