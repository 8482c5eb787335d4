"""How a round is written to a MoR table so that hudi-rs can read every delete block."""

from __future__ import annotations


def delete_block_safe_parts(df, table_type: str) -> list:
    """The DataFrames to write, in order, so that every MoR delete block holds ordering values of
    one type, which hudi-rs (the `hudi` package, 0.5.0) requires ("Delete block mixes ordering
    types"). In one upsert, Hudi's global index writes the delete that moves a row out of its old
    partition with the default ordering value (int 0), while a key-only delete carries the event's
    ordering value (long for an LSN); both land in the old file group's delete block. Written as
    two commits, non-deletes first, each delete block is of one type. CoW has no delete blocks.
    Empty parts are left out; an empty round is one empty write (a commit carrying the checkpoint)."""
    from pyspark.sql import functions as F

    if table_type != "MERGE_ON_READ" or "_hoodie_is_deleted" not in df.columns:
        return [df]
    is_del = F.coalesce(F.col("_hoodie_is_deleted"), F.lit(False))
    parts = [p for p in (df.where(~is_del), df.where(is_del)) if not p.isEmpty()]
    return parts or [df]
