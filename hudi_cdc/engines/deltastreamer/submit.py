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
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

import fastavro

from ... import render
from ...causes import root_cause
from ...config import TYPE_SUFFIX, Pipeline, uri_to_path
from ...errors import ConfigError, DataError, JobError
from ...registry.credentials import registry_env
from . import runtime as rt_mod
from .schema_union import union_schema
from .toast_guard import refuse_placeholders

Progress = Callable[[str], None]

CHECKPOINT_KEY = "deltastreamer.checkpoint.key"
DELETE_FIELD = {"name": "_hoodie_is_deleted", "type": "boolean", "default": False}
SOURCE_SCHEMA_KEY = "hoodie.streamer.schemaprovider.source.schema.file"
TARGET_SCHEMA_KEY = "hoodie.streamer.schemaprovider.target.schema.file"
TERMINATION_CLASS = "org.apache.hudi.utilities.streamer.NoNewDataTerminationStrategy"
TERMINATION_ROUNDS_KEY = "max.rounds.without.new.data.to.shutdown"  # read by NoNewDataTerminationStrategy
_ACTIONS = (".commit", ".deltacommit", ".replacecommit")


def work_dir(pipeline: Pipeline) -> Path:
    return Path(pipeline.base_dir) / ".hudi-cdc"


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


def write_schema_files(pipeline: Pipeline, table: str, table_type: str, out_dir: Path) -> tuple[Path, Path]:
    """Write <table>.source.avsc and <table>_<cow|mor>.target.avsc; unchanged files are left alone."""
    out_dir.mkdir(parents=True, exist_ok=True)
    src = landed_schema(pipeline, table)
    tgt = target_schema(src, pipeline.table(table).deletes == "hard")
    paths = (out_dir / f"{table}.source.avsc",
             out_dir / f"{table}_{TYPE_SUFFIX[table_type]}.target.avsc")
    for path, schema in zip(paths, (src, tgt), strict=True):
        text = json.dumps(schema, indent=2) + "\n"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    return paths


def schema_flags(pipeline: Pipeline, job: render.Job, schema_dir: Path) -> list[str]:
    """--hoodie-conf flags pointing FilebasedSchemaProvider at the job's schema files (none with a registry)."""
    if pipeline.source.schema_registry or not render.profile(pipeline).file_schema_provider:
        return []
    src, tgt = write_schema_files(pipeline, job.table, job.table_type, schema_dir)
    return ["--hoodie-conf", f"{SOURCE_SCHEMA_KEY}=file://{src.resolve()}",
            "--hoodie-conf", f"{TARGET_SCHEMA_KEY}=file://{tgt.resolve()}"]


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
    """The checkpoint stored by the newest instant that has one."""
    for instant, action in reversed(list(instants)):
        try:
            meta = json.loads((base_path / ".hoodie" / f"{instant}.{action}").read_text() or "{}")
        except (OSError, ValueError):
            continue
        value = (meta.get("extraMetadata") or {}).get(CHECKPOINT_KEY)
        if value:
            return value
    return None


def argv_for(pipeline: Pipeline, job: render.Job, rt: rt_mod.Runtime, props_dir: Path, schema_dir: Path,
             extra_flags: Sequence[str] = ()) -> list[str]:
    props = props_dir / render.props_filename(pipeline, job.table, job.table_type)
    jars = [str(rt.classpath_first), *(str(j) for j in rt.jars)]  # classpath-first.jar before the bundle
    return render.real_streamer_local_argv(
        pipeline, job, f"file://{props.resolve()}", spark_submit=str(rt.spark_submit), jars=jars,
        app_jar=str(rt.app_jar), extra_flags=[*schema_flags(pipeline, job, schema_dir), *extra_flags])


def _environment(pipeline: Pipeline, rt: rt_mod.Runtime) -> dict[str, str]:
    java = rt.java()
    env = dict(os.environ)
    env.update(registry_env(pipeline))
    env["JAVA_HOME"] = str(java.resolve().parent.parent)
    env["SPARK_HOME"] = str(rt.spark_home)
    env["SPARK_LOCAL_IP"] = "127.0.0.1"  # loopback only, never the machine's public address
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(rt.python)
    env.pop("PYTHONPATH", None)  # the runtime's own pyspark, never the project's 3.5
    return env


def run_jobs(pipeline: Pipeline, jobs: Sequence[render.Job], label: str, progress: Progress = print, *,
             idle_rounds: int | None = None, timeout_seconds: float | None = None) -> list[dict]:
    """Run each job through the real HoodieDeltaStreamer, one spark-submit after the other.

    idle_rounds bounds --continuous jobs (NoNewDataTerminationStrategy); timeout_seconds bounds any
    job (killed, then JobError). Returns per job: table, type, op, instants completed by the job
    (commits, delta commits, compactions), the checkpoint stored, skipped (nothing committed),
    seconds and log path.
    """
    if not jobs:
        raise ConfigError("nothing to run")
    if render.profile(pipeline).hudi_version != rt_mod.HUDI_VERSION:
        raise ConfigError(f"the real HoodieDeltaStreamer runs locally for hudi.version {rt_mod.HUDI_VERSION} only "
                          f"(this pipeline: {pipeline.hudi.version})")
    rt = rt_mod.load()
    wd = work_dir(pipeline)
    props_dir, schema_dir, logs = wd / "properties", wd / "schemas", wd / "logs"
    render.write_properties(pipeline, props_dir)
    logs.mkdir(parents=True, exist_ok=True)
    env = _environment(pipeline, rt)
    results = []
    for job in jobs:
        extra = termination_flags(idle_rounds) if (job.continuous and idle_rounds) else []
        argv = argv_for(pipeline, job, rt, props_dir, schema_dir, extra)
        base = uri_to_path(pipeline.base_path(job.table, job.table_type))
        before = set(completed_instants(base))
        # unchanged TOASTed values cannot be filled by HoodieDeltaStreamer: refused before it runs
        refuse_placeholders(pipeline, job.table, checkpoint(base, sorted(before)))
        log_path = logs / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}-{job.name}.log"
        progress(f"{label}: HoodieDeltaStreamer {rt.hudi_version} {job.name}; log {log_path}")
        started = time.time()
        code, tail = _run(argv, env, wd, log_path, timeout_seconds)
        elapsed = time.time() - started
        if code != 0:
            cause = "timed out" if code is None else root_cause(tail)
            raise JobError(f"{label} {job.name} failed: {cause} (log: {log_path})")
        after = completed_instants(base)
        made = [f"{i}.{a}" for i, a in after if (i, a) not in before]
        results.append({"table": job.table, "type": job.table_type, "op": job.op, "continuous": job.continuous,
                        "instants": made, "checkpoint": checkpoint(base, after), "skipped": not made,
                        "seconds": round(elapsed, 1), "log": str(log_path)})
        progress(f"{label}: {job.name} done in {elapsed:.0f}s: {', '.join(made) or 'nothing new'}")
    return results


def _run(argv: list[str], env: dict[str, str], cwd: Path, log_path: Path,
         timeout_seconds: float | None) -> tuple[int | None, list[str]]:
    """Run argv with its output in log_path; (exit code or None on timeout, the output's last lines)."""
    with open(log_path, "w") as log:
        log.write("argv: " + json.dumps(argv) + "\n")
        log.flush()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=str(cwd))
        try:
            code: int | None = proc.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
    lines = log_path.read_text(errors="replace").splitlines()
    return code, lines[-400:]
