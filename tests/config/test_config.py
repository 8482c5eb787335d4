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
    ("pipeline: [unclosed\n", r"hudi-cdc\.yaml: line \d+, column \d+: malformed YAML"),
    ("- just\n- a list\n", r"must be a YAML mapping"),
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
