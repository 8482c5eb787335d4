"""A small round's stored values of a few columns, read in the driver with hudi-rs (issue 38: the TOAST fill).

toast.py fills Debezium's placeholder of an unchanged TOASTed value from the stored row of its key. Through
Spark that read plans Hudi's relation twice (its columns, then the read), lists the table and scans it (for MoR a
snapshot read merging every file group's logs): 5-10 s of a round, narrow table or wide, for a few keys. Here,
for a round of at most MAX_KEYS such keys: hudi-rs lists the table's latest file slices and reads each one's key
fields (a slice with log files merged as a snapshot read merges it); only the slices holding a wanted key are
read again with the wanted columns, and the rows of the wanted keys kept. They go to Spark as a local relation
(local_rows.py): no Spark job until the round's own join.

Bounded by what it keeps, not by keys alone: TOASTed values are large by definition, so past MAX_BYTES of
values, or for a column a local relation cannot carry (local_rows.py), or where hudi-rs fails or refuses a
slice, this returns None and the caller reads through Spark: this changes how fast the values are read,
never which."""

from __future__ import annotations

from typing import Any

from hudi_cdc.common import s3
from hudi_cdc.jobs.stream import local_rows

MAX_KEYS = 10_000
MAX_BYTES = 32 << 20  # the values kept (Arrow's size of them), past which Spark reads them


def _table(base_path: str):
    """hudi-rs's table (its timeline loaded once per fill), or None (the caller asks Spark instead)."""
    try:
        return s3.hudi_table_builder(base_path).build()
    except Exception:  # noqa: BLE001 - the caller asks Spark instead
        return None


def placeholder_rows(spark, base_path: str, keys: list[str], ordering: list[str], cols: list[str],
                     types: dict[str, Any], key_rows: list, log=None, *, every_ordering: bool = False):
    """The stored rows of the key tuples `key_rows` with the key fields, the ordering fields and the placeholder
    columns `cols` the table has (each as `__s_<name>`), as (rows, the placeholder columns the table has, whether
    every key has a row); None when they are not read in the driver. `every_ordering`: None as well when an
    ordering field is not a column of the table (a key change's old keys compare with all of them)."""
    table = _table(base_path)
    if table is None:
        return None
    try:
        table_cols = set(table.get_schema().names)
    except Exception:  # noqa: BLE001 - the caller asks Spark instead
        return None
    if every_ordering and any(o not in table_cols for o in ordering):
        return None
    stored_cols = [c for c in cols if c in table_cols]
    read = list(dict.fromkeys(keys + [o for o in ordering if o in table_cols] + stored_cols))
    got = stored_values(spark, table, base_path, keys, read, types, key_rows, log)
    return None if got is None else (got[0], stored_cols, got[1])


def stored_values(spark, table, base_path: str, keys: list[str], columns: list[str], types: dict[str, Any],
                  key_rows: list, log=None):
    """The table's rows for the key tuples `key_rows` (Rows or tuples of the key fields) with `columns` (the key
    fields among them), each as `__s_<name>`, as redelivery.stored_for_round names them, and whether every key
    has one, read from hudi-rs's `table` (at `base_path`); `types`: each column's Spark type (the round's events').
    None when this module does not read them (the caller reads through Spark)."""
    carried = {c: local_rows.carried(types[c]) for c in columns}
    spark_types = {c: t for c, t in carried.items() if t is not None}
    if len(key_rows) > MAX_KEYS or len(spark_types) < len(columns):
        return None
    if any(local_rows.carried(types[k]) not in local_rows.KEY_TYPES for k in keys):
        return None
    asked = {tuple(r) for r in key_rows}
    # a NULL part of a composite key is a stored value (keyjoin.py); a key of one field is never NULL
    wanted = {k for k in asked if (len(keys) > 1 and any(v is not None for v in k)) or None not in k}
    try:
        rows = _read(table, keys, columns, wanted) if wanted else []
    except Exception as exc:  # noqa: BLE001 - the round reads the same values through Spark instead
        if log is not None:
            log(f"{base_path}: stored values read through Spark ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:200]})")
        return None
    if rows is None:
        if log is not None:
            log(f"{base_path}: stored values read through Spark (more than {MAX_BYTES:,} bytes of them)")
        return None
    if log is not None:
        log(f"{base_path}: {len(rows)} stored row(s) of {len(wanted)} key(s) read in the driver (hudi-rs, "
            f"{len(columns)} column(s))")
    complete = len({tuple(r[k] for k in keys) for r in rows}) == len(asked)
    return local_rows.frame(spark, [tuple(r[c] for c in columns) for r in rows], [f"__s_{c}" for c in columns],
                            [spark_types[c] for c in columns]), complete


def _read(table, keys: list[str], columns: list[str], wanted: set[tuple]) -> list[dict] | None:
    """The rows of the wanted keys, from the slices of hudi-rs's `table` whose key fields hold one; None past
    MAX_BYTES."""
    from hudi import HudiReadOptions

    reader = table.create_file_group_reader_with_options()
    first = _first_values(wanted)
    holding = [fs for fs in table.get_file_slices()
               if _matches(reader.read_file_slice_stream(fs, HudiReadOptions(projection=keys)), keys, first, wanted)]
    out: list[dict] = []
    size = 0
    read = list(dict.fromkeys([*keys, *columns]))
    for fs in holding:
        for batch in reader.read_file_slice_stream(fs, HudiReadOptions(projection=read)):
            found = matching(batch, keys[0], first)
            if not found.num_rows:
                continue
            size += found.nbytes
            if size > MAX_BYTES:
                return None
            out.extend(r for r in found.to_pylist() if tuple(r.get(k) for k in keys) in wanted)
    return out


def _first_values(wanted: set[tuple]):
    """The wanted keys' first fields as an Arrow array (a None among them matches NULLs)."""
    return value_set(sorted({k[0] for k in wanted}, key=lambda v: (v is not None, v if v is not None else 0)))


def value_set(values: list):
    """Key values (text or integers; a None matches NULLs) as the Arrow array `matching` looks them up in."""
    import pyarrow as pa

    text = any(isinstance(v, str) for v in values)
    return pa.array(values, type=pa.string() if text else pa.int64())


def matching(batch, key: str, values):
    """The rows of an Arrow batch whose `key` is one of `values` (value_set): a hashed IN (hudi-rs's own IN filter
    compares every row with every value)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = batch.column(key).cast(pa.string() if pa.types.is_string(values.type) else pa.int64())
    return batch.filter(pc.is_in(column, value_set=values, skip_nulls=False))


def _matches(batches, keys: list[str], first, wanted: set[tuple]) -> bool:
    for batch in batches:
        found = matching(batch, keys[0], first)
        if found.num_rows and any(tuple(r.get(k) for k in keys) in wanted for r in found.to_pylist()):
            return True
    return False
