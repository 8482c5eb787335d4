"""What a landed field's type says about the rows already in the lake: compares two Avro schemas of a table.

Capture lands one Avro schema per file (landing.py); a table's schema changes with its DDL. Some DDL
rewrites the rows that existed without a change event for them, so the lake keeps their old values:

* a column's type changed (PostgreSQL ``ALTER COLUMN ... TYPE ... USING``, MySQL/MariaDB ``MODIFY``): the
  database converted every stored value (``USING price / 100``, ``numeric(10,2)`` -> ``numeric(10,1)`` rounds);
* an enum lost labels (MySQL/MariaDB ``MODIFY e ENUM(...)``: a value whose label went is now ``''``); labels
  only added (PostgreSQL ``ALTER TYPE ... ADD VALUE``) change no value;
* a nullable column became NOT NULL where the database turns NULLs into the default with no row events
  (MariaDB ``MODIFY a INT NOT NULL DEFAULT 0`` under a non-strict ``sql_mode``; PostgreSQL's ``SET NOT NULL``
  refuses a table with NULLs, so it changes no value).

A default (``SET DEFAULT``), ``DROP NOT NULL`` or a wider text type give no such field here. The schemas are
Confluent AvroData's (``connect.*`` properties); a field's default is no part of its type.
"""

from __future__ import annotations

import json
from typing import Any

IGNORED = ("default", "connect.default", "connect.doc")


def field_types(schema: dict[str, Any]) -> dict[str, Any]:
    """{field name: its type, defaults left out} of a record schema (capture's own ``__`` fields left out)."""
    return {f["name"]: f["type"] for f in schema.get("fields", []) if not str(f["name"]).startswith("__")}


def _strip(t: Any) -> Any:
    if isinstance(t, dict):
        kept = {k: _strip(v) for k, v in t.items() if k not in IGNORED}
        return kept["type"] if list(kept) == ["type"] and isinstance(kept["type"], str) else kept  # {"type": "int"}
    if isinstance(t, list):
        return [_strip(v) for v in t]
    return t


def _parts(t: Any) -> tuple[bool, str, frozenset[str] | None]:
    """(nullable, the non-null type's canonical text without enum labels, the enum's labels or None)."""
    branches = t if isinstance(t, list) else [t]
    nullable = "null" in branches
    rest = [_strip(b) for b in branches if b != "null"]
    labels: frozenset[str] | None = None
    for b in rest:
        params = b.get("connect.parameters") if isinstance(b, dict) else None
        if isinstance(params, dict) and "allowed" in params:
            labels = frozenset(str(params.pop("allowed")).split(","))
            if not params:
                b.pop("connect.parameters")
    core = json.dumps(sorted(json.dumps(b, sort_keys=True) for b in rest))
    return nullable, core, labels


def rewritten(before: Any, after: Any, *, not_null_rewrites: bool) -> str | None:
    """Why the database may have rewritten the existing values of a column whose landed type went from
    `before` to `after` with no change events (a short phrase), or None when it cannot have."""
    was_null, was, was_labels = _parts(before)
    now_null, now, now_labels = _parts(after)
    if was != now and not _widened(before, after):
        return f"its type changed ({_name(before)} -> {_name(after)})"
    if was_labels is not None and now_labels is not None and not was_labels <= now_labels:
        return f"enum label(s) {', '.join(sorted(was_labels - now_labels))} removed"
    if was_null and not now_null and not_null_rewrites:
        return "it became NOT NULL"
    return None


INTEGER_RANKS = {"int8": 1, "int16": 2, "int": 3, "long": 4}
DECIMAL = "org.apache.kafka.connect.data.Decimal"


def _widened(before: Any, after: Any) -> bool:
    """A type change that keeps every value (int -> bigint, real -> double, a decimal's precision up at the
    same scale): the database's values are the ones the lake has."""
    b, a = _core(before), _core(after)
    if b is None or a is None:
        return False
    if b[0] in INTEGER_RANKS and a[0] in INTEGER_RANKS:
        return INTEGER_RANKS[a[0]] >= INTEGER_RANKS[b[0]]
    if (b[0], a[0]) == ("float", "double"):
        return True
    return b[0] == a[0] == DECIMAL and b[1] == a[1] and a[2] >= b[2]


def _core(t: Any) -> tuple[str, int, int] | None:
    """(kind, scale, precision) of a single non-null number type: kind an integer width (int8, int16, int,
    long), float, double or the Decimal logical type; None for anything else."""
    branches = [b for b in (t if isinstance(t, list) else [t]) if b != "null"]
    if len(branches) != 1:
        return None
    b = branches[0]
    if isinstance(b, str):
        return (b, 0, 0) if b in INTEGER_RANKS or b in ("float", "double") else None
    name = b.get("connect.name")
    if name == DECIMAL:
        params = b.get("connect.parameters") or {}
        return DECIMAL, int(params.get("scale", b.get("scale", 0))), int(params.get("connect.decimal.precision", 0))
    if name is None and b.get("type") in ("int", "long", "float", "double"):
        return str(b.get("connect.type") or b["type"]), 0, 0
    return None


def _name(t: Any) -> str:
    """A type's short name for a message: ``int``, ``string``, ``io.debezium.time.Date``."""
    branches = [b for b in (t if isinstance(t, list) else [t]) if b != "null"]
    if not branches:
        return "null"
    b = branches[0]
    if isinstance(b, dict):
        return str(b.get("connect.name") or b.get("logicalType") or b.get("type"))
    return str(b)
