"""A wide table's small round computes a frame once (a local checkpoint) where several actions read it.

Every Spark action analyzes, optimizes, plans and compiles the whole plan beneath it. On a table of a few hundred
columns that work, not the rows, is what a small round costs: 5 updates of a 301-column PostgreSQL table took
45-60 s a round (read 26-31 s, locate 12-14 s), the driver's py4j thread busy in Catalyst over projections of 300
expressions, once per action (docs/measurements.md). A local checkpoint makes a frame a leaf of its computed rows,
so the actions after it plan only what is above it: the same round took 26-39 s, locate 4 s. On a narrow table the
checkpoint's own job costs more than it saves (a 10-column table's round ~1 s slower), so only a frame of more than
WIDE columns is checkpointed, and only in a small round (small_session.is_small), whose rows the block manager
holds many times over. The rows stay there (memory, then disk) until the round releases them.

stdlib + pyspark only (the Spark job imports it).
"""

from __future__ import annotations

# Spark's own line for a wide plan (`spark.sql.codegen.maxFields`: whole-stage code generation stops above it)
WIDE = 100


class Held:
    """The frames a round checkpointed, released at its end; `enabled`: a small round (`once` computes its wide
    frames)."""

    def __init__(self, enabled: bool = False):
        self.enabled = enabled
        self._frames: list = []

    def once(self, df):
        """`df` computed now and kept, when it is a wide frame of a small round; else `df` itself."""
        if not self.enabled or len(df.columns) <= WIDE:
            return df
        return self.checkpoint(df, eager=True)

    def checkpoint(self, df, eager: bool = False):
        """`df` kept once computed (now when `eager`, else by its first action), whatever the round's size."""
        out = df.localCheckpoint(eager=eager)
        self._frames.append(out)
        return out

    def once_or_cache(self, df):
        """`df` computed now and kept (once), else marked for Spark's cache (computed by its first action)."""
        out = self.once(df)
        return out if out is not df else df.cache()

    def release(self) -> None:
        """The kept rows freed (each checkpoint's plan is the leaf holding the RDD of its rows)."""
        for frame in self._frames:
            frame._jdf.queryExecution().logical().rdd().unpersist(False)
        self._frames.clear()
