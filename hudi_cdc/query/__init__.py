"""Time travel, record history and incremental reads over Hudi tables, through PySpark (an
existing SparkSession) or hudi-rs (no JVM). See :mod:`hudi_cdc.query.api`."""

from hudi_cdc.query.api import (
                  AsOf,
                  Changes,
                  History,
                  as_of,
                  as_of_dataframe,
                  changes,
                  changes_dataframe,
                  engine_for,
                  history,
                  table_for,
)
from hudi_cdc.query.errors import BadKeyError, BadTimeError, BeforeFirstCommitError, NativeUnsupported, UnknownKeyError
from hudi_cdc.query.timeline import Commit, QueryTable, Range, open_query_table

__all__ = [
    "AsOf", "BadKeyError", "BadTimeError", "BeforeFirstCommitError", "Changes", "Commit", "History",
    "NativeUnsupported", "QueryTable", "Range", "UnknownKeyError", "as_of", "as_of_dataframe", "changes",
    "changes_dataframe", "engine_for", "history", "open_query_table", "table_for",
]
