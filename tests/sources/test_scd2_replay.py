"""The history replay behind `verify --history --whole` (sources/scd2_replay.py) on hand-made landed events:
the streamer's version rules (docs/history.md) applied to the whole stream at once."""

from __future__ import annotations

from hudi_cdc.sources.scd2_replay import replay

PH = "__debezium_unavailable_value"


def ev(k, lsn, op="u", name="n", note=None, **extra):
    return {"id": k, "name": name, "note": note, "__op": op, "__lsn": lsn, "__source_ts_ms": lsn * 10,
            "__deleted": "true" if op == "d" else "false", **extra}


def rows(records):
    return [(v.key[0], v.values["name"], v.from_lsn, v.to_lsn, v.current, v.op) for v in replay(records, ["id"])]


def test_updates_deletes_reinserts_and_unchanged_updates():
    got = rows([ev(1, 100, "r", "a"), ev(1, 200, "u", "a"), ev(1, 300, "u", "b"), ev(1, 400, "d", "b"),
                ev(1, 500, "c", "b")])
    assert got == [(1, "a", 100, 300, False, "r"), (1, "b", 300, 400, False, "u"), (1, "b", 500, None, True, "c")]


def test_redelivery_and_late_events_take_their_place_in_lsn_order():
    first = [ev(1, 100, "c", "a"), ev(1, 300, "u", "c")]
    got = rows([*first, *first, ev(1, 200, "u", "b")])  # a redelivered file, then a late event
    assert got == [(1, "a", 100, 200, False, "c"), (1, "b", 200, 300, False, "u"), (1, "c", 300, None, True, "u")]
    assert [(v.from_ts_ms, v.to_ts_ms) for v in replay([*first, ev(1, 200, "u", "b")], ["id"])] == \
        [(1000, 2000), (2000, 3000), (3000, None)]


def test_truncate_ends_every_open_version_and_nothing_closed():
    trunc = {**ev(0, 250, "t"), "id": None}
    got = rows([ev(1, 100, "r"), ev(2, 100, "r"), ev(2, 150, "d"), trunc, ev(2, 300, "c", "x")])
    assert got == [(1, "n", 100, 250, False, "r"), (2, "n", 100, 150, False, "r"), (2, "x", 300, None, True, "c")]


def test_toast_placeholder_takes_the_earlier_value_or_the_old_keys_on_a_key_change():
    got = replay([ev(1, 100, "r", note="big"), ev(1, 200, "u", "b", note=PH), ev(1, 300, "u", "b", note=PH),
                  ev(1, 400, "d", "b", note=None), ev(2, 400, "c", "b", note=PH, __oldkey_id=1)], ["id"])
    assert [(v.key[0], v.values["note"], v.from_lsn, v.to_lsn) for v in got] == \
        [(1, "big", 100, 200), (1, "big", 200, 400), (2, "big", 400, None)]


def test_a_column_added_mid_stream_is_null_in_older_events():
    got = replay([ev(1, 100, "r"), ev(1, 200, "u", extra_col=None), ev(1, 300, "u", extra_col=5)], ["id"])
    assert [(v.from_lsn, v.values["extra_col"]) for v in got] == [(100, None), (300, 5)]
