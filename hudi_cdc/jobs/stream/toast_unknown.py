"""A value the round cannot know is flagged in the row, never lost silently.

An unchanged TOAST placeholder with no earlier value (toast.py's rules, toast_moves.py) lands as NULL;
the row's ``__rejects`` column (lake_types.REJECTS_COLUMN, the column a value its lake type cannot
hold goes to) names the column with no value and the reason, so ``verify`` names the row and column as
a value the lake could not know, and a query finds every such row:
``{"body": {"reason": "unchanged TOAST value not known: ..."}}``.

stdlib + pyspark only (the Spark job imports it).
"""

from __future__ import annotations

from hudi_cdc.common.lake_types import REJECTS_COLUMN

_ENTRY = "struct<value:string,reason:string>"


def flag(df, flags: dict[str, str], reason: str):
    """`df` with each column whose flag column (flags: column -> boolean column) is true named in the
    row's __rejects (added when the round has none), beside what it held already."""
    from pyspark.sql import functions as F

    entry = lambda c: F.struct(F.lit(c).alias("key"), F.struct(  # noqa: E731
        F.lit(None).cast("string").alias("value"), F.lit(reason).alias("reason")).alias("value"))
    items = F.array(*[F.when(F.col(f), entry(c)) for c, f in flags.items()])
    new = F.map_from_entries(F.filter(items, lambda x: x.isNotNull()))
    if REJECTS_COLUMN in df.columns:
        had = F.coalesce(F.from_json(F.col(REJECTS_COLUMN).cast("string"), f"map<string,{_ENTRY}>"),
                         F.create_map().cast(f"map<string,{_ENTRY}>"))
        merged = F.map_concat(F.map_filter(had, lambda k, _v: ~F.array_contains(F.map_keys(new), k)), new)
    else:
        merged = new
    any_flag = F.lit(False)
    for f in flags.values():
        any_flag = any_flag | F.col(f)
    value = F.when(any_flag, F.to_json(merged))
    if REJECTS_COLUMN in df.columns:
        value = value.otherwise(F.col(REJECTS_COLUMN).cast("string"))
    return df.withColumn(REJECTS_COLUMN, value)
