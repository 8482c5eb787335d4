"""Unchanged TOASTed values keep the value they had.

Under REPLICA IDENTITY DEFAULT, PostgreSQL's logical decoding leaves out a TOASTed value (a large
text, jsonb, bytea, array, ... kept compressed or out of line) that an UPDATE did not change, and
Debezium puts its placeholder in its place (`unavailable.value.placeholder`, by default
`__debezium_unavailable_value`): the string itself for text/varchar/jsonb/json/xml, the
placeholder's bytes for bytea (or their base64 / hex text with binary.handling.mode=base64/hex), a
one-element array holding the placeholder for text[] and bytea[], the placeholder's bytes as
numbers for int[] / bigint[], and {placeholder: placeholder} for an hstore landed as a map.
Written as it is, the placeholder would overwrite the stored value.

A round fills each placeholder before it keeps the latest event per key:
1. from the same key's newest earlier event in the round (ordering order) that carried a value;
2. else, or when the table's stored row is newer than that event, from the stored row (one snapshot
   read of only the keys with a placeholder: a MoR table's logs count, compaction changes nothing);
3. a key change (capture landed the old key beside the placeholder, capture/oldkey.py): the old key's
   value, from its earlier event of the round or its stored row (toast_moves.py);
4. a placeholder with none of these (a key the table does not hold, e.g. an update landed before the
   bootstrap's snapshot) becomes null, named in the row's __rejects (toast_unknown.py), counted and
   logged, or fails the round when `hoodie.streamer.hudi_cdc.toast.unresolved=fail`. A placeholder never
   reaches the table.

stdlib + pyspark only (the Spark job imports it).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.common.lake_types import REJECTS_COLUMN
from hudi_cdc.jobs.stream import driver_lookup, driver_values, keyjoin
from hudi_cdc.jobs.stream import toast_moves as moves
from hudi_cdc.jobs.stream import toast_unknown as unknown
from hudi_cdc.jobs.stream.errors import JobInputError

DEFAULT_PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_PROP = "hoodie.streamer.hudi_cdc.toast.placeholder"
UNRESOLVED_PROP = "hoodie.streamer.hudi_cdc.toast.unresolved"  # null (default) | fail
COUNT_PREFIX = "__toast_n_"
KEYS = "__toast_keys"  # a small round's summary: the key tuples of the events carrying a placeholder
_PREV = "__toast_prev_"
_MOVED = "__toast_moved"
UNKNOWN = "__toast_unknown_"  # true where a placeholder found no value (until the end of fill)
REASON = "unchanged TOAST value not known: no earlier value of the key in the round or the table"


def placeholder_of(props: dict[str, str]) -> str:
    return (props.get(PLACEHOLDER_PROP) or "").strip() or DEFAULT_PLACEHOLDER


def text_forms(placeholder: str) -> tuple[str, ...]:
    """The placeholder as a string column may carry it: itself, and a bytea's placeholder bytes as
    binary.handling.mode=base64 / base64-url-safe / hex write them."""
    raw = placeholder.encode()
    return (placeholder, base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode(), raw.hex(),
            raw.hex().upper())


def is_placeholder(value, placeholder: str = DEFAULT_PLACEHOLDER) -> bool:
    """Does a value read back (Python) carry the placeholder in any of its forms? (for checks and tests)"""
    raw = placeholder.encode()
    if isinstance(value, str):
        return value in text_forms(placeholder)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value) == raw
    if isinstance(value, dict):
        return any(is_placeholder(k, placeholder) or is_placeholder(v, placeholder) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        if list(value) == list(raw):
            return True
        return any(is_placeholder(v, placeholder) for v in value)
    return False


def placeholder_condition(dtype, col, placeholder: str):
    """A Spark condition true where `col` (of Spark type `dtype`) holds the placeholder, or None for
    a type Debezium never puts it in."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    raw = placeholder.encode()
    if isinstance(dtype, T.StringType):
        return col.isin(*text_forms(placeholder))  # equality only: no work on every large value
    if isinstance(dtype, T.BinaryType):
        return col == F.lit(bytearray(raw))
    if isinstance(dtype, T.ArrayType):
        el = dtype.elementType
        if isinstance(el, (T.StringType, T.BinaryType)):
            first = F.element_at(col, 1)
            same = (first == F.lit(placeholder)) if isinstance(el, T.StringType) else (first == F.lit(bytearray(raw)))
            return (F.size(col) == 1) & same
        if isinstance(el, (T.IntegerType, T.LongType, T.ShortType)):
            return col == F.array(*[F.lit(b).cast(el) for b in raw])
        return None
    if isinstance(dtype, T.MapType) and isinstance(dtype.keyType, T.StringType):
        return (F.size(col) == 1) & F.element_at(col, F.lit(placeholder)).isNotNull() & \
            (F.element_at(col, F.lit(placeholder)).cast("string") == placeholder)
    return None


def candidates(df, skip: list[str], placeholder: str) -> dict[str, Any]:
    """Each column that may carry the placeholder -> its condition (never null)."""
    from pyspark.sql import functions as F

    out = {}
    for f in df.schema.fields:
        if f.name in skip or f.name.startswith(("__", "_hoodie")):
            continue
        cond = placeholder_condition(f.dataType, F.col(f.name), placeholder)
        if cond is not None:
            out[f.name] = F.coalesce(cond, F.lit(False))
    return out


def count_columns(df, keys: list[str], ordering: list[str], placeholder: str, small: bool) -> list:
    """Aggregates for the round's one pass over its files: the placeholders of each column, and in a small round
    the key tuples of the events carrying one (KEYS), which a driver read of their stored values looks up
    (driver_values.py)."""
    from pyspark.sql import functions as F

    conds = candidates(df, keys + ordering, placeholder)
    out = [F.sum(cond.cast("int")).alias(COUNT_PREFIX + c) for c, cond in conds.items()]
    if small and keys and conds:
        any_ph = F.lit(False)
        for cond in conds.values():
            any_ph = any_ph | cond
        out.append(F.collect_set(F.when(any_ph, F.struct(*keys))).alias(KEYS))
    return out


@dataclass
class FillResult:
    placeholders: dict[str, int] = field(default_factory=dict)  # column -> events carrying it
    unresolved: dict[str, int] = field(default_factory=dict)  # column -> set to null (no value known)

    @property
    def total(self) -> int:
        return sum(self.placeholders.values())


def fill(spark, df, keys: list[str], ordering: list[str], base_path: str | None, counts: dict, props: dict[str, str],
         table: str, held, log=print):
    """The round's events with every placeholder replaced (see the module doc); `counts` holds the
    aggregates of count_columns. `base_path` is None when the table holds no commit yet. `held`
    (materialize.Held): the round's checkpoints (a wide table's small round computes the filled events once,
    for the count of what is left and the passes after it). Returns (events, FillResult)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key_rows = counts.pop(KEYS, None)  # not part of the round's summary
    res = FillResult({k[len(COUNT_PREFIX):]: int(v or 0) for k, v in counts.items()
                      if k.startswith(COUNT_PREFIX) and v})
    if not res.placeholders:
        return df, res
    placeholder = placeholder_of(props)
    conds = candidates(df, keys + ordering, placeholder)
    cols = [c for c in conds if c in res.placeholders]
    order = F.struct(*[F.col(o).alias(f"o{i}") for i, o in enumerate(ordering)]) if ordering else None
    # 1. the newest earlier event of the key in this round with a value (a null is a value)
    if ordering:
        w = (Window.partitionBy(*keys).orderBy(*[F.col(o).asc_nulls_first() for o in ordering])
             .rowsBetween(Window.unboundedPreceding, -1))
        prevs = [F.last(F.when(~conds[c], F.struct(order.alias("o"), F.col(c).alias("v"))),  # type: ignore[union-attr]
                        ignorenulls=True).over(w).alias(_PREV + c) for c in cols]
        df = df.select("*", *prevs)  # one window for every column
    else:
        for c in cols:
            df = df.withColumn(_PREV + c, F.lit(None).cast(f"struct<o:int,v:{df.schema[c].dataType.simpleString()}>"))
    # 2. the stored row, for the keys that still may need it
    stored_cols: list[str] = []
    every_key = False  # every key carrying a placeholder has a stored row (read in the driver)
    if base_path is not None:
        df, stored_cols, every_key = _join_stored(spark, df, keys, ordering, cols, conds, base_path, key_rows, props,
                                                  log)
    # a stored row has some key part not NULL (Hudi refuses a key of NULLs only; keyjoin.py)
    found = F.lit(False)
    for k in keys if base_path is not None else []:
        found = found | F.col(f"__s_{k}").isNotNull()
    stored_order = F.struct(*[F.col(f"__s_{o}").alias(f"o{i}") for i, o in enumerate(ordering)]) \
        if ordering and base_path is not None else None
    values: dict[str, Any] = {}
    nones: dict[str, Any] = {}
    for c in cols:
        prev = F.col(_PREV + c)
        if c in stored_cols:
            newer = prev.isNull() | (stored_order > prev["o"]) if stored_order is not None else prev.isNull()
            use_stored = found & newer
            value = (F.when(~conds[c], F.col(c)).when(use_stored, F.col(f"__s_{c}"))
                     .when(prev.isNotNull(), prev["v"]))
            none = conds[c] & ~use_stored & prev.isNull()
        else:
            value = F.when(~conds[c], F.col(c)).when(prev.isNotNull(), prev["v"])
            none = conds[c] & prev.isNull()
        values[c] = value
        nones[c] = none
    df = df.select(*[values[c].alias(c) if c in values else F.col(c) for c in df.columns
                     if not c.startswith((_PREV, "__s_"))],
                   *[nones[c].alias(UNKNOWN + c) for c in cols])
    if every_key and stored_cols == cols:  # each placeholder takes the stored or an earlier value: none unknown
        _report(res, props, table, log)
        return held.once(df.drop(*[UNKNOWN + c for c in cols])), res
    df = held.once(df)
    need = moves.need_condition(df, keys, ordering, cols, UNKNOWN)
    left = df.agg(*[F.sum(F.col(UNKNOWN + c).cast("int")).alias(c) for c in cols],
                  *([F.sum(need.cast("int")).alias(_MOVED)] if need is not None else [])).first().asDict()
    if left.pop(_MOVED, None):
        # 3. a key change (the old key landed beside the placeholder, capture/oldkey.py): the old key's value
        df, left = moves.fill_from_old_key(spark, df, need, keys, ordering, cols, base_path, UNKNOWN, held,
                                           key_rows is not None and driver_lookup.enabled(props), log)
    res.unresolved = {c: int(n or 0) for c, n in left.items() if n}
    df = unknown.flag(df, {c: UNKNOWN + c for c in cols}, REASON) if res.unresolved else df
    df = df.drop(*[UNKNOWN + c for c in cols])
    _report(res, props, table, log)
    return df, res


def _join_stored(spark, df, keys: list[str], ordering: list[str], cols: list[str], conds: dict, base_path: str,
                 key_rows: list | None, props: dict[str, str], log):
    """`df` joined with the stored rows of its keys that carry a placeholder (`__s_<column>`: the key and
    ordering fields and the placeholder columns the table has), and those columns. A small round's are read in
    the driver (driver_values.py) when it can, else through Spark; and whether every key carrying a placeholder
    has a stored row (known only when read in the driver)."""
    from hudi_cdc.jobs.stream.redelivery import stored_for_round

    types = {f.name: f.dataType for f in df.schema}
    got = driver_values.placeholder_rows(spark, base_path, keys, ordering, cols, types, key_rows, log) \
        if key_rows is not None and driver_lookup.enabled(props) else None
    stored, stored_cols, every_key = got if got is not None else (None, [], False)
    if stored is None:
        table_cols = set(spark.read.format("hudi").load(base_path).columns)
        stored_cols = [c for c in cols if c in table_cols]
        any_ph = None
        for c in cols:
            any_ph = conds[c] if any_ph is None else any_ph | conds[c]
        ord_cols = [o for o in ordering if o in table_cols]
        stored, _ = stored_for_round(spark, df.where(any_ph), base_path, keys,
                                     list(dict.fromkeys(keys + ord_cols + stored_cols)))
    return df.join(stored, keyjoin.equal(keys, right="__s_"), "left"), stored_cols, every_key


def _report(res: FillResult, props: dict[str, str], table: str, log) -> None:
    """The round's line on what was filled; the unknown ones warned about, or the round failed (`fail`)."""
    filled = res.total - sum(res.unresolved.values())
    per_col = ", ".join(f"{c} {n}" for c, n in res.placeholders.items())
    log(f"{table}: filled {filled} unchanged TOAST value(s) ({per_col}) from earlier events of the round "
        "or the stored rows")
    if res.unresolved:
        what = ", ".join(f"{c} {n}" for c, n in res.unresolved.items())
        if (props.get(UNRESOLVED_PROP) or "null").strip().lower() == "fail":
            raise JobInputError(f"{table}: {what} unchanged TOAST placeholder(s) for keys the table does not hold "
                                f"and no earlier event carries ({UNRESOLVED_PROP}=fail); set REPLICA IDENTITY FULL "
                                "on the source table and re-snapshot it")
        log(f"{table}: WARNING {what} unchanged TOAST placeholder(s) had no known value (key not in the table "
            f"and no earlier event in the round): written as null, named in the row's {REJECTS_COLUMN}; REPLICA "
            "IDENTITY FULL on the source avoids this")
