"""The Kafka topic Debezium names for a source table, and so the landing folder of its files.

A pipeline's `topic` is ``<topic prefix>.<schema>.<table>`` with the database's own names (hudi-cdc reads the
source schema and table from it). Debezium turns that into a Kafka topic name as its
AbstractTopicNamingStrategy.sanitizedTopicName does: every character other than ASCII letters, digits, ``.``,
``_`` and ``-`` becomes ``_`` (one per UTF-16 unit: a character outside the BMP is two), the name is cut at 249
characters, and ``.`` / ``..`` become ``_`` / ``__``. So ``shop.Sales.Order Items`` lands as
``shop.Sales.Order_Items``: in the S3 sink's folder, in the registry subject, in the records capture gets.
"""

from __future__ import annotations

MAX_LENGTH = 249


def _valid(ch: str) -> bool:
    return ch in "._-" or ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9")


def kafka_topic(topic: str) -> str:
    """The Kafka topic of a pipeline topic (the same text when it needs no change)."""
    out = "".join(ch if _valid(ch) else "_" * (2 if ord(ch) > 0xFFFF else 1) for ch in topic)
    if len(out) > MAX_LENGTH:
        return out[:MAX_LENGTH]
    return {".": "_", "..": "__"}.get(out, out)
