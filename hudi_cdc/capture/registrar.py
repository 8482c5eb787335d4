"""The registry follows the source's schema changes: when `source.schema_registry` is set, capture
registers each table's newest landed schema under `<topic>-value` as soon as new files of that table
have landed (an identical schema makes no new version), as the Kafka Connect converter does with
auto-register. A schema change (ALTER TABLE) thus becomes a new registry version with no manual
step; the streamer, which reads every file with the registry's latest schema, sees the new columns.

Registration failures (an incompatible change under the subject's rule, the registry down) fail the
capture in one line after its files landed (they stay; `hudi-cdc schemas register` retries)."""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc.capture.landing import Landing
from hudi_cdc.common.s3 import is_s3
from hudi_cdc.config import Pipeline


class Registrar:
    def __init__(self, pipeline: Pipeline, table_of_topic: dict[str, str], progress: Callable[[str], None]):
        self.pipeline = pipeline
        self.table_of_topic = table_of_topic
        self.progress = progress
        self.seen: dict[str, int] = {}  # topic -> landed files already registered
        self.enabled = bool(pipeline.source.schema_registry) and not is_s3(pipeline.source_root)

    def after_landing(self, landing: Landing) -> list[dict]:
        """Register the tables with files landed since the last call; returns the registry's rows."""
        if not self.enabled:
            return []
        grown = [t for t, st in landing.stats.items() if len(st.files) > self.seen.get(t, 0)]
        if not grown:
            return []
        from hudi_cdc.registry.client import RegistryClient
        from hudi_cdc.registry.register import register_pipeline

        with RegistryClient.from_pipeline(self.pipeline) as client:
            rows = register_pipeline(client, self.pipeline, tables=[self.table_of_topic[t] for t in grown])
        for t in grown:
            self.seen[t] = len(landing.stats[t].files)
        for row in rows:
            self.progress(f"registry: {row['subject']} at version {row['version']}")
        return rows
