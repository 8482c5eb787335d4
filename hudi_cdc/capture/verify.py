"""``verify``: is the Hudi table equal to the database table it is captured from?

Both sides are compared in the types a lake user reads (capture/typed_values.py): dates as dates,
timestamps as instants (timestamp as the wall clock at UTC), decimals exactly, time as HH:MM:SS.ffffff,
intervals as (months, days, microseconds), arrays element by element with their NULLs, json/jsonb as
parsed JSON, bytea as bytes; the lake's typed columns as hudi-rs reads them. A lake column still in a
Debezium encoding (a table bootstrapped before typed columns), a rounded decimal or a shifted timestamp
is a difference. Both sides are reduced to {record key: hash of the row} over the columns they share
(Debezium's and Hudi's own fields left out); the database is read through a server-side cursor in
chunks. Rows the lake marks deleted (soft deletes) count as absent. The result counts missing (in the
database, not in the lake), extra (in the lake only) and different rows (each row once), with sample
keys, the columns that differ for them, and how many rows differ per column.

A value the lake type cannot hold lands as NULL with its exact source value in the row's ``__rejects``
column (lake_types.rejects_expr): when that value is the database's, the column is no difference but a
rejected value, counted and named as such (``rejected``, ``rejected_values``); the tables are equal
otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from hudi_cdc.capture import history as hist
from hudi_cdc.capture import source as src
from hudi_cdc.capture import typed_values as tv
from hudi_cdc.common.lake_types import REJECTS_COLUMN
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError, ExitCode, HudiCdcError, TableStateError

SAMPLES = 5
CHUNK = 10_000


class TablesDiffer(HudiCdcError):
    """verify found rows that differ between the database and the lake."""

    exit_code = ExitCode.DIFFERS


@dataclass
class Column:
    name: str
    type: str  # format_type(), e.g. "timestamp(3) without time zone"
    kind: str  # how values are compared (typed_values.kind_of): date, timestamp, decimal, array:date, ...
    source: str = ""  # the database's own name when the lake's differs (source.lake_name: "Order Date")

    @property
    def db_name(self) -> str:
        return self.source or self.name

    @classmethod
    def of(cls, db_name: str, type: str, kind: str) -> Column:
        """A database column under its lake name (source.lake_name), keeping its own when they differ."""
        lake = src.lake_name(db_name)
        return cls(lake, type, kind, db_name if lake != db_name else "")


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
    column_differences: dict[str, int] = field(default_factory=dict)  # column -> rows differing there
    rejected: int = 0  # rows holding a value their lake type cannot hold (NULL there, exact in __rejects)
    rejected_columns: dict[str, int] = field(default_factory=dict)  # column -> rows with a rejected value
    rejected_values: list[dict] = field(default_factory=list)  # samples: key, column, value, reason, __lsn
    columns: list[str] = field(default_factory=list)
    not_in_lake: list[str] = field(default_factory=list)  # database columns Debezium did not map
    lake_max_lsn: int | None = None
    db_lsn: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def rejected_line(self) -> str:
        if not self.rejected:
            return ""
        shown = ", ".join(f"key {v['key']} {v['column']} = {v['value']}" for v in self.rejected_values)
        return (f"; {self.rejected} row(s) hold a value their lake type cannot hold (NULL there, the exact source "
                f"value in {REJECTS_COLUMN}): " + ", ".join(f"{c} ({n})" for c, n in self.rejected_columns.items())
                + (f", e.g. {shown}" if shown else ""))

    def summary(self) -> str:
        head = f"{self.table} ({self.table_type}): "
        if self.equal:
            return head + f"equal ({self.db_rows} rows, {len(self.columns)} columns compared)" + self.rejected_line()
        parts = []
        for what, n, keys in (("missing in the lake", self.missing, self.missing_keys),
                              ("extra in the lake", self.extra, self.extra_keys),
                              ("different", self.different, self.different_keys)):
            if n:
                parts.append(f"{n} {what} (e.g. key {', '.join(keys)})")
        if self.column_differences:
            parts.append("in column(s) " + ", ".join(f"{c} ({n})" for c, n in self.column_differences.items()))
        return head + "DIFFERS: " + "; ".join(parts) + self.rejected_line()


def _db_columns(conn, t: src.SourceTable) -> list[Column]:
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (t.schema, t.table)).fetchall()
    if not rows:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    return [Column.of(name, typ, tv.kind_of(typ)) for name, typ in rows]


def _canon(v) -> str:
    """One text form per canonical value, whatever side it came from."""
    if v is None:
        return "\\N"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, Decimal):
        return tv.decimal_text(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (list, tuple)):
        return repr([_canon(e) for e in v]) if isinstance(v, list) else repr(tuple(_canon(e) for e in v))
    return str(v)


def _row_digest(values: Sequence) -> bytes:
    """4 bytes of a hash per column: rows compare as a whole, and the columns that differ are named."""
    return b"".join(hashlib.blake2b(_canon(v).encode("utf-8"), digest_size=4).digest() for v in values)


def _differing(cols: list[Column], a: bytes, b: bytes) -> list[str]:
    return [c.name for i, c in enumerate(cols) if a[4 * i:4 * i + 4] != b[4 * i:4 * i + 4]]


def _key_text(key: tuple) -> str:
    return ",".join(_plain_key(k) for k in key)


def _plain_key(k) -> str:
    """A key value as a user writes it (a typed date key as its days, a timestamp as its microseconds)."""
    if isinstance(k, tuple) and len(k) == 2:
        return _canon(k[1])
    return _canon(k)


def _lake_table(pipeline: Pipeline, table: str, table_type: str):
    """The lake table as hudi-rs reads it (arrow), None when it holds no rows."""
    from hudi_cdc.lake.reader import read_arrow

    return read_arrow(pipeline.base_path(table, table_type))


def _lake_values(lake, names: list[str], kinds: dict[str, str]) -> list[list]:
    """Columns of the lake, each as canonical typed values (typed_values.lake_value)."""
    out = []
    for n in names:
        if n not in lake.column_names:
            out.append([None] * lake.num_rows)
            continue
        t, values = tv.lake_column(lake.column(n))
        kind = kinds.get(n, "plain")
        out.append([tv.lake_value(kind, t, v) for v in values])
    return out


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES) -> VerifyResult:
    from hudi_cdc.pipeline import table_exists

    if src.database(pipeline).kind != "postgresql":  # mysql / mariadb: verify_mysql (capture.kinds.verify)
        raise ConfigError(f"source.database.kind: {src.database(pipeline).kind} is verified by capture.kinds.verify")
    t = pipeline.table(table)
    st = src.source_table(pipeline, table)
    keys = t.record_keys
    base = pipeline.base_path(table, table_type)
    if base.startswith("file://") and not table_exists(pipeline, table, table_type):
        raise TableStateError(f"table {table} ({table_type}) does not exist at {base}; run `hudi-cdc bootstrap` first")
    lake = _lake_table(pipeline, table, table_type)
    if hist.is_history(keys):  # an append-only raw history: compared as a multiset of rows
        return _verify_history(pipeline, table, table_type, st, lake, samples)
    lake_cols = set(lake.column_names) if lake is not None else set()
    with src.connect(pipeline, autocommit=False) as conn:
        db_cols = _db_columns(conn, st)
        missing_keys = [k for k in keys if k not in {c.name for c in db_cols}]
        if missing_keys:
            raise TableStateError(f"record key {', '.join(missing_keys)} is not a column of {st.qualified}")
        cols = [c for c in db_cols if (c.name in lake_cols or lake is None) and c.name not in keys]
        not_in_lake = [c.name for c in db_cols if lake is not None and c.name not in lake_cols]
        kinds = {c.name: c.kind for c in db_cols}
        types = {c.name: c.type for c in db_cols}
        db_names = {c.name: c.db_name for c in db_cols}
        db_lsn = src.current_lsn(conn)
        db_digests: dict[tuple, bytes] = {}
        from psycopg import sql

        for statement in tv.SESSION_SQL:  # the text forms typed_values parses (this transaction only)
            conn.execute(statement.replace("SET ", "SET LOCAL ", 1))
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.SQL(tv.select_sql("{}", types[n])).format(sql.Identifier(db_names[n]))
                               for n in keys + [c.name for c in cols]),
            sql.Identifier(st.schema, st.table))
        with conn.cursor(name="hudi_cdc_verify") as cur:
            cur.itersize = CHUNK
            cur.execute(query)
            for row in cur:
                key = tuple(tv.db_value(kinds[k], v) for k, v in zip(keys, row[:len(keys)], strict=True))
                db_digests[key] = _row_digest([tv.db_value(c.kind, v)
                                               for c, v in zip(cols, row[len(keys):], strict=True)])
        conn.rollback()

    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_digests), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    return compare(lake, t, cols, kinds, db_digests, result, samples)


def _verify_history(pipeline: Pipeline, table: str, table_type: str, st, lake, samples: int) -> VerifyResult:
    """A raw history table (capture/history.py) against the database: the database's rows as a
    multiset against the landed inserts minus the deleted rows, over the columns both have."""
    lake_cols = set(lake.column_names) if lake is not None else set()
    with src.connect(pipeline, autocommit=False) as conn:
        db_cols = _db_columns(conn, st)
        cols = [c for c in db_cols if c.name in lake_cols or lake is None]
        kinds = {c.name: c.kind for c in db_cols}
        db_lsn = src.current_lsn(conn)
        from psycopg import sql

        for statement in tv.SESSION_SQL:
            conn.execute(statement.replace("SET ", "SET LOCAL ", 1))
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.SQL(tv.select_sql("{}", c.type)).format(sql.Identifier(c.db_name)) for c in cols),
            sql.Identifier(st.schema, st.table))
        db_rows: Counter = Counter()
        with conn.cursor(name="hudi_cdc_verify") as cur:
            cur.itersize = CHUNK
            cur.execute(query)
            for row in cur:
                db_rows[_row_digest([tv.db_value(c.kind, v) for c, v in zip(cols, row, strict=True)])] += 1
        conn.rollback()
    n = lake.num_rows if lake is not None else 0
    values = _lake_values(lake, [c.name for c in cols], kinds) if n else [[] for _ in cols]
    ops = lake.column(hist.OP).to_pylist() if n and hist.OP in lake_cols else [None] * n
    lake_rows, _updates = hist.replay(ops, [_row_digest([v[i] for v in values]) for i in range(n)])
    missing, extra = hist.differences(db_rows, lake_rows)
    result = VerifyResult(table, table_type, equal=not (missing or extra), db_rows=sum(db_rows.values()),
                          lake_rows=sum(c for c in lake_rows.values() if c > 0), missing=len(missing), extra=len(extra),
                          missing_keys=[d.hex()[:16] for d in missing[:samples]],
                          extra_keys=[d.hex()[:16] for d in extra[:samples]], columns=[c.name for c in cols],
                          not_in_lake=[c.name for c in db_cols if lake is not None and c.name not in lake_cols],
                          db_lsn=db_lsn)
    return result


def compare(lake, t, cols: list[Column], kinds: dict[str, str], db_digests: dict[tuple, bytes], result: VerifyResult,
            samples: int = SAMPLES) -> VerifyResult:
    """The lake (arrow, hudi-rs) against the database's {typed key: row digest}: missing, extra and different
    rows with sample keys and the differing columns (every source kind's verify ends here)."""
    keys = t.record_keys
    lake_cols = set(lake.column_names) if lake is not None else set()
    soft = t.deletes == "soft"
    seen = set()
    n_rows = lake.num_rows if lake is not None else 0
    key_values = _lake_values(lake, keys, kinds) if n_rows else [[] for _ in keys]
    col_values = _lake_values(lake, [c.name for c in cols], kinds) if n_rows else [[] for _ in cols]
    deleted = lake.column(t.delete_field).to_pylist() if soft and n_rows and t.delete_field in lake_cols else None
    lsns = lake.column("__lsn").to_pylist() if n_rows and "__lsn" in lake_cols else None
    rejects = lake.column(REJECTS_COLUMN).to_pylist() if n_rows and REJECTS_COLUMN in lake_cols else None
    for i in range(n_rows):
        if deleted is not None and str(deleted[i]) == "true":
            continue
        result.lake_rows += 1
        lsn = lsns[i] if lsns is not None else None
        if isinstance(lsn, int):
            result.lake_max_lsn = max(result.lake_max_lsn or 0, lsn)
        key = tuple(kv[i] for kv in key_values)
        want = db_digests.get(key)
        if want is None or key in seen:  # not in the database, or the same key twice in the lake
            result.extra += 1
            if len(result.extra_keys) < samples:
                result.extra_keys.append(_key_text(key))
            seen.add(key)
            continue
        seen.add(key)
        got = _row_digest([cv[i] for cv in col_values])
        names = _differing(cols, got, want) if got != want else []
        if names and rejects is not None and rejects[i]:
            names = _rejected(cols, want, names, rejects[i], _key_text(key), lsn, result, samples)
        if names:
            result.different += 1
            for n in names:
                result.column_differences[n] = result.column_differences.get(n, 0) + 1
            if len(result.different_keys) < samples:
                kt = _key_text(key)
                result.different_keys.append(kt)
                result.different_columns[kt] = names
    for key in db_digests:
        if key not in seen:
            result.missing += 1
            if len(result.missing_keys) < samples:
                result.missing_keys.append(_key_text(key))
    result.equal = not (result.missing or result.extra or result.different)
    return result


def _rejected(cols: list[Column], want: bytes, names: list[str], rejects_json: str, key: str, lsn,
              result: VerifyResult, samples: int) -> list[str]:
    """The differing columns a row's __rejects does not explain: a column whose rejected exact value is the
    database's is counted (and sampled) as a rejected value instead."""
    try:
        rejected = json.loads(rejects_json)
    except ValueError:
        return names
    by_name = {c.name: (i, c) for i, c in enumerate(cols)}
    left = []
    for n in names:
        entry = rejected.get(n) if isinstance(rejected, dict) else None
        i, c = by_name[n]
        if not isinstance(entry, dict) or entry.get("value") is None:
            left.append(n)
            continue
        value = entry["value"]
        if _row_digest([tv.rejected_value(c.kind, value)]) != want[4 * i:4 * i + 4]:
            left.append(n)
            continue
        result.rejected_columns[n] = result.rejected_columns.get(n, 0) + 1
        if len(result.rejected_values) < samples:
            result.rejected_values.append({"key": key, "column": n, "value": value, "reason": entry.get("reason"),
                                           "__lsn": lsn})
    if len(left) < len(names):
        result.rejected += 1
    return left


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
