"""The README's main job: the seed's story on the embedded MoMA sample, end to end, locally."""

from __future__ import annotations

import time
from pathlib import Path

from hudi_cdc import pipeline as pipe
from hudi_cdc import sample
from hudi_cdc.common.text import Progress, log_progress, text_table
from hudi_cdc.config import load_pipeline, uri_to_path

SHOW = {
    "artists": (["299"], ["artist_id", "name", "nationality", "gender", "birth_year", "death_year", "__op",
                          "_hoodie_commit_time"]),
    "artworks": (["128447"], ["artwork_id", "title", "date", "acquisition_date", "dimensions", "classification",
                              "__op", "_hoodie_commit_time"]),
}


def run_demo(directory: Path, registry: str = "", metastore: str = "", progress: Progress = log_progress,
             show: Progress = log_progress) -> dict:
    """The MoMA story; progress lines go to ``progress``, the rows it shows to ``show`` (the CLI: stdout)."""
    from hudi_cdc.demo.workspace import PIPELINE_FILE, write_sample_pipeline

    cfg = directory / PIPELINE_FILE
    if not cfg.exists():
        progress(write_sample_pipeline(directory, registry, metastore))
    p = load_pipeline(cfg)
    root = uri_to_path(p.source_root)
    timings = {}
    t0 = time.time()
    sample.land_snapshot(root, progress=progress)
    register_schemas(p, progress)
    if any(not pipe.table_exists(p, t, tt) for t, tt in p.targets()):
        started = time.time()
        pipe.bootstrap(p, force=True, progress=progress)
        timings["bootstrap_s"] = round(time.time() - started, 1)
    else:
        progress("tables exist already: skipping bootstrap")
    sample.land_changes(root, progress=progress)
    for table in p.tables:
        started = time.time()
        pipe.stream(p, table, once=True, progress=progress)
        timings[f"stream_{table}_s"] = round(time.time() - started, 1)
    show_rows(p, progress, show)
    timings["total_s"] = round(time.time() - t0, 1)
    progress(f"timings: {timings}")
    return timings


def register_schemas(p, progress: Progress) -> None:
    if p.source.schema_registry:
        from hudi_cdc.registry import RegistryClient, register_pipeline

        with RegistryClient.from_pipeline(p) as client:
            for row in register_pipeline(client, p):
                progress(f"registered {row['subject']} version {row['version']} in {p.source.schema_registry}")


def show_rows(p, progress: Progress, show: Progress = log_progress) -> None:
    """Artist 299 and artwork 128447 in every table, read with hudi-rs (and through Hive when synced)."""
    from hudi_cdc.lake.reader import current_rows

    for table, (keys, cols) in SHOW.items():
        for tt in p.table(table).table_types:
            rows = current_rows(p, table, tt, keys=keys, columns=cols)
            progress("")
            progress(f"{table} {keys[0]} in {p.base_path(table, tt)} (read with hudi-rs):")
            show(text_table(rows, cols) if rows else f"(no row: {table} {keys[0]} is deleted)")
    if p.lake.sync_enabled:
        _show_through_hive(p, progress, show)


def _show_through_hive(p, progress: Progress, show: Progress) -> None:
    """The same rows through HiveServer2 (the local stack's Spark Thrift Server), as the seed's
    beeline queries did."""
    from hudi_cdc.hive import HiveClient, default_server

    host, port = default_server()
    sql = (f"SELECT artwork_id, title, `date`, acquisition_date, _hoodie_commit_time "
           f"FROM {p.hive_db('MERGE_ON_READ')}.artworks_rt WHERE artwork_id = 128447")
    progress("")
    progress(f"through Hive ({host}:{port}): {sql}")
    with HiveClient(host, port) as hive:
        rows = hive.query(sql)
    show(text_table(rows) if rows else "(no row)")
