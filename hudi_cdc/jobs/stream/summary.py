"""A round's summary: one aggregation over its events (how many, deletes, the newest source event time
and ordering value, the rows holding a value their lake type cannot hold) and the commit metadata made
of it (status reads it)."""

from __future__ import annotations

from hudi_cdc.common.checkpoints import REJECTED_ROWS_KEY
from hudi_cdc.common.lake_types import REJECTS_COLUMN
from hudi_cdc.jobs.stream import keytext
from hudi_cdc.jobs.stream.table import SOURCE_ORDERING_KEY, SOURCE_TS_FIELD, SOURCE_TS_KEY


def summary_columns(events, ordering: list[str], key_parts: list[str] | None = None) -> list:
    """The summary's aggregates; given `key_parts` (a composite record key a bulk insert's row writer cannot
    always write: keytext.parts_to_count), the rows with an empty or NULL part of it too (keytext.EMPTY_PARTS)."""
    from pyspark.sql import functions as F

    aggs = [F.count(F.lit(1)).alias("n")]
    if "_hoodie_is_deleted" in events.columns:
        aggs.append(F.sum(F.when(F.col("_hoodie_is_deleted"), 1).otherwise(0)).alias("deletes"))
    if SOURCE_TS_FIELD in events.columns:
        aggs.append(F.max(SOURCE_TS_FIELD).alias("ts"))
    if len(ordering) == 1:
        aggs.append(F.max(ordering[0]).alias("ord"))
    if REJECTS_COLUMN in events.columns:  # values their lake type cannot hold (typed.py)
        aggs.append(F.count(F.col(REJECTS_COLUMN)).alias("rejected"))
    if key_parts:
        aggs.append(keytext.empty_parts(key_parts))
    return aggs


# a round of at most this many events collects its deletes' keys in its summary pass (no job of their own)
SMALL_ROUND = 10_000
DELETED = "deleted"  # the summary's list of the deletes' keys and ordering values, when asked for
KEYS = "round_keys"  # the summary's list of the round's distinct record key tuples, when asked for


def summarize(events, ordering: list[str], deleted: list[str] | None = None, keys: list[str] | None = None,
              key_parts: list[str] | None = None) -> dict:
    """One pass over the round's events: how many, how many deletes, the newest source event time
    and ordering value (for the commit metadata); given `deleted` (column names), the deletes' values
    of those columns too, as dicts under DELETED (what a collect of them would give, in no set order);
    given `keys` (the record key fields), the events' distinct key tuples under KEYS (what the driver's
    lookup of stored rows asks for: driver_lookup.py)."""
    from pyspark.sql import functions as F

    aggs = summary_columns(events, ordering, key_parts)
    if deleted is not None:
        aggs.append(F.collect_list(F.when(F.col("_hoodie_is_deleted"), F.struct(*deleted))).alias(DELETED))
    if keys:
        aggs.append(F.collect_set(F.struct(*keys)).alias(KEYS))
    out = events.agg(*aggs).first().asDict()
    if deleted is not None:
        out[DELETED] = [r.asDict() for r in out[DELETED]]
    if keys:
        out[KEYS] = [tuple(r) for r in out[KEYS]]  # a binary key's bytearray is no set member
    return out


def source_position(row: dict) -> dict[str, str]:
    """The commit metadata of a round's newest source event time and ordering value."""
    out = {}
    if row.get("ts") is not None:
        out[SOURCE_TS_KEY] = str(int(row["ts"]))
    if row.get("ord") is not None:
        out[SOURCE_ORDERING_KEY] = str(row["ord"])
    if row.get("rejected"):
        out[REJECTED_ROWS_KEY] = str(int(row["rejected"]))
    return out


def rejected_rows(summary: dict, table: str, log) -> int:
    """How many of the round's rows hold a value their lake type cannot hold (one log line when any)."""
    n = int(summary.get("rejected") or 0)
    if n:
        log(f"{table}: {n} row(s) hold a value their lake type cannot hold: the typed column is NULL, the exact "
            f"source value is in {REJECTS_COLUMN} (docs/types.md)")
    return n
