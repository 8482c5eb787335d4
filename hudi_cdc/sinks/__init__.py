"""Other CDC sinks from the same pipeline file: SQL for Trino/Starburst and Spark (Iceberg MERGE),
Redshift (streaming MV + staged merge procedure) and Athena (latest-state view over the raw files).

One interface (base.Sink): render(pipeline, table) -> list[Statement]. The `seed` flavour
reproduces the statements of the seed recipes (seeds 000/002, 004, 001) for comparison.
"""

from __future__ import annotations

from hudi_cdc.sinks.base import ENGINES, Sink, Statement, render_sql, sink_for

__all__ = ["ENGINES", "Sink", "Statement", "render_sql", "sink_for"]
