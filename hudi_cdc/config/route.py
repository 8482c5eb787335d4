"""A routed table in the pipeline file (docs/shaping.md#routing): ``route:`` lists the source tables (shards)
that feed one lake table, or gives a pattern they match, validated once at load (one line naming the table
and key). What the streamer applies is hudi_cdc/common/routing.py's Route."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hudi_cdc.common.routing import DEFAULT_COLUMN, Route

_QUALIFIED = re.compile(r"^[^.\s]+\.[^.\s]+$")
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class RouteSettings(BaseModel):
    """The shards of one lake table: ``tables`` (each ``<schema>.<table>``) or ``pattern`` (a regex matching
    the whole ``<schema>.<table>``, resolved against the database by capture and verify)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tables: list[str] = Field(default_factory=list)
    pattern: str | None = None
    # the lake column naming each row's source table (<schema>.<table>)
    source_column: str = DEFAULT_COLUMN
    # the source column joins the record key, so keys that repeat across shards stay apart (Debezium's
    # key.enforce.uniqueness); false only when the shards' keys never overlap (e.g. disjoint id ranges)
    source_in_key: bool = True

    @model_validator(mode="after")
    def _one_form(self) -> RouteSettings:
        if bool(self.tables) == (self.pattern is not None):
            raise ValueError("give tables: [<schema>.<table>, ..] or pattern: '<regex on schema.table>', one of them")
        for name in self.tables:
            if not _QUALIFIED.match(name):
                raise ValueError(f"tables: {name!r} must be <schema>.<table>")
        if len(set(self.tables)) != len(self.tables):
            raise ValueError("tables: a source table is listed twice")
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"pattern: {self.pattern!r} is not a regular expression: {exc}") from None
        return self

    @field_validator("source_column")
    @classmethod
    def _column(cls, v: str) -> str:
        if not _COLUMN.match(v):
            raise ValueError(f"source_column: {v!r} must be letters, digits and _ (a lake column name)")
        return v

    def covers(self, qualified: str) -> bool:
        """Is ``<schema>.<table>`` one of this route's shards?"""
        if self.pattern is not None:
            return re.fullmatch(self.pattern, qualified) is not None
        return qualified in self.tables


def check_route(r: RouteSettings, source_keys: list[str], ordering: list[str], derive: Mapping[str, str],
                masked: Mapping[str, str], types: Mapping[str, str]) -> None:
    """The source column is a new name, never masked or retyped; the shards' own key stays in the key."""
    col = r.source_column
    if col in source_keys or col in ordering:
        raise ValueError(f"route.source_column: {col} is a record key or ordering field of the shards; "
                         "name the source column otherwise")
    if col in derive:
        raise ValueError(f"derive.{col}: the route's source column has this name")
    if col in masked or col in types:
        raise ValueError(f"{'mask' if col in masked else 'types'}.{col}: the route's source column is a string "
                         "naming the shard; it is neither masked nor retyped")


def to_route(r: RouteSettings, topic_prefix: str) -> Route:
    return Route(prefix=topic_prefix, topics=tuple(f"{topic_prefix}.{t}" for t in r.tables), pattern=r.pattern,
                 column=r.source_column)
