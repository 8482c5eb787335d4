"""The schema registry follows a real PostgreSQL's DDL mid-stream: capture registers each new landed schema and
hudi-cdc's streamer reads every file with the registry's latest one. Its own file: it needs the local stack's
registry (the `stack` xdist group, tests/conftest.py), the rest of tests/jobs/test_toast_ddl.py does not."""

from __future__ import annotations

import pytest

from tests.jobs.test_toast_ddl import DDL, TYPES, Stream, _insert, _row, _sql


@pytest.mark.postgres
@pytest.mark.registry
def test_registry_follows_schema_changes(tmp_path, pg_database, spark, registry_url):
    """With source.schema_registry set, capture registers each new landed schema (ADD COLUMN, DROP
    COLUMN) as a new version, and the streamer, reading every file with the registry's latest schema,
    lands the new column and keeps the dropped one: no `schemas register` by hand."""
    from hudi_cdc.registry.client import RegistryClient

    db = pg_database("toastreg")
    _sql(db, *DDL)
    _insert(db, [_row(i) for i in range(1, 4)])
    s = Stream(tmp_path, db, spark, registry=registry_url)
    s.capture()
    subject = "toastreg.public.docs-value"
    with RegistryClient.from_pipeline(s.p) as client:
        assert len(client.versions(subject)) == 1
    s.run("BULK_INSERT")
    _sql(db, "ALTER TABLE docs ADD COLUMN score integer", "UPDATE docs SET score = 7, n = 70 WHERE id = 1")
    s.capture()
    with RegistryClient.from_pipeline(s.p) as client:
        assert len(client.versions(subject)) == 2
        assert "score" in [f["name"] for f in client.get(subject).parsed["fields"]]
    s.run("UPSERT")
    s.assert_equal()
    _sql(db, "ALTER TABLE docs DROP COLUMN label", "UPDATE docs SET n = 80 WHERE id = 2")
    s.capture()
    with RegistryClient.from_pipeline(s.p) as client:
        assert len(client.versions(subject)) == 3
    s.run("UPSERT")
    s.assert_equal(extra_cols=("label",))
    for tt in TYPES:
        lake = s.lake(tt)
        assert lake[2]["label"] is None and lake[3]["label"] == "l3" and lake[1]["score"] == 7
