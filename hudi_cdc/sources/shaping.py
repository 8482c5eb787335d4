"""Debezium's own column exclusion and masking for the pipeline's shaping (docs/shaping.md), so excluded
and masked values never reach landing storage: the same for every kind (Debezium names a column
``<schema or database>.<table>.<column>``) and for capture's embedded engine and `connectors render`.

- columns.exclude -> ``column.exclude.list``; columns.include -> ``column.include.list`` (Debezium takes
  one of them: with an include list anywhere, the other tables' exclusions become a negative lookahead);
- mask: hash -> ``column.mask.hash.v2.SHA-256.with.salt.<salt>`` (v2: SHA-256 over the salt then the value's
  text, hex: common/shaping.py's mask_hash, what the streamer and verify compute);
- mask: redact -> ``column.mask.with.4.chars``.

The salt is part of a property *name*, which Kafka Connect's config providers cannot fill in: a rendered
connector never carries it (``connector_properties`` refuses a hashed column unless the table's mask_in
is ``streamer``)."""

from __future__ import annotations

import re

from hudi_cdc.common.shaping import REDACT_CHARS
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources.tables import SourceTable, source_tables

HASH_KEY = "column.mask.hash.v2.SHA-256.with.salt."
REDACT_KEY = f"column.mask.with.{REDACT_CHARS}.chars"


def _fq(t: SourceTable, column: str) -> str:
    return re.escape(f"{t.schema}.{t.table}.{column}")


def _column_lists(pipeline: Pipeline, tables: list[SourceTable]) -> dict[str, str]:
    if not any(pipeline.table(t.name).columns for t in tables):
        return {}
    if not any(_included(pipeline, t) for t in tables):
        excluded = [_fq(t, c) for t in tables for c in _excluded(pipeline, t)]
        return {"column.exclude.list": ",".join(excluded)}
    patterns = []
    for t in tables:
        ts = pipeline.table(t.name)
        prefix = re.escape(f"{t.schema}.{t.table}.")
        if ts.columns and ts.columns.include:
            kept = dict.fromkeys([*ts.source_keys, *ts.columns.include])
            patterns += [_fq(t, c) for c in kept]
        elif ts.columns and ts.columns.exclude:
            patterns.append(prefix + "(?!(?:" + "|".join(re.escape(c) for c in ts.columns.exclude) + ")$).+")
        else:
            patterns.append(prefix + ".+")
    return {"column.include.list": ",".join(patterns)}


def _included(pipeline: Pipeline, t: SourceTable) -> list[str]:
    columns = pipeline.table(t.name).columns
    return list(columns.include) if columns else []


def _excluded(pipeline: Pipeline, t: SourceTable) -> list[str]:
    columns = pipeline.table(t.name).columns
    return list(columns.exclude) if columns else []


def debezium_properties(pipeline: Pipeline, tables: list[SourceTable] | None = None,
                        *, rendered: bool = False) -> dict[str, str]:
    """Debezium's exclusion and masking properties for the pipeline's tables: capture's embedded engine
    (the hash salt read from source.mask_salt_env here, when a table hashes in capture), or
    (``rendered``) a Kafka Connect connector, where a hashed column whose mask_in is capture is refused
    (the salt would be written)."""
    tables = tables if tables is not None else source_tables(pipeline)
    props = _column_lists(pipeline, tables)
    hashed, redacted = [], []
    for t in tables:
        ts = pipeline.table(t.name)
        redacted += [_fq(t, c) for c, how in ts.mask.items() if how == "redact"]
        if ts.mask_in == "capture":
            hashed += [_fq(t, c) for c, how in ts.mask.items() if how == "hash"]
    if hashed and rendered:
        name = next(t.name for t in tables if pipeline.table(t.name).mask_in == "capture"
                    and "hash" in pipeline.table(t.name).mask.values())
        raise ConfigError(f"tables.{name}.mask: Kafka Connect cannot take Debezium's hash salt from a config "
                          "provider (it is part of a property name), and hudi-cdc never writes it: capture with "
                          f"`hudi-cdc capture`, or set tables.{name}.mask_in: streamer (the values then land "
                          f"unmasked and the streamer hashes them) ({pipeline.source_file})")
    if hashed:
        salt = pipeline.mask_salt()
        assert salt is not None  # a table hashes: mask_salt raised when the variable is unset
        props[HASH_KEY + salt] = ",".join(hashed)
    if redacted:
        props[REDACT_KEY] = ",".join(redacted)
    return props
