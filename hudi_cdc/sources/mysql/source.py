"""The MySQL family as a Source (base.Source): Debezium's binlog connectors for MySQL, Aurora MySQL
(kind mysql) and MariaDB (kind mariadb), one class for both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.sources.base import UNWRAP, Check, Progress, SnapshotSignals, good_copy, offsets_file, work_dir
from hudi_cdc.sources.comparison import VerifyResult
from hudi_cdc.sources.db_tables import DbTable
from hudi_cdc.sources.mysql import binlog, catalog, check, connector, defaults, init, tablelife, verify
from hudi_cdc.sources.mysql.signals import BinlogSignals
from hudi_cdc.sources.mysql.signals import properties as signal_properties
from hudi_cdc.sources.tables import SourceTable


class MySqlFamily:
    transaction_boundaries = True  # BEGIN/END records (binlog.engine_properties): files cut at commits
    seed_sink = False  # seed 004: the MySQL connector alone (Redshift reads MSK)
    toast_placeholders = False  # the binlog's full row image carries every value
    special_values: str | None = "zero_dates"  # zero dates: NULL, a default or the epoch in the events
    unknown_type_text = False
    not_null_rewrites = True  # MODIFY ... NOT NULL fills NULLs in with no row events (capture/fieldtypes.py)
    omitted_arrays = False

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.signals: SnapshotSignals | None = BinlogSignals()  # `capture snapshot` (sources/mysql/signals.py)

    def engine_properties(self, pipeline: Pipeline, password: str | None) -> dict[str, str]:
        return {**binlog.engine_properties(pipeline, password, work_dir(pipeline), offsets_file(pipeline), UNWRAP),
                **signal_properties(pipeline)}  # incremental snapshots (`capture snapshot`, signals.py)

    def capture_part(self, pipeline: Pipeline, run_id: str) -> binlog.BinlogCapture:
        return binlog.BinlogCapture(pipeline, work_dir(pipeline), offsets_file(pipeline))

    def drop_state(self, pipeline: Pipeline, progress: Progress) -> dict[str, bool]:
        return binlog.drop_state(pipeline, work_dir(pipeline), offsets_file(pipeline), good_copy(pipeline), progress)

    def publication_gaps(self, pipeline: Pipeline) -> tuple[list[str], list[str]]:
        return tablelife.gaps(pipeline, binlog.history_file(pipeline, work_dir(pipeline)))  # the schema history

    def uncapturable(self, pipeline: Pipeline) -> dict[str, str]:
        return tablelife.uncapturable(pipeline)

    def layout_changes(self, pipeline: Pipeline) -> list[str]:
        return []  # not looked at (ALTER TABLE ... EXCHANGE PARTITION writes no row events either)

    def lookup_connection(self, pipeline: Pipeline) -> Callable[[], Any] | None:
        return lambda: binlog.connect(pipeline)  # zero dates (capture/zerodates.py)

    def added_defaults(self, pipeline: Pipeline, table: SourceTable, columns: list[str]) -> list[str]:
        return defaults.added_defaults(pipeline, table, columns)

    def check(self, pipeline: Pipeline, tables: list[SourceTable]) -> list[Check]:
        return check.source_check(pipeline, tables)

    def default_schemas(self, db: DatabaseSettings) -> list[str]:
        return [db.name]  # the schemas are databases

    def read_tables(self, db: DatabaseSettings, password: str | None, schemas: list[str],
                    only: list[str] | None) -> list[DbTable]:
        return init.read_tables(db, password, schemas, only)

    def table_names(self, pipeline: Pipeline) -> list[str]:
        return catalog.table_names(pipeline)  # a route's pattern: every <database>.<table> of the server

    def verify(self, pipeline: Pipeline, table: str, table_type: str, samples: int, history: bool = False
               ) -> VerifyResult:
        return verify.verify(pipeline, table, table_type, samples, history)

    def connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        return connector.source_connector(pipeline, converters)

    def seed_connector(self, pipeline: Pipeline, converters: dict[str, str]) -> dict[str, Any]:
        return connector.seed_source_connector(pipeline)  # JSON with schemas, whatever the registry

    def connector_notes(self, pipeline: Pipeline) -> list[str]:
        return connector.ordering_notes(pipeline)
