"""A blocking snapshot (a PostgreSQL partitioned table's `capture snapshot`) that a capture was reading when it
stopped: Debezium never resumes one, so the next capture counts its rows anew and, when the signal is not
streamed again, requests it once more (capture/signals.py). No database: the source's side is a stand-in
reporting the slot's confirmed position."""

from __future__ import annotations

import pytest

from hudi_cdc.capture import signals
from hudi_cdc.capture.snapshot_requests import read_json, requests_dir, write_json
from hudi_cdc.config import parse_pipeline
from hudi_cdc.sources.base import BLOCKING, INCREMENTAL


def _pipeline(tmp_path):
    return parse_pipeline({
        "pipeline": "shop",
        "source": {"root": "landing", "database": {"name": "shop", "user": "u", "slot": "s1"}},
        "lake": {"root": "lake", "hive_database": "shop"},
        "tables": {t: {"topic": f"shop.public.{t}", "record_key": "id", "partition_field": "day"}
                   for t in ("events", "orders", "items")},
    }, str(tmp_path / "hudi-cdc.yaml"), str(tmp_path))


class _Slot:
    """The source's side: the slot's confirmed_flush_lsn, and how often it was asked."""

    def __init__(self, flushed):
        self.value, self.asked = flushed, 0

    def flushed(self, pipeline):
        self.asked += 1
        return self.value


def test_an_interrupted_blocking_snapshot_is_counted_anew_then_requested_again(tmp_path, monkeypatch):
    p = _pipeline(tmp_path)
    d = requests_dir(p)
    before = {"qualified": "public.events", "floor": 99, "state": "signalled", "kind": BLOCKING, "rows": 700,
              "expect": 1000, "id": "first", "replace": True, "signal_lsn": 120}
    write_json(d / "state.json", {
        "events": before,
        # an incremental snapshot resumes from Debezium's offsets; a completed one is done
        "orders": {**before, "qualified": "public.orders", "kind": INCREMENTAL, "id": "inc"},
        "items": {**before, "qualified": "public.items", "state": "completed", "id": "done"}})
    said: list[str] = []
    snaps = signals.Snapshots(p, said.append)
    assert list(snaps.interrupted) == ["events"]
    assert snaps.state["events"]["rows"] == 0 and "expect" not in snaps.state["events"]  # Debezium reads it whole
    assert snaps.state["orders"]["rows"] == 700 and snaps.state["items"]["rows"] == 700
    assert said == ["capture snapshot: events: its blocking snapshot was under way when the last capture stopped: "
                    "its rows are counted anew (Debezium reads the table again if the signal is streamed again, "
                    "else it is requested again within 300 s)"]
    assert snaps.under_way()  # a --once run holds for it

    # the slot has not confirmed the signal: Debezium may stream it again, so it waits for its rows
    snaps.db = slot = _Slot(119)
    snaps._resume()
    assert not (d / "events.json").exists() and snaps.interrupted and slot.asked == 1
    snaps._resume()
    assert slot.asked == 1  # asked every 5 s at most

    # the stream reaches the signal's position: not past it yet
    snaps.rewrite(None, _Change("u", 120))
    assert snaps.streamed_lsn == 120
    slot.value, snaps._flushed_asked = 119, float("-inf")
    snaps._resume()
    assert snaps.interrupted

    # the slot confirmed past the signal: it never comes again, so it is requested again at once
    slot.value, snaps._flushed_asked = 120, float("-inf")
    snaps._resume()
    doc = read_json(d / "events.json")
    assert doc["table"] == "events" and doc["replace"] is True and doc["resumes"] == "first" and doc["id"] != "first"
    assert not snaps.interrupted
    assert said[-1] == ("capture snapshot: events: the blocking snapshot the last capture stopped in is requested "
                        "again (the slot confirmed its signal as read)")
    snaps._resume()
    assert read_json(d / "events.json")["id"] == doc["id"]  # once
    snaps.rewrite(None, _Change("u", 500))
    assert snaps.streamed_lsn == 120  # not looked at once none is interrupted


class _Change:
    """A landed streamed change (a Connect struct's get)."""

    def __init__(self, op, lsn):
        self.fields = {"__op": op, "__lsn": lsn}

    def get(self, name):
        return self.fields[name]


def test_a_change_streamed_after_the_signal_before_any_row_of_it_resumes_at_once(tmp_path):
    """A blocking snapshot pauses the stream: a change committed after its signal that comes before any row of it
    means Debezium passed the signal without reading the table again."""
    p = _pipeline(tmp_path)
    write_json(requests_dir(p) / "state.json", {"events": {
        "qualified": "public.events", "floor": 99, "state": "signalled", "kind": BLOCKING, "rows": 3, "id": "first",
        "signal_lsn": 120}})
    said: list[str] = []
    snaps = signals.Snapshots(p, said.append)
    snaps.db = _Slot(100)
    snaps.rewrite(None, _Change("c", 121))
    snaps._resume()
    assert read_json(requests_dir(p) / "events.json")["resumes"] == "first"
    assert said[-1].endswith("is requested again (a change after its signal came first)")


@pytest.mark.parametrize("case", ["timeout", "a row came", "the user asked"])
def test_an_interrupted_blocking_snapshot_without_a_known_signal_position(tmp_path, monkeypatch, case):
    """A state from before the signal's position was kept: the wait alone decides (RESUME_SECONDS)."""
    p = _pipeline(tmp_path)
    d = requests_dir(p)
    write_json(d / "state.json", {"events": {"qualified": "public.events", "floor": 99, "state": "signalled",
                                             "kind": BLOCKING, "rows": 3, "id": "first"}})
    snaps = signals.Snapshots(p, [].append)
    snaps.db = slot = _Slot(None)
    if case == "a row came":
        snaps.interrupted.pop("events")  # what rewrite() does for a row of the table: Debezium reads it again
    if case == "the user asked":
        write_json(d / "events.json", {"table": "events", "replace": False, "id": "user"})
    monkeypatch.setattr(signals, "RESUME_SECONDS", -1.0)
    snaps._resume()
    assert slot.asked == 0  # no position to compare with
    got = read_json(d / "events.json")
    assert got.get("id") == {"timeout": got.get("id"), "a row came": None, "the user asked": "user"}[case]
    if case == "timeout":
        assert got["resumes"] == "first" and got["replace"] is False
    assert not snaps.interrupted


class _Signals(_Slot):
    """The source's side of a request whose signal was written just before the capture stopped."""

    def sent(self, pipeline, request_id):
        return True

    def signal(self, pipeline, qualified, request_id):
        return BLOCKING  # written already (ON CONFLICT DO NOTHING): only its kind

    def floor(self, pipeline):
        return 150, "0"


def test_a_signal_written_before_the_state_was_saved_counts_as_interrupted(tmp_path):
    """A capture stopped between writing a blocking snapshot's signal and saving `signalled`: the next one finds
    the request's signal in the table and takes the snapshot as interrupted (its kind and position recorded)."""
    p = _pipeline(tmp_path)
    d = requests_dir(p)
    write_json(d / "events.json", {"table": "events", "replace": False, "id": "first"})
    write_json(d / "state.json", {"events": {"qualified": "public.events", "floor": 99, "state": "waiting",
                                             "rows": 0, "id": "first"}})
    snaps = signals.Snapshots(p, [].append)
    snaps.db = _Signals(None)
    snaps.poll(consumer=None)
    state = read_json(d / "state.json")["events"]
    assert (state["state"], state["kind"], state["signal_lsn"], state["floor"]) == ("signalled", BLOCKING, 150, 99)
    assert list(snaps.interrupted) == ["events"] and not (d / "events.json").exists()
    assert snaps._blocking_under_way("events")  # its rows are ordered at the floor, as before the stop
