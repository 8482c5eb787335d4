"""Typed columns for HoodieStreamer on EMR / EMR Serverless (hudi.engine hoodiestreamer: the 0.14 and seed
profiles, and the current profile when chosen): the same per-column transformer SQL as the local 0.14
engine (one mapping, hudi_cdc/common/lake_types.py via submit.typed_from), rendered from the newest landed file's
schema (local path or s3://) into the job's properties file, with the table's source and target Avro
schemas beside it for FilebasedSchemaProvider (0.14). What `hudi-cdc render` writes and the AWS runners
upload. A table with no landed file yet, or whose schemas come from a registry, is rendered as before,
with one line saying why (docs/types.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from hudi_cdc.common import storage
from hudi_cdc.config import TYPE_SUFFIX, Pipeline
from hudi_cdc.core import render
from hudi_cdc.core.profiles import HOODIESTREAMER, engine_for
from hudi_cdc.errors import DataError
from hudi_cdc.runners.deltastreamer.schema_union import file_schema, union_schema
from hudi_cdc.runners.deltastreamer.submit import TypedJob, typed_from, typed_types

Progress = Callable[[str], None]
AWS_TARGETS = ("emr", "emr-serverless")
IDENTITY_SQL = "SELECT * FROM <SRC>"
_ACTIONS = (".commit", ".deltacommit", ".replacecommit")


@dataclass
class TypedFiles:
    """Every rendered file ({name: text}: properties, and the typed tables' schema files) and, per table
    left untyped, the one line saying why and what to do."""

    files: dict[str, str]
    untyped: dict[str, str] = field(default_factory=dict)
    no_landing: set[str] = field(default_factory=set)  # the untyped tables only because nothing has landed

    def typed(self, table: str) -> bool:
        return table not in self.untyped


def applies(pipeline: Pipeline, target: str) -> bool:
    """Do the target's jobs run the real HoodieStreamer (whose transformer SQL types the columns)?"""
    return target in AWS_TARGETS and engine_for(pipeline.hudi.version, target, pipeline.hudi.engine) == HOODIESTREAMER


def schema_names(table: str, table_type: str) -> tuple[str, str]:
    """(source, target) schema file names, as the local engine writes them (submit.write_schema_files)."""
    return f"{table}.source.avsc", f"{table}_{TYPE_SUFFIX[table_type]}.target.avsc"


def landed_schema_at(topic_uri: str) -> dict | None:
    """The newest landed .avro file's writer schema extended with the fields older files carried
    (schema_union.py); None when no file has landed. Local paths and s3:// alike."""
    files = [f[0] for f in storage.walk_files(topic_uri) if f[0].endswith(".avro")] \
        if storage.is_dir(topic_uri) else []
    if not files:
        return None
    newest = file_schema(files[-1])  # walk_files: oldest first, by modification time then name
    if newest is None:
        raise DataError(f"{files[-1]}: cannot read its Avro schema (the typed transformer SQL comes from it)")
    return union_schema(newest, files)


def no_landing_line(pipeline: Pipeline, table: str) -> str:
    return (f"{table}: no landed .avro file under {pipeline.topic_dir(table)} yet, so its HoodieStreamer jobs are "
            "rendered without typed columns (they would write Debezium's encodings); land the table first "
            "(hudi-cdc capture --once, or the S3 sink), then render / run again (docs/types.md)")


def _has_commit(base: str) -> bool:
    hoodie = storage.join(base, ".hoodie")
    return any(n.count(".") == 1 and n.endswith(_ACTIONS) for n in storage.listdir(hoodie))


def typed_job_at(pipeline: Pipeline, table: str, table_type: str, landed: dict) -> TypedJob:
    """The TypedJob of one job from a landed schema; a table written before typed columns keeps them."""
    from hudi_cdc.jobs.stream.typed import legacy_columns, stored_schema

    types = typed_types(pipeline, table, landed)
    base = pipeline.base_path(table, table_type)
    legacy = legacy_columns(types, stored_schema(base)) if _has_commit(base) else []
    return typed_from(pipeline, table, landed, types, legacy)


def _set_keys(text: str, values: dict[str, str], comment: str) -> str:
    """The properties text with these keys (any earlier line of theirs dropped) appended under a comment."""
    lines = [ln for ln in text.splitlines() if ln.split("=", 1)[0] not in values]
    lines.append(comment)
    lines += [f"{k}={v}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def render_typed(pipeline: Pipeline, files_root: str, progress: Progress = lambda m: None) -> TypedFiles:
    """render.render_properties plus, per table with landed files, the typed transformer SQL (and for a
    file schema provider the source/target schema files, read from ``files_root``, where the properties
    files go)."""
    files = dict(render.render_properties(pipeline))
    out = TypedFiles(files)
    prof = render.profile(pipeline)
    sql_key = f"{prof.key_prefix}transformer.sql"
    root = files_root.rstrip("/")
    for table in pipeline.tables:
        t = pipeline.table(table)
        why = ""
        landed = None
        if pipeline.source.schema_registry:
            why = (f"{table}: schemas come from the registry, so its HoodieStreamer jobs are rendered without typed "
                   "columns (Debezium's encodings); use a file-based source (no source.schema_registry) or "
                   "hudi.engine hudi-cdc for typed columns (docs/types.md)")
        elif prof.name == "seed" and t.deletes != "hard":
            why = (f"{table}: the seed profile renders no transformer with deletes: soft, so its columns keep "
                   "Debezium's encodings; use deletes: hard or hudi.version 0.14.0 (docs/types.md)")
        else:
            landed = landed_schema_at(pipeline.topic_dir(table))
            if landed is None:
                why = no_landing_line(pipeline, table)
                out.no_landing.add(table)
        for tt in t.table_types:
            name = render.props_filename(pipeline, table, tt)
            if why or landed is None:
                if t.deletes != "hard" and prof.name != "seed":  # the argv names the transformer class
                    files[name] = _set_keys(files[name], {sql_key: IDENTITY_SQL},
                                            "# no typed columns yet (see hudi-cdc render's output): rows as landed")
                continue
            job = typed_job_at(pipeline, table, tt, landed)
            if job.legacy:
                progress(f"{table}: column(s) {', '.join(job.legacy)} keep Debezium's encodings (the table was "
                         "written before hudi-cdc typed them); re-bootstrap the table to store them typed "
                         "(docs/types.md)")
            values = {sql_key: job.sql}
            if prof.file_schema_provider:
                src, tgt = schema_names(table, tt)
                files[src] = json.dumps(job.source, indent=2) + "\n"
                files[tgt] = json.dumps(job.target, indent=2) + "\n"
                values[f"{prof.key_prefix}schemaprovider.source.schema.file"] = f"{root}/{src}"
                values[f"{prof.key_prefix}schemaprovider.target.schema.file"] = f"{root}/{tgt}"
            files[name] = _set_keys(files[name], values,
                                    "# Typed columns (docs/types.md): rendered per column from the newest landed "
                                    "file's schema; render again after a schema change")
        if why:
            out.untyped[table] = why
            progress(why)
    return out

