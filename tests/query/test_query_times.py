"""Unit tests of the query helpers that need no table: times, filters, record keys."""

from __future__ import annotations

from datetime import timezone

import pytest

from hudi_cdc.query.errors import BadKeyError, BadTimeError, NativeUnsupported
from hudi_cdc.query.filters import key_conditions, matches, parse_where
from hudi_cdc.query.times import format_instant, instant_datetime, read_time, timeline_zone, wall_clock


@pytest.mark.parametrize("text, instant, exact", [
    ("20211230132628", "20211230132628000", True),
    ("20211230132628123", "20211230132628123", True),
    ("2021-12-30", "20211230000000000", False),
    ("2021-12-30T13:00:00Z", "20211230130000000", False),
    ("2021-12-30 13:00:00", "20211230130000000", False),  # no zone: UTC
    ("2021-12-30T08:00:00-05:00", "20211230130000000", False),  # the seed's EST, no manual +5h
    ("2021-12-30T14:00+0100", "20211230130000000", False),
    ("2021-12-30T13:00:00.123456789Z", "20211230130000123", False),
])
def test_times_become_utc_instants(text, instant, exact):
    t = read_time(text, timezone.utc)
    assert (t.instant, t.exact) == (instant, exact)


@pytest.mark.parametrize("bad", ["yesterday", "", "2021-13-01", "20211340000000", "2021-12-30T25:00", "2021/12/30",
                                 "202112301326"])
def test_bad_times_say_what_is_accepted(bad):
    with pytest.raises(BadTimeError) as exc:
        read_time(bad)
    msg = str(exc.value)
    assert "\n" not in msg and repr(bad)[1:-1] in msg and ("yyyyMMddHHmmssSSS" in msg)


def test_wall_clock_and_zones():
    assert wall_clock("20211230132628123") == "2021-12-30T13:26:28.123Z"
    assert timeline_zone("UTC") is timezone.utc and timeline_zone("LOCAL") is None and timeline_zone(None) is None
    moment = instant_datetime("20211230132628123")
    assert format_instant(moment) == "20211230132628123"
    # a LOCAL timeline round-trips through the machine's zone
    assert format_instant(instant_datetime("20211230132628123", None), None) == "20211230132628123"


def test_native_where_and_keys():
    conds = parse_where("artist_id = 299 AND name <> 'O''Keeffe' and death_year is null")
    assert conds == [("artist_id", "=", 299), ("name", "<>", "O'Keeffe"), ("death_year", "=", None)]
    assert matches({"artist_id": 299, "name": "x", "death_year": None}, conds)
    assert not matches({"artist_id": 299, "name": "O'Keeffe", "death_year": None}, conds)
    assert not matches({"a": None}, [("a", ">", 1)])  # SQL: null compares false
    with pytest.raises(NativeUnsupported, match="--engine spark"):
        parse_where("artist_id IN (1, 2)")
    assert key_conditions("299", ["artist_id"], {"artist_id": "int32"}) == [("artist_id", "=", 299)]
    assert key_conditions("a=1,b=x", ["a", "b"], {"a": "int64", "b": "string"}) == [("a", "=", 1), ("b", "=", "x")]
    with pytest.raises(BadKeyError, match="artist_id is a int32 column, not a number"):
        key_conditions("abc", ["artist_id"], {"artist_id": "int32"})
    with pytest.raises(BadKeyError, match="missing record key field"):
        key_conditions("a=1", ["a", "b"], {})
