"""`history: scd2` in the pipeline file: validated at load, rendered into the table's properties."""

from __future__ import annotations

import pytest

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import ConfigError

BASE = {"pipeline": "t", "source": {"root": "/landing"}, "lake": {"root": "/lake", "hive_database": "t"}}


def _pipeline(tables: dict, **extra):
    return parse_pipeline({**BASE, **extra, "tables": tables}, "p.yaml", "/tmp")


def test_history_rendered_for_the_streamer():
    p = _pipeline({"a": {"topic": "x", "record_key": "id", "history": "scd2"}, "b": {"topic": "y", "record_key": "id"}})
    assert p.history_tables() == ["a"]
    assert p.history_base_path("a", "MERGE_ON_READ") == "file:///lake/a_history_mor"
    text = render.table_properties(p, "a", "COPY_ON_WRITE")
    assert "hoodie.streamer.hudi_cdc.history=scd2" in text
    assert "hoodie.streamer.hudi_cdc.history.path=file:///lake/a_history_cow" in text
    assert "hoodie.streamer.hudi_cdc.history.table=a_history" in text
    assert "hudi_cdc.history" not in render.table_properties(p, "b", "COPY_ON_WRITE")


@pytest.mark.parametrize("tables, extra, message", [
    ({"a": {"topic": "x", "record_key": "id", "history": "scd3"}}, {}, "tables.a.history: Input should be 'scd2'"),
    ({"a": {"topic": "x", "record_key": "id", "history": "scd2", "ordering_field": ["__file", "__pos"]}}, {},
     "tables.a: history: scd2 orders versions by one ordering field"),
    ({"a": {"topic": "x", "record_key": "id", "history": "scd2"}}, {"hudi": {"engine": "hoodiestreamer"}},
     "tables.a.history: history tables are written by hudi-cdc's streamer"),
    ({"a": {"topic": "x", "record_key": "id", "history": "scd2"}}, {"hudi": {"version": "0.14.0"}},
     "tables.a.history: history tables are written by hudi-cdc's streamer"),
    ({"a": {"topic": "x", "record_key": "id", "history": "scd2"}, "a_history": {"topic": "y", "record_key": "id"}},
     {}, "its history table a_history has the name of another table"),
])
def test_history_refused_at_load(tables, extra, message):
    with pytest.raises(ConfigError) as err:
        _pipeline(tables, **extra)
    assert message in str(err.value) and "(p.yaml)" in str(err.value) and "\n" not in str(err.value)
