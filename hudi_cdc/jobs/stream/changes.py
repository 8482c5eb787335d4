"""A round's changes, ready to commit (round.py): read and located through Spark (spark_changes.py) or made in
the driver (driver_round.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Changes:
    df: Any  # what is written
    located: Any  # located.Located, or None (Hudi's index locates)
    summary: dict  # summary.py's, the commit metadata's source
    deleted_keys: list[dict]  # the deletes' keys and ordering values (tombstones.py)
    record_keys: list[str]
    ordering: list[str]
    mor_keys: bool = True  # the delta commit's key file is kept (logkeys.py)
    cached: tuple = ()  # frames to unpersist after the write
    every_event: list | None = None  # the history table's events
    floor: list | None = None  # the TRUNCATE floor the round read
    overwrite: bool = False  # a TRUNCATE replaces the table
