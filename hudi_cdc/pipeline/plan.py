"""`hudi-cdc render`: every job of a pipeline (bootstrap and stream, per table and type), its
properties file written, and the spark-submit argv it would run with."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.core import render as rnd
from hudi_cdc.core.profiles import HUDI_CDC, engine_for
from hudi_cdc.job_package import write_job_files
from hudi_cdc.runners.deltastreamer import typed_render

PLACEHOLDER_JARS = ["<hudi-spark-bundle.jar>", "<spark-avro.jar>"]


def all_jobs(p: Pipeline) -> list[rnd.Job]:
    jobs = [rnd.Job(t, tt, "BULK_INSERT") for t, tt in p.targets()]
    jobs += [rnd.Job(t, tt, "UPSERT", continuous=True) for t, tt in p.targets()]
    return jobs


def emr_steps(p: Pipeline, all_tables: bool = False) -> list:
    """Every job's step, or (all_tables) `stream --all`'s one step."""
    from hudi_cdc.runners.emr import steps_json

    return steps_json(p, all_jobs(p), all_tables=all_tables)


def write_files(out: Path, files: dict[str, str]) -> list[Path]:
    """Write rendered files under OUT; unchanged files are left untouched (idempotent re-runs)."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = out / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written


def job_argvs(p: Pipeline, out: Path, props_base: str | None, target: str,
              progress: Callable[[str], None]) -> list[dict[str, object]]:
    """Write the properties files under OUT (and, for hudi.engine hudi-cdc on AWS, the job file and
    zip); [{"job": name, "argv": [...]}] for every job."""
    base = props_base or f"file://{out.resolve()}"
    if typed_render.applies(p, target):  # HoodieStreamer's typed columns, from the landed schemas
        written_files = write_files(out, typed_render.render_typed(p, base, progress).files)
    else:
        written_files = rnd.write_properties(p, out)
    if target != "local" and engine_for(p.hudi.version, target, p.hudi.engine) == HUDI_CDC:
        written_files += write_job_files(out)  # the job file and zip go next to the properties
    for written in written_files:
        progress(f"wrote {written}")
    rows: list[dict[str, object]] = []
    for job in all_jobs(p):
        if target == "local":
            from hudi_cdc.runners.local import job_script

            argv = rnd.local_argv(p, [job], out, PLACEHOLDER_JARS, job_script())
        else:
            props_uri = f"{base.rstrip('/')}/{rnd.props_filename(p, job.table, job.table_type)}"
            argv = rnd.streamer_argv(p, job.table, job.table_type, job.op, target=target, props_uri=props_uri,
                                     continuous=job.continuous)
        rows.append({"job": job.name, "argv": argv})
    return rows
