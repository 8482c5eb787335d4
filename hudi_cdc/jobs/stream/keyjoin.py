"""Joins by record key that match a NULL part of a composite key.

A primary key has no NULLs, but a key a user chooses (`record_key: [a, b]` over a nullable `b`) may: Hudi's
key generators write such a part as `__null__` (`a:1,b:__null__`) and the row is one record. Spark's `==` and
its USING joins never match NULL with NULL, so without this an update of such a row found no stored row to
compare with and a delete of it was ignored (a delete of a key the table does not hold). One key field alone is
never NULL (Hudi refuses the record), so it keeps the plain equality, which plans the simpler join."""

from __future__ import annotations

from typing import Any


def equal(keys: list[str] | tuple[str, ...], left: str = "", right: str = "") -> Any:
    """The Column `left<k> = right<k>` for every key field, NULL parts matching when the key is composite."""
    from pyspark.sql import functions as F

    cond = None
    for k in keys:
        a, b = F.col(left + k), F.col(right + k)
        eq = a.eqNullSafe(b) if len(keys) > 1 else a == b
        cond = eq if cond is None else cond & eq
    assert cond is not None, "a join by record key needs key fields"
    return cond


def join(left_df: Any, right_df: Any, keys: list[str] | tuple[str, ...], how: str) -> Any:
    """`left_df.join(right_df, keys, how)` (a USING join: the key columns once, the left side's) that matches
    NULL parts of a composite key."""
    if len(keys) <= 1:
        return left_df.join(right_df, list(keys), how)
    from pyspark.sql import functions as F

    prefix = "__kj_"
    renamed = right_df.select(*[F.col(c).alias(prefix + c) if c in keys else F.col(c) for c in right_df.columns])
    out = left_df.join(renamed, equal(keys, right=prefix), how)
    if how.replace("_", "").lower() in ("leftsemi", "semi", "leftanti", "anti"):
        return out
    return out.drop(*[prefix + k for k in keys])
