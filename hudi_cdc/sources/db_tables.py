"""A source table as `init --from-database` reads it (postgres/init.py, mysql/init.py; init.py writes the
entries): its columns, key and what the pipeline file's entry says about it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class UniqueIndex:
    name: str
    columns: tuple[str, ...]


GENERATED_NOTE = ("generated column(s): PostgreSQL's logical decoding does not send them, so their streamed values "
                  "would land as NULL")
CANDIDATE_TYPES = ("text", "character varying", "character", "date", "boolean", "smallint", "integer")


@dataclass
class DbTable:
    schema: str
    table: str
    columns: list[tuple[str, str]]  # (name, type as format_type shows it)
    primary_key: list[str]
    replica_identity: str  # d default, f full, i index, n nothing
    unique_index: UniqueIndex | None = None  # without a primary key: a unique index USING INDEX can name
    identity_index: str | None = None  # the index of REPLICA IDENTITY USING INDEX, when set
    # a MySQL-family table: what its first comment says instead of the replica identity, and the fix
    # a table keyed by a unique index needs before capture
    note: str | None = None
    key_fix: str | None = None
    uncapturable: str | None = None  # why Debezium cannot capture the table (init leaves it out, saying so)
    # columns change events never carry (PostgreSQL's generated columns: postgres/catalog.py): init excludes them
    generated: list[str] = field(default_factory=list)
    candidate_types: tuple[str, ...] = CANDIDATE_TYPES

    @property
    def key(self) -> list[str]:
        """The record key: the primary key, else the unique index's columns."""
        return self.primary_key or (list(self.unique_index.columns) if self.unique_index else [])

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def candidates(self) -> list[str]:
        return [n for n, t in self.columns if n not in self.key and n not in self.generated
                and t.split("(")[0] in self.candidate_types]
