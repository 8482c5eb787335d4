"""What `hudi-cdc schemas ...` does with the registry beyond registry.py's calls: the client for a
pipeline (or an explicit URL), one subject with its versions, every subject marked as ours or not,
and a failed check as an error."""

from __future__ import annotations

from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.registry import IncompatibleSchema, RegistryClient, SchemaVersion, credentials, subject_for


def client_for(pipeline: Pipeline, registry_url: str | None) -> RegistryClient:
    if registry_url:
        return RegistryClient(registry_url, auth=credentials(pipeline))
    return RegistryClient.from_pipeline(pipeline)


def subject_of(pipeline: Pipeline, table_or_subject: str) -> str:
    """A pipeline table's <topic>-value subject, or the name itself."""
    return subject_for(pipeline, table_or_subject) if table_or_subject in pipeline.tables else table_or_subject


def show(client: RegistryClient, subject: str, version: str) -> tuple[SchemaVersion, list[int], str]:
    """(the schema version, every version of the subject, its URL)."""
    sv = client.get(subject, version)
    return sv, client.versions(subject), client.subject_url(subject, sv.version)


def listing(client: RegistryClient, pipeline: Pipeline) -> list[dict[str, Any]]:
    ours = {subject_for(pipeline, t): t for t in pipeline.tables}
    return [{"subject": s, "versions": ",".join(str(v) for v in client.versions(s)), "table": ours.get(s, "")}
            for s in sorted(client.subjects())]


def raise_if_incompatible(rows: list[dict[str, Any]]) -> None:
    bad = [r["subject"] for r in rows if not r["compatible"]]
    if bad:
        raise IncompatibleSchema(f"incompatible with the registered schema: {', '.join(bad)}", status=409)
