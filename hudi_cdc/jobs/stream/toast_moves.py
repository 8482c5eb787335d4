"""A key change of a row with unchanged TOASTed values: the value comes from the old key's row.

Debezium sends an UPDATE of a primary key as a delete of the old key and a create of the new one; the
create carries the placeholder for a TOASTed value the UPDATE left alone, and the new key has no
earlier value. Capture lands the old key beside it (``__oldkey_<key field>``, capture/oldkey.py). For
each such event whose placeholder the key's own history did not fill (toast.py's rules 1-2), the value
is the old key's:
- its newest event of the round before this one (by the ordering fields) that is no delete and whose
  value is known (filled already by rules 1-2, or by this rule for a chain of key changes), else
- its stored row (a snapshot read of the old keys only: a MoR table's logs count), when older than
  this event.
What stays unknown is flagged by toast.py (``__rejects``). The ``__oldkey_`` columns never reach the
lake (round.py drops them).

stdlib + pyspark only (the Spark job imports it).
"""

from __future__ import annotations

from hudi_cdc.common.lake_types import OLDKEY_PREFIX
from hudi_cdc.jobs.stream import keyjoin

MAX_CHAIN = 4  # key changes of one row in one round followed back (A -> B -> C ...)


def deleted_condition(df):
    """True on a delete event, from the columns the round has (the transformer's or Debezium's)."""
    from pyspark.sql import functions as F

    if "_hoodie_is_deleted" in df.columns:
        return F.coalesce(F.col("_hoodie_is_deleted").cast("boolean"), F.lit(False))
    if "__deleted" in df.columns:
        return F.coalesce(F.col("__deleted").cast("string") == "true", F.lit(False))
    return F.lit(False)


def _order(cols: list[str]):
    from pyspark.sql import functions as F

    return F.struct(*[F.col(c).alias(f"o{i}") for i, c in enumerate(cols)])


def need_condition(df, keys: list[str], ordering: list[str], cols: list[str], unknown: str):
    """True on an event whose placeholder is still unknown and that has an old key; None when the round
    has no old key (no key change carried a placeholder) or no ordering."""
    from pyspark.sql import functions as F

    old = [OLDKEY_PREFIX + k for k in keys]
    if not ordering or not cols or any(o not in df.columns for o in old):
        return None
    need = F.lit(False)
    for c in cols:
        need = need | F.col(unknown + c)
    for o in old:
        need = need & F.col(o).isNotNull()
    return need


def fill_from_old_key(spark, df, need, keys: list[str], ordering: list[str], cols: list[str], base_path: str | None,
                      unknown: str, held, driver: bool = False, log=None):
    """`df` (every placeholder column filled where known, `<unknown><col>` true where not) with the old
    key's value taken where capture landed one; and the unknown placeholders left per column. Only for
    a round with such events: its events so far are checkpointed once per step of a chain (few steps,
    no lineage growing with them), kept until the round releases `held` (materialize.Held). `driver`: a small
    round, whose old keys' stored rows may be read once in the driver (driver_values.py)."""
    from pyspark.sql import functions as F

    df = held.checkpoint(df)
    old = [OLDKEY_PREFIX + k for k in keys]
    # every step's old keys are among the first step's: their stored rows read once, when in the driver
    stored = _stored_in_driver(spark, df, need, keys, old, ordering, cols, base_path, log) \
        if driver and base_path is not None else None
    left = -1
    for _ in range(MAX_CHAIN):
        found = _old_key_values(spark, df, need, keys, old, ordering, cols, base_path, unknown, stored)
        on = keyjoin.equal(keys, right="__m_")
        for i, o in enumerate(ordering):
            on = on & F.col(o).eqNullSafe(F.col(f"__mo{i}"))
        joined = df.join(found, on, "left")
        out = []
        for c in df.columns:
            if c in cols:
                take = F.col(unknown + c) & F.col(f"__mk_{c}")
                out.append(F.when(take, F.col(f"__mv_{c}")).otherwise(F.col(c)).alias(c))
            elif c.startswith(unknown) and c[len(unknown):] in cols:
                name = c[len(unknown):]
                out.append((F.col(c) & ~F.coalesce(F.col(f"__mk_{name}"), F.lit(False))).alias(c))
            else:
                out.append(F.col(c))
        df = held.checkpoint(joined.select(*out))
        still = df.where(need).count()
        if still in (0, left):
            break  # all known, or nothing more is (a chain whose start is unknown)
        left = still
    counts = df.agg(*[F.sum(F.col(unknown + c).cast("int")).alias(c) for c in cols]).first().asDict()
    return df, counts


def _stored_in_driver(spark, df, need, keys, old, ordering, cols, base_path, log):
    """The stored rows of the old keys of the events that need them, read in the driver (driver_values.py), as
    (rows as `__s_<column>`, the placeholder columns the table has); None when they are not read there."""
    from hudi_cdc.jobs.stream import driver_values

    rows = df.where(need).select(*old).distinct().limit(driver_values.MAX_KEYS + 1).collect()
    types = {f.name: f.dataType for f in df.schema}
    got = driver_values.placeholder_rows(spark, base_path, keys, ordering, cols, types, rows, log, every_ordering=True)
    return (got[0], got[1]) if got is not None else None


def _old_key_values(spark, df, need, keys, old, ordering, cols, base_path, unknown, pre=None):
    """Per event that needs it (its keys as __m_<k>, its ordering as __mo<i>): for each column,
    __mk_<c> (a value was found) and __mv_<c> (the value). `pre`: the old keys' stored rows read already
    (_stored_in_driver)."""
    from pyspark.sql import functions as F

    moved = df.where(need).select(*[F.col(k).alias(f"__m_{k}") for k in keys],
                                  *[F.col(o).alias(f"__ok_{k}") for o, k in zip(old, keys, strict=True)],
                                  *[F.col(o).alias(f"__mo{i}") for i, o in enumerate(ordering)]).distinct()
    moved_order = _order([f"__mo{i}" for i in range(len(ordering))])
    # the old key's events of the round, no deletes
    cand = df.where(~deleted_condition(df)).select(
        *[F.col(k).alias(f"__ck_{k}") for k in keys], *[F.col(o).alias(f"__co{i}") for i, o in enumerate(ordering)],
        *[F.col(c).alias(f"__cv_{c}") for c in cols], *[F.col(unknown + c).alias(f"__cu_{c}") for c in cols])
    on = None
    for k in keys:
        eq = F.col(f"__ok_{k}") == F.col(f"__ck_{k}")
        on = eq if on is None else on & eq
    cand_order = _order([f"__co{i}" for i in range(len(ordering))])
    on = on & (cand_order < moved_order)
    group = [*[f"__m_{k}" for k in keys], *[f"__ok_{k}" for k in keys], *[f"__mo{i}" for i in range(len(ordering))]]
    aggs = []
    for c in cols:
        known = F.when(~F.col(f"__cu_{c}"), cand_order)
        aggs += [F.max_by(F.col(f"__cv_{c}"), known).alias(f"__rv_{c}"), F.max(known).alias(f"__ro_{c}")]
    in_round = moved.join(cand, on, "left").groupBy(*group).agg(*aggs)
    # the old key's stored row
    if pre is not None:
        stored, stored_cols = pre
        in_round = in_round.join(stored, keyjoin.equal(keys, left="__ok_", right="__s_"), "left")
    elif base_path is not None:
        from hudi_cdc.jobs.stream.redelivery import stored_for_round

        table_cols = set(spark.read.format("hudi").load(base_path).columns)
        stored_cols = [c for c in cols if c in table_cols]
        ord_cols = [o for o in ordering if o in table_cols]
        if len(ord_cols) == len(ordering):
            old_keys = moved.select(*[F.col(f"__ok_{k}").alias(k) for k in keys]).distinct()
            stored, _ = stored_for_round(spark, old_keys, base_path, keys,
                                         list(dict.fromkeys(keys + ord_cols + stored_cols)))
            son = keyjoin.equal(keys, left="__ok_", right="__s_")
            in_round = in_round.join(stored, son, "left")
        else:
            stored_cols = []
    else:
        stored_cols = []
    s_found = F.col(f"__s_{keys[0]}").isNotNull() if stored_cols else F.lit(False)
    s_order = _order([f"__s_{o}" for o in ordering]) if stored_cols else None
    out = [F.col(f"__m_{k}") for k in keys] + [F.col(f"__mo{i}") for i in range(len(ordering))]
    for c in cols:
        r_ok = F.col(f"__ro_{c}").isNotNull()
        if c in stored_cols:
            assert s_order is not None
            s_ok = s_found & (s_order < moved_order) & (~r_ok | (s_order > F.col(f"__ro_{c}")))
            value = F.when(s_ok, F.col(f"__s_{c}")).when(r_ok, F.col(f"__rv_{c}"))
            ok = s_ok | r_ok
        else:
            value, ok = F.when(r_ok, F.col(f"__rv_{c}")), r_ok
        out += [value.alias(f"__mv_{c}"), ok.alias(f"__mk_{c}")]
    return in_round.select(*out)
