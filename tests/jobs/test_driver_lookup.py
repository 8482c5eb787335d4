"""A small round's stored rows read in the driver (hudi_cdc/jobs/stream/driver_lookup.py): the base files'
rows with the key files' newest versions laid over them as logkeys.stored_view does in Spark. The whole read
against Hudi's snapshot read, round after round, is in tests/jobs/test_logkeys.py."""

from __future__ import annotations

import pytest

from hudi_cdc.jobs.stream import logkeys
from hudi_cdc.jobs.stream.driver_lookup import at_least, overlay

pytestmark = pytest.mark.unit

COLS = ["_hoodie_record_key", "_hoodie_file_name", "id", "__lsn"]
FID, INSTANT, INSERTED = logkeys.FILE_ID, logkeys.INSTANT, logkeys.INSERTED


def base(k, fid, lsn):
    return {"_hoodie_record_key": str(k), "_hoodie_file_name": f"{fid}_0-1-2_100.parquet", "id": k, "__lsn": lsn}


def logged(k, fid, lsn, instant, deleted=False, inserted=False, with_key=True):
    row = {"_hoodie_record_key": str(k), FID: fid, "__lsn": lsn, "_hoodie_is_deleted": deleted, INSTANT: instant,
           INSERTED: inserted, "_hoodie_file_name": f"{fid}_0-1-2_100.parquet"}
    if with_key:
        row["id"] = k
    return row


def keys(rows):
    return sorted((r["id"], r["__lsn"]) for r in rows)


def test_base_rows_of_the_round_keys_only():
    rows = overlay([base(1, "a", 10), base(2, "a", 10), base(3, "b", 10)], None, COLS, ["__lsn"], ["id"], {(1,), (3,)})
    assert keys(rows) == [(1, 10), (3, 10)]


def test_the_newest_logged_version_wins_where_it_is_at_least_as_new():
    log = {"columns": [*logged(1, "a", 0, "1")], "rows": [
        logged(1, "a", 20, "101"), logged(1, "a", 30, "102"),  # two updates: the newer counts
        logged(2, "a", 5, "101"),  # older than the base row (a late event logged): the base row stays
        logged(3, "b", 10, "101", deleted=True),  # a delete as new as the base row removes it
        logged(4, "b", 9, "101", deleted=True),  # an older delete does not
        logged(5, "z", 50, "101"),  # another file group's version (the key moved): not laid over this one
    ]}
    rows = overlay([base(k, "b" if k in (3, 4) else "a", 10) for k in range(1, 6)], log, COLS, ["__lsn"], ["id"],
                   {(k,) for k in range(1, 7)})
    assert keys(rows) == [(1, 30), (2, 10), (4, 10), (5, 10)]


def test_keys_only_logs_hold():
    log = {"columns": [*logged(1, "a", 0, "1")], "rows": [
        logged(7, "a", 40, "101", inserted=True),  # inserted into a's log: no base file holds it
        logged(8, "a", 40, "101", inserted=True), logged(8, "a", 41, "102", deleted=True),  # deleted since
        logged(9, "a", 40, "101", inserted=True),  # not a round key
    ]}
    rows = overlay([base(1, "a", 10)], log, COLS, ["__lsn"], ["id"], {(1,), (7,), (8,)})
    assert keys(rows) == [(1, 10), (7, 40)]
    assert [r["_hoodie_record_key"] for r in rows if r["id"] == 7] == ["7"]


def test_key_files_without_the_key_columns():
    """Key files written before log_inserts.py hold no key columns: with a key only logs hold, the round reads
    through Spark's merged snapshot instead (None); without one, the base rows serve."""
    old = {"columns": [c for c in logged(1, "a", 0, "1", with_key=False)], "rows": [logged(1, "a", 20, "101",
                                                                                             with_key=False)]}
    assert keys(overlay([base(1, "a", 10)], old, COLS, ["__lsn"], ["id"], {(1,)})) == [(1, 20)]
    old["rows"].append(logged(7, "a", 40, "102", inserted=True, with_key=False))
    assert overlay([base(1, "a", 10)], old, COLS, ["__lsn"], ["id"], {(1,)}) is None


def test_at_least_is_lexicographic_with_sql_nulls():
    assert at_least([2, 0], [1, 9]) is True
    assert at_least([1, 9], [1, 9]) is True
    assert at_least([1, 8], [1, 9]) is False
    assert at_least([None], [1]) is None
    assert at_least([2, None], [1, 5]) is True  # the first field decides
    assert at_least([1, None], [1, 5]) is None
