"""A table's shaping in the pipeline file (docs/shaping.md): columns kept or excluded, masked columns, a row
filter, derived columns and a lake type per column, validated once at load. Expressions are Spark SQL,
parsed with sqlglot: one that does not parse, or names a column the lake does not get, is a one-line error
naming the table and key. What every engine applies is hudi_cdc/common/shaping.py's Shape."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hudi_cdc.common.shaping import LAKE_TYPES, Shape

_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")


class Model(BaseModel):
    """As config.settings.Model (that module builds its TableSettings on ShapeSettings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ColumnsSettings(Model):
    """Which source columns reach the lake: an include list or an exclude list (not both)."""

    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_list(self) -> ColumnsSettings:
        if self.include and self.exclude:
            raise ValueError("give include or exclude, not both")
        if not (self.include or self.exclude):
            raise ValueError("give include: [..] or exclude: [..]")
        return self


class ShapeSettings(Model):
    """The shaping keys of one table (they sit in the table's own mapping of the pipeline file)."""

    columns: ColumnsSettings | None = None
    mask: dict[str, Literal["hash", "redact"]] = Field(default_factory=dict)
    # who hashes: Debezium in capture / `connectors render` (before anything lands; the default), or the
    # streamer (files landed by a connector hudi-cdc did not render: the values land unmasked)
    mask_in: Literal["capture", "streamer"] = "capture"
    filter: str | None = None
    derive: dict[str, str] = Field(default_factory=dict)
    types: dict[str, str] = Field(default_factory=dict)

    @field_validator("types")
    @classmethod
    def _types(cls, v: dict[str, str]) -> dict[str, str]:
        out = {}
        for col, typ in v.items():
            t = " ".join(typ.lower().split())
            m = _DECIMAL.match(t)
            if m and not (1 <= int(m.group(1)) <= 38 and int(m.group(2)) <= int(m.group(1))):
                raise ValueError(f"{col}: {typ!r} is not a decimal Spark holds (precision 1..38, scale <= precision)")
            if not m and t not in LAKE_TYPES:
                raise ValueError(f"{col}: {typ!r} is not a lake type; one of decimal(p,s), {', '.join(LAKE_TYPES)}")
            out[col] = f"decimal({m.group(1)},{m.group(2)})" if m else t
        return out


def parse_expression(text: str, what: str) -> list[str]:
    """The columns a Spark SQL expression names; ValueError (one line, naming ``what``) when it does not
    parse as one expression."""
    import sqlglot
    from sqlglot import exp

    try:
        trees = sqlglot.parse(text, read="spark")
    except sqlglot.errors.ParseError as exc:
        first = exc.errors[0] if exc.errors else {}
        desc = first.get("description") or str(exc).splitlines()[0]
        raise ValueError(f"{what}: {text!r} does not parse as Spark SQL: {desc}") from None
    if len(trees) != 1 or trees[0] is None:
        raise ValueError(f"{what}: {text!r} must be one SQL expression")
    tree = trees[0]
    if isinstance(tree, exp.Query | exp.DDL | exp.DML | exp.Command) or tree.find(exp.Query):
        raise ValueError(f"{what}: {text!r} must be an expression on the row, not a statement or subquery")
    return sorted({c.name for c in tree.find_all(exp.Column)})


def check_shape(s: ShapeSettings, keys: list[str], ordering: list[str], partition_field: str | None,
                deletes: str) -> None:
    """Every expression parses and names columns the lake gets; keys stay; derived names are new."""
    excluded = set(s.columns.exclude) if s.columns else set()
    include = set(s.columns.include) if s.columns else set()
    masked = set(s.mask)

    def unknown(col: str) -> str | None:
        if col in excluded:
            return f"{col} is excluded (columns.exclude)"
        if include and col not in include and col not in keys and col not in ordering:
            return f"{col} is not a kept column (columns.include)"
        return None

    for key in keys + ordering:
        if key in excluded:
            raise ValueError(f"columns.exclude: {key} is a record key or ordering field (they reach the lake)")
        if key in ordering and key in masked:
            raise ValueError(f"mask.{key}: an ordering field orders the changes; it cannot be masked")
    for col in masked:
        why = unknown(col)
        if why:
            raise ValueError(f"mask.{col}: {why}")
    exprs = {f"derive.{n}": e for n, e in s.derive.items()}
    if s.filter is not None:
        exprs["filter"] = s.filter
    for where, text in exprs.items():
        for col in parse_expression(text, where):
            why = unknown(col) or (f"{col} is masked (mask): an expression reads the source value"
                                   if col in masked else None)
            if why is None and col in s.derive:
                why = f"{col} is a derived column: expressions read source columns"
            if why:
                raise ValueError(f"{where}: {why}")
    for name in s.derive:
        if name in excluded or name in masked or name in keys or name in include:
            raise ValueError(f"derive.{name}: a derived column takes a new name (not a source column's)")
    for col in s.types:
        why = unknown(col) if col not in s.derive else None
        if why or col in masked:
            raise ValueError(f"types.{col}: {why or col + ' is masked (a string)'}")
    if partition_field and (unknown(partition_field) or partition_field in masked):
        raise ValueError(f"partition_field: {unknown(partition_field) or partition_field + ' is masked'}")
    if s.filter is not None and deletes != "hard":
        raise ValueError("filter: a row leaving the filter is deleted from the lake; needs deletes: hard")


def to_shape(s: ShapeSettings, salt_env: str | None) -> Shape:
    return Shape(include=tuple(s.columns.include) if s.columns else (),
                 exclude=tuple(s.columns.exclude) if s.columns else (), mask=dict(s.mask), mask_in=s.mask_in,
                 salt_env=salt_env if "hash" in s.mask.values() else None, filter=s.filter, derive=dict(s.derive),
                 types=dict(s.types))
