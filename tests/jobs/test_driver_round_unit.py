"""A small MoR round made in the driver (hudi_cdc/jobs/stream/driver_round.py), without a JVM: which rounds it
takes, the latest event per key, and located.py's decisions event by event (in place, a partition move, an
insert into a file group's log, a redelivery, an ignored delete, a stored key text that differs)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hudi_cdc.jobs.stream import driver_round
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.located import KeyShape

RK, PP = driver_round._RK, driver_round._PP
SHAPE = KeyShape(("id",), ("region",), False, True)
TYPES = {"id": "LongType", "region": "StringType", "__lsn": "LongType"}
FILES = [("/landing/t+0+1.avro", 1, 100)]


def _ev(i, lsn, region="eu", deleted=False):
    return {"id": i, "region": region, "__lsn": lsn, "_hoodie_is_deleted": deleted, RK: str(i), PP: f"region={region}"}


def _stored(i, lsn, region="eu", file_id="fg1"):
    return {"_hoodie_commit_time": "100", "_hoodie_commit_seqno": f"100_0_{i}", "_hoodie_record_key": str(i),
            "_hoodie_partition_path": f"region={region}", "_hoodie_file_name": f"{file_id}_0-1-2_100.parquet",
            "id": i, "region": region, "__lsn": lsn}


def _target(**kw):
    base = dict(op="UPSERT", table_type="MERGE_ON_READ", filter_dupes=False, target_base_path="/nowhere/t")
    return SimpleNamespace(**{**base, **kw})


def test_the_switch_is_on_by_default_and_takes_only_true_or_false():
    assert driver_round.enabled({})
    assert not driver_round.enabled({"hoodie.streamer.hudi_cdc.driver.round": "false"})
    with pytest.raises(JobInputError, match="hudi_cdc.driver.round must be true or false"):
        driver_round.enabled({"hoodie.streamer.hudi_cdc.driver.round": "maybe"})


def test_only_small_upserts_into_an_existing_mor_table_without_history_routes_or_registry():
    assert driver_round.why_not(_target(), {}, FILES, True, None) == ""
    assert driver_round.why_not(_target(), {}, FILES, False, None)  # a new table: the bootstrap's path
    assert driver_round.why_not(_target(table_type="COPY_ON_WRITE"), {}, FILES, True, None)
    assert driver_round.why_not(_target(op="BULK_INSERT"), {}, FILES, True, None)
    assert driver_round.why_not(_target(filter_dupes=True), {}, FILES, True, None)
    assert driver_round.why_not(_target(), {}, [("/landing/big.avro", 1, 64 << 20)], True, None)
    for props in ({"hoodie.streamer.hudi_cdc.driver.write": "false"},
                  {"hoodie.streamer.hudi_cdc.mor.lookup": "snapshot"},
                  {"hoodie.streamer.hudi_cdc.stored.rows": "spark"},
                  {"hoodie.streamer.hudi_cdc.history": "scd2", "hoodie.streamer.hudi_cdc.history.path": "/h"},
                  {"hoodie.streamer.schemaprovider.registry.url": "http://registry/subjects/t/versions/latest"}):
        assert driver_round.why_not(_target(), props, FILES, True, None), props


def test_the_latest_event_per_key_wins_a_null_ordering_value_the_smallest_a_tie_the_later_landed():
    facts = [_ev(1, 5), _ev(2, 9), _ev(1, 7), _ev(2, None), _ev(3, 4), _ev(3, 4)]
    assert driver_round._latest_per_key(facts, ["id"], ["__lsn"]) == [1, 2, 5]


def test_each_event_is_placed_as_located_py_places_it():
    facts = [_ev(1, 20), _ev(2, 20, region="us"), _ev(3, 20), _ev(4, 5), _ev(5, 20, deleted=True),
             _ev(6, 20, deleted=True), _ev(7, 3, deleted=True)]
    stored = [_stored(1, 10), _stored(2, 10), _stored(4, 5), _stored(5, 10), _stored(7, 4)]
    targets = {"region=eu": ("150", "fg9_0-1-2_150.parquet")}
    plan = driver_round._locate(facts, list(range(7)), stored, ["id"], SHAPE, ["__lsn"], TYPES, targets)
    assert plan is not None
    # 1 in place; 2 moved (a delete in fg1, an insert into region=us, which has no target); 3 a new key into
    # region=eu's target file group; 4 a redelivery; 5 a delete in place; 6 a delete of a key never stored and
    # 7 a delete older than the stored row: both ignored
    assert (plan.unchanged, plan.ignored, plan.moves, plan.kept) == (1, 2, 1, 4)
    placed = list(zip(plan.picks, [m[2:] for m in plan.meta], plan.deleted, strict=True))
    assert placed == [
        (0, ["1", "region=eu", "fg1_0-1-2_100.parquet"], False),
        (4, ["5", "region=eu", "fg1_0-1-2_100.parquet"], False),
        (1, ["2", "region=us", None], False),
        (2, ["3", "region=eu", "fg9_0-1-2_150.parquet"], False),
        (1, ["2", "region=eu", "fg1_0-1-2_100.parquet"], True),
    ]
    assert plan.meta[3][0] == "150" and plan.meta[2][0] is None  # a target's instant; a new file group's none
    assert plan.inserted == [("3", "fg9_0-1-2_150.parquet")]


def test_a_stored_key_text_or_partition_path_that_differs_sends_the_round_to_hudis_index():
    differs = {**_stored(1, 10), "_hoodie_record_key": "id:1"}
    assert driver_round._locate([_ev(1, 20)], [0], [differs], ["id"], SHAPE, ["__lsn"], TYPES, None) is None
    elsewhere = {**_stored(1, 10), "_hoodie_partition_path": "eu"}
    assert driver_round._locate([_ev(1, 20)], [0], [elsewhere], ["id"], SHAPE, ["__lsn"], TYPES, None) is None


def test_a_stored_partition_path_is_made_as_hudis_key_generator_makes_it():
    shape = KeyShape(("id",), ("flag", "day"), True, False)
    types = {"flag": "BooleanType", "day": "StringType"}
    assert driver_round._stored_path({"flag": True, "day": ""}, shape, types) == "true/__HIVE_DEFAULT_PARTITION__"
    assert driver_round._stored_path({"flag": None, "day": "d1"}, shape, types) == "__HIVE_DEFAULT_PARTITION__/d1"


def test_the_key_file_holds_what_was_sent_to_stored_file_groups_in_sparks_parquet_types(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    from hudi_cdc.jobs.stream import logkeys

    facts = [_ev(1, 20), _ev(2, 20, region="us"), _ev(3, 20)]
    stored = [_stored(1, 10), _stored(2, 10)]
    targets = {"region=eu": ("150", "fg9_0-1-2_150.parquet")}
    plan = driver_round._locate(facts, [0, 1, 2], stored, ["id"], SHAPE, ["__lsn"], TYPES, targets)
    rows = driver_round._key_rows(facts, plan, ("id", "region"), ["__lsn"], TYPES)
    monkeypatch.setattr(logkeys, "_timeline", lambda base: ({"200"}, {"200"}, set(), ""))
    monkeypatch.setattr(logkeys, "_logs_hold_inserts", lambda base, instant: False)
    logkeys.record(None, str(tmp_path), None, ["__lsn"], set(), log=pytest.fail, key_columns=("id", "region"),
                   key_rows=rows)
    folder = tmp_path / ".hoodie" / ".aux" / "hudi-cdc-logkeys" / "200.parquet"
    assert (folder / "_SUCCESS").exists()
    table = pq.read_table(next(folder.glob("part-*.parquet")))
    types = {f.name: str(f.type) for f in table.schema}
    assert types["id"] == "int64" and types["__lsn"] == "int64" and types["region"] == "string"
    assert types["_hoodie_is_deleted"] == types[logkeys.INSERTED] == "bool"
    # the update in place, the move's delete where it was, the insert into the target (not the move's insert: no
    # stored file group in region=us)
    got = sorted((r["_hoodie_record_key"], r[logkeys.FILE_ID], r["_hoodie_is_deleted"], r[logkeys.INSERTED],
                  r[logkeys.INSTANT]) for r in table.to_pylist())
    assert got == [("1", "fg1", False, False, "200"), ("2", "fg1", True, False, "200"),
                   ("3", "fg9", False, True, "200")]
