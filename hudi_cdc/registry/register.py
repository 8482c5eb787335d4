"""A pipeline's tables in the registry: each table's value schema under `<topic>-value`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import ConfigError, HudiCdcError, TablesFailed
from hudi_cdc.registry.client import RegistryClient
from hudi_cdc.registry.errors import Forbidden, IncompatibleSchema, RegistryUnavailable, Unauthorized
from hudi_cdc.registry.schemas import schema_from_avsc, schema_from_landed


def subject_for(pipeline, table: str) -> str:
    return f"{kafka_topic(pipeline.table(table).topic)}-value"  # the Kafka topic's (config/topic.py)


def _names(pipeline, tables: Sequence[str] | None, avsc: str | Path | None) -> list[str]:
    names = list(tables) if tables else list(pipeline.tables)
    if avsc and len(names) != 1:
        raise ConfigError("--avsc needs exactly one --table")
    return names


def _each_table(label: str, pipeline, tables: Sequence[str] | None, avsc: str | Path | None,
                one: Callable[[str, str, dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """`one(table, subject, schema)` for each table (its schema from the .avsc, or its newest landed file). A
    table's own failure (nothing landed yet, an incompatible schema) does not stop the others: TablesFailed names
    each at the end. The registry down or refusing the credentials stops the command at once (no table can go)."""
    names = _names(pipeline, tables, avsc)
    rows: list[dict[str, Any]] = []
    failed: list[tuple[str, str, HudiCdcError]] = []
    for name in names:
        subject = subject_for(pipeline, name)
        try:
            schema = schema_from_avsc(avsc) if avsc else schema_from_landed(pipeline, name)
            rows.append(one(name, subject, schema))
        except (RegistryUnavailable, Unauthorized, Forbidden):
            raise
        except HudiCdcError as exc:
            failed.append((name, subject, exc))
    if failed:
        raise TablesFailed(label, failed, rows, len(names))
    return rows


def register_pipeline(client: RegistryClient, pipeline, tables: Sequence[str] | None = None,
                      avsc: str | Path | None = None, compatibility: str | None = "BACKWARD",
                      check_first: bool = True) -> list[dict[str, Any]]:
    """Register each table's value schema under <topic>-value; returns one row per subject."""

    def one(name: str, subject: str, schema: dict[str, Any]) -> dict[str, Any]:
        if check_first and client.exists(subject):
            result = client.check(subject, schema)
            if not result.is_compatible:
                why = f": {'; '.join(result.messages)}" if result.messages else ""
                raise IncompatibleSchema(f"register {subject!r}: the schema is incompatible with the latest "
                                         f"registered version under rule {client.compatibility(subject) or '?'}{why}; "
                                         "nothing was registered", status=409, url=client.subject_url(subject))
        sid = client.register(subject, schema, compatibility)
        latest = client.get(subject)
        return {"table": name, "subject": subject, "id": sid, "version": latest.version,
                "url": client.subject_url(subject)}

    return _each_table("schemas register", pipeline, tables, avsc, one)


def check_pipeline(client: RegistryClient, pipeline, tables: Sequence[str] | None = None,
                   avsc: str | Path | None = None) -> list[dict[str, Any]]:
    def one(name: str, subject: str, schema: dict[str, Any]) -> dict[str, Any]:
        if not client.exists(subject):
            return {"table": name, "subject": subject, "compatible": True,
                    "messages": "not registered yet: the first version will be this schema"}
        result = client.check(subject, schema)
        return {"table": name, "subject": subject, "compatible": result.is_compatible,
                "messages": "; ".join(result.messages)}

    return _each_table("schemas check", pipeline, tables, avsc, one)
