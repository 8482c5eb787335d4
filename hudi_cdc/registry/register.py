"""A pipeline's tables in the registry: each table's value schema under `<topic>-value`."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import ConfigError
from hudi_cdc.registry.client import RegistryClient
from hudi_cdc.registry.errors import IncompatibleSchema
from hudi_cdc.registry.schemas import schema_from_avsc, schema_from_landed


def subject_for(pipeline, table: str) -> str:
    return f"{kafka_topic(pipeline.table(table).topic)}-value"  # the Kafka topic's (config/topic.py)


def _schemas_to_use(pipeline, tables: Sequence[str] | None,
                    avsc: str | Path | None) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(table, subject, schema) for each table: from the .avsc, or the newest landed file."""
    names = list(tables) if tables else list(pipeline.tables)
    if avsc and len(names) != 1:
        raise ConfigError("--avsc needs exactly one --table")
    for name in names:
        schema = schema_from_avsc(avsc) if avsc else schema_from_landed(pipeline, name)
        yield name, subject_for(pipeline, name), schema


def register_pipeline(client: RegistryClient, pipeline, tables: Sequence[str] | None = None,
                      avsc: str | Path | None = None, compatibility: str | None = "BACKWARD",
                      check_first: bool = True) -> list[dict[str, Any]]:
    """Register each table's value schema under <topic>-value; returns one row per subject."""
    rows = []
    for name, subject, schema in _schemas_to_use(pipeline, tables, avsc):
        if check_first and client.exists(subject):
            result = client.check(subject, schema)
            if not result.is_compatible:
                why = f": {'; '.join(result.messages)}" if result.messages else ""
                raise IncompatibleSchema(f"register {subject!r}: the schema is incompatible with the latest "
                                         f"registered version under rule {client.compatibility(subject) or '?'}{why}; "
                                         "nothing was registered", status=409, url=client.subject_url(subject))
        sid = client.register(subject, schema, compatibility)
        latest = client.get(subject)
        rows.append({"table": name, "subject": subject, "id": sid, "version": latest.version,
                     "url": client.subject_url(subject)})
    return rows


def check_pipeline(client: RegistryClient, pipeline, tables: Sequence[str] | None = None,
                   avsc: str | Path | None = None) -> list[dict[str, Any]]:
    rows = []
    for name, subject, schema in _schemas_to_use(pipeline, tables, avsc):
        if not client.exists(subject):
            rows.append({"table": name, "subject": subject, "compatible": True,
                         "messages": "not registered yet: the first version will be this schema"})
            continue
        result = client.check(subject, schema)
        rows.append({"table": name, "subject": subject, "compatible": result.is_compatible,
                     "messages": "; ".join(result.messages)})
    return rows
