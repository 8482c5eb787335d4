"""interval[] and money[] elements, as capture reads them from PostgreSQL (capture/pg_arrays.py), in the
form their scalar columns land in: Debezium's ISO-8601 interval string, a Decimal of scale 2. The PostgreSQL
texts are PostgreSQL 15's (IntervalStyle iso_8601) of the values named beside them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hudi_cdc.capture.pg_arrays import debezium_interval, elements, money_text
from hudi_cdc.sources.typed_values import interval_parts


@pytest.mark.parametrize("pg, debezium", [
    ("P1Y2M3D", "P1Y2M3DT0H0M0S"),  # '1 year 2 mons 3 days', as an interval column lands (docs/types.md)
    ("P-178000000Y", "P-178000000Y0M0DT0H0M0S"),
    ("P1M-1D", "P0Y1M-1DT0H0M0S"),  # '1 mon -1 days'
    ("PT-4H-5M-6.78S", "P0Y0M0DT-4H-5M-6.78S"),  # '-04:05:06.78'
    ("PT0S", "P0Y0M0DT0H0M0S"),
    ("PT-0.5S", "P0Y0M0DT0H0M-0.5S"),
    ("PT1.000001S", "P0Y0M0DT0H0M1.000001S"),
    ("PT10S", "P0Y0M0DT0H0M10S"),  # no exponent form
    ("P-1Y-2M3DT-1S", "P-1Y-2M3DT0H0M-1S"),
    ("PT2562047788H54.775807S", "P0Y0M0DT2562047788H0M54.775807S"),  # the largest time part
    ("P7D", "P0Y0M7DT0H0M0S"),
])
def test_an_interval_element_lands_in_debeziums_iso_form(pg, debezium):
    assert debezium_interval(pg) == debezium
    assert interval_parts(debezium) == interval_parts(pg)  # what verify compares


def test_money_elements_keep_two_digits_exactly():
    assert money_text(Decimal("1.50")) == "1.50"
    assert money_text(Decimal("-92233720368547758.08")) == "-92233720368547758.08"
    assert money_text(Decimal("2")) == "2.00"
    with pytest.raises(ValueError, match="more than 2 fractional digits"):
        money_text(Decimal("1.505"))  # an lc_monetary with three digits: never rounded


def test_null_arrays_and_null_elements_are_kept():
    assert elements("interval", None) is None
    assert elements("interval", ["P1D", None]) == ["P0Y0M1DT0H0M0S", None]
    assert elements("money", [Decimal("1.50"), None]) == ["1.50", None] and elements("money", []) == []
    with pytest.raises(ValueError, match="multi-dimensional"):
        elements("interval", [["P1D"]])
    with pytest.raises(ValueError, match="not PostgreSQL's ISO-8601 interval"):
        debezium_interval("1 day")


def test_decimals_avro_refuses_become_ones_it_takes():
    """numeric(3,5) (scale above precision) and numeric(5,-2) (Debezium's scale 2046: the typmod's 11 bits read as
    unsigned) as decimals every value fits exactly (decimals.py); the others unchanged."""
    from hudi_cdc.capture.decimals import fixed

    assert fixed(3, 5) == (5, 5) and fixed(5, 2046) == (7, 0) and fixed(1, 1024) == (1025, 0)
    assert fixed(10, 2) is None and fixed(5, 5) is None and fixed(38, 0) is None


def test_multi_dimensional_array_texts():
    from hudi_cdc.capture.pg_numerics import multi_dimensional
    from hudi_cdc.sources.array_text import parse_array

    assert multi_dimensional("{{1,2},{3,NULL}}") and multi_dimensional("[2:3][1:1]={{1},{2}}")
    assert not any(multi_dimensional(t) for t in ("{1,NULL}", "[0:1]={1,2}", '{"{a}"}'))
    assert parse_array('[2:3][1:2]={{"a,b",NULL},{c,"d\\"e"}}') == [["a,b", None], ["c", 'd"e']]
