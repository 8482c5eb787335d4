"""Comparing ordering values: lexicographically over the ordering fields, as Hudi's event-time merge
orders versions of a key (the first field decides, the next breaks its ties, ...)."""

from __future__ import annotations


def at_least(left: list[str], right: list[str], strict: bool = False):
    """The Spark condition `left >= right` (`left > right` when strict), column by column
    lexicographically; null where a compared value is null. `left` and `right` name the columns."""
    from pyspark.sql import functions as F

    out = None
    for a, b in reversed(list(zip(left, right, strict=True))):
        x, y = F.col(a), F.col(b)
        out = ((x > y) if strict else (x >= y)) if out is None else ((x > y) | ((x == y) & out))
    if out is None:
        raise ValueError("no ordering fields to compare")
    return out
