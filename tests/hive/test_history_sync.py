"""Hive sync of history tables (`history: scd2`): HiveSyncTool's argv and the Hive tables it creates."""

from __future__ import annotations

from hudi_cdc.config import parse_pipeline
from hudi_cdc.hive import hive_tables_of
from hudi_cdc.hive.sync import sync_argv


def test_history_tables_synced_unpartitioned_beside_the_table():
    lake = {"root": "/lake", "hive_database": "t"}
    p = parse_pipeline({"pipeline": "t", "source": {"root": "/landing"}, "lake": lake,
                        "tables": {"a": {"topic": "x", "record_key": "id", "partition_field": "region",
                                         "history": "scd2"}}}, "p.yaml", "/tmp")
    argv = sync_argv(p, "a", "MERGE_ON_READ", "thrift://m:9083", "java", "cp", history=True)
    at = argv.index("--base-path")
    assert argv[at + 1] == "file:///lake/a_history_mor" and argv[argv.index("--table") + 1] == "a_history"
    assert "--partitioned-by" not in argv and "--partitioned-by" in sync_argv(p, "a", "MERGE_ON_READ", "u", "j", "c")
    assert {r["hive_table"] for r in hive_tables_of(p)} == {
        "t_cow.a", "t_mor.a_ro", "t_mor.a_rt", "t_cow.a_history", "t_mor.a_history_ro", "t_mor.a_history_rt"}
