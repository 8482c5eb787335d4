"""Open a Hudi table for inspection: check it is one, and one whose version we read."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeVar

from hudi_cdc.common import s3, storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.properties import parse_properties
from hudi_cdc.errors import TableStateError

SUPPORTED_VERSIONS = (6, 8, 9)  # what hudi-rs 0.5 reads
F = TypeVar("F", bound=Callable)


def hudi_rs_errors(func: F) -> F:
    """Turn a hudi-rs error (HudiCoreError) raised while inspecting `table` into one TableStateError line."""

    @functools.wraps(func)
    def wrapper(table, *args, **kwargs):
        try:
            return func(table, *args, **kwargs)
        except Exception as exc:
            if type(exc).__name__ != "HudiCoreError":
                raise
            raise TableStateError(f"{table.uri}: hudi-rs: {first_line(exc)}") from exc

    return wrapper  # type: ignore[return-value]


@dataclass
class Table:
    uri: str
    config: dict[str, str] = field(repr=False)

    @property
    def name(self) -> str:
        return self.config.get("hoodie.table.name", "")

    @property
    def table_type(self) -> str:
        return self.config.get("hoodie.table.type", "COPY_ON_WRITE").upper()

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def version(self) -> int:
        return int(self.config.get("hoodie.table.version", "0"))

    @property
    def layout(self) -> int:
        """Timeline layout: 1 keeps instants in .hoodie/, 2 (table version 8+) in .hoodie/timeline/."""
        return int(self.config.get("hoodie.timeline.layout.version", "2" if self.version >= 8 else "1"))

    @property
    def meta_dir(self) -> str:
        return storage.join(self.uri, ".hoodie")

    @property
    def timeline_dir(self) -> str:
        if self.version >= 8:
            return storage.join(self.meta_dir, self.config.get("hoodie.timeline.path", "timeline"))
        return self.meta_dir

    @cached_property
    def hudi(self):
        """The hudi-rs table (imported on first use)."""
        try:
            return s3.hudi_table_builder(self.uri).build()
        except Exception as exc:  # hudi-rs raises HudiCoreError for everything
            raise TableStateError(f"{self.uri}: hudi-rs cannot open the table: {exc}") from None

    def describe(self) -> dict[str, object]:
        return {"path": self.uri, "name": self.name, "type": self.table_type, "version": self.version}


def open_table(path: str) -> Table:
    """A Table for a base path (local path, file:// or s3:// URI); TableStateError when the path is
    not a Hudi table or its version is one hudi-rs cannot read."""
    uri = storage.normalize(str(path))
    raw = storage.read_bytes(storage.join(uri, ".hoodie", "hoodie.properties"))
    if raw is None:
        raw = storage.read_bytes(storage.join(uri, ".hoodie", "hoodie.properties.backup"))
    if raw is None:
        raise TableStateError(f"{uri} is not a Hudi table (no .hoodie/hoodie.properties)")
    table = Table(uri=uri, config=parse_properties(raw.decode("utf-8", errors="replace")))
    if table.version not in SUPPORTED_VERSIONS:
        found = table.config.get("hoodie.table.version", "missing")
        supported = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
        raise TableStateError(f"{uri}: Hudi table version {found} is not supported (supported: {supported})")
    return table
