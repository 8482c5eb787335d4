"""A working directory for the embedded MoMA sample: its pipeline file (`hudi-cdc init`), where the
sample lands and landing it stage by stage (`hudi-cdc sample`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hudi_cdc import sample
from hudi_cdc.errors import ConfigError

SAMPLE_PIPELINE = """\
# hudi-cdc pipeline file for the embedded MoMA sample (see README: "The pipeline file").
pipeline: moma
{version_comment}
hudi: {{version: "{version}", table_version: {table_version}}}
source:
  root: landing/topics          # <root>/<topic>/partition=0/*.avro, as the Kafka Connect S3 sink writes
{registry}{database}lake:
  root: lake                    # tables at lake/<table>_cow and lake/<table>_mor
  hive_database: moma           # Hive databases moma_cow / moma_mor
{metastore}spark:
  master: local[2]
  driver_memory: 2g
  shuffle_partitions: 4
{tables}"""

PIPELINE_FILE = "hudi-cdc.yaml"
DEFAULT_LANDING = Path("landing/topics")
# The sample's tables: name -> (record key, partition field); topics moma.public.<name>.
SAMPLE_TABLES = {"artists": ("artist_id", "nationality"), "artworks": ("artwork_id", "classification")}


def sample_tables_text(*names: str) -> str:
    """The `tables:` section of the sample's pipeline file, for NAMES (every sample table when none):
    both table types, ordered by __lsn, hard deletes."""
    text = "tables:\n"
    for name in names or tuple(SAMPLE_TABLES):
        key, partition = SAMPLE_TABLES[name]
        text += (f"  {name}:\n    topic: moma.public.{name}\n    record_key: {key}\n    ordering_field: __lsn\n"
                 f"    partition_field: {partition}\n    table_types: [COPY_ON_WRITE, MERGE_ON_READ]\n"
                 "    deletes: hard\n")
    return text


def sample_pipeline_text(registry: str = "", metastore: str = "", database: str = "") -> str:
    """The sample's pipeline file; ``database``: a source.database line (flow style, without indent)."""
    from hudi_cdc.config.settings import CURRENT_HUDI, DEFAULT_TABLE_VERSION, TABLE_VERSION_COMMENT

    return SAMPLE_PIPELINE.format(
        version=CURRENT_HUDI, table_version=DEFAULT_TABLE_VERSION, version_comment=TABLE_VERSION_COMMENT,
        registry=f"  schema_registry: {registry}\n" if registry else "",
        database=f"  {database}\n" if database else "",
        metastore=f"  hive_metastore: {metastore}\n" if metastore else "",
        tables=sample_tables_text(),
    )


def write_sample_pipeline(directory: Path, registry: str = "", metastore: str = "", force: bool = False) -> str:
    """Write DIRECTORY/hudi-cdc.yaml (kept when it exists, unless force); returns what was done."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / PIPELINE_FILE
    if path.exists() and not force:
        return f"{path} exists; keeping it (use --force to overwrite)"
    path.write_text(sample_pipeline_text(registry, metastore))
    return f"wrote {path}"


def landing_root(directory: str | None, load_pipeline: Callable) -> Path | str:
    """DIRECTORY, else the pipeline's source.root, else landing/topics when there is no pipeline file.
    An s3:// root stays a URI."""
    from hudi_cdc.config import is_s3_uri, uri_to_path

    if directory:
        return directory if is_s3_uri(directory) else Path(directory)
    try:
        root = load_pipeline().source_root
        return root if is_s3_uri(root) else uri_to_path(root)
    except ConfigError:
        return DEFAULT_LANDING


def land_sample(root: Path | str, stage: str, count: int | None, progress: Callable[[str], None]) -> list:
    """Land the snapshot (op=r) files, the seed's change files (the next COUNT, or all), or both.
    Into a local folder, or into s3://bucket/prefix (hudi_cdc/sample/s3.py)."""
    if isinstance(root, str):
        from hudi_cdc.sample.s3 import land_to_s3

        return land_to_s3(root, lambda staging: land_sample(staging, stage, count, lambda m: None), progress)
    landed: list[Path] = []
    if stage in ("snapshot", "all"):
        landed += sample.land_snapshot(root, progress=progress)
    if stage in ("changes", "all"):
        written = sample.land_changes(root, count, progress=progress)
        if not written:
            progress("no change files left to land")
        landed += written
    return landed
