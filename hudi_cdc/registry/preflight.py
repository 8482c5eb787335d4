"""Before a local job starts Spark: every table's registry subject can be read, so refused
credentials (401/403), a missing subject or a registry that is down end the command in one line
(exit 7) in a second, not after a JVM start. The job checks again each round (a continuous stream
outlives a registry restart: jobs/stream/schema_registry.py, supervise.py)."""

from __future__ import annotations

from collections.abc import Iterable

from hudi_cdc.registry.client import RegistryClient
from hudi_cdc.registry.register import subject_for


def check_subjects(pipeline, tables: Iterable[str]) -> None:
    if not pipeline.source.schema_registry:
        return
    with RegistryClient.from_pipeline(pipeline, retries=1) as client:
        for table in dict.fromkeys(tables):
            client.get(subject_for(pipeline, table))
