"""``verify``: is the Hudi table equal to the database table it is captured from?

Both sides are compared in the types a lake user reads (sources/typed_values.py): dates as dates,
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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal

from hudi_cdc.common.lake_types import REJECTS_COLUMN
from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src
from hudi_cdc.sources import typed_values as tv

SAMPLES = 5
CHUNK = 10_000


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
    unknown_values: list[dict] = field(default_factory=list)  # samples: key, column, reason (a value capture could
    # not know: NULL there, named in __rejects without a value, e.g. an unchanged TOAST value with no earlier one)
    columns: list[str] = field(default_factory=list)
    not_in_lake: list[str] = field(default_factory=list)  # database columns Debezium did not map
    lake_max_lsn: int | None = None
    db_lsn: int | None = None
    not_compared: list[str] = field(default_factory=list)  # columns left out (verify --whole: typed columns)
    details: list[str] = field(default_factory=list)  # one line per sampled difference (verify --whole)

    def to_dict(self) -> dict:
        return asdict(self)

    def rejected_line(self) -> str:
        if not self.rejected:
            return ""
        shown = ", ".join(f"key {v['key']} {v['column']} = {v['value']}" for v in self.rejected_values)
        return (f"; {self.rejected} row(s) hold a value their lake type cannot hold (NULL there, the exact source "
                f"value in {REJECTS_COLUMN}): " + ", ".join(f"{c} ({n})" for c, n in self.rejected_columns.items())
                + (f", e.g. {shown}" if shown else ""))

    def unknown_line(self) -> str:
        if not self.unknown_values:
            return ""
        shown = ", ".join(f"key {v['key']} {v['column']}" for v in self.unknown_values)
        return (f"; the lake could not know (NULL there, named in {REJECTS_COLUMN}): {shown} "
                f"({self.unknown_values[0]['reason']})")

    def summary(self) -> str:
        head = f"{self.table} ({self.table_type}): "
        left_out = f"; not compared: {', '.join(self.not_compared)}" if self.not_compared else ""
        if self.equal:
            return (head + f"equal ({self.db_rows} rows, {len(self.columns)} columns compared)" + self.rejected_line()
                    + left_out)
        parts = []
        for what, n, keys in (("missing in the lake", self.missing, self.missing_keys),
                              ("extra in the lake", self.extra, self.extra_keys),
                              ("different", self.different, self.different_keys)):
            if n:
                parts.append(f"{n} {what} (e.g. key {', '.join(keys)})")
        if self.column_differences:
            parts.append("in column(s) " + ", ".join(f"{c} ({n})" for c, n in self.column_differences.items()))
        return head + "DIFFERS: " + "; ".join(parts) + self.rejected_line() + self.unknown_line() + left_out


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


def _lake_table(pipeline: Pipeline, table: str, table_type: str, history: bool = False):
    """The lake table as hudi-rs reads it (arrow), None when it holds no rows; `history`: the current
    versions of its history table (`history: scd2`), what the database holds now."""
    from hudi_cdc.lake.reader import read_arrow

    if _waits_for_rows(pipeline, table, table_type, history):
        return None
    if not history:
        return read_arrow(pipeline.base_path(table, table_type))
    import pyarrow.compute as pc

    from hudi_cdc.jobs.stream.history import CURRENT

    versions = read_arrow(pipeline.history_base_path(table, table_type))
    if versions is None:
        return None
    current = versions.filter(pc.equal(versions.column(CURRENT), True))
    return current if current.num_rows else None


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
            left.append(n)  # still a difference; a value the lake could not know is named as such
            if isinstance(entry, dict) and entry.get("reason") and len(result.unknown_values) < samples:
                result.unknown_values.append({"key": key, "column": n, "reason": entry["reason"], "__lsn": lsn})
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


def _waits_for_rows(pipeline: Pipeline, table: str, table_type: str, history: bool) -> bool:
    """Whether the table was bootstrapped empty (lake/empty.py) and no round has created it yet: the lake
    holds no rows of it, which is what the database held then (compared as such, not refused)."""
    from hudi_cdc.jobs.streamer import has_completed_commit
    from hudi_cdc.lake.empty import is_empty_bootstrapped

    if not is_empty_bootstrapped(pipeline, table, table_type):
        return False
    base = pipeline.history_base_path(table, table_type) if history else pipeline.base_path(table, table_type)
    return not has_completed_commit(base)  # a local path or s3://


def require_lake_table(pipeline: Pipeline, table: str, table_type: str, history: bool = False) -> str:
    """The table's base path; a local table without a completed commit is one TableStateError (what every
    source's verify checks before it reads the database)."""
    from hudi_cdc.errors import TableStateError
    from hudi_cdc.jobs.streamer import has_completed_commit

    if history and not pipeline.table(table).history:
        raise TableStateError(f"table {table} has no history table (history: scd2 in {pipeline.source_file})")
    base = pipeline.history_base_path(table, table_type) if history else pipeline.base_path(table, table_type)
    if base.startswith("file://") and not has_completed_commit(base) and not _waits_for_rows(
            pipeline, table, table_type, history):  # pipeline.table_exists, local
        what = "history table" if history else "table"
        raise TableStateError(f"{what} {table} ({table_type}) does not exist at {base}; run `hudi-cdc bootstrap` first")
    return base
