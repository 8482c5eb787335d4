"""Run the real HoodieDeltaStreamer 0.14.0 locally for a pipeline's jobs: one spark-submit per job.

The argv comes from the profile's templates (templates/v014) and the prepared runtime
(runtime.py): Java 11-17, SPARK_LOCAL_IP=127.0.0.1, a log file per job under
<pipeline dir>/.hudi-cdc/logs, and a one-line root cause when a job fails. The source and target
Avro schemas (FilebasedSchemaProvider) are written next to the properties from the newest landed
file's schema; the target schema adds `_hoodie_is_deleted` for hard deletes. After each job the
table's timeline says which instants the job completed and the checkpoint it stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import fastavro

from hudi_cdc.common import checkpoints, lake_types
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import TYPE_SUFFIX, Pipeline, uri_to_path
from hudi_cdc.core import render
from hudi_cdc.errors import ConfigError, DataError, HudiCdcError, JobError, TablesFailed
from hudi_cdc.registry.credentials import registry_env
from hudi_cdc.runners.deltastreamer import runtime as rt_mod
from hudi_cdc.runners.deltastreamer.schema_union import union_schema
from hudi_cdc.runners.deltastreamer.shaped_sql import shaped
from hudi_cdc.runners.deltastreamer.toast_guard import refuse_placeholders
from hudi_cdc.runners.deltastreamer.truncates import refuse_truncates
from hudi_cdc.spark import launch

Progress = Callable[[str], None]

CHECKPOINT_KEY = checkpoints.KEY_V1  # what 0.14 writes; every key Hudi has used is read
DELETE_FIELD = {"name": "_hoodie_is_deleted", "type": "boolean", "default": False}
SOURCE_SCHEMA_KEY = "hoodie.streamer.schemaprovider.source.schema.file"
TARGET_SCHEMA_KEY = "hoodie.streamer.schemaprovider.target.schema.file"
TERMINATION_CLASS = "org.apache.hudi.utilities.streamer.NoNewDataTerminationStrategy"
TERMINATION_ROUNDS_KEY = "max.rounds.without.new.data.to.shutdown"  # read by NoNewDataTerminationStrategy
_ACTIONS = (".commit", ".deltacommit", ".replacecommit")


def work_dir(pipeline: Pipeline) -> Path:
    return pipeline.work_dir


def landed_schema(pipeline: Pipeline, table: str) -> dict:
    """The writer schema of the newest landed .avro file of a table's topic (local landing only)."""
    topic_dir = uri_to_path(pipeline.topic_dir(table))
    files = [p for p in topic_dir.glob("*.avro") if not p.name.startswith(".")] if topic_dir.is_dir() else []
    if not files:
        raise DataError(f"no landed .avro files under {topic_dir}: the source schema of {table} comes from them")
    newest = max(files, key=lambda p: (p.stat().st_mtime_ns, p.name))
    try:
        with open(newest, "rb") as fh:
            schema = fastavro.reader(fh).writer_schema
    except (OSError, ValueError) as exc:
        raise DataError(f"cannot read the schema of {newest}: {exc}") from None
    if not isinstance(schema, dict):
        raise DataError(f"{newest}: the writer schema is not an Avro record")
    return union_schema(schema, files)  # a dropped/renamed column stays (schema_union.py)


def target_schema(source: dict, hard_deletes: bool) -> dict:
    """The table's schema: the source's, plus Hudi's delete marker when hard deletes are on."""
    out = json.loads(json.dumps(source))
    if hard_deletes and not any(f["name"] == DELETE_FIELD["name"] for f in out["fields"]):
        out["fields"].append(dict(DELETE_FIELD))
    return out


TRANSFORMER_CLASS = "org.apache.hudi.utilities.transform.SqlQueryBasedTransformer"
TRANSFORMER_SQL_KEY = "hoodie.streamer.transformer.sql"


@dataclass
class TypedJob:
    """What the typed lake (hudi_cdc/common/lake_types.py) makes of a job's landed schema: the schema to read the
    files with, the table's typed schema, the transformer SQL typing each column, the legacy columns kept."""

    source: dict
    target: dict
    sql: str
    legacy: list[str]


def typed_job(pipeline: Pipeline, table: str, table_type: str) -> TypedJob:
    from hudi_cdc.jobs.stream.typed import legacy_columns, stored_schema

    landed = landed_schema(pipeline, table)
    types = typed_types(pipeline, table, landed)
    base = pipeline.base_path(table, table_type)
    legacy = legacy_columns(types, stored_schema(base)) if completed_instants(uri_to_path(base)) else []
    return typed_from(pipeline, table, landed, types, legacy)


def typed_types(pipeline: Pipeline, table: str, landed: dict) -> list[lake_types.ColumnType]:
    """The lake types of a landed schema's columns, every Decimal read as bytes (0.14's Avro source refuses
    the landed decimals: "Found bytes, expecting union")."""
    try:
        return lake_types.schema_types(landed, table=table, props=pipeline.table(table).hudi_options,
                                       decimals_as_bytes=True)
    except lake_types.LakeTypeError as exc:
        raise ConfigError(f"tables.{table}: {exc}") from None


def typed_from(pipeline: Pipeline, table: str, landed: dict, types: list[lake_types.ColumnType],
               legacy: list[str]) -> TypedJob:
    """The TypedJob of a landed schema (columns in ``legacy`` kept as landed): the local engine's and the
    one rendered for HoodieStreamer on EMR (typed_render.py)."""
    t = pipeline.table(table)
    source = lake_types.reader_schema(landed, types) or landed
    target = target_schema(lake_types.typed_schema(landed, types, keep=set(legacy)), t.deletes == "hard")
    items = lake_types.select_list(types, keep=set(legacy))
    if t.deletes == "hard":
        items.append(f"({lake_types.quote(t.delete_field)} = 'true') AS _hoodie_is_deleted")
    # the table's shaping around the typed SQL (shaped_sql.py)
    sql, target = shaped(f"SELECT {', '.join(items)} FROM <SRC>", target, pipeline.shape(table), table, t.record_keys)
    return TypedJob(source, target, sql, legacy)


def write_schema_files(pipeline: Pipeline, table: str, table_type: str, out_dir: Path,
                       typed: TypedJob | None = None) -> tuple[Path, Path]:
    """Write <table>.source.avsc and <table>_<cow|mor>.target.avsc; unchanged files are left alone."""
    out_dir.mkdir(parents=True, exist_ok=True)
    typed = typed or typed_job(pipeline, table, table_type)
    paths = (out_dir / f"{table}.source.avsc",
             out_dir / f"{table}_{TYPE_SUFFIX[table_type]}.target.avsc")
    for path, schema in zip(paths, (typed.source, typed.target), strict=True):
        text = json.dumps(schema, indent=2) + "\n"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return paths


def write_transformer_sql(pipeline: Pipeline, job: render.Job, props_dir: Path, sql: str) -> None:
    """The job's properties file with the transformer SQL typing every column (rendered at submit time
    from the landed schema: an explicit column list over <SRC>)."""
    path = props_dir / render.props_filename(pipeline, job.table, job.table_type)
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith(TRANSFORMER_SQL_KEY + "=")]
    lines.append(f"{TRANSFORMER_SQL_KEY}={sql}")
    text = "\n".join(lines) + "\n"
    if path.read_text() != text:
        path.write_text(text)


def schema_flags(pipeline: Pipeline, job: render.Job, schema_dir: Path, props_dir: Path | None = None,
                 progress: Progress = lambda m: None) -> list[str]:
    """--hoodie-conf flags pointing FilebasedSchemaProvider at the job's schema files (none with a registry),
    and the typed lake's transformer (its SQL written into the job's properties file)."""
    if pipeline.source.schema_registry or not render.profile(pipeline).file_schema_provider:
        render.refuse_shaping(pipeline, job.table, "HoodieStreamer with schemas from a registry")
        return []
    typed = typed_job(pipeline, job.table, job.table_type)
    if typed.legacy:
        progress(f"{job.table}: column(s) {', '.join(typed.legacy)} keep Debezium's encodings (the table was written "
                 "before hudi-cdc typed them); re-bootstrap the table to store them typed (docs/types.md)")
    src, tgt = write_schema_files(pipeline, job.table, job.table_type, schema_dir, typed)
    flags = ["--hoodie-conf", f"{SOURCE_SCHEMA_KEY}=file://{src.resolve()}",
             "--hoodie-conf", f"{TARGET_SCHEMA_KEY}=file://{tgt.resolve()}"]
    if props_dir is not None:
        write_transformer_sql(pipeline, job, props_dir, typed.sql)
        if pipeline.table(job.table).deletes != "hard":  # hard deletes render the transformer class already
            flags += ["--transformer-class", TRANSFORMER_CLASS]
    return flags


def termination_flags(idle_rounds: int) -> list[str]:
    """End a --continuous job after this many sync rounds in a row found nothing new."""
    return ["--post-write-termination-strategy-class", TERMINATION_CLASS,
            "--hoodie-conf", f"{TERMINATION_ROUNDS_KEY}={idle_rounds}"]


def completed_instants(base_path: Path) -> list[tuple[str, str]]:
    """(instant, action) of the completed instants on a 0.14 (layout 1) timeline, oldest first."""
    hoodie = base_path / ".hoodie"
    if not hoodie.is_dir():
        return []
    out = []
    for p in hoodie.iterdir():
        if p.is_file() and p.suffix in _ACTIONS and p.name.count(".") == 1:
            out.append((p.stem, p.suffix[1:]))
    return sorted(out)


def checkpoint(base_path: Path, instants: Sequence[tuple[str, str]]) -> str | None:
    """The checkpoint stored by the newest instant that has one (hudi_cdc/common/checkpoints.py: any key)."""
    def metas():
        for instant, action in reversed(list(instants)):
            try:
                yield json.loads((base_path / ".hoodie" / f"{instant}.{action}").read_text() or "{}")
            except (OSError, ValueError):
                continue
    found = checkpoints.newest_checkpoint(metas())
    return found.value if found else None


def argv_for(pipeline: Pipeline, job: render.Job, rt: rt_mod.Runtime, props_dir: Path, schema_dir: Path,
             extra_flags: Sequence[str] = (), progress: Progress = lambda m: None) -> list[str]:
    props = props_dir / render.props_filename(pipeline, job.table, job.table_type)
    jars = [str(rt.classpath_first), *(str(j) for j in rt.jars)]  # classpath-first.jar before the bundle
    return render.real_streamer_local_argv(
        pipeline, job, f"file://{props.resolve()}", spark_submit=str(rt.spark_submit), jars=jars,
        app_jar=str(rt.app_jar),
        extra_flags=[*schema_flags(pipeline, job, schema_dir, props_dir, progress), *extra_flags])


def _environment(pipeline: Pipeline, rt: rt_mod.Runtime) -> dict[str, str]:
    # the runtime's own Java, Spark and pyspark (never the project's 3.5: PYTHONPATH dropped)
    return launch.spark_env(spark_home=rt.spark_home, java_home=rt.java().resolve().parent.parent,
                            python=str(rt.python), extra=registry_env(pipeline), drop=("PYTHONPATH",),
                            force_local_ip=True)


def run_jobs(pipeline: Pipeline, jobs: Sequence[render.Job], label: str, progress: Progress = log_progress, *,
             idle_rounds: int | None = None, timeout_seconds: float | None = None,
             launcher: launch.Launcher | None = None) -> list[dict]:
    """Run each job through the real HoodieDeltaStreamer, one spark-submit after the other.

    idle_rounds bounds --continuous jobs (NoNewDataTerminationStrategy); timeout_seconds bounds any
    job (killed, then JobError). Returns per job: table, type, op, instants completed by the job
    (commits, delta commits, compactions), the checkpoint stored, skipped (nothing committed),
    seconds and log path. A failed job of several (not continuous) does not stop the next: TablesFailed
    names every failed one once all ran (issue 36). Each job is started by `launcher`
    (hudi_cdc/spark/launch.py): it inherits the table locks this process holds and dies with it.
    """
    if not jobs:
        raise ConfigError("nothing to run")
    if render.profile(pipeline).hudi_version != rt_mod.HUDI_VERSION:
        raise ConfigError(f"the real HoodieDeltaStreamer runs locally for hudi.version {rt_mod.HUDI_VERSION} only "
                          f"(this pipeline: {pipeline.hudi.version})")
    rt = rt_mod.load()
    wd = work_dir(pipeline)
    props_dir, logs = wd / "properties", wd / "logs"
    render.write_properties(pipeline, props_dir)
    logs.mkdir(parents=True, exist_ok=True)
    env = _environment(pipeline, rt)
    # a landed TRUNCATE refuses the run before any job writes (truncates.py)
    refuse_truncates(pipeline, jobs, {j.name: checkpoint(uri_to_path(pipeline.base_path(j.table, j.table_type)),
                                                         completed_instants(uri_to_path(
                                                             pipeline.base_path(j.table, j.table_type))))
                                      for j in jobs})
    launcher = launcher or launch.Launcher()
    run = _JobRun(pipeline, label, progress, rt, env, wd, launcher, idle_rounds, timeout_seconds)
    go_on = len(jobs) > 1 and not any(job.continuous for job in jobs)  # one job's failure is its own
    results, failed = [], []
    for job in jobs:
        try:
            results.append(run.one(job))
        except HudiCdcError as exc:
            if not go_on:
                raise
            progress(f"{label}: {job.name} failed: {exc}")
            failed.append((job.table, job.table_type, exc))
    if failed:
        raise TablesFailed(label, failed, results, len(jobs))
    return results


@dataclass
class _JobRun:
    """What every job of one run_jobs shares; `one` runs a job and says what it committed."""

    pipeline: Pipeline
    label: str
    progress: Progress
    rt: rt_mod.Runtime
    env: dict[str, str]
    wd: Path
    launcher: launch.Launcher
    idle_rounds: int | None
    timeout_seconds: float | None

    def one(self, job: render.Job) -> dict:
        pipeline, label, rt = self.pipeline, self.label, self.rt
        extra = termination_flags(self.idle_rounds) if (job.continuous and self.idle_rounds) else []
        argv = argv_for(pipeline, job, rt, self.wd / "properties", self.wd / "schemas", extra, self.progress)
        base = uri_to_path(pipeline.base_path(job.table, job.table_type))
        before = set(completed_instants(base))
        # unchanged TOASTed values cannot be filled by HoodieDeltaStreamer: refused before it runs
        refuse_placeholders(pipeline, job.table, checkpoint(base, sorted(before)))
        log_path = self.wd / "logs" / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}-{job.name}.log"
        self.progress(f"{label}: HoodieDeltaStreamer {rt.hudi_version} {job.name}; log {log_path}")
        out = self.launcher.run(argv, env=self.env, cwd=self.wd, log_path=log_path, timeout=self.timeout_seconds)
        elapsed = out.seconds
        if not out.ok:
            raise JobError(f"{label} {job.name} failed: {out.cause()} (log: {log_path})")
        after = completed_instants(base)
        made = [f"{i}.{a}" for i, a in after if (i, a) not in before]
        self.progress(f"{label}: {job.name} done in {elapsed:.0f}s: {', '.join(made) or 'nothing new'}")
        return {"table": job.table, "type": job.table_type, "op": job.op, "continuous": job.continuous,
                "instants": made, "checkpoint": checkpoint(base, after), "skipped": not made,
                "seconds": round(elapsed, 1), "log": str(log_path)}
