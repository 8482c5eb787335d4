"""Row filters both engines apply: record-key lookups and simple --where conditions.

Spark takes any Spark SQL --where; the native engine understands conjunctions of comparisons,
``col op value [AND col op value ...]`` with op in = != <> < <= > >=, values numbers, 'quoted
strings' or null (``col = null`` / ``col is null``). Anything else is refused with a clear line.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from typing import Any

from hudi_cdc.query.errors import BadKeyError, NativeUnsupported

Condition = tuple[str, str, Any]  # (column, op, python value)

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq, "!=": operator.ne, "<>": operator.ne,
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}
_TERM = re.compile(
    r"^\s*`?(?P<col>[A-Za-z_][A-Za-z0-9_]*)`?\s*"
    r"(?:(?P<op><=|>=|<>|!=|=|<|>)\s*(?P<val>'(?:[^']|'')*'|-?\d+(?:\.\d+)?|null)"
    r"|(?P<isnull>is\s+(?P<not>not\s+)?null))\s*$", re.I)
_NULL_OPS = ("=", "!=", "<>")
_INTEGER_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def parse_where(where: str) -> list[Condition]:
    """The native engine's --where: NativeUnsupported for what it cannot read."""
    conditions = []
    for part in re.split(r"\s+and\s+", where.strip(), flags=re.I):
        m = _TERM.match(part)
        if not m:
            raise NativeUnsupported(
                f"--where {where!r}: the native engine reads only `column op value [AND ...]` "
                "(op: = != <> < <= > >=, or IS [NOT] NULL); use --engine spark for full Spark SQL")
        if m.group("isnull"):
            conditions.append((m.group("col"), "!=" if m.group("not") else "=", None))
            continue
        raw = m.group("val")
        if raw.lower() == "null":
            value: Any = None
        elif raw.startswith("'"):
            value = raw[1:-1].replace("''", "'")
        else:
            value = float(raw) if "." in raw else int(raw)
        conditions.append((m.group("col"), m.group("op"), value))
    return conditions


def matches(row: dict[str, Any], conditions: Sequence[Condition]) -> bool:
    for col, op, value in conditions:
        got = row.get(col)
        if value is None:  # IS [NOT] NULL
            if (op == "=" and got is not None) or (op in ("!=", "<>") and got is None) or op not in _NULL_OPS:
                return False
            continue
        if got is None:  # SQL: a comparison with null is never true
            return False
        try:
            if not _OPS[op](got, value):
                return False
        except TypeError:  # compare as text when types differ ('1905' vs 1905)
            if not _OPS[op](str(got), str(value)):
                return False
    return True


def check_columns(conditions: Sequence[Condition], columns: Sequence[str]) -> None:
    for col, _op, _value in conditions:
        if col not in columns:
            raise BadKeyError(f"unknown column {col!r} in --where; columns: {', '.join(columns)}")


def key_conditions(key: str, record_keys: Sequence[str], types: dict[str, str]) -> list[Condition]:
    """--key VALUE for a one-field record key, or --key f1=v1,f2=v2 for a composite one; each
    value converted to the column's type (types: column -> arrow type name)."""
    if not record_keys:
        raise BadKeyError("the table has no record key fields (hoodie.table.recordkey.fields)")
    if len(record_keys) == 1 and "=" not in key:
        pairs = [(record_keys[0], key)]
    else:
        pairs = []
        for part in key.split(","):
            name, sep, value = part.partition("=")
            if not sep or name.strip() not in record_keys:
                raise BadKeyError(f"--key {key!r}: give {'=VALUE,'.join(record_keys)}=VALUE "
                                  f"(the record key fields)")
            pairs.append((name.strip(), value.strip()))
        missing = [k for k in record_keys if k not in {n for n, _ in pairs}]
        if missing:
            raise BadKeyError(f"--key {key!r}: missing record key field(s) {', '.join(missing)}")
    out: list[Condition] = []
    for name, value in pairs:
        kind = types.get(name, "string")
        if kind in _INTEGER_TYPES:
            try:
                out.append((name, "=", int(value)))
            except ValueError:
                raise BadKeyError(f"--key {value!r}: {name} is a {kind} column, not a number") from None
        else:
            out.append((name, "=", value))
    return out


def key_text(conditions: Sequence[Condition]) -> str:
    if len(conditions) == 1:
        return f"{conditions[0][0]} = {conditions[0][2]!r}"
    return ", ".join(f"{c} = {v!r}" for c, _op, v in conditions)


def partition_filters(conditions: Sequence[Condition],
                      partition_fields: Sequence[str]) -> list[tuple[str, str, str]] | None:
    """hudi-rs filters for partition pruning: equality on partition columns only."""
    out = [(c, "=", str(v)) for c, op, v in conditions if c in partition_fields and op == "=" and v is not None]
    return out or None
