"""The pipeline file: validated once at load, every problem named by key path and file."""

from pathlib import Path

import pytest

from hudi_cdc.config import load_pipeline
from hudi_cdc.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, text):
    p = tmp_path / "hudi-cdc.yaml"
    p.write_text(text)
    return p


GOOD = """
pipeline: moma
source: {root: landing/topics}
lake: {root: lake, hive_database: moma}
tables:
  artists:
    topic: moma.public.artists
    record_key: artist_id
    partition_field: nationality
"""


def test_repo_example_loads_with_defaults():
    p = load_pipeline(ROOT / "hudi-cdc.yaml")
    assert p.hudi.version == "1.2.0"
    assert p.hudi.table_version == 6 and p.hudi.writes_table_version == 6
    assert p.table("artists").deletes == "hard" and p.table("artists").ordering_fields == ["__lsn"]
    assert p.base_path("artists", "MERGE_ON_READ") == f"file://{ROOT}/lake/artists_mor"
    assert p.topic_dir("artists") == f"file://{ROOT}/landing/topics/moma.public.artists/partition=0"
    assert p.hive_db("COPY_ON_WRITE") == "moma_cow"


def test_relative_paths_resolve_against_the_file(tmp_path):
    p = load_pipeline(write(tmp_path, GOOD))
    assert p.source_root == f"file://{tmp_path.resolve()}/landing/topics"


@pytest.mark.parametrize("text,expected", [
    (GOOD.replace("    record_key: artist_id\n", ""),
     r"tables\.artists\.record_key: field required \(.*hudi-cdc\.yaml\)"),
    (GOOD.replace("pipeline: moma", "pipeline: moma\nfoo: 1"), r"foo: unknown key \(.*hudi-cdc\.yaml\)"),
    (GOOD + "    table_types: [COPY_ON_READ]\n", r"tables\.artists\.table_types\.0: .*COPY_ON_WRITE"),
    (GOOD + "    deletes: sometimes\n", r"tables\.artists\.deletes: .*'hard' or 'soft'"),
    (GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {version: '0.13.0'}"),
     r"hudi\.version: unsupported Hudi version '0.13.0'"),
    (GOOD.replace("lake: {root: lake, hive_database: moma}", ""), r"^lake: field required"),
    (GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {table_version: 7}"),
     r"^hudi\.table_version: 7 is not a Hudi table version hudi-cdc writes; one of 6, 8, 9 \(.*hudi-cdc\.yaml\)$"),
    (GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {version: '0.14.0', table_version: 9}"),
     r"^hudi: table_version 9: Hudi 0\.14\.0 writes table version 6 only"),
    (GOOD + "    hudi_options: {hoodie.write.table.version: '9'}\n",
     r"tables\.artists\.hudi_options: hoodie\.write\.table\.version: set hudi\.table_version instead"),
    ("pipeline: [unclosed\n", r"hudi-cdc\.yaml: line \d+, column \d+: malformed YAML"),
    ("- just\n- a list\n", r"must be a YAML mapping"),
    ("\n", r"hudi-cdc\.yaml: the pipeline file is empty \(`hudi-cdc init` writes one"),
])
def test_errors_name_key_and_file(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_pipeline(write(tmp_path, text))


def test_missing_file_and_unknown_table(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.yaml: pipeline file not found"):
        load_pipeline(tmp_path / "nope.yaml")
    p = load_pipeline(write(tmp_path, GOOD))
    with pytest.raises(ConfigError, match=r"unknown table 'painters' .*tables: artists"):
        p.table("painters")


def test_table_version_from_the_file_or_fixed_by_the_release(tmp_path):
    """hudi.table_version is typed once (a quoted "8" is 8); 0.14.0 always writes 6, the seed's 0.9.0 2."""
    p = load_pipeline(write(tmp_path, GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {table_version: '8'}")))
    assert p.hudi.table_version == 8 and p.hudi.writes_table_version == 8
    p = load_pipeline(write(tmp_path, GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {version: '0.14.0'}")))
    assert p.hudi.writes_table_version == 6
    p = load_pipeline(write(tmp_path, GOOD.replace("pipeline: moma", "pipeline: moma\nhudi: {version: '0.9.0'}")))
    assert p.hudi.writes_table_version == 2
