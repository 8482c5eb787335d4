"""`hudi-cdc add-table`: one more table while `stream` runs for the others.

1. the table goes into the pipeline file (validated first; the previous file is kept as .bak), unless
   it is there already and not bootstrapped yet;
2. its value schema is registered from the newest landed file (when the pipeline names a registry);
3. `bootstrap` of that table alone: its own writer locks only, so the other tables' streams (their
   processes, locks, checkpoints and commits) are never touched;
4. hand-over: the bootstrap's commit carries the checkpoint (the newest landed file it read), and
   `stream` starts from exactly there, so nothing landed meanwhile is skipped or read twice; with
   ``stream=True`` the continuous stream of the new table starts in this process right away.

A running `stream` of another table is one process per table: it never re-reads the pipeline file,
so adding a table changes nothing for it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline, load_pipeline, parse_pipeline
from hudi_cdc.errors import ConfigError

Progress = Callable[[str], None]


def add_to_file(config: Path, name: str, settings: dict[str, Any] | None) -> Pipeline:
    """The pipeline with table ``name``: written into the file when ``settings`` are given and the
    table is new; a table already in the file is used as it is (settings must then be None)."""
    pipeline = load_pipeline(config)
    if name in pipeline.tables:
        if settings:
            raise ConfigError(f"table {name!r} is already in {config}; drop the table options to onboard it "
                              "as the file describes it")
        return pipeline
    if not settings:
        raise ConfigError(f"table {name!r} is not in {config}: give at least --topic and --record-key")
    data = yaml.safe_load(config.read_text())
    data["tables"][name] = settings
    new = parse_pipeline(data, str(config), str(config.resolve().parent))  # one ConfigError line if wrong
    shutil.copyfile(config, config.with_name(config.name + ".bak"))
    tmp = config.with_name(f".{config.name}.tmp")
    tmp.write_text(yaml.safe_dump(data, sort_keys=False))
    os.replace(tmp, config)  # a concurrent reader sees the old file or the new one, never half of it
    return new


def register_schema(pipeline: Pipeline, name: str, progress: Progress) -> dict | None:
    if not pipeline.source.schema_registry:
        progress(f"add-table {name}: no source.schema_registry in the pipeline file: schema not registered")
        return None
    from hudi_cdc.registry import RegistryClient
    from hudi_cdc.registry.register import register_pipeline

    with RegistryClient.from_pipeline(pipeline) as client:
        row = register_pipeline(client, pipeline, [name])[0]
    progress(f"add-table {name}: schema registered as {row['subject']} version {row['version']}")
    return row


def add_table(config: Path, name: str, settings: dict[str, Any] | None = None, *, stream: bool = False,
              target: str = "local", progress: Progress = log_progress) -> dict[str, Any]:
    """Register, bootstrap alone, then (stream=True) stream the new table continuously."""
    from hudi_cdc import pipeline as pipe

    pipeline = add_to_file(config, name, settings)
    pipe.check_landing(pipeline, name, target)  # before the registry or a JVM: nothing landed, one line
    registered = register_schema(pipeline, name, progress)
    results = pipe.bootstrap(pipeline, name, target=target, progress=progress)
    out: dict[str, Any] = {"table": name, "schema": registered, "bootstrap": results}
    if stream:
        progress(f"add-table {name}: bootstrapped; streaming from its checkpoint")
        out["stream"] = pipe.stream(pipeline, name, target=target, progress=progress)
    else:
        progress(f"add-table {name}: bootstrapped; stream it with `hudi-cdc stream --table {name}`")
    return out
