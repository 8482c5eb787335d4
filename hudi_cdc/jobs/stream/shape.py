"""The table's shaping applied to a round's events (docs/shaping.md; the spec: common/shaping.py's Shape,
rendered into the table's properties as ``hoodie.streamer.hudi_cdc.shape``). One place, for bootstrap
and stream rounds alike, after the events are typed and the delete marker is set:

1. filter: a row the predicate does not hold for (false or NULL) becomes a delete of its key, so an
   UPDATE that moves a row out of the filter deletes it from the lake, one that moves it in inserts it,
   and a DELETE of a row the lake never held is nothing (the round drops deletes of absent keys);
2. derive: new columns from Spark SQL expressions on the source row (usable as partition_field);
3. types: a lake type per column (CAST);
4. mask (mask_in: streamer, for files a connector hudi-cdc did not render landed): hash = Debezium's
   v2 SHA-256 with the salt (common/shaping.mask_hash; Spark's sha2 over the same UTF-8 bytes), redact =
   '****' (NULL too); mask_in: capture: Debezium masked them before they landed, nothing to do;
5. columns: excluded (or not included) columns dropped (Debezium's fields, keys and derived columns stay).

The salt is read from the environment variable the spec names, in the driver, never logged."""

from __future__ import annotations

import os

from hudi_cdc.common.shaping import REDACTED, SHAPE_KEY, Shape
from hudi_cdc.jobs.stream import truncate
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER

DELETED = "_hoodie_is_deleted"


def shape_of(props: dict[str, str]) -> Shape:
    return Shape.from_json(props.get(SHAPE_KEY))


def _salt(shape: Shape, table: str) -> str:
    value = os.environ.get(shape.salt_env or "")
    if not value:
        raise JobInputError(f"{table}: environment variable {shape.salt_env} (source.mask_salt_env) is not set "
                            "or empty; the streamer hashes the masked columns with it")
    return value


def _check_columns(df, shape: Shape, table: str) -> None:
    """Every column the shaping names exists in the round's events (one line naming the key)."""
    have = set(df.columns)
    named = [("mask", c) for c in shape.mask] + [("types", c) for c in shape.types if c not in shape.derive]
    for key, col in named:
        if col not in have:
            raise JobInputError(f"tables.{table}.{key}.{col}: no such column in the landed events "
                                f"({', '.join(sorted(c for c in have if not c.startswith('_')))})")


def apply(df, shape: Shape, table: str, keys: list[str], placeholder: str = DEFAULT_PLACEHOLDER):
    """The round's events, shaped (steps in the module doc); ``placeholder``: Debezium's unchanged-TOAST
    value (toast.py), which a streamer-side mask leaves for the fill."""
    from pyspark.sql import functions as F

    if shape.empty:
        return df
    _check_columns(df, shape, table)
    try:
        if shape.filter is not None:
            if DELETED not in df.columns:
                raise JobInputError(f"tables.{table}.filter: needs hard deletes (deletes: hard)")
            keep = F.coalesce(F.expr(shape.filter), F.lit(False)) | truncate.is_truncate(df)  # truncate.py
            df = df.withColumn(DELETED, F.col(DELETED) | ~keep)
        for name, expr in shape.derive.items():
            df = df.withColumn(name, F.expr(expr))
    except JobInputError:
        raise
    except Exception as exc:  # an expression naming a column the events do not have (AnalysisException)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise JobInputError(f"tables.{table}: filter/derive cannot be applied to the landed events: {first}") \
            from None
    for col, typ in shape.types.items():
        df = df.withColumn(col, F.col(col).cast(typ))
    if shape.mask_in == "streamer" and shape.mask:
        salt = _salt(shape, table) if shape.hashed else ""
        for col in shape.mask:
            value = F.col(col).cast("string")
            hashed = shape.mask[col] == "hash"
            masked = F.sha2(F.concat(F.lit(salt), value), 256) if hashed else F.lit(REDACTED)
            # a hash keeps NULL, a redaction does not (as Debezium's masks); an unchanged TOAST value's
            # placeholder stays, for toast.py to fill from the stored (masked) value
            kept = (F.col(col).isNull() if hashed else F.lit(False)) | F.coalesce(value == F.lit(placeholder),
                                                                                   F.lit(False))
            df = df.withColumn(col, F.when(kept, F.col(col)).otherwise(masked))
    dropped = [c for c in df.columns if not shape.keeps(c, keys)]
    return df.drop(*dropped) if dropped else df


def landed_schema(shape: Shape, keys: list[str]):
    """A landed Avro schema -> the one the shaped events have (kept columns, then the derived ones), for
    evolve.py's schema-change words; None when the table is not shaped."""
    if shape.empty:
        return None

    def shaped(schema: dict) -> dict:
        fields = [f for f in schema.get("fields", []) if shape.keeps(f["name"], keys)]
        return {**schema, "fields": fields + [{"name": n, "type": "string"} for n in shape.derive]}

    return shaped
