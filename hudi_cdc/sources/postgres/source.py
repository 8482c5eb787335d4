"""PostgreSQL as a Source (base.Source): logical decoding (pgoutput) on the pipeline's slot and publication."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.sources.base import Check, Progress, SnapshotSignals
from hudi_cdc.sources.comparison import VerifyResult
from hudi_cdc.sources.db_tables import DbTable
from hudi_cdc.sources.postgres import check, connector, defaults, engine, init, routed, verify
from hudi_cdc.sources.postgres.capture import PostgresCapture
from hudi_cdc.sources.postgres.signals import PostgresSignals
from hudi_cdc.sources.tables import SourceTable


class PostgresSource:
    kind = "postgresql"
    transaction_boundaries = True  # BEGIN/END records (engine.TXN_PROPERTIES): files cut at commits
    seed_sink = True  # seed 001: the source and the S3 sink connector
    toast_placeholders = True  # unchanged TOASTed values (REPLICA IDENTITY DEFAULT): capture/oldkey.py
    special_values: str | None = "numerics"  # numeric NaN/Infinity: Debezium sends NULL, the database has them
    unknown_type_text = True  # Debezium sends such columns as bytes
    not_null_rewrites = False  # SET NOT NULL refuses a table with NULLs (capture/fieldtypes.py)
    omitted_arrays = True  # interval[] and money[]: Debezium leaves them out of the events

    def __init__(self) -> None:
        self.signals: SnapshotSignals | None = PostgresSignals()  # `capture snapshot`

    def engine_properties(self, pipeline: Pipeline, password: str | None) -> dict[str, str]:
        return engine.engine_properties(pipeline, password)

    def capture_part(self, pipeline: Pipeline, run_id: str) -> PostgresCapture:
        return PostgresCapture(pipeline, run_id)

    def drop_state(self, pipeline: Pipeline, progress: Progress) -> dict[str, bool]:
        return engine.drop_state(pipeline, progress)

    def publication_gaps(self, pipeline: Pipeline) -> tuple[list[str], list[str]]:
        from hudi_cdc.sources.postgres import db

        return db.publication_gaps(pipeline)

    def uncapturable(self, pipeline: Pipeline) -> dict[str, str]:
        """Tables whose columns differ only in case (catalog.case_twins); a type Debezium does not know lands as text
        or is read by key (capture/textforms.py, pg_arrays.py)."""
        from hudi_cdc.sources.postgres import db

        return db.case_twin_tables(pipeline)

    def layout_changes(self, pipeline: Pipeline) -> list[str]:
        from hudi_cdc.sources.base import work_dir
        from hudi_cdc.sources.postgres import partitions

        return partitions.changes(pipeline, work_dir(pipeline) / f"partitions-{pipeline.slot_name}.json")

    def lookup_connection(self, pipeline: Pipeline) -> Callable[[], Any] | None:
        from hudi_cdc.sources.postgres import db

        return lambda: db.connect(pipeline)

    def added_defaults(self, pipeline: Pipeline, table: SourceTable, columns: list[str]) -> list[str]:
        return defaults.added_defaults(pipeline, table, columns)

    def check(self, pipeline: Pipeline, tables: list[SourceTable]) -> list[Check]:
        return check.source_check(pipeline, tables)

    def default_schemas(self, db: DatabaseSettings) -> list[str]:
        return ["public"]

    def read_tables(self, db: DatabaseSettings, password: str | None, schemas: list[str],
                    only: list[str] | None) -> list[DbTable]:
        return init.read_tables(db, password, schemas, only)

    def table_names(self, pipeline: Pipeline) -> list[str]:
        return routed.table_names(pipeline)

    def verify(self, pipeline: Pipeline, table: str, table_type: str, samples: int, history: bool = False
               ) -> VerifyResult:
        return verify.verify(pipeline, table, table_type, samples, history)

    def connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        return connector.source_connector(pipeline, converters)

    def seed_connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        return connector.seed_source_connector(pipeline, converters)

    def connector_notes(self, pipeline: Pipeline) -> list[str]:
        return []
