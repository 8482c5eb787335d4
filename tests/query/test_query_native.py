"""The query library on the shared fixture tables (written by Hudi's JVM writers), hudi-rs only:
version 6 timelines (no completion times), version 8, composite keys, an empty table."""

from __future__ import annotations

import pytest

from hudi_cdc.errors import TableStateError
from hudi_cdc.query import as_of, changes, history, open_query_table


def test_v6_table_resolves_by_requested_time(hudi_fixture_tables):
    qt = open_query_table(str(hudi_fixture_tables["quickstart_trips_table/mor/avro/v6_trips_8i3d"]))
    assert all(c.completion_time == c.requested_time for c in qt.commits)  # layout 1 has none
    first, last = qt.commits[0], qt.commits[-1]
    assert qt.commit_at(qt.wall_clock(first.requested_time)) == first
    assert as_of(qt, "2099-01-01", engine="native").commit == last
    res = changes(qt, "2000-01-01", engine="native")
    assert res.range.begin == "000" and res.totals == {"inserts": 8, "updates": 0, "deletes": 3}
    assert len(res.rows) == len(as_of(qt, last.requested_time, engine="native").rows) == 5


def test_v8_history_with_updates_and_deletes(hudi_fixture_tables):
    qt = open_query_table(str(hudi_fixture_tables["quickstart_trips_table/mor/avro/v8_trips_8i3u1d"]))
    assert all(c.completion_time > c.requested_time for c in qt.commits)
    first_rows = as_of(qt, qt.commits[0].requested_time, engine="native").rows
    latest = {r["uuid"] for r in as_of(qt, "2099-01-01", engine="native").rows}
    gone = [r["uuid"] for r in first_rows if r["uuid"] not in latest]
    assert gone, "the fixture deletes a record"
    states = history(qt, gone[0], engine="native").states
    assert states[0]["change"] == "insert" and states[-1]["change"] == "delete"
    assert states[-1]["uuid"] == gone[0] and states[-1]["fare"] is None


def test_composite_key_and_empty_table(hudi_fixture_tables):
    qt = open_query_table(str(hudi_fixture_tables["sample_table/cow/v6_complexkeygen_hivestyle"]))
    assert qt.record_keys == ["id", "name"]
    states = history(qt, "id=1,name=Alice", engine="native").states
    assert states and all((s["id"], s["name"]) == (1, "Alice") for s in states)
    with pytest.raises(TableStateError, match="has no completed commits yet"):
        as_of(str(hudi_fixture_tables["sample_table/cow/v6_empty"]), "2099-01-01", engine="native")
