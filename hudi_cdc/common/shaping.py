"""What a table's shaping (the pipeline file's columns / mask / filter / derive / types, docs/shaping.md)
means, in the one form every place that applies it reads: the streamer job (jobs/stream/shape.py), capture
and `connectors render` (Debezium's own exclusion and masking), and `verify` (the database side).

Stdlib only (the job's kernel). The spec travels to the job as JSON in the table's properties
(``SHAPE_KEY``); the hash salt never does: only the name of the environment variable holding it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

SHAPE_KEY = "hoodie.streamer.hudi_cdc.shape"
# Debezium's column.mask.with.<n>.chars: a fixed string of n '*' in place of the value
REDACT_CHARS = 4
REDACTED = "*" * REDACT_CHARS
# The lake types a column may be given (types:), as Spark SQL names them
LAKE_TYPES = ("string", "double", "float", "bigint", "int", "boolean", "date", "timestamp")


@dataclass(frozen=True)
class Shape:
    """One table's shaping, resolved: what the job, capture and verify apply."""

    include: tuple[str, ...] = ()  # empty: every column (less exclude)
    exclude: tuple[str, ...] = ()
    mask: dict[str, str] = field(default_factory=dict)  # column -> "hash" | "redact"
    mask_in: str = "capture"  # who hashes: "capture" (Debezium, before landing) | "streamer" (files landed by others)
    salt_env: str | None = None  # the environment variable holding the hash salt
    filter: str | None = None  # a Spark SQL predicate on the source row
    derive: dict[str, str] = field(default_factory=dict)  # new column -> Spark SQL expression
    types: dict[str, str] = field(default_factory=dict)  # column -> lake type (Spark SQL)

    @property
    def empty(self) -> bool:
        return not (self.include or self.exclude or self.mask or self.filter or self.derive or self.types)

    @property
    def hashed(self) -> list[str]:
        return [c for c, how in self.mask.items() if how == "hash"]

    @property
    def redacted(self) -> list[str]:
        return [c for c, how in self.mask.items() if how == "redact"]

    def keeps(self, column: str, keys: tuple[str, ...] | list[str] = ()) -> bool:
        """Does this column reach the lake? (record keys, derived columns and Debezium's fields always do)"""
        if column in keys or column in self.derive:
            return True
        if column in self.exclude:
            return False
        return not self.include or column in self.include or column.startswith("_")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> Shape:
        if not text:
            return cls()
        d = json.loads(text)
        return cls(include=tuple(d.get("include", ())), exclude=tuple(d.get("exclude", ())),
                   mask=dict(d.get("mask", {})), mask_in=d.get("mask_in", "capture"), salt_env=d.get("salt_env"),
                   filter=d.get("filter"), derive=dict(d.get("derive", {})), types=dict(d.get("types", {})))


def mask_hash(value: object, salt: str) -> str | None:
    """Debezium's column.mask.hash.v2.SHA-256.with.salt.<salt>: SHA-256 over the salt's bytes then the
    value's text (Java's String.getBytes, UTF-8), as lower-case hex. NULL stays NULL. (Debezium cuts the
    hex to a varchar(n) column's length n: hash columns of at least 64 characters, or text.)"""
    if value is None:
        return None
    return hashlib.sha256(salt.encode("utf-8") + str(value).encode("utf-8")).hexdigest()


def redact(value: object) -> str:
    """Debezium's column.mask.with.4.chars: '****' for every value, NULL too (its fixed mask replaces a NULL,
    as tests/capture/test_shaping.py saw Debezium do)."""
    return REDACTED
