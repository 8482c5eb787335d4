"""Routing (docs/shaping.md#routing): one lake table fed by several source tables (shards), each landing
under its own topic folder as any table does (``<landing root>/<prefix>.<schema>.<table>/partition=<n>``).
The streamer reads every shard's folder in one round, oldest file first across them, with one checkpoint
(jobs/stream/files.py), and adds the column naming each row's shard (``column``, ``<schema>.<table>``) from
the folder a file lies in; when the shards' keys can overlap the column joins the record key.

Stdlib only (the job's kernel). The spec travels to the job as JSON in the table's properties (ROUTE_KEY).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

ROUTE_KEY = "hoodie.streamer.hudi_cdc.route"
DEFAULT_COLUMN = "__source_table"


@dataclass(frozen=True)
class Route:
    """A routed table's shards as topic folder names: the explicit topics, or a pattern they match."""

    prefix: str  # the pipeline's topic prefix
    topics: tuple[str, ...] = ()  # <prefix>.<schema>.<table> of every listed shard
    pattern: str | None = None  # a regex over <schema>.<table> (whole match)
    column: str = DEFAULT_COLUMN

    def matches(self, topic: str) -> bool:
        """Is this topic folder one of the table's shards?"""
        if self.pattern is None:
            return topic in self.topics
        head = self.prefix + "."
        return topic.startswith(head) and re.fullmatch(self.pattern, topic[len(head):]) is not None

    def source_of(self, topic: str) -> str:
        """The shard's <schema>.<table> (what the source column holds) from its topic folder's name."""
        return topic[len(self.prefix) + 1:]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | None) -> Route | None:
        if not text:
            return None
        d = json.loads(text)
        return cls(prefix=d["prefix"], topics=tuple(d.get("topics", ())), pattern=d.get("pattern"),
                   column=d.get("column", DEFAULT_COLUMN))
