"""Hive sync of history tables (`history: scd2`): HiveSyncTool's argv and the Hive tables it creates."""

from __future__ import annotations

from hudi_cdc.config import parse_pipeline
from hudi_cdc.hive import hive_tables_of
from hudi_cdc.hive.sync import sync_args


def test_history_tables_synced_unpartitioned_beside_the_table():
    lake = {"root": "/lake", "hive_database": "t"}
    p = parse_pipeline({"pipeline": "t", "source": {"root": "/landing"}, "lake": lake,
                        "tables": {"a": {"topic": "x", "record_key": "id", "partition_field": "region",
                                         "history": "scd2"}}}, "p.yaml", "/tmp")
    argv = sync_args(p, "a", "MERGE_ON_READ", "thrift://m:9083", history=True)
    at = argv.index("--base-path")
    assert argv[at + 1] == "file:///lake/a_history_mor" and argv[argv.index("--table") + 1] == "a_history"
    assert "--partitioned-by" not in argv and "--partitioned-by" in sync_args(p, "a", "MERGE_ON_READ", "u")
    assert {r["hive_table"] for r in hive_tables_of(p)} == {
        "t_cow.a", "t_mor.a_ro", "t_mor.a_rt", "t_cow.a_history", "t_mor.a_history_ro", "t_mor.a_history_rt"}


def test_one_target_failing_does_not_stop_the_others(monkeypatch, tmp_path):
    """`hudi-cdc sync` of many tables: a target that fails (not bootstrapped, a refused sync) is named at the end
    (TablesFailed, the first failure's exit code) after every other target was synced, all in one JVM."""
    import pytest

    from hudi_cdc.errors import JobError, TablesFailed
    from hudi_cdc.hive import sync as hs

    tables = {n: {"topic": f"x.{n}", "record_key": "id"} for n in ("a", "b", "c")}
    p = parse_pipeline({"pipeline": "t", "source": {"root": "/landing"}, "lake": {"root": str(tmp_path)},
                        "tables": tables}, "p.yaml", "/tmp")
    seen, jvms = [], []

    class FakeJvm:
        def __init__(self, *args):
            jvms.append(self)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.closed = True

    def fake(pipeline, name, tt, history, uri, jvm, progress, timeout):
        seen.append((name, tt, jvm))
        if (name, tt) == ("b", "COPY_ON_WRITE"):
            raise JobError("hive sync of b (COPY_ON_WRITE) to u failed: refused")
        return {"table": name, "type": tt}

    monkeypatch.setattr(hs, "_sync_one", fake)
    monkeypatch.setattr(hs, "_java", lambda: "java")
    monkeypatch.setattr(hs, "SyncJvm", FakeJvm)
    with pytest.raises(TablesFailed) as info:
        hs._sync_each(p, list(p.targets(None)), "u", "cp", None, 60)
    assert info.value.names == {("b", "COPY_ON_WRITE")} and "refused" in str(info.value)
    assert {(r["table"], r["type"]) for r in info.value.results} == {
        (n, tt) for n in "abc" for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")} - {("b", "COPY_ON_WRITE")}
    assert len(seen) == 6 and len(jvms) == 1 and {j for *_, j in seen} == {jvms[0]} and jvms[0].closed
