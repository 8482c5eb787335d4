"""Which table a command means: --path URI, or a pipeline table (--table NAME [--type cow|mor])."""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc.common.table_types import TYPE_SUFFIX
from hudi_cdc.errors import ConfigError

BY_SUFFIX = {suffix: table_type for table_type, suffix in TYPE_SUFFIX.items()}  # cow -> COPY_ON_WRITE


def table_path(path: str | None, table: str | None, table_type: str | None,
               load_pipeline: Callable) -> str:
    """The base path; the pipeline file is loaded (load_pipeline()) only for --table."""
    if path and table:
        raise ConfigError("pass either --path or --table, not both")
    if path:
        return path
    if not table:
        raise ConfigError("name a table: --path URI, or --table NAME [--type cow|mor]")
    pipeline = load_pipeline()
    types = pipeline.table(table).table_types
    if table_type:
        wanted = BY_SUFFIX[table_type]
        if wanted not in types:
            raise ConfigError(f"table {table!r} has no {table_type} table in {pipeline.source_file}")
    elif len(types) == 1:
        wanted = types[0]
    else:
        raise ConfigError(f"table {table!r} is written as {' and '.join(TYPE_SUFFIX[t] for t in types)}: "
                          "pass --type cow|mor")
    return pipeline.base_path(table, wanted)
