"""The commands' entry to what differs per source kind (source.database.kind): `source check` and
`verify` of PostgreSQL (check.py, verify.py) or of MySQL-family servers (check_mysql.py, verify_mysql.py).
capture itself picks its per-kind part in capture.source_kind."""

from __future__ import annotations

from hudi_cdc.capture import source as src
from hudi_cdc.capture.check import Check
from hudi_cdc.capture.verify import SAMPLES, VerifyResult
from hudi_cdc.config import Pipeline


def _binlog(pipeline: Pipeline) -> bool:
    return src.database(pipeline).kind != "postgresql"


def source_check(pipeline: Pipeline, table: str | None = None) -> list[Check]:
    if pipeline.source.database is not None and _binlog(pipeline):
        from hudi_cdc.capture import check_mysql

        tables = src.source_tables(pipeline)
        if table is not None:
            pipeline.table(table)  # unknown table -> ConfigError
            tables = [t for t in tables if t.name == table]
        return check_mysql.source_check(pipeline, tables)
    from hudi_cdc.capture.check import source_check as postgres_check

    return postgres_check(pipeline, table)


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES) -> VerifyResult:
    if _binlog(pipeline):
        from hudi_cdc.capture import verify_mysql

        return verify_mysql.verify(pipeline, table, table_type, samples)
    from hudi_cdc.capture.verify import verify as postgres_verify

    return postgres_verify(pipeline, table, table_type, samples)
