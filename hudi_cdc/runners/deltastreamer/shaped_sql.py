"""A table's shaping (docs/shaping.md) for the real HoodieDeltaStreamer 0.14.0: the typed transformer SQL
(submit.typed_from) wrapped in one more SELECT doing what hudi-cdc's streamer does in jobs/stream/shape.py,
over the typed columns, and the target schema to match:

    SELECT <kept columns, CAST to their types, redacted>, CAST((<derive>) AS <type>) AS <name>,
           (_hoodie_is_deleted OR NOT COALESCE((<filter>), false)) AS _hoodie_is_deleted
    FROM (<the typed SQL over <SRC>>) hudi_cdc_typed

What SQL in a properties file cannot do is refused in one line: a hash in the streamer (mask_in: streamer:
the salt would be written into the file), a derived column without a `types` entry (the target schema
needs its type before Spark sees it)."""

from __future__ import annotations

from hudi_cdc.common import lake_types
from hudi_cdc.common.shaping import REDACTED, Shape
from hudi_cdc.errors import ConfigError

DELETED = "_hoodie_is_deleted"


def refusal(shape: Shape, table: str) -> str | None:
    """Why HoodieDeltaStreamer cannot apply this shaping, in one line (None: it can)."""
    if shape.mask_in == "streamer" and shape.hashed:
        return (f"tables.{table}.mask: HoodieStreamer would need the hash salt in its properties file; mask in "
                "capture (mask_in: capture) or use hudi.engine hudi-cdc")
    untyped = [n for n in shape.derive if n not in shape.types]
    if untyped:
        return (f"tables.{table}.derive.{untyped[0]}: HoodieStreamer needs its lake type before the job runs; "
                f"add types.{untyped[0]} (e.g. string)")
    return None


def shaped(sql: str, target: dict, shape: Shape, table: str, keys: list[str]) -> tuple[str, dict]:
    """The typed SQL and target schema (submit.TypedJob's) with the table's shaping applied (unchanged when
    the table is not shaped)."""
    if shape.empty:
        return sql, target
    why = refusal(shape, table)
    if why:
        raise ConfigError(why)
    q = lake_types.quote
    items, fields = [], []
    deleted = None
    for f in target["fields"]:
        name = f["name"]
        if name == DELETED:
            deleted = f
            continue
        if not shape.keeps(name, keys):
            continue
        if name in shape.types:
            items.append(f"CAST({q(name)} AS {shape.types[name]}) AS {q(name)}")
            f = {"name": name, "type": lake_types.avro_type(shape.types[name]), "default": None}
        elif shape.mask_in == "streamer" and shape.mask.get(name) == "redact":
            items.append(f"'{REDACTED}' AS {q(name)}")  # NULL too, as Debezium's fixed mask
        else:
            items.append(q(name))
        fields.append(f)
    for name, expr in shape.derive.items():
        items.append(f"CAST(({expr}) AS {shape.types[name]}) AS {q(name)}")
        fields.append({"name": name, "type": lake_types.avro_type(shape.types[name]), "default": None})
    if deleted is not None:
        keep = f"COALESCE(({shape.filter}), false)" if shape.filter is not None else None
        items.append(f"({DELETED} OR NOT {keep}) AS {DELETED}" if keep else DELETED)
        fields.append(deleted)
    return f"SELECT {', '.join(items)} FROM ({sql}) hudi_cdc_typed", {**target, "fields": fields}
