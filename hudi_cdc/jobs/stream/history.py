"""SCD type 2 versions from the change stream (`history: scd2`, docs/history.md): the pure part.

A key's history is the sequence of its events in ordering (LSN) order. An insert or update opens a
version when it follows nothing, a delete, or a version whose visible values differ from its own (an
update that changes nothing a user sees, a redelivery, a TOAST placeholder filled from the stored row
opens none); a delete ends the open version and opens none (no tombstone version: the validity
`WHERE` then reads the same in every engine); a TRUNCATE is a delete, at its LSN, of every key that
has a version open there. A version is valid from its event's LSN up to the next event that opens a
version or deletes (null while current).

The stored versions of the round's keys are turned back into the events they came from (a version:
the event that opened it; an end no version starts at: a delete there) and recomputed with the
round's events, so a redelivered event (its LSN already there) changes nothing, and a late event takes
its place (ranges re-cut). Recomputing is what makes a round idempotent: a rerun after a crash, or a
redelivered file, gives the same versions. The diff against the stored versions is what is written:
new versions, versions whose end changed, and deletes of versions a late event made redundant.

Each version also keeps, for its start and its end, the LSN of the last transaction commit *before*
the change's own transaction (PostgreSQL: Debezium's `source.sequence[0]`, landed as `__sequence`):
transactions stream in commit order, so a cut at commit LSN C holds the version exactly when
`from_prev < C AND (to_prev IS NULL OR to_prev >= C)` (query/consistent_sql.py), even when a transaction
committing after C wrote changes at LSNs below C. Without `__sequence` (an older landing, MySQL) it is
the change's LSN - 1, which makes that the LSN range test.

Spark DataFrames only (no pandas, no UDF): windows over the key ordered by LSN.
"""

from __future__ import annotations

from hudi_cdc.jobs.stream import keyjoin

FROM_LSN = "__valid_from_lsn"
TO_LSN = "__valid_to_lsn"
FROM_TS = "__valid_from_ts"
TO_TS = "__valid_to_ts"
CURRENT = "__is_current"
OP = "__op"
FROM_PREV = "__valid_from_prev_commit_lsn"
TO_PREV = "__valid_to_prev_commit_lsn"
COLUMNS = (FROM_LSN, TO_LSN, FROM_TS, TO_TS, CURRENT, OP, FROM_PREV, TO_PREV)
SEQUENCE = "__sequence"  # Debezium's source.sequence: ["<last commit LSN>", "<LSN>"] (PostgreSQL)
DELETED = "_hoodie_is_deleted"
TRUNCATE_OP = "t"

# the events' working columns
_LSN, _TS, _KIND, _STORED, _SIG, _PREV = "__h_lsn", "__h_ts", "__h_kind", "__h_stored", "__h_sig", "__h_prev"
OPEN, END = "o", "d"


def value_columns(columns: list[str], keys: list[str]) -> list[str]:
    """The row's columns a user sees (capture's `__` columns and Hudi's `_hoodie` ones left out), keys
    first."""
    rest = [c for c in columns if c not in keys and not c.startswith(("__", "_hoodie"))]
    return list(keys) + rest


def _ts(df, ts_field: str | None):
    from pyspark.sql import functions as F

    if ts_field and ts_field in df.columns:
        return F.expr(f"timestamp_millis(CAST(`{ts_field}` AS BIGINT))")
    return F.lit(None).cast("timestamp")


def _prev(df, lsn_field: str):
    """The last commit LSN before the event's transaction: `__sequence`'s first element, else (and for a
    snapshot's row, read at the snapshot's LSN, not in a transaction) LSN - 1."""
    from pyspark.sql import functions as F

    lsn = F.col(lsn_field).cast("long")
    if SEQUENCE not in df.columns:
        return lsn - F.lit(1)
    snapshot = F.col(OP) == "r" if OP in df.columns else F.lit(False)
    seq = F.when(~F.coalesce(snapshot, F.lit(False)), F.get_json_object(F.col(SEQUENCE), "$[0]").cast("long"))
    return F.coalesce(seq, lsn - F.lit(1))


def _stored_col(df, name: str):
    from pyspark.sql import functions as F

    return F.col(name) if name in df.columns else F.lit(None).cast("long")


def round_events(df, keys: list[str], lsn_field: str, ts_field: str | None):
    """The round's row events (truncates left out) in the working shape: keys, values, LSN, time,
    kind (open or end), op."""
    from pyspark.sql import functions as F

    op = F.col(OP) if OP in df.columns else F.lit(None).cast("string")
    rows = df.where(~F.coalesce(op == TRUNCATE_OP, F.lit(False))) if OP in df.columns else df
    deleted = F.coalesce(op == "d", F.lit(False))
    if DELETED in df.columns:
        deleted = deleted | F.coalesce(F.col(DELETED), F.lit(False))
    values = value_columns(df.columns, keys)
    return rows.select(*values, F.col(lsn_field).cast("long").alias(_LSN), _ts(rows, ts_field).alias(_TS),
                       F.when(deleted, F.lit(END)).otherwise(F.lit(OPEN)).alias(_KIND), op.alias(OP),
                       F.lit(False).alias(_STORED), _prev(rows, lsn_field).alias(_PREV))


def truncates(df, lsn_field: str, ts_field: str | None) -> list[tuple]:
    """The round's TRUNCATEs: (LSN, source time, last commit LSN before it) each, oldest first."""
    from pyspark.sql import functions as F

    if OP not in df.columns:
        return []
    rows = df.where(F.col(OP) == TRUNCATE_OP).select(F.col(lsn_field).cast("long"), _ts(df, ts_field),
                                                     _prev(df, lsn_field)).collect()
    return sorted({(int(r[0]), r[1], r[2]) for r in rows}, key=lambda x: x[0])


def stored_events(versions, keys: list[str]):
    """Stored versions back as events: each version's opening event, and a delete at each end."""
    from pyspark.sql import functions as F

    values = value_columns([c for c in versions.columns if c not in COLUMNS], keys)
    opens = versions.select(*values, F.col(FROM_LSN).alias(_LSN), F.col(FROM_TS).alias(_TS),
                            F.lit(OPEN).alias(_KIND), F.col(OP), F.lit(True).alias(_STORED),
                            F.coalesce(_stored_col(versions, FROM_PREV), F.col(FROM_LSN) - 1).alias(_PREV))
    ends = versions.where(F.col(TO_LSN).isNotNull()).select(
        *keys, F.col(TO_LSN).alias(_LSN), F.col(TO_TS).alias(_TS), F.lit(END).alias(_KIND),
        F.lit("d").alias(OP), F.lit(True).alias(_STORED),
        F.coalesce(_stored_col(versions, TO_PREV), F.col(TO_LSN) - 1).alias(_PREV))
    return opens.unionByName(ends, allowMissingColumns=True)


def open_at(versions, lsn: int):
    """A column: the stored version is valid at `lsn` (a TRUNCATE there ends it)."""
    from pyspark.sql import functions as F

    return (F.col(FROM_LSN) < F.lit(lsn)) & (F.col(TO_LSN).isNull() | (F.col(TO_LSN) > F.lit(lsn)))


def truncate_events(keys_df, keys: list[str], at: list[tuple]):
    """A delete at each TRUNCATE (or truncate floor) for every key in `keys_df` (a key with nothing open
    there is unaffected: an end opens nothing); `at`: (LSN, source time[, last commit LSN before it])."""
    from pyspark.sql import functions as F

    out = None
    for lsn, ts, *prev in at:
        before = prev[0] if prev and prev[0] is not None else lsn - 1
        part = keys_df.select(*keys, F.lit(lsn).cast("long").alias(_LSN), F.lit(ts).cast("timestamp").alias(_TS),
                              F.lit(END).alias(_KIND), F.lit(TRUNCATE_OP).alias(OP), F.lit(False).alias(_STORED),
                              F.lit(before).cast("long").alias(_PREV))
        out = part if out is None else out.unionByName(part)
    return out


def versions(events, keys: list[str]):
    """Every key's versions from its events (module docstring): keys, values and the six columns."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    values = [c for c in value_columns(events.columns, keys) if c not in keys]
    if _PREV not in events.columns:
        events = events.withColumn(_PREV, F.col(_LSN) - 1)
    # one event per key and LSN: an open before an end, a stored one before a redelivered one
    first = Window.partitionBy(*keys, _LSN).orderBy((F.col(_KIND) == OPEN).desc(), F.col(_STORED).desc())
    ev = events.withColumn("__h_rn", F.row_number().over(first)).where("__h_rn = 1").drop("__h_rn")
    ev = ev.withColumn(_SIG, F.to_json(F.struct(*[F.col(c) for c in values])) if values else F.lit(""))
    w = Window.partitionBy(*keys).orderBy(_LSN)
    prev_kind, prev_sig = F.lag(_KIND).over(w), F.lag(_SIG).over(w)
    opens = (F.col(_KIND) == OPEN) & (prev_kind.isNull() | (prev_kind == END) | ~prev_sig.eqNullSafe(F.col(_SIG)))
    ev = ev.withColumn("__h_opens", opens)
    after = w.rowsBetween(1, Window.unboundedFollowing)
    boundary = F.col("__h_opens") | (F.col(_KIND) == END)
    ev = ev.withColumn("__h_to", F.min(F.when(boundary, F.struct(F.col(_LSN).alias("l"), F.col(_TS).alias("t"),
                                                                 F.col(_PREV).alias("p")))).over(after))
    return ev.where("__h_opens").select(
        *keys, *values, F.col(_LSN).alias(FROM_LSN), F.col("__h_to.l").alias(TO_LSN), F.col(_TS).alias(FROM_TS),
        F.col("__h_to.t").alias(TO_TS), F.col("__h_to").isNull().alias(CURRENT), F.col(OP),
        F.col(_PREV).alias(FROM_PREV), F.col("__h_to.p").alias(TO_PREV))


WAS_OPEN = "__h_was_open"  # on changes(): the stored version it rewrites or removes was open (not written)


def changes(new, stored, keys: list[str]):
    """What to write: versions new or with another end (`_hoodie_is_deleted` false), and stored versions
    the recomputation no longer has (true); WAS_OPEN on each, for the count of open versions."""
    from pyspark.sql import functions as F

    on = [*keys, FROM_LSN]
    old = stored.select(*on, F.col(TO_LSN).alias("__h_old_to"), F.col(TO_TS).alias("__h_old_to_ts"),
                        _stored_col(stored, FROM_PREV).alias("__h_old_fp"),
                        _stored_col(stored, TO_PREV).alias("__h_old_tp"),
                        F.lit(True).alias("__h_was"))
    joined = keyjoin.join(new, old, on, "left")
    same = (F.coalesce(F.col("__h_was"), F.lit(False)) & F.col("__h_old_to").eqNullSafe(F.col(TO_LSN))
            & F.col("__h_old_to_ts").eqNullSafe(F.col(TO_TS)) & F.col("__h_old_fp").eqNullSafe(F.col(FROM_PREV))
            & F.col("__h_old_tp").eqNullSafe(F.col(TO_PREV)))
    was_open = F.coalesce(F.col("__h_was"), F.lit(False)) & F.col("__h_old_to").isNull()
    upserts = joined.where(~same).withColumn(WAS_OPEN, was_open) \
        .drop("__h_old_to", "__h_old_to_ts", "__h_old_fp", "__h_old_tp", "__h_was").withColumn(DELETED, F.lit(False))
    gone = keyjoin.join(stored, new.select(*on), on, "left_anti") \
        .select(*on, F.lit(True).alias(DELETED), F.col(TO_LSN).isNull().alias(WAS_OPEN))
    return upserts.unionByName(gone, allowMissingColumns=True)
