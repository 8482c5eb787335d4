"""Inspect a Hudi table without a JVM: timeline, commits, write amplification, compactions,
file slices and schema, read with hudi-rs (the `hudi` package) plus the timeline's own file names.

Every function takes a :class:`~hudi_cdc.lake.table.Table` from :func:`open_table` and returns
plain data (lists of dicts), so the CLI only formats and tests assert on values.
"""

from hudi_cdc.common.instants import Instant
from hudi_cdc.inspect.commits import commit_rows
from hudi_cdc.inspect.compactions import compaction_rows
from hudi_cdc.inspect.files import file_slice_rows
from hudi_cdc.inspect.schema import schema_info
from hudi_cdc.inspect.stats import file_size_stats, write_amplification
from hudi_cdc.lake.table import SUPPORTED_VERSIONS, Table, open_table
from hudi_cdc.lake.timeline import read_timeline

__all__ = [
    "SUPPORTED_VERSIONS", "Instant", "Table", "commit_rows", "compaction_rows", "file_size_stats",
    "file_slice_rows", "open_table", "read_timeline", "schema_info", "write_amplification",
]
