"""`hudi-cdc table downgrade` over many tables: one table's failed conversion does not stop the others."""

from __future__ import annotations

import contextlib

import pytest

from hudi_cdc.errors import TablesFailed
from hudi_cdc.pipeline import downgrade as dg


def test_one_failed_conversion_does_not_stop_the_others(monkeypatch):
    todo = [dg.Conversion(t, "MERGE_ON_READ", f"file:///lake/{t}_mor", 9, 6, dg.CONVERT) for t in ("a", "b", "c")]

    class P:
        hudi = type("H", (), {"version": dg.CURRENT_HUDI})()

    def convert_one(spark, pipeline, c):
        if c.table == "b":
            raise RuntimeError("java.lang.IllegalStateException: x\nCaused by: org.apache.hudi.Boom: refused")
        c.done = True

    monkeypatch.setattr(dg, "plan", lambda *a: todo)
    monkeypatch.setattr(dg, "table_locks", lambda *a: contextlib.nullcontext())
    monkeypatch.setattr(dg, "convert_one", convert_one)
    with pytest.raises(TablesFailed) as info:
        dg.downgrade(P(), spark=object(), progress=lambda m: None)
    assert info.value.names == {("b", "MERGE_ON_READ")} and "org.apache.hudi.Boom: refused" in str(info.value)
    assert [r["table"] for r in info.value.results] == ["a", "c"]  # converted after b failed
