"""A small MoR round's changes made in the driver, with no Spark job (issue 38: a round's fixed cost).

A round of a few events paid for Spark jobs on a few rows: the landed files' read and its summary pass, the
latest event per key, the lookup's join and counts, the located rows' collect for the driver's commit
(driver_write.py). Here the landed records go to Spark as a local relation (read by Avro in the driver JVM,
one binary column), and from_avro, the typing (typed.py), the table's SQL transformer and its shaping are
projections Spark computes while it plans (its optimizer folds projections of a local relation), so the typed
events are known without a job. Their keys, ordering values and delete flags come to Python; the latest
event per key, the tombstones' stale events (tombstones.py), the stored rows (driver_lookup.py, hudi-rs) and
what located.py decides for each event (in place, a partition move, an insert and its file group, dropped as
no newer or an ignored delete) are computed here, by the same rules; the located records are assembled in
the JVM from the typed rows, and the round commits as any located round does (round.py: the driver's
commit, the key file, tombstones, metadata).

Taken for rounds of at most MAX_EVENTS landed records, and only where it cannot change the result: an upsert
of a small round (small_session.py) into an existing MoR table whose rounds the driver commits (driver_write.py)
and the key files locate (logkeys.py), landed files of one schema and no registry, no history table, no routed
sources, no TRUNCATE before or in the round, no unchanged-TOAST placeholder (toast.py fills those), events whose
typed columns are exactly the table's (no schema change), key and partition columns the located round writes and
driver_lookup.py reads. Anything else, and `prepare` returns None with nothing done: the round reads through
Spark as before.
`hoodie.streamer.hudi_cdc.driver.round: false` (a table's hudi_options) turns it off for that table."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hudi_cdc.common import lake_types
from hudi_cdc.jobs.stream import (
    driver_java,
    driver_lookup,
    driver_write,
    events,
    history_write,
    keytext,
    local_rows,
    log_inserts,
    logkeys,
    materialize,
    routed,
    small_session,
    toast,
    truncate,
    typed,
)
from hudi_cdc.jobs.stream.changes import Changes
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.files import validate_avro_files
from hudi_cdc.jobs.stream.located import (
    DEFAULT_PARTITION,
    Located,
    key_shape,
    partition_path_column,
    record_key_column,
    unlocatable,
)
from hudi_cdc.jobs.stream.props import streamer_prop
from hudi_cdc.jobs.stream.table import META, SOURCE_TS_FIELD
from hudi_cdc.jobs.stream.tombstones import newest_per_key, read_tombstones

ENABLED = "hudi_cdc.driver.round"  # hoodie.streamer.hudi_cdc.driver.round
# more events than this and the Python side's per-event work (~0.1-0.3 ms an event) costs more than Spark's fixed
# cost: a hot table's round of 28,000 events took 10 s here (session 61's 200-table run)
MAX_EVENTS = 5_000
_RK, _PP, _SKIP, _REJ = "__dr_record_key", "__dr_partition_path", "__dr_skip", "__dr_rejected"
_PY = {"IntegerType": int, "LongType": int, "ShortType": int, "ByteType": int, "StringType": str,
       "BooleanType": bool}


def enabled(props: dict[str, str]) -> bool:
    value = (streamer_prop(props, ENABLED) or "true").strip().lower()
    if value not in ("true", "false"):
        raise JobInputError(f"hoodie.streamer.{ENABLED} must be true or false, not {value!r}")
    return value == "true"


def why_not(t, props: dict[str, str], files, existing: bool, checkpoint) -> str:
    """Why this round is not made here ('' when it may be: the events themselves are checked in `prepare`)."""
    if not enabled(props):
        return f"hoodie.streamer.{ENABLED}=false"
    if t.op != "UPSERT" or not existing or t.table_type != "MERGE_ON_READ" or t.filter_dupes:
        return "not an upsert into an existing MoR table"
    if not (small_session.is_small(files, props) and driver_write.enabled(props) and logkeys.enabled(props)
            and driver_lookup.enabled(props)):
        return "not a small round the driver commits"
    if history_write.enabled(props) or routed.route_of(props) is not None or \
            streamer_prop(props, "schemaprovider.registry.url"):
        return "a history table, routed sources or a registry schema"
    if truncate.read_floor(t.target_base_path, checkpoint) is not None:
        return "a TRUNCATE's floor"
    return ""


def prepare(spark, t, props: dict[str, str], files, checkpoint, result, log) -> Changes | None:
    """The round's located records made without a Spark job, or None (nothing done, `result` untouched) where the
    events say the round reads through Spark. Fills `result`'s counts as round.py's Spark path does."""
    ordering = events.fields_of(t.source_ordering_fields or props.get("hoodie.table.ordering.fields"))
    keys = events.fields_of(props.get("hoodie.datasource.write.recordkey.field"))
    shape, _ = key_shape(props) if ordering and keys else (None, "")
    if shape is None:
        return None
    typed_events = _typed_events(spark, t, props, files, keys, ordering, log)
    if typed_events is None or "_hoodie_is_deleted" not in typed_events.columns or unlocatable(typed_events, shape) \
            or any(m in typed_events.columns for m in META):
        return None
    types = {f.name: type(f.dataType).__name__ for f in typed_events.schema.fields}
    stored_cols = list(dict.fromkeys(keys + list(shape.partition_fields) + ordering))
    if not driver_lookup.readable(types, keys, stored_cols):
        return None
    full = _with_facts(typed_events, shape, keys, ordering, toast.placeholder_of(props))
    if not _local(full):
        return None  # the transformer's SQL needs a job (a join, an aggregate): Spark's round does it as a whole
    ts = [SOURCE_TS_FIELD] if SOURCE_TS_FIELD in full.columns else []
    facts = full.select(*[f"`{c}`" for c in dict.fromkeys([*stored_cols, "_hoodie_is_deleted", *ts])],
                        _RK, _PP, _SKIP, _REJ).collect()
    if any(r[_SKIP] for r in facts):
        return None  # a keyless event, a TRUNCATE, a TOAST placeholder, a key text Hudi writes otherwise
    chosen = _latest_per_key(facts, keys, ordering)
    summary, deleted = _summary(facts, chosen, keys, ordering, bool(ts))
    chosen, stale = _not_stale(facts, chosen, t.target_base_path, checkpoint, keys, ordering, types)
    wanted = {tuple(facts[i][k] for k in keys) for i in chosen}
    stored = driver_lookup.stored_dicts(spark, t.target_base_path, keys, stored_cols, META, ordering, wanted, log)
    if stored is None:
        return None
    targets = log_inserts.targets(t.target_base_path, props) if log_inserts.enabled(props, t.table_type) else None
    plan = _locate(facts, chosen, stored, keys, shape, ordering, types, targets)
    if plan is None:
        return None
    df = _frame(spark, full, plan)
    why = driver_write.columns_differ(spark, df, t.target_base_path)
    if why:
        log(f"{t.target_table}: the round reads through Spark ({why})")
        return None
    inserted = local_rows.frame(spark, plan.inserted, ["_hoodie_record_key", "_hoodie_file_name"],
                                ["string", "string"]) if targets else None
    key_columns = tuple(dict.fromkeys([*keys, *shape.partition_fields]))
    located = Located(df, plan.unchanged, plan.moves, plan.ignored, df, None, None, inserted, key_columns, plan.kept,
                      _key_rows(facts, plan, key_columns, ordering, types))
    # the round is made here: its counts, as the Spark path gives them
    result.records_in, result.deletes, result.stale_ignored = len(facts), len(deleted), stale
    result.unchanged_ignored, result.moves, result.ignored_deletes = plan.unchanged, plan.moves, plan.ignored
    if stale:
        log(f"{t.target_table}: ignored {stale} stale event(s) for keys deleted by a newer change")
    if plan.unchanged:
        log(f"{t.target_table}: ignored {plan.unchanged} event(s) no newer than the stored row")
    log(f"{t.target_table}: the round's {len(facts)} event(s) read and located in the driver (no Spark job)")
    return Changes(df, located, summary, deleted, keys, ordering)


def _typed_events(spark, t, props: dict[str, str], files, keys: list[str], ordering: list[str], log):
    """The round's events typed, transformed and shaped over a local relation of the landed records; None for
    files of several schemas (a DDL mid-round: evolve.py reads them group by group) or more than MAX_EVENTS
    records."""
    from pyspark.sql import DataFrame
    from pyspark.sql.avro.functions import from_avro

    groups: dict[str, list[str]] = {}
    file_schemas = validate_avro_files(files, keys + ordering, keys, None, every_record=False, groups=groups)
    if len(groups) != 1:
        return None
    schema, columns = typed.column_types(file_schemas, None, props, t.target_table)
    if schema is None:
        return None
    reader = json.dumps(lake_types.reader_schema(schema, columns) or schema)
    cls = driver_java.helper(spark)
    if isinstance(cls, str):
        return None
    paths = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(files))
    for i, f in enumerate(files):
        paths[i] = events.landed_uri(f[0])
    landed = DataFrame(driver_java.call(spark, cls, "landed", spark._jsparkSession, paths, reader), spark)
    if landed._jdf.queryExecution().logical().data().size() > MAX_EVENTS:
        return None
    source = landed.select(from_avro("value", reader).alias("r")).select("r.*")
    df = events.transformed(spark, t, props, None, files, groups, None, columns, keys, materialize.Held(False), log,
                            source=source)
    # capture's old keys serve the TOAST fill only (events.py drops them after it; placeholders are not made here)
    return df.drop(*[c for c in df.columns if c.startswith(lake_types.OLDKEY_PREFIX)])


def _with_facts(df, shape, keys: list[str], ordering: list[str], placeholder: str):
    """The events (their columns first) with what the driver decides by: each one's record key and partition path
    as Hudi's key generator makes them (located.py), whether it holds a rejected value, and whether the round must
    go through Spark for it (no key, a TRUNCATE, an unchanged TOAST value, a key text not written as Hudi does)."""
    from pyspark.sql import functions as F

    dtypes = {f.name: f.dataType for f in df.schema.fields}
    key_types = {k: dtypes[k] for k in shape.record_keys}
    zones = keytext.zones(df.sparkSession) if any(keytext.type_name(v) == "TimestampType"
                                                  for v in key_types.values()) else ("UTC", "UTC")
    skip = truncate.is_truncate(df)
    for k in keys:
        skip = skip | F.col(k).isNull() | (F.col(k).cast("string") == "")
    for cond in [*toast.candidates(df, keys + ordering, placeholder).values(),
                 *(keytext.unwritable(F.col(k), key_types[k]) for k in shape.record_keys)]:
        if cond is not None:
            skip = skip | F.coalesce(cond, F.lit(False))
    rejected = F.col(lake_types.REJECTS_COLUMN).isNotNull() if lake_types.REJECTS_COLUMN in df.columns else F.lit(False)
    return df.select(*[F.col(f"`{c}`") for c in df.columns], record_key_column(shape, types=key_types, zones=zones)
                     .alias(_RK), partition_path_column(shape).alias(_PP), F.coalesce(skip, F.lit(False)).alias(_SKIP),
                     rejected.alias(_REJ))


def _local(df) -> bool:
    """Whether Spark computed `df` while planning it (its optimized plan is a local relation: no job to collect)."""
    return df._jdf.queryExecution().optimizedPlan().getClass().getSimpleName() == "LocalRelation"


def _order(row, ordering: list[str]) -> tuple:
    return driver_lookup.struct_key([row[o] for o in ordering])


def _latest_per_key(facts: list, keys: list[str], ordering: list[str]) -> list[int]:
    """The index of each key's event with the largest ordering value (a null the smallest), in landing order."""
    best: dict[tuple, int] = {}
    for i, r in enumerate(facts):
        k = tuple(r[c] for c in keys)
        if k not in best or _order(r, ordering) >= _order(facts[best[k]], ordering):
            best[k] = i
    return sorted(best.values())


def _summary(facts: list, chosen: list[int], keys: list[str], ordering: list[str], has_ts: bool
             ) -> tuple[dict, list[dict]]:
    """summary.py's summary of the latest events, and the deletes' keys and ordering values."""
    rows = [facts[i] for i in chosen]
    deleted = [{c: r[c] for c in [*keys, *ordering]} for r in rows if r["_hoodie_is_deleted"]]
    out: dict = {"n": len(rows), "deletes": len(deleted), "rejected": sum(1 for r in rows if r[_REJ])}
    if has_ts:
        out["ts"] = max((r[SOURCE_TS_FIELD] for r in rows if r[SOURCE_TS_FIELD] is not None), default=None)
    if len(ordering) == 1:
        out["ord"] = max((r[ordering[0]] for r in rows if r[ordering[0]] is not None), default=None)
    return out, deleted


def _not_stale(facts: list, chosen: list[int], base_path: str, checkpoint, keys: list[str], ordering: list[str],
               types: dict[str, str]) -> tuple[list[int], int]:
    """tombstones.drop_stale_after_delete in the driver: an event that is no delete, of a key an earlier round's
    tombstone deleted at an ordering value at least as new, is dropped."""
    tombstones = read_tombstones(base_path, checkpoint, keys, ordering)
    if not tombstones:
        return chosen, 0

    def cast(c, v):
        return None if v is None else _PY[types[c]](v) if types[c] != "BooleanType" else bool(v)

    newest = {tuple(cast(k, t.get(k)) for k in keys): [cast(o, t.get(o)) for o in ordering]
              for t in newest_per_key(tombstones, keys, ordering)}
    kept = []
    for i in chosen:
        r = facts[i]
        t = newest.get(tuple(r[k] for k in keys))
        stale = t is not None and not r["_hoodie_is_deleted"] and \
            driver_lookup.at_least(t, [r[o] for o in ordering]) is True
        if not stale:
            kept.append(i)
    return kept, len(chosen) - len(kept)


@dataclass
class _Plan:
    picks: list[int]  # event index of each located record
    meta: list[list]  # its five meta values
    deleted: list[bool]  # a moved key's delete where it was
    inserted: list[tuple[str, str]]  # record key and file name of the inserts sent into a file group's log
    unchanged: int = 0
    moves: int = 0
    ignored: int = 0
    kept: int = 0


def _stored_path(stored: dict, shape, types: dict[str, str]) -> str:
    """The partition path Hudi's key generator makes of a stored row's partition values (located.py)."""
    parts = []
    for p in shape.partition_fields:
        v = stored.get(p)
        text = None if v is None else ("true" if v else "false") if types[p] == "BooleanType" else str(v)
        text = DEFAULT_PARTITION if text in (None, "") else text
        parts.append(f"{p}={text}" if shape.hive_style else text)
    return "/".join(parts)


def _locate(facts: list, chosen: list[int], stored: list[dict], keys: list[str], shape, ordering: list[str],
            types: dict[str, str], targets: dict[str, tuple[str, str]] | None) -> _Plan | None:
    """located.locate's decisions, event by event (None: a stored record key or partition path differs from the
    one computed for it, so Hudi's index locates the round, as located.py decides)."""
    by_key: dict[tuple, dict] = {}
    for row in stored:
        by_key.setdefault(tuple(row[k] for k in keys), row)
    if len(by_key) != len(stored):
        return None
    in_place, inserts, moved_out = _Plan([], [], [], []), _Plan([], [], [], []), _Plan([], [], [], [])
    plan = _Plan([], [], [], [])
    for i in chosen:
        r = facts[i]
        s = by_key.get(tuple(r[k] for k in keys))
        is_del = bool(r["_hoodie_is_deleted"])
        if s is not None and (r[_RK] != s["_hoodie_record_key"] or
                              _stored_path(s, shape, types) != s["_hoodie_partition_path"]):
            return None
        mine = [r[o] for o in ordering]
        theirs = [s[o] for o in ordering] if s is not None else []
        if s is not None and not is_del and driver_lookup.at_least(theirs, mine) is True:
            plan.unchanged += 1
            continue
        if is_del and (s is None or driver_lookup.at_least(theirs, mine, strict=True) is True):
            plan.ignored += 1
            continue
        plan.kept += 1
        move = s is not None and not is_del and r[_PP] != s["_hoodie_partition_path"]
        if s is not None:
            _add(moved_out if move else in_place, i, [s[m] for m in META], move)
            plan.moves += int(move)
        if s is None or move:
            target = (targets or {}).get(r[_PP])
            rk = s["_hoodie_record_key"] if s is not None else r[_RK]
            _add(inserts, i, [target[0] if target else None, None, rk, r[_PP], target[1] if target else None], False)
            if target:
                inserts.inserted.append((rk, target[1]))
    for part in (in_place, inserts, moved_out):  # located.py's order: in place, inserts, then the moves' deletes
        plan.picks += part.picks
        plan.meta += part.meta
        plan.deleted += part.deleted
    plan.inserted = inserts.inserted
    return plan


def _add(plan: _Plan, i: int, meta: list, deleted: bool) -> None:
    plan.picks.append(i)
    plan.meta.append(meta)
    plan.deleted.append(deleted)


def _key_rows(facts: list, plan: _Plan, key_columns: tuple[str, ...], ordering: list[str], types: dict[str, str]
              ) -> logkeys.KeyRows:
    """The delta commit's key file (logkeys.py): the located records sent to a stored file group, as Spark's path
    takes them from the committed rows."""
    inserted = set(plan.inserted)
    rows = []
    for i, meta, deleted in zip(plan.picks, plan.meta, plan.deleted, strict=True):
        if meta[4] is None:
            continue  # a new key into a new file group: no base file or log of a stored one
        r = facts[i]
        row = {**{c: r[c] for c in [*key_columns, *ordering]}, **dict(zip(META, meta, strict=True))}
        row[logkeys.FILE_ID] = meta[4].split("_", 1)[0]
        row["_hoodie_is_deleted"] = deleted or bool(r["_hoodie_is_deleted"])
        row[logkeys.INSERTED] = (meta[2], meta[4]) in inserted
        rows.append(row)
    return logkeys.KeyRows(rows, {c: types[c] for c in [*key_columns, *ordering]})


def _frame(spark, full, plan: _Plan):
    """The located records as a local relation: META, then the events' own columns (assembled in the JVM)."""
    from pyspark.sql import DataFrame

    cls = driver_java.helper(spark)
    names = spark.sparkContext._gateway.new_array(spark._jvm.java.lang.String, len(META))
    for j, m in enumerate(META):
        names[j] = m
    data = [c for c in full.columns if c not in (_RK, _PP, _SKIP, _REJ)]
    rows = driver_java.call(spark, cls, "collect", full._jdf)
    plan_text = json.dumps({"picks": plan.picks, "deleted": plan.deleted, "meta": plan.meta})
    return DataFrame(driver_java.call(spark, cls, "located", full._jdf, rows, plan_text,
                                      data.index("_hoodie_is_deleted"), len(data), names), spark)
