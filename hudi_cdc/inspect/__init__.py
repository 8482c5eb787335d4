"""Inspect a Hudi table without a JVM: timeline, commits, write amplification, compactions,
file slices and schema, read with hudi-rs (the `hudi` package) plus the timeline's own file names.

Every function takes a :class:`~hudi_cdc.inspect.table.Table` from :func:`open_table` and returns
plain data (lists of dicts), so the CLI only formats and tests assert on values.
"""

from ..instants import Instant
from .commits import commit_rows
from .compactions import compaction_rows
from .files import file_slice_rows
from .schema import schema_info
from .stats import file_size_stats, write_amplification
from .table import SUPPORTED_VERSIONS, Table, open_table
from .timeline import read_timeline

__all__ = [
    "SUPPORTED_VERSIONS", "Instant", "Table", "commit_rows", "compaction_rows", "file_size_stats",
    "file_slice_rows", "open_table", "read_timeline", "schema_info", "write_amplification",
]
