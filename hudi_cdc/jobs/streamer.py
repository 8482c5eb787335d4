"""hudi-cdc's local streamer: HoodieStreamer's DFS-source loop on Hudi's Spark datasource.

Submitted by the local runner with spark-submit (one JVM for every target of a command), or
called in-process with an existing SparkSession (`run_targets`). It takes the same flags and
the same rendered properties file as HoodieStreamer:

  --props FILE --table-type T --target-base-path P --target-table DB.T --op UPSERT|BULK_INSERT
  [--source-ordering-fields F] [--filter-dupes] [--enable-sync] [--continuous]
  [--min-sync-interval-seconds N] [--source-limit BYTES]

and honours, from the properties file: hoodie.streamer.source.dfs.root,
hoodie.streamer.transformer.sql, hoodie.streamer.schemaprovider.registry.url, and passes every
other hoodie.* key to the Hudi writer. Why not HoodieStreamer itself: the utilities bundle that
carries it is not served for Hudi 1.x by the Maven repository this project reaches; on EMR the
real HoodieStreamer runs from the same properties file.

Checkpoint: like HoodieStreamer's DFS sources, the newest modification time (ms) of the files
a round consumed, stored in the commit metadata under `streamer.checkpoint.key.v2`; the next
round reads only files modified later, so bootstrap -> stream hands over with no gap or overlap.

Self-contained on purpose (stdlib + pyspark + optional fastavro): it must run in the Spark
driver whatever Python packages are installed there. Every failure the user can fix is
raised as JobInputError and reported as one line naming the file, field or table.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

CHECKPOINT_KEY = "streamer.checkpoint.key.v2"
LEGACY_CHECKPOINT_KEYS = ("streamer.checkpoint.key.v2", "deltastreamer.checkpoint.key", "streamer.checkpoint.key")
RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "
_IGNORED_PREFIXES = (".", "_")
# Keys consumed by the streamer itself, never passed to the Hudi writer.
_STREAMER_KEYS = (
    "hoodie.streamer.", "hoodie.deltastreamer.", "include",
)


class JobInputError(Exception):
    """Bad input the user can fix; the message names the file, field or table."""


@dataclass
class Target:
    props: str
    table_type: str
    target_base_path: str
    target_table: str
    op: str = "UPSERT"
    source_ordering_fields: Optional[str] = None
    filter_dupes: bool = False
    enable_sync: bool = False
    continuous: bool = False
    min_sync_interval_seconds: int = 0
    source_limit: int = sys.maxsize
    max_rounds: Optional[int] = None  # for tests of continuous mode
    hoodie_conf: List[str] = field(default_factory=list)  # key=value overrides, as HoodieStreamer's --hoodie-conf


@dataclass
class RoundResult:
    table: str
    base_path: str
    operation: str
    files: List[str] = field(default_factory=list)
    records_in: int = 0
    records_written: int = 0
    deletes: int = 0
    checkpoint: Optional[str] = None
    commit: Optional[str] = None
    skipped: bool = False
    stale_ignored: int = 0
    unchanged_ignored: int = 0

    def as_dict(self) -> dict:
        return self.__dict__.copy()


# ---------------------------------------------------------------------------- argv
def parse_argv(argv: Sequence[str]) -> List[Target]:
    """One or more HoodieStreamer-style flag groups, separated by `--next`."""
    groups: List[List[str]] = [[]]
    for a in argv:
        if a == "--next":
            groups.append([])
        else:
            groups[-1].append(a)
    p = argparse.ArgumentParser(prog="hudi-cdc-streamer", add_help=False)
    p.add_argument("--props", required=True)
    p.add_argument("--table-type", required=True, choices=["COPY_ON_WRITE", "MERGE_ON_READ"])
    p.add_argument("--target-base-path", required=True)
    p.add_argument("--target-table", required=True)
    p.add_argument("--op", default="UPSERT", choices=["UPSERT", "INSERT", "BULK_INSERT"])
    p.add_argument("--source-ordering-fields", "--source-ordering-field", dest="source_ordering_fields")
    p.add_argument("--source-class", default=None)  # accepted for argv parity; DFS Avro only
    p.add_argument("--schemaprovider-class", default=None)
    p.add_argument("--transformer-class", default=None)
    p.add_argument("--filter-dupes", action="store_true")
    p.add_argument("--enable-sync", action="store_true")
    p.add_argument("--continuous", action="store_true")
    p.add_argument("--min-sync-interval-seconds", type=int, default=0)
    p.add_argument("--source-limit", type=int, default=sys.maxsize)
    p.add_argument("--max-rounds", type=int, default=None)
    p.add_argument("--hoodie-conf", action="append", default=[])
    out = []
    for g in groups:
        ns = p.parse_args(g)
        out.append(Target(
            props=ns.props, table_type=ns.table_type, target_base_path=ns.target_base_path.rstrip("/"),
            target_table=ns.target_table, op=ns.op, source_ordering_fields=ns.source_ordering_fields,
            filter_dupes=ns.filter_dupes, enable_sync=ns.enable_sync, continuous=ns.continuous,
            min_sync_interval_seconds=ns.min_sync_interval_seconds, source_limit=ns.source_limit,
            max_rounds=ns.max_rounds, hoodie_conf=list(ns.hoodie_conf),
        ))
    return out


# ---------------------------------------------------------------------- properties
def load_properties(path: str, _seen: Optional[set] = None) -> Dict[str, str]:
    """Java-properties subset HoodieStreamer uses: key=value lines, # comments, include=FILE."""
    local = _local_path(path)
    seen = _seen or set()
    if local in seen:
        raise JobInputError(f"{path}: include cycle")
    seen.add(local)
    if not os.path.exists(local):
        raise JobInputError(f"{path}: properties file not found")
    props: Dict[str, str] = {}
    with open(local, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#") or line.startswith("!"):
                continue
            if "=" not in line:
                raise JobInputError(f"{path}:{lineno}: expected key=value")
            key, value = line.split("=", 1)
            key, value = key.strip(), value.strip()
            if key == "include":
                inc = value if os.path.isabs(_local_path(value)) else os.path.join(os.path.dirname(local), value)
                props.update(load_properties(inc, seen))
            else:
                props[key] = value
    return props


def _local_path(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def _prop(props: Dict[str, str], name: str) -> Optional[str]:
    """hoodie.streamer.<name>, falling back to the pre-0.14 hoodie.deltastreamer.<name>."""
    return props.get(f"hoodie.streamer.{name}") or props.get(f"hoodie.deltastreamer.{name}")


# ---------------------------------------------------------------------- file listing
def list_source_files(root: str, checkpoint: Optional[str], source_limit: int) -> Tuple[List[Tuple[str, int, int]], Optional[str]]:
    """Files newer than the checkpoint, oldest first, as DFSPathSelector picks them.

    Returns ([(path, mtime_ms, size)], new_checkpoint). Unlike DFSPathSelector, a round always
    takes at least one file, so a file larger than the source limit cannot stall the stream.
    """
    local = _local_path(root)
    if not os.path.isdir(local):
        raise JobInputError(f"landing directory {root} does not exist")
    files = []
    for dirpath, dirnames, filenames in os.walk(local):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(_IGNORED_PREFIXES))
        for name in filenames:
            if name.startswith(_IGNORED_PREFIXES):
                continue
            full = os.path.join(dirpath, name)
            st = os.stat(full)
            files.append((full, st.st_mtime_ns // 1_000_000, st.st_size))
    files.sort(key=lambda f: (f[1], f[0]))
    last = int(checkpoint) if checkpoint not in (None, "") else None
    picked, total = [], 0
    for path, mtime, size in files:
        if last is not None and mtime <= last:
            continue
        if picked and total + size > source_limit and mtime != picked[-1][1]:
            break  # never split files sharing one modification time across rounds
        picked.append((path, mtime, size))
        total += size
    new_cp = str(picked[-1][1]) if picked else checkpoint
    return picked, new_cp


def validate_avro_files(files: List[Tuple[str, int, int]], required_fields: List[str]) -> List[dict]:
    """Read every file through fastavro before Spark touches the table: a corrupt or truncated
    file, or one whose schema lacks a required field, fails the round with its name, and nothing
    is written. Returns the distinct writer schemas seen."""
    try:
        import fastavro
    except ImportError:  # pragma: no cover - Spark will still fail on corrupt files, less clearly
        return []
    schemas: Dict[str, dict] = {}
    for path, _, _ in files:
        try:
            with open(path, "rb") as fh:
                reader = fastavro.reader(fh)
                schema = reader.writer_schema
                for _ in reader:
                    pass
        except Exception as exc:  # fastavro raises many types for corrupt input
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise JobInputError(f"corrupt or truncated Avro file {path}: {reason}") from None
        names = {f["name"] for f in schema.get("fields", [])}
        for f in required_fields:
            if f not in names:
                raise JobInputError(f"field {f!r} (record key/ordering) is missing from the schema of {path}")
        schemas[json.dumps(schema, sort_keys=True)] = schema
    return list(schemas.values())


# ---------------------------------------------------------------------- the table
def read_checkpoint(base_path: str) -> Optional[str]:
    """The checkpoint of the newest completed commit that carries one, read with hudi-rs when
    available (no JVM round trip), else from the timeline files' JSON."""
    local = _local_path(base_path)
    if not os.path.exists(os.path.join(local, ".hoodie", "hoodie.properties")):
        return None
    try:
        from hudi import HudiTableBuilder

        table = HudiTableBuilder.from_base_uri(base_path).build()
        tl = table.get_timeline()
        instants = list(tl.get_completed_commits()) + list(tl.get_completed_deltacommits())
        instants.sort(key=lambda i: i.timestamp, reverse=True)
        for inst in instants:
            meta = json.loads(tl.get_instant_metadata_in_json(inst) or "{}")
            extra = meta.get("extraMetadata") or meta.get("extra_metadata") or {}
            for key in LEGACY_CHECKPOINT_KEYS:
                if extra.get(key):
                    return extra[key]
        return None
    except ImportError:  # pragma: no cover
        return None


def has_completed_commit(base_path: str) -> bool:
    local = _local_path(base_path)
    for sub in (os.path.join(local, ".hoodie", "timeline"), os.path.join(local, ".hoodie")):
        if os.path.isdir(sub):
            for name in os.listdir(sub):
                if name.endswith((".commit", ".deltacommit", ".replacecommit")) and not name.startswith("."):
                    return True
    return False


def _writer_options(props: Dict[str, str], t: Target) -> Dict[str, str]:
    opts = {k: v for k, v in props.items() if k.startswith("hoodie.") and not k.startswith(_STREAMER_KEYS)}
    db, _, table = t.target_table.rpartition(".")
    opts.setdefault("hoodie.table.name", table)
    opts["hoodie.datasource.write.table.type"] = t.table_type
    if t.source_ordering_fields:
        opts.setdefault("hoodie.table.ordering.fields", t.source_ordering_fields)
    if t.enable_sync:
        opts["hoodie.datasource.meta.sync.enable"] = "true"
        opts["hoodie.datasource.hive_sync.enable"] = "true"
        if db:
            opts.setdefault("hoodie.datasource.hive_sync.database", db)
        opts.setdefault("hoodie.datasource.hive_sync.table", table)
    return opts


def _registry_schema(url: str) -> Optional[str]:
    """Fetch the Avro schema text from a Confluent-compatible registry subject URL
    (…/subjects/<topic>-value/versions/latest). Credentials come from the environment only."""
    import base64
    import urllib.request

    req = urllib.request.Request(url, headers={"Accept": "application/vnd.schemaregistry.v1+json, application/json"})
    user, pw = os.environ.get("HUDI_CDC_REGISTRY_USERNAME"), os.environ.get("HUDI_CDC_REGISTRY_PASSWORD")
    if user and pw:
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode())
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read().decode() or "{}")
    except Exception as exc:
        raise JobInputError(f"schema registry {url.split('?')[0]} could not be read: {exc}") from None
    schema = body.get("schema")
    if not schema:
        raise JobInputError(f"schema registry {url} returned no schema")
    return schema


def _check_registry_compat(registry_schema: str, file_schemas: List[dict], path_hint: str) -> None:
    """Every field the landed files carry must exist in the registry schema; otherwise the
    registry was not updated for a source change and reading would silently drop a column."""
    reg = json.loads(registry_schema)
    reg_fields = {f["name"] for f in reg.get("fields", [])}
    for s in file_schemas:
        missing = [f["name"] for f in s.get("fields", []) if f["name"] not in reg_fields]
        if missing:
            raise JobInputError(
                f"landed files under {path_hint} carry field(s) {', '.join(missing)} that the registry schema lacks; "
                "register the new schema version first (hudi-cdc schemas register)")


def run_round(spark, t: Target, props: Dict[str, str], log=print) -> RoundResult:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    root = _prop(props, "source.dfs.root")
    if not root:
        raise JobInputError(f"{t.props}: hoodie.streamer.source.dfs.root is not set")
    table_label = f"{t.target_table} ({t.target_base_path})"
    result = RoundResult(table=t.target_table, base_path=t.target_base_path, operation=t.op)
    existing = has_completed_commit(t.target_base_path)
    checkpoint = read_checkpoint(t.target_base_path) if existing else None
    files, new_cp = list_source_files(root, checkpoint, t.source_limit)
    result.checkpoint = new_cp
    if not files:
        result.skipped = True
        log(f"{t.target_table}: no new files under {root} after checkpoint {checkpoint}")
        return result
    result.files = [f[0] for f in files]

    record_keys = [k.strip() for k in props.get("hoodie.datasource.write.recordkey.field", "").split(",") if k.strip()]
    if not record_keys:
        raise JobInputError(f"{t.props}: hoodie.datasource.write.recordkey.field is not set")
    ordering = [o.strip() for o in (t.source_ordering_fields or props.get("hoodie.table.ordering.fields", "")).split(",") if o.strip()]
    file_schemas = validate_avro_files(files, record_keys + ordering)

    reader = spark.read.format("avro")
    reg_url = _prop(props, "schemaprovider.registry.url")
    if reg_url:
        schema_text = _registry_schema(reg_url)
        _check_registry_compat(schema_text, file_schemas, root)
        reader = reader.option("avroSchema", schema_text)
    df = reader.load([f"file://{f[0]}" if not f[0].startswith("file:") else f[0] for f in files])
    result.records_in = df.count()

    sql = _prop(props, "transformer.sql")
    if sql:
        view = f"hudi_cdc_src_{int(time.time() * 1000)}"
        df.createOrReplaceTempView(view)
        df = spark.sql(sql.replace("<SRC>", view))

    # Latest event per key within the round (Debezium may deliver several changes of one row in
    # one file, and Kafka Connect may redeliver): the largest ordering value wins, as Hudi's
    # event-time ordering would decide between rounds.
    if ordering:
        w = Window.partitionBy(*record_keys).orderBy(*[F.col(o).desc_nulls_last() for o in ordering])
        df = df.withColumn("__hudi_cdc_rn", F.row_number().over(w)).where("__hudi_cdc_rn = 1").drop("__hudi_cdc_rn")
    # Cached once: the counts, the tombstone lookups and the write below all read this round's events.
    events = df.cache()
    df = events
    is_delete = "_hoodie_is_deleted" in df.columns
    deleted_keys: List[dict] = []
    if is_delete:
        # Hard deletes leave no row to compare a late event with, so the keys and ordering values
        # of deletes are kept as tombstones; a later round drops events no newer than them.
        deleted_keys = [r.asDict() for r in
                        df.where(F.col("_hoodie_is_deleted")).select(*record_keys, *ordering).collect()]
        result.deletes = len(deleted_keys)
        tombstones = read_tombstones(t.target_base_path) if t.op != "BULK_INSERT" else []
        if tombstones and ordering:
            df, result.stale_ignored = _drop_stale_after_delete(spark, df, tombstones, record_keys, ordering)
            if result.stale_ignored:
                log(f"{t.target_table}: ignored {result.stale_ignored} stale event(s) for keys deleted by a newer change")
    if t.op != "BULK_INSERT" and existing and ordering:
        df, result.unchanged_ignored = drop_unchanged(spark, df, t.target_base_path, record_keys, ordering)
        if result.unchanged_ignored:
            log(f"{t.target_table}: ignored {result.unchanged_ignored} event(s) no newer than the stored row")
    if t.op == "BULK_INSERT" and is_delete:
        # Nothing to delete in a new table: a row deleted before bootstrap is simply absent.
        df = df.where(~F.col("_hoodie_is_deleted"))
    result.records_written = df.count()

    opts = _writer_options(props, t)
    opts["hoodie.datasource.write.operation"] = t.op.lower()
    if t.filter_dupes and t.op != "BULK_INSERT":
        # BULK_INSERT goes into a new table and the batch is de-duplicated by key above, which is
        # what --filter-dupes means there (Hudi's row-writer bulk insert refuses drop.duplicates).
        opts["hoodie.datasource.write.insert.drop.duplicates"] = "true"
    opts["hoodie.datasource.write.commitmeta.key.prefix"] = "streamer."
    opts[CHECKPOINT_KEY] = new_cp
    log(f"{t.target_table}: {t.op} of {result.records_written} record(s) from {len(files)} file(s) "
        f"into {t.target_base_path} ...")
    try:
        parts = delete_block_safe_parts(df, t.table_type)
        for i, part in enumerate(parts):
            # the checkpoint goes with the last commit only: a crash in between re-reads the files
            part_opts = opts if i == len(parts) - 1 else {k: v for k, v in opts.items() if k != CHECKPOINT_KEY}
            part.write.format("hudi").options(**part_opts).mode("append").save(t.target_base_path)
    except Exception as exc:
        raise RuntimeError(f"Hudi write to {table_label} failed: {_root_cause(exc)}") from exc
    finally:
        events.unpersist()
        df.unpersist()
    result.commit = _latest_instant(t.target_base_path)
    if deleted_keys and result.commit:
        write_tombstones(t.target_base_path, result.commit, deleted_keys)
    log(f"{t.target_table}: committed {result.commit}, checkpoint {new_cp}")
    return result


# ---------------------------------------------------------------------- tombstones
TOMBSTONE_DIR = (".hoodie", ".aux", "hudi-cdc-tombstones")


def _tombstone_dir(base_path: str) -> str:
    return os.path.join(_local_path(base_path), *TOMBSTONE_DIR)


def completed_instants(base_path: str) -> set:
    """Requested times of the completed write instants (layout 2 `<req>_<done>.<action>`, layout 1 `<req>.<action>`)."""
    out = set()
    local = _local_path(base_path)
    for sub in (os.path.join(local, ".hoodie", "timeline"), os.path.join(local, ".hoodie")):
        if not os.path.isdir(sub):
            continue
        for name in os.listdir(sub):
            stem, dot, action = name.partition(".")
            if action in ("commit", "deltacommit", "replacecommit") and stem:
                out.add(stem.split("_")[0])
    return out


def read_tombstones(base_path: str) -> List[dict]:
    """Tombstones written by completed commits only (a failed round's file is ignored)."""
    d = _tombstone_dir(base_path)
    if not os.path.isdir(d):
        return []
    done = completed_instants(base_path)
    rows: List[dict] = []
    for name in sorted(os.listdir(d)):
        if name.endswith(".jsonl") and name[:-len(".jsonl")] in done:
            with open(os.path.join(d, name), encoding="utf-8") as fh:
                rows.extend(json.loads(line) for line in fh if line.strip())
    return rows


def write_tombstones(base_path: str, commit: str, rows: List[dict]) -> None:
    d = _tombstone_dir(base_path)
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, f".{commit}.jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, default=str) + "\n")
    os.replace(tmp, os.path.join(d, f"{commit}.jsonl"))


def _drop_stale_after_delete(spark, df, tombstones: List[dict], keys: List[str], ordering: List[str]):
    """Remove non-delete events whose key was deleted by a change at least as new (lexicographic
    over the ordering fields). Returns (dataframe, how many were removed)."""
    from pyspark.sql import functions as F

    latest: Dict[tuple, dict] = {}
    for t in tombstones:
        k = tuple(t.get(c) for c in keys)
        o = tuple(t.get(c) for c in ordering)
        if k not in latest or tuple(latest[k][c] for c in ordering) < o:
            latest[k] = t
    tdf = spark.createDataFrame([tuple(t[c] for c in keys + ordering) for t in latest.values()],
                                [f"__t_{c}" for c in keys + ordering])
    for c in keys + ordering:
        tdf = tdf.withColumn(f"__t_{c}", F.col(f"__t_{c}").cast(df.schema[c].dataType))
    cond = None
    for c in keys:
        eq = F.col(c) == F.col(f"__t_{c}")
        cond = eq if cond is None else cond & eq
    newer_or_equal = None  # tombstone ordering >= event ordering, lexicographically
    for i in reversed(range(len(ordering))):
        o = ordering[i]
        here = F.col(f"__t_{o}") > F.col(o) if newer_or_equal is not None else F.col(f"__t_{o}") >= F.col(o)
        if newer_or_equal is not None:
            here = here | ((F.col(f"__t_{o}") == F.col(o)) & newer_or_equal)
        newer_or_equal = here
    stale_cond = cond & newer_or_equal & ~F.col("_hoodie_is_deleted")
    kept = df.join(tdf, stale_cond, "left_anti")
    removed = df.join(tdf, stale_cond, "left_semi").count()
    return kept, removed



def drop_unchanged(spark, df, base_path: str, keys: List[str], ordering: List[str]):
    """Remove non-delete events whose key the table already holds with an ordering value at least
    as new (lexicographic over the ordering fields): a redelivered event (same key, same ordering
    value) or a late, stale one. Hudi's EVENT_TIME_ORDERING lets an equal ordering value win, so
    without this a redelivery is written again as a new version that changed nothing.

    Reads only the record key and ordering columns of the table (a snapshot read, so a MoR table's
    log files count), restricted to this round's keys. Returns (dataframe, how many were removed);
    the dataframe is cached (the counts and the write read it again), unpersist it after the write."""
    from pyspark.sql import functions as F

    stored = (spark.read.format("hudi").load(base_path)
              .select(*[F.col(c).alias(f"__s_{c}") for c in keys + ordering]))
    round_keys = df.select(*[F.col(c).alias(f"__s_{c}") for c in keys]).distinct()
    stored = stored.join(F.broadcast(round_keys), [f"__s_{c}" for c in keys], "left_semi")
    cond = None
    for c in keys:
        eq = F.col(c) == F.col(f"__s_{c}")
        cond = eq if cond is None else cond & eq
    at_least = None  # stored ordering >= event ordering, lexicographically
    for o in reversed(ordering):
        s, e = F.col(f"__s_{o}"), F.col(o)
        at_least = (s >= e) if at_least is None else ((s > e) | ((s == e) & at_least))
    unchanged = cond & at_least
    if "_hoodie_is_deleted" in df.columns:
        unchanged = unchanged & ~F.coalesce(F.col("_hoodie_is_deleted"), F.lit(False))
    kept = df.join(stored, unchanged, "left_anti").cache()
    removed = df.count() - kept.count()
    return kept, removed


def delete_block_safe_parts(df, table_type: str) -> list:
    """The DataFrames to write, in order, so that every MoR delete block holds ordering values of
    one type, which hudi-rs (the `hudi` package, 0.5.0) requires ("Delete block mixes ordering
    types"). In one upsert, Hudi's global index writes the delete that moves a row out of its old
    partition with the default ordering value (int 0), while a key-only delete carries the event's
    ordering value (long for an LSN); both land in the old file group's delete block. Written as
    two commits, non-deletes first, each delete block is of one type. CoW has no delete blocks.
    Empty parts are left out; an empty round is one empty write (a commit carrying the checkpoint)."""
    from pyspark.sql import functions as F

    if table_type != "MERGE_ON_READ" or "_hoodie_is_deleted" not in df.columns:
        return [df]
    is_del = F.coalesce(F.col("_hoodie_is_deleted"), F.lit(False))
    parts = [p for p in (df.where(~is_del), df.where(is_del)) if not p.isEmpty()]
    return parts or [df]


def _latest_instant(base_path: str) -> Optional[str]:
    try:
        from hudi import HudiTableBuilder

        tl = HudiTableBuilder.from_base_uri(base_path).build().get_timeline()
        return tl.get_latest_commit_timestamp()
    except Exception:  # pragma: no cover
        return None


def _root_cause(exc: BaseException) -> str:
    text = str(exc)
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    causes = [l for l in lines if "Caused by:" in l or "Exception:" in l]
    return (causes[-1] if causes else (lines[0] if lines else type(exc).__name__))[:500]


def run_targets(spark, targets: List[Target], log=print) -> List[RoundResult]:
    """One round per target; in continuous mode, round after round over every target in turn
    (never stuck on the first, as HoodieMultiTableStreamer's continuous mode is)."""
    props = {}
    for t in targets:
        props[id(t)] = load_properties(t.props)
        for kv in t.hoodie_conf:
            k, _, v = kv.partition("=")
            props[id(t)][k.strip()] = v.strip()
    out: List[RoundResult] = []
    continuous = any(t.continuous for t in targets)
    interval = max((t.min_sync_interval_seconds for t in targets), default=0)
    max_rounds = min((t.max_rounds for t in targets if t.max_rounds is not None), default=None)
    rounds = 0
    while True:
        started = time.time()
        for t in targets:
            out.append(run_round(spark, t, props[id(t)], log))
        rounds += 1
        if not continuous or (max_rounds is not None and rounds >= max_rounds):
            return out
        wait = interval - (time.time() - started)
        if wait > 0:
            time.sleep(wait)


def build_session(app_name: str = "hudi-cdc"):
    from pyspark.sql import SparkSession

    return (SparkSession.builder.appName(app_name)
            .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
            .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
            .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
            .getOrCreate())


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        targets = parse_argv(argv)
    except SystemExit:
        print(ERROR_MARK + json.dumps({"message": "bad streamer arguments: " + shlex.join(argv)}), flush=True)
        return 2
    spark = build_session()
    spark.sparkContext.setLogLevel("WARN")
    try:
        results = run_targets(spark, targets, log=lambda m: print("hudi-cdc: " + m, flush=True))
    except JobInputError as exc:
        print(ERROR_MARK + json.dumps({"message": str(exc), "kind": "input"}), flush=True)
        return 3
    except Exception as exc:
        print(ERROR_MARK + json.dumps({"message": _root_cause(exc), "kind": "job"}), flush=True)
        raise
    finally:
        pass
    print(RESULT_MARK + json.dumps([r.as_dict() for r in results]), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
