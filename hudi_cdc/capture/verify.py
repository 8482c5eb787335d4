"""``verify``: is the Hudi table equal to the database table it is captured from?

Both sides are reduced to {record key: hash of the row} over the columns they share (the
database's columns that the lake holds, Debezium's and Hudi's own fields left out), with values
put in the form Debezium gives them before hashing: dates as days since 1970-01-01, timestamps
and times as micro- (precision 4-6) or milliseconds (0-3) since the epoch / midnight, timestamptz
as UTC microseconds (the lake holds Debezium's ISO string), numerics as exact decimals, real as a
32-bit float. The database is read through a server-side cursor in chunks; the lake with hudi-rs.
Rows the lake marks deleted (soft deletes) count as absent. The result counts missing (in the
database, not in the lake), extra (in the lake only) and different rows, with sample keys.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time, timezone
from decimal import Decimal

from ..config import Pipeline
from ..errors import ConfigError, ExitCode, HudiCdcError, TableStateError
from . import source as src

SAMPLES = 5
CHUNK = 10_000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class TablesDiffer(HudiCdcError):
    """verify found rows that differ between the database and the lake."""

    exit_code = ExitCode.DIFFERS


@dataclass
class Column:
    name: str
    type: str  # format_type(), e.g. "timestamp(3) without time zone"
    kind: str  # how values are normalised: plain, date, ts_micros, ts_millis, tstz, time_micros, ...


@dataclass
class VerifyResult:
    table: str
    table_type: str
    equal: bool
    db_rows: int
    lake_rows: int
    missing: int = 0
    extra: int = 0
    different: int = 0
    missing_keys: list[str] = field(default_factory=list)
    extra_keys: list[str] = field(default_factory=list)
    different_keys: list[str] = field(default_factory=list)
    different_columns: dict[str, list[str]] = field(default_factory=dict)  # sample key -> columns
    columns: list[str] = field(default_factory=list)
    not_in_lake: list[str] = field(default_factory=list)  # database columns Debezium did not map
    lake_max_lsn: int | None = None
    db_lsn: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        head = f"{self.table} ({self.table_type}): "
        if self.equal:
            return head + f"equal ({self.db_rows} rows, {len(self.columns)} columns compared)"
        parts = []
        for what, n, keys in (("missing in the lake", self.missing, self.missing_keys),
                              ("extra in the lake", self.extra, self.extra_keys),
                              ("different", self.different, self.different_keys)):
            if n:
                parts.append(f"{n} {what} (e.g. key {', '.join(keys)})")
        return head + "DIFFERS: " + "; ".join(parts)


def _precision(type_name: str) -> int | None:
    if "(" in type_name:
        inner = type_name[type_name.index("(") + 1:type_name.index(")")]
        try:
            return int(inner.split(",")[0])
        except ValueError:
            return None
    return None


def _kind(type_name: str) -> str:
    t = type_name.lower()
    p = _precision(t)
    millis = p is not None and p <= 3
    if t == "date":
        return "date"
    if t.startswith("timestamp") and "with time zone" in t:
        return "tstz"
    if t.startswith("timestamp"):
        return "ts_millis" if millis else "ts_micros"
    if t.startswith("time") and "with time zone" not in t:
        return "time_millis" if millis else "time_micros"
    if t.startswith("numeric") or t == "money":
        return "decimal"
    if t == "real":
        return "float4"
    if t in ("double precision",):
        return "float8"
    if t == "bytea":
        return "bytes"
    if t in ("smallint", "integer", "bigint", "boolean", "text") or t.startswith(("character", "varchar")):
        return "plain"
    return "text"  # uuid, json, ... : Debezium sends their text form


def _db_columns(conn, t: src.SourceTable) -> list[Column]:
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (t.schema, t.table)).fetchall()
    if not rows:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    return [Column(name, typ, _kind(typ)) for name, typ in rows]


def _micros(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _time_micros(t: time) -> int:
    return ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond


def _decimal_text(d: Decimal) -> str:
    if d.is_nan():
        return "NaN"
    d = d.normalize()
    return format(d, "f") if d != 0 else "0"


def _canon(v) -> str:
    """One text form per value, whatever side it came from (after the kind-specific step)."""
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, Decimal):
        return _decimal_text(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return str(v)


def db_value(kind: str, v):
    """A database value as Debezium maps it."""
    if v is None:
        return None
    if kind == "date" and isinstance(v, date):
        return (v - date(1970, 1, 1)).days
    if kind in ("ts_micros", "tstz") and isinstance(v, datetime):
        return _micros(v)
    if kind == "ts_millis" and isinstance(v, datetime):
        return _micros(v) // 1000
    if kind == "time_micros" and isinstance(v, time):
        return _time_micros(v)
    if kind == "time_millis" and isinstance(v, time):
        return _time_micros(v) // 1000
    if kind == "float4":
        return struct.unpack("f", struct.pack("f", v))[0]
    if kind == "decimal":
        return Decimal(v) if not isinstance(v, Decimal) else v
    if kind == "text":
        return str(v)
    return v


def lake_value(kind: str, v):
    """A lake value (as hudi-rs reads what Debezium wrote) in the same form as ``db_value``."""
    if v is None:
        return None
    if kind == "tstz" and isinstance(v, str):
        return _micros(datetime.fromisoformat(v.replace("Z", "+00:00")))
    if kind == "decimal" and isinstance(v, dict):  # VariableScaleDecimal {scale, value}
        raw = v.get("value") or b""
        return Decimal(int.from_bytes(raw, "big", signed=True)).scaleb(-int(v.get("scale") or 0))
    if kind == "decimal" and not isinstance(v, Decimal):
        return Decimal(str(v))
    if kind == "float4":
        return struct.unpack("f", struct.pack("f", v))[0]
    if kind == "date" and isinstance(v, date):
        return (v - date(1970, 1, 1)).days
    return v


def _row_hash(values: Sequence) -> str:
    return hashlib.sha1("\x1f".join(_canon(v) for v in values).encode("utf-8")).hexdigest()


def _key_text(key: tuple) -> str:
    return ",".join(_canon(k) for k in key)


def _lake_rows(pipeline: Pipeline, table: str, table_type: str) -> list[dict]:
    from ..reader import read_table

    return read_table(pipeline.base_path(table, table_type))


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES) -> VerifyResult:
    from ..pipeline import table_exists

    if src.database(pipeline).kind != "postgresql":  # mysql / mariadb: verify_mysql (capture.kinds.verify)
        raise ConfigError(f"source.database.kind: {src.database(pipeline).kind} is verified by capture.kinds.verify")
    t = pipeline.table(table)
    st = src.source_table(pipeline, table)
    keys = t.record_keys
    base = pipeline.base_path(table, table_type)
    if base.startswith("file://") and not table_exists(pipeline, table, table_type):
        raise TableStateError(f"table {table} ({table_type}) does not exist at {base}; run `hudi-cdc bootstrap` first")
    lake = _lake_rows(pipeline, table, table_type)
    lake_cols = set(lake[0]) if lake else set()
    with src.connect(pipeline, autocommit=False) as conn:
        db_cols = _db_columns(conn, st)
        missing_keys = [k for k in keys if k not in {c.name for c in db_cols}]
        if missing_keys:
            raise TableStateError(f"record key {', '.join(missing_keys)} is not a column of {st.qualified}")
        cols = [c for c in db_cols if (c.name in lake_cols or not lake) and c.name not in keys]
        not_in_lake = [c.name for c in db_cols if lake and c.name not in lake_cols]
        kinds = {c.name: c.kind for c in db_cols}
        db_lsn = src.current_lsn(conn)
        db_hashes: dict[tuple, str] = {}
        db_values: dict[tuple, list] = {}
        from psycopg import sql

        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.Identifier(n) for n in keys + [c.name for c in cols]),
            sql.Identifier(st.schema, st.table))
        with conn.cursor(name="hudi_cdc_verify") as cur:
            cur.itersize = CHUNK
            cur.execute(query)
            for row in cur:
                key = tuple(db_value(kinds[k], v) for k, v in zip(keys, row[:len(keys)], strict=True))
                vals = [db_value(c.kind, v) for c, v in zip(cols, row[len(keys):], strict=True)]
                db_hashes[key] = _row_hash(vals)
                if len(db_values) < 10_000:
                    db_values[key] = vals
        conn.rollback()

    soft = t.deletes == "soft"
    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_hashes), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    seen = set()
    for r in lake:
        if soft and str(r.get(t.delete_field)) == "true":
            continue
        result.lake_rows += 1
        lsn = r.get("__lsn")
        if isinstance(lsn, int):
            result.lake_max_lsn = max(result.lake_max_lsn or 0, lsn)
        key = tuple(lake_value(kinds[k], r.get(k)) for k in keys)
        want = db_hashes.get(key)
        if want is None or key in seen:  # not in the database, or the same key twice in the lake
            result.extra += 1
            if len(result.extra_keys) < samples:
                result.extra_keys.append(_key_text(key))
            seen.add(key)
            continue
        seen.add(key)
        vals = [lake_value(c.kind, r.get(c.name)) for c in cols]
        if _row_hash(vals) != want:
            result.different += 1
            if len(result.different_keys) < samples:
                kt = _key_text(key)
                result.different_keys.append(kt)
                dbv = db_values.get(key)
                if dbv is not None:
                    result.different_columns[kt] = [c.name for c, a, b in zip(cols, vals, dbv, strict=True)
                                                    if _canon(a) != _canon(b)]
    for key in db_hashes:
        if key not in seen:
            result.missing += 1
            if len(result.missing_keys) < samples:
                result.missing_keys.append(_key_text(key))
    result.equal = not (result.missing or result.extra or result.different)
    return result


def verify_until_equal(pipeline: Pipeline, table: str, table_type: str, wait_seconds: float,
                       poll_seconds: float = 5.0, progress: Callable[[str], None] = lambda m: None,
                       compare: Callable[..., VerifyResult] | None = None) -> VerifyResult:
    """`verify`, repeated while a running capture and stream catch up: the database moves on while the
    lake follows it, so a comparison taken mid-flight can differ by what is still in transit. Compares
    every `poll_seconds` (tenacity's retry loop) until the tables are equal or `wait_seconds` have passed;
    returns the last result (equal, or the differences that stayed). wait_seconds=0: one comparison."""
    from tenacity import RetryCallState, Retrying, retry_if_result, stop_after_delay, wait_fixed

    run = compare or verify

    def last(state: RetryCallState) -> VerifyResult:
        assert state.outcome is not None  # called after an attempt
        return state.outcome.result()

    attempts = Retrying(stop=stop_after_delay(wait_seconds), wait=wait_fixed(poll_seconds),
                        retry=retry_if_result(lambda r: not r.equal), retry_error_callback=last, reraise=True,
                        before_sleep=lambda state: progress(f"{last(state).summary()}; "
                                                            f"comparing again in {poll_seconds:g} s"))
    return attempts(run, pipeline, table, table_type)
