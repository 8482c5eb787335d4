"""One record's row rebuilt on a wider or retyped schema, some of its values changed on the way (textforms.py,
decimals.py): the Connect Struct built once per record, the rest of the record (topic, key, timestamp) kept."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any


@cache
def _struct() -> Any:
    from jpype import JClass

    return JClass("org.apache.kafka.connect.data.Struct")


def rebuilt(out, schema, change: Callable[[str, Any], Any]):
    """`out` (an unwrapped record) with its value's fields put on `schema`, each value through change(name, value)."""
    value = out.value()
    row = _struct()(schema)
    for f in value.schema().fields():
        name = str(f.name())
        row.put(name, change(name, value.get(f)))
    return out.newRecord(out.topic(), out.kafkaPartition(), out.keySchema(), out.key(), schema, row, out.timestamp())
