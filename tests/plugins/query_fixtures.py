"""Fixtures for tests/query/test_query*.py: the MoMA sample pipeline's artists tables (CoW and MoR), with
the seed's five changes and the delete of artist 299 landed as separate files, one UPSERT round each,
written in-process on the shared Spark session. Built once per session (tests/query, tests/lake/test_status.py
read it; tests/conftest.py keeps them on one xdist worker); a test that changes it puts it back.""" 

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.config import Pipeline, parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer

TABLE_TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
ARTIST_CHANGE_FILES = 5  # seed change files 6..10: updates 1+2, middle initial, German, 1905, delete


@dataclass
class SampleLake:
    root: Path
    pipeline: Pipeline
    props_dir: Path
    rounds: list[dict] = field(default_factory=list)  # {"file": landed path, "results": [RoundResult]}

    @property
    def config(self) -> str:
        return self.pipeline.source_file

    def base_path(self, table_type: str) -> str:
        return self.pipeline.base_path("artists", table_type)


def pipeline_data(tmp: Path) -> dict:
    return {
        "pipeline": "moma",
        "source": {"root": str(tmp / "landing")},
        "lake": {"root": str(tmp / "lake"), "hive_database": "moma"},
        "spark": {"shuffle_partitions": 2},
        "tables": {"artists": {"topic": sample.TOPICS["artists"], "record_key": "artist_id",
                               "ordering_field": "__lsn", "partition_field": "nationality",
                               "table_types": list(TABLE_TYPES), "compaction_delta_commits": 3}},
    }


def sample_pipeline(tmp: Path) -> Pipeline:
    """The pipeline, also written to tmp/hudi-cdc.yaml for CLI tests."""
    (tmp / "hudi-cdc.yaml").write_text(yaml.safe_dump(pipeline_data(tmp)))
    return parse_pipeline(pipeline_data(tmp), str(tmp / "hudi-cdc.yaml"), str(tmp))


def _targets(lake: SampleLake, op: str) -> list[streamer.Target]:
    out = []
    for tt in TABLE_TYPES:
        props = lake.props_dir / render.props_filename(lake.pipeline, "artists", tt)
        flags = render.streamer_flags(lake.pipeline, render.Job("artists", tt, op), f"file://{props}")
        for kv in render.LOCAL_HOODIE_CONF:
            flags += ["--hoodie-conf", kv]
        out.append(streamer.parse_argv(flags)[0])
    return out


def build_sample_lake(tmp: Path, spark) -> SampleLake:
    """Snapshot (BULK_INSERT), then each of the seed's artist change files in its own UPSERT round.
    The artworks change files (1-5) are landed first but never streamed."""
    pipeline = sample_pipeline(tmp)
    lake = SampleLake(tmp / "landing", pipeline, tmp / "props")
    render.write_properties(pipeline, lake.props_dir)
    sample.land_snapshot(lake.root, tables=("artists",))
    quiet = lambda m: None  # noqa: E731
    lake.rounds.append({"file": None, "results": streamer.run_targets(spark, _targets(lake, "BULK_INSERT"), quiet)})
    sample.land_changes(lake.root, count=len(sample.change_files()) - ARTIST_CHANGE_FILES)  # artworks 1-5
    for _ in range(ARTIST_CHANGE_FILES):
        landed = sample.land_changes(lake.root, count=1)
        results = streamer.run_targets(spark, _targets(lake, "UPSERT"), quiet)
        lake.rounds.append({"file": landed[0], "results": results})
    return lake


@pytest.fixture(scope="session")
def sample_lake(spark, tmp_path_factory) -> SampleLake:
    return build_sample_lake(tmp_path_factory.mktemp("query-lake"), spark)


@pytest.fixture(scope="session")
def sample_paths(sample_lake) -> dict[str, str]:
    return {"cow": sample_lake.base_path("COPY_ON_WRITE"), "mor": sample_lake.base_path("MERGE_ON_READ")}
