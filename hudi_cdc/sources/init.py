"""`hudi-cdc init --from-database`: the pipeline file's tables section from a live database (its Source
reads the tables: sources/postgres/init.py, sources/mysql/init.py).

Each table of the chosen schemas (or the named tables) becomes an entry: topic
`<topic prefix>.<schema>.<table>` (as Debezium names it), record_key = the primary key, the ordering
field, the partition field only when given (the candidates are listed in a comment), and the warnings
`source check` would give as comments. A table without a primary key is left out, with the fix.

Idempotent: an existing file keeps every line it has (comments too); only tables it does not name yet
(by topic) are added, at the end of its `tables:` block; a second run changes nothing. The result is
validated as a pipeline file before it is written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from hudi_cdc import sources
from hudi_cdc.config import Pipeline, load_pipeline, parse_pipeline
from hudi_cdc.config.settings import CURRENT_HUDI, DEFAULT_TABLE_VERSION, TABLE_VERSION_COMMENT, DatabaseSettings
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources import history
from hudi_cdc.sources.db_tables import GENERATED_NOTE, DbTable
from hudi_cdc.sources.init_routes import proposals
from hudi_cdc.sources.tables import lake_name, source_tables, topic_prefix

PIPELINE_FILE = "hudi-cdc.yaml"
IDENTITY = {"d": "DEFAULT", "f": "FULL", "i": "USING INDEX", "n": "NOTHING"}


@dataclass
class InitResult:
    path: Path
    text: str
    changed: bool
    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "<schema.table>: why, fix"

    def summary(self, dry_run: bool) -> str:
        if not self.changed:
            return f"{self.path} unchanged: every table is in it ({', '.join(self.kept) or 'none'})"
        verb = "would write" if dry_run else "wrote"
        kept = f"; kept {', '.join(self.kept)}" if self.kept else ""
        return f"{verb} {self.path}: added {', '.join(self.added)}{kept}"


def _entry(t: DbTable, name: str, prefix: str, ordering: str, partition: str | None, indent: str) -> str:
    i2 = indent * 2
    key = [lake_name(k) for k in t.key]  # the lake's names (a column "Order Date" lands as Order_Date)
    topic = f"{prefix}.{t.schema}.{t.table}"
    keys = key[0] if len(key) == 1 else "[" + ", ".join(key) + "]"
    ident = IDENTITY.get(t.replica_identity, "?")
    lines = [f"{indent}{name}:  # {t.qualified}: {len(t.columns)} columns, {t.note or 'REPLICA IDENTITY ' + ident}"]
    if not key:  # PostgreSQL, no primary key, no usable unique index: an append-only raw history (history.py)
        lines += [f"{i2}topic: {topic}",
                  *history.entry_lines(t.qualified, [lake_name(c) for c, _ in t.columns], t.replica_identity, i2),
                  f"{i2}ordering_field: {ordering}", f"{i2}table_types: [COPY_ON_WRITE, MERGE_ON_READ]"]
        return "\n".join(lines) + "\n"
    if not t.primary_key and t.unique_index is not None:
        what = f"the unique index {t.unique_index.name}"
        if t.key_fix:
            lines.append(f"{i2}# no primary key: before capture, {t.key_fix}")
        elif t.identity_index != t.unique_index.name and t.replica_identity != "f":
            lines.append(f"{i2}# no primary key: before capture, ALTER TABLE {t.qualified} REPLICA IDENTITY USING "
                         f"INDEX {t.unique_index.name};")
    else:
        what = "the primary key"
    lines += [f"{i2}topic: {topic}",
              f"{i2}record_key: {keys}  # {what}",
              f"{i2}ordering_field: {ordering}"]
    cands = t.candidates()
    if partition:
        lines.append(f"{i2}partition_field: {partition}")
        if t.replica_identity != "f":
            lines.append(f"{i2}# {partition} is null in key-only deletes (REPLICA IDENTITY not FULL): the default "
                         "GLOBAL_SIMPLE index still finds the row; keep the index global")
        if partition not in key:
            lines.append(f"{i2}# {partition} can change (not in the primary key): the global index moves the row")
    else:
        lines.append(f"{i2}# partition_field: <column>  # candidates: {', '.join(cands) if cands else 'none'}")
    lines.append(f"{i2}table_types: [COPY_ON_WRITE, MERGE_ON_READ]")
    if t.generated:  # never landed rather than NULL once streamed (postgres/catalog.py)
        lines.append(f"{i2}columns: {{exclude: [{', '.join(t.generated)}]}}  # {GENERATED_NOTE}; derive them "
                     "(docs/shaping.md) if the lake needs them")
    return "\n".join(lines) + "\n"


def _table_name(t: DbTable, taken: set[str], tables: list[DbTable]) -> str:
    """A lake table name no other takes, in any case (Hive's names are case-insensitive: `Orders` and `orders`
    would be one table there): the schema before it when another schema's table has its name."""
    same = sum(1 for o in tables if o.table.lower() == t.table.lower()) > 1
    name = re.sub(r"[^A-Za-z0-9_]", "_", f"{t.schema}_{t.table}" if same else t.table)
    lowered = {n.lower() for n in taken}
    while name.lower() in lowered:
        name += "_"
    return name


def _new_file(db: DatabaseSettings, pipeline_name: str, entries: str, registry: str = "",
              metastore: str = "") -> str:
    lines = [f"pipeline: {pipeline_name}", TABLE_VERSION_COMMENT,
             f'hudi: {{version: "{CURRENT_HUDI}", table_version: {DEFAULT_TABLE_VERSION}}}',
             "source:", "  root: landing/topics"]
    if registry:
        lines.append(f"  schema_registry: {registry}")
    lines.append("  database:")
    if db.kind != DatabaseSettings.model_fields["kind"].default:  # the default kind goes unsaid
        lines.append(f"    kind: {db.kind}")
    lines += [f"    host: {db.host}", f"    port: {db.port}", f"    name: {db.name}", f"    user: {db.user}"]
    if db.password_env:
        lines.append(f"    password_env: {db.password_env}  # the name of an env var, never the value")
    lines += ["lake:", "  root: lake", f"  hive_database: {pipeline_name}"]
    if metastore:
        lines.append(f"  hive_metastore: {metastore}")
    lines.append("tables:")
    return "\n".join(lines) + "\n" + entries


def _insert_entries(text: str, entries: str) -> str:
    """`entries` at the end of the top-level `tables:` block, every other line kept."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(r"^tables:\s*(\{\s*\})?\s*(#.*)?$", ln)), None)
    if start is None:
        raise ConfigError("the pipeline file has no top-level `tables:` block to add to")
    lines[start] = re.sub(r"\{\s*\}", "", lines[start]).rstrip() + "\n"
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^[A-Za-z_]", lines[i])), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    if lines[end - 1] and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    return "".join(lines[:end]) + entries + "".join(lines[end:])


def _indent_of(text: str) -> str:
    m = re.search(r"^tables:.*\n(?:\s*#.*\n|\s*\n)*( +)\S", text, re.M)
    return m.group(1) if m else "  "


_NOT_NAME = re.compile(r"[^A-Za-z0-9_]")  # a database name's characters a pipeline name cannot have


def _without_signal_tables(found: list[DbTable], result: InitResult) -> list[DbTable]:
    """The tables but the signal tables of incremental snapshots (`<slot>_signal`, which capture creates beside
    the first table: Debezium's id/type/data), named in the result's skipped list."""
    out = []
    for t in found:
        if t.table.endswith("_signal") and [c.lower() for c, _ in t.columns] == ["id", "type", "data"]:
            result.skipped.append(f"{t.qualified}: a signal table of incremental snapshots (capture's own)")
        else:
            out.append(t)
    return out


def _left_out(t: DbTable) -> str | None:
    """Why init leaves a table out (Debezium cannot capture it; a MySQL-family table without a key: no raw-history
    path there yet), or None."""
    if t.uncapturable:
        return t.uncapturable
    if not t.key and t.note:
        return (f"no primary key (ALTER TABLE {t.qualified} ADD PRIMARY KEY (...); or a unique index on NOT NULL "
                "columns)")
    return None


def has_pipeline_file(directory: Path) -> bool:
    """A pipeline file init adds to: one with anything in it (an empty one, e.g. left by `init > hudi-cdc.yaml`,
    is written anew)."""
    path = directory / PIPELINE_FILE
    return path.exists() and bool(path.read_text().strip())


def _existing(path: Path, registry: str, metastore: str) -> Pipeline | None:
    """The pipeline file already there, if any; --registry / --metastore are for a new file only."""
    existing = load_pipeline(path) if has_pipeline_file(path.parent) else None
    if existing is not None and (registry or metastore):
        key = "source.schema_registry" if registry else "lake.hive_metastore"
        raise ConfigError(f"init --from-database: --{'registry' if registry else 'metastore'} is for a new pipeline "
                          f"file; {path} exists: set {key} in it")
    return existing


def init_from_database(directory: Path, db: DatabaseSettings | None, password: str | None, *,
                       schemas: list[str] | None = None, tables: list[str] | None = None,
                       partition_fields: dict[str, str] | None = None, ordering_field: str = "__lsn",
                       prefix: str | None = None, pipeline_name: str | None = None,
                       registry: str = "", metastore: str = "", progress=None) -> InitResult:
    """The resulting pipeline file (not written: see write()). With an existing file, its source.database
    is used and `db` must be None; `registry` / `metastore` go into a new file only (_existing)."""
    path = directory / PIPELINE_FILE
    partition_fields = dict(partition_fields or {})
    existing = _existing(path, registry, metastore)
    if existing is not None:
        if existing.source.database is None:
            raise ConfigError(f"{path}: has no source.database block; add it (or init into a new directory)")
        db = existing.source.database
        from hudi_cdc.sources.tables import password as pipeline_password

        password = pipeline_password(existing)
        prefix = prefix or topic_prefix(existing)
    if db is None:
        raise ConfigError("init --from-database: --dbname and --user are needed for a new pipeline file")
    prefix = prefix or db.name
    source = sources.get(db.kind)
    schemas = schemas or source.default_schemas(db)  # PostgreSQL: public; MySQL-family: the database
    result = InitResult(path, "", False)
    found = _without_signal_tables(source.read_tables(db, password, schemas, tables), result)
    known = {(t.schema, t.table) for t in source_tables(existing)} if existing else set()
    taken = set(existing.tables) if existing else set()
    indent = _indent_of(path.read_text()) if existing else "  "
    entries = ""
    added: list[DbTable] = []
    for t in found:
        if (t.schema, t.table) in known:
            result.kept.append(t.qualified)
            continue
        skip = _left_out(t)
        if skip:
            result.skipped.append(f"{t.qualified}: {skip}")
            continue
        if not t.key and progress:
            full = "" if t.replica_identity == "f" else \
                f" Before capture: ALTER TABLE {t.qualified} REPLICA IDENTITY FULL;"
            progress(f"{t.qualified}: no primary key: added as an append-only raw history (every change event a row, "
                     f"record_key __lsn + its columns; or ALTER TABLE {t.qualified} ADD PRIMARY KEY (...)).{full}")
        if t.key_fix and progress:
            progress(f"{t.qualified}: no primary key; record_key {', '.join(t.key)} from unique index "
                     f"{t.unique_index.name if t.unique_index else '?'}. Before capture: {t.key_fix}")
        if not t.primary_key and progress and t.unique_index is not None and t.identity_index != t.unique_index.name \
                and not t.key_fix:
            progress(f"{t.qualified}: no primary key; record_key {', '.join(t.key)} from unique index "
                     f"{t.unique_index.name}. Before capture: ALTER TABLE {t.qualified} REPLICA IDENTITY USING INDEX "
                     f"{t.unique_index.name};")
        name = _table_name(t, taken, found)
        taken.add(name)
        part = partition_fields.pop(name, None) or partition_fields.pop(t.qualified, None)
        if part is not None and part not in {c for c, _ in t.columns}:
            raise ConfigError(f"--partition-field {name}={part}: {t.qualified} has no column {part}")
        entries += _entry(t, name, prefix, ordering_field, part, indent)
        result.added.append(name)
        added.append(t)
    if partition_fields:
        raise ConfigError(f"--partition-field: no table added named {', '.join(sorted(partition_fields))}")
    if entries:  # shards: a commented route entry (init_routes.py)
        routes, notes = proposals(added, prefix, taken, indent)
        entries += routes
        for note in notes if progress else []:
            progress(note)
    for s in result.skipped:
        if progress:
            progress(f"skipped {s}")
    if existing is not None:
        old = path.read_text()
        result.text = _insert_entries(old, entries) if entries else old
    else:
        if not entries:
            raise ConfigError(f"no table with a primary key or unique index in schema(s) {', '.join(schemas)} "
                              f"of database {db.name}")
        result.text = _new_file(db, pipeline_name or _NOT_NAME.sub("_", db.name), entries, registry, metastore)
    result.changed = bool(entries)
    parse_pipeline(yaml.safe_load(result.text), str(path), str(directory))  # what we write must load
    return result


def partition_fields(specs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """TABLE=COLUMN options as a mapping."""
    out = {}
    for spec in specs:
        name, sep, col = spec.partition("=")
        if not sep or not name or not col:
            raise ConfigError(f"--partition-field {spec!r}: expected TABLE=COLUMN")
        out[name] = col
    return out


def new_database(directory: Path, host: str, port: int | None, dbname: str | None, user: str | None,
                 password_env: str | None, kind: str = "postgresql") -> tuple[DatabaseSettings | None, str | None]:
    """The database of a new pipeline file from options, and its password from the named env var
    (None, None when DIRECTORY already has a pipeline file: its source.database is used)."""
    if has_pipeline_file(directory) or not (dbname and user):
        return None, None
    try:
        given = {"kind": kind, "host": host, "name": dbname, "user": user, "password_env": password_env}
        db = DatabaseSettings.model_validate({**given, "port": port} if port is not None else given)
    except ValueError as exc:  # pydantic's ValidationError
        raise ConfigError(f"init --from-database: {' '.join(str(exc).split())}") from None
    if password_env and password_env not in os.environ:
        raise ConfigError(f"--password-env: environment variable {password_env} is not set")
    return db, os.environ.get(password_env) if password_env else None


def write(result: InitResult) -> None:
    result.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = result.path.with_suffix(".yaml.tmp")
    tmp.write_text(result.text)
    tmp.replace(result.path)
