"""A small round's stored rows read in the driver with hudi-rs, not by a Spark job (issue 38).

Locating a round's keys (located.py) joins its events with the table's rows for those keys: each key's
record key, partition path, file group and ordering value. Through Spark that read plans Hudi's relation,
lists the table and scans its base files (plus, for MoR, the key files logkeys.py keeps): ~2 s of a
~7 s round of 20 events on a 5,000-row table, most of it fixed cost (benchmarks/driver_commit.py). For a
round of at most MAX_KEYS keys the same rows are read here instead: hudi-rs streams the latest base files'
few columns and pyarrow keeps the rows of the round's keys batch by batch (memory stays at the matches), the
MoR key files are read with pyarrow and laid over them exactly as logkeys.stored_view does, and the
result goes to Spark as a local relation (local_rows.py): no job until the round's own join.

Only where every column read is text, an integer or a boolean (what a local relation carries exactly),
the key fields text or integers, no record-level index prunes the lookup (keyloc.py), and for MoR only
where logkeys.py can stand in for the snapshot read. Otherwise, or when hudi-rs fails, the round reads
through Spark as before: this changes how fast the stored rows are read, never which."""

from __future__ import annotations

import io
from typing import Any

from hudi_cdc.common import s3, storage
from hudi_cdc.jobs.stream import driver_values, keyloc, local_rows, logkeys

MAX_KEYS = 10_000
# hoodie.streamer.hudi_cdc.stored.rows: "driver" (default, this module for small rounds) or "spark"
STORED_ROWS_PROP = "hoodie.streamer.hudi_cdc.stored.rows"
_KEY_TYPES = {"StringType": "string", "IntegerType": "int", "LongType": "bigint", "ShortType": "smallint",
              "ByteType": "tinyint"}
_TYPES = {**_KEY_TYPES, "BooleanType": "boolean"}
_RO = {"hoodie.read.use.read_optimized.mode": "true"}


def enabled(props: dict[str, str]) -> bool:
    return (props.get(STORED_ROWS_PROP) or "driver").strip().lower() != "spark"


def stored_rows(spark, events, base_path: str, keys: list[str], columns: list[str], meta: tuple | list,
                mor_ordering: list[str] | None, log=None, known_keys: list[tuple] | None = None):
    """The table's rows for the round's keys (`events` holds one event per key) with `meta` (Hudi's meta
    columns, as `__s<name>`) and `columns` (as `__s_<name>`), as stored_for_round names them; None when
    this module does not read them (the caller reads through Spark). `known_keys`: the events' key tuples when
    the caller has them (the round's summary pass collected them), else a Spark job collects them here."""
    spark_types = {f.name: type(f.dataType).__name__ for f in events.schema.fields}
    if not readable(spark_types, keys, columns):
        return None
    wanted = set(known_keys) if known_keys is not None else {
        tuple(r) for r in events.select(*keys).limit(MAX_KEYS + 1).collect()}
    rows = stored_dicts(spark, base_path, keys, columns, meta, mor_ordering, wanted, log)
    if rows is None:
        return None
    read = [*meta, *columns]
    names = [f"__s{m}" for m in meta] + [f"__s_{c}" for c in columns]
    types = ["string"] * len(meta) + [_TYPES[spark_types[c]] for c in columns]
    return local_rows.frame(spark, [tuple(r[c] for c in read) for r in rows], names, types)


def readable(spark_types: dict[str, str], keys: list[str], columns: list[str]) -> bool:
    """Whether this module reads such rows: key fields text or integers, every column read text, an integer or a
    boolean (`spark_types`: column -> its Spark type's class name)."""
    return bool(keys) and all(spark_types.get(k) in _KEY_TYPES for k in keys) and \
        all(spark_types.get(c) in _TYPES for c in columns)


def stored_dicts(spark, base_path: str, keys: list[str], columns: list[str], meta: tuple | list,
                 mor_ordering: list[str] | None, wanted: set[tuple], log=None) -> list[dict] | None:
    """The stored rows of the `wanted` key tuples as dicts of `meta` and `columns` (readable() ones); None when
    this module does not read them (more than MAX_KEYS keys, a record-level index, hudi-rs failing, ...)."""
    if keyloc.has_record_index(keyloc.table_config(base_path)):
        return None  # keyloc.py prunes by the record-level index
    if len(wanted) > MAX_KEYS:
        return None
    # a NULL part of a composite key is a stored value (keyjoin.py); a key of one field is never NULL
    wanted = {k for k in wanted if (len(keys) > 1 and any(v is not None for v in k)) or None not in k}
    firsts = sorted({k[0] for k in wanted}, key=lambda v: (v is not None, v if v is not None else 0))
    try:
        table = s3.hudi_table_builder(base_path).build()
        mor = bool(table.is_mor)
        if mor and not mor_ordering:
            return None
        pairs: set[tuple[str, str]] = set()
        if mor:
            found, why = logkeys.current_logs(spark, base_path, table)
            if found is None:
                return None  # stored_view says why when the caller reads through Spark
            pairs = found
            logkeys.remove_obsolete(spark, base_path, {d for _, d in pairs})
        read = [*meta, *columns]
        base = _read_base(table, read, keys[0], firsts, mor) if firsts else []
        logged = _read_logged(base_path, sorted({d for _, d in pairs}), pairs) if pairs else None
    except Exception as exc:  # noqa: BLE001 - the round reads the same rows through Spark instead
        if log is not None:
            log(f"{base_path}: stored rows read through Spark ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})")
        return None
    rows = overlay(base, logged, read, mor_ordering or [], keys, wanted)
    if rows is not None and log is not None:
        log(f"{base_path}: {len(rows)} stored row(s) of the round's {len(wanted)} key(s) read in the driver (hudi-rs)")
    return rows


def _read_base(table, columns: list[str], key: str, values: list, mor: bool) -> list[dict]:
    """The latest base files' `columns` for rows whose `key` is one of `values`: hudi-rs streams the files'
    batches and pyarrow keeps the matching rows of each (a hashed IN; hudi-rs's own IN filter compares
    every row with every value: 2.2 s for 2,000 keys in 1M rows against 0.55 s here)."""
    from hudi import HudiReadOptions

    opts = HudiReadOptions(projection=list(dict.fromkeys(columns)), hudi_options=_RO if mor else {})
    wanted = driver_values.value_set(values)  # a None among them matches NULLs
    out: list[dict] = []
    for batch in table.read_stream(opts):
        found = driver_values.matching(batch, key, wanted)
        if found.num_rows:
            out.extend(found.to_pylist())
    return out


def _read_logged(base_path: str, instants: list[str], pairs: set[tuple[str, str]]) -> dict[str, Any]:
    """The key files of `instants`, as {"columns": every column any of them has, "rows": the rows of the
    current (file group, delta commit) pairs}."""
    import pyarrow.parquet as pq

    columns: dict[str, None] = {}
    rows: list[dict] = []
    for instant in instants:
        folder = "/".join([base_path.rstrip("/"), *logkeys.LOGKEYS_DIR, f"{instant}.parquet"])
        for name, _ in sorted(storage.list_files(folder)):
            if not name.endswith(".parquet") or name.startswith((".", "_")):
                continue
            data = storage.read_bytes(storage.join(folder, name))
            if data is None:
                raise FileNotFoundError(f"{folder}/{name}")
            t = pq.read_table(io.BytesIO(data))
            columns.update(dict.fromkeys(t.column_names))
            rows.extend(r for r in t.to_pylist() if (r.get(logkeys.FILE_ID), r.get(logkeys.INSTANT)) in pairs)
    return {"columns": list(columns), "rows": rows}


def _cmp(a, b, op: str) -> bool | None:
    if a is None or b is None:
        return None
    return a > b if op == ">" else a >= b if op == ">=" else a == b


def _and(x: bool | None, y: bool | None) -> bool | None:
    if x is False or y is False:
        return False
    return None if x is None or y is None else True


def _or(x: bool | None, y: bool | None) -> bool | None:
    if x is True or y is True:
        return True
    return None if x is None or y is None else False


def at_least(left: list, right: list, strict: bool = False) -> bool | None:
    """`left >= right` (`left > right` when strict) lexicographically with SQL's nulls, as ordering.at_least builds
    it in Spark."""
    out: bool | None = None
    for i, (a, b) in enumerate(reversed(list(zip(left, right, strict=True)))):
        out = _cmp(a, b, ">" if strict else ">=") if i == 0 else _or(_cmp(a, b, ">"), _and(_cmp(a, b, "=="), out))
    return out


def struct_key(values: list) -> tuple:
    """Spark's ordering of structs: field by field, a null below every value."""
    return tuple((v is not None, v) if v is not None else (False, 0) for v in values)


def overlay(base: list[dict], logged: dict[str, Any] | None, columns: list[str], ordering: list[str],
            keys: list[str], wanted: set[tuple]) -> list[dict] | None:
    """logkeys.stored_view's rows, restricted to the `wanted` key tuples: the base rows with the newest logged
    version of each (record key, file group) laid over them (a logged delete as new as the base row removes
    it, a newer logged ordering value replaces the base row's), plus the keys only logs hold (inserts sent into
    a file group's log, not deleted since). None when the key files lack a column such a key needs."""
    kept = [r for r in base if tuple(r.get(k) for k in keys) in wanted]
    if logged is None:
        return [{c: r.get(c) for c in columns} for r in kept]
    carried = [c for c in columns if c in logged["columns"] and c not in ordering and c != "_hoodie_record_key"]
    newest: dict[tuple[str, str], dict] = {}
    first: dict[tuple[str, str], dict] = {}
    for r in logged["rows"]:
        at = (r["_hoodie_record_key"], r[logkeys.FILE_ID])
        order = struct_key([*[r.get(o) for o in ordering], r.get(logkeys.INSTANT), r.get("_hoodie_is_deleted")])
        if at not in newest or order > newest[at]["__order"]:
            newest[at] = {**r, "__order": order}
        if at not in first or r[logkeys.INSTANT] < first[at][logkeys.INSTANT]:
            first[at] = r
    out = []
    for r in kept:
        n = newest.get((r["_hoodie_record_key"], (r.get("_hoodie_file_name") or "").split("_", 1)[0]))
        applies = n is not None and bool(at_least([n.get(o) for o in ordering], [r.get(o) for o in ordering]))
        if applies and n is not None and n.get("_hoodie_is_deleted"):
            continue
        out.append({c: (n.get(c) if applies and n is not None and c in ordering else r.get(c)) for c in columns})
    only_logged = [(at, n) for at, n in newest.items()
                   if bool(first[at].get(logkeys.INSERTED)) and not n.get("_hoodie_is_deleted")]
    missing = [c for c in columns if c != "_hoodie_record_key" and c not in ordering and c not in carried]
    if missing:
        return None if only_logged else out
    for (key, _), n in only_logged:
        row = {c: (key if c == "_hoodie_record_key" else n.get(c)) for c in columns}
        if tuple(row.get(k) for k in keys) in wanted:
            out.append(row)
    return out
