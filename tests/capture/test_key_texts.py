"""Issue 36: the key of a row whose value capture looks up (capture/specials.py) as the database's text, for
every encoding this project's events carry a key in (time.precision.mode adaptive, decimal.handling.mode
precise, binary.handling.mode bytes), and MySQL's casts of it (capture/zerodates.py)."""

from __future__ import annotations

import pytest

from hudi_cdc.capture.specials import key_text
from hudi_cdc.capture.zerodates import key_cast

T = "io.debezium.time."


@pytest.mark.parametrize("kind, logical, value, text", [
    ("INT32", None, 7, "7"),
    ("STRING", "io.debezium.data.Uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("STRING", "io.debezium.data.Enum", "low", "low"),
    ("INT32", T + "Year", 2024, "2024"),
    ("INT32", T + "Date", 19723, "2024-01-01"),
    ("INT32", T + "Date", -719162, "0001-01-01"),
    ("INT64", T + "Timestamp", 1704103200123, "2024-01-01 10:00:00.123000"),
    ("INT64", T + "MicroTimestamp", -1, "1969-12-31 23:59:59.999999"),
    ("INT64", T + "NanoTimestamp", 1704103200123456789, "2024-01-01 10:00:00.123456"),
    ("STRING", T + "ZonedTimestamp", "2024-01-01T10:00:00.5Z", "2024-01-01T10:00:00.5Z"),
    ("INT32", T + "Time", 45296789, "12:34:56.789000"),
    ("INT64", T + "MicroTime", 86_400_000_000, "24:00:00.000000"),
    ("INT64", T + "MicroTime", -3_600_000_001, "-01:00:00.000001"),  # MySQL's TIME
    ("INT64", T + "MicroTime", 838 * 3_600_000_000, "838:00:00.000000"),
    ("INT64", T + "NanoTime", 1_500, "00:00:00.000001"),
    ("BYTES", "org.apache.kafka.connect.data.Decimal", "-12.50", "-12.50"),
    ("STRUCT", "io.debezium.data.VariableScaleDecimal", (2, (-1250).to_bytes(2, "big", signed=True)), "-12.50"),
    ("STRUCT", "io.debezium.data.VariableScaleDecimal", (0, (10**30).to_bytes(13, "big", signed=True)),
     "1" + "0" * 30),
    ("BYTES", None, b"\x00\xff", "\\x00ff"),
    ("FLOAT64", None, 0.1, "0.1"),
    ("FLOAT64", None, float("nan"), "NaN"),
    ("FLOAT32", None, float("-inf"), "-Infinity"),
])
def test_a_key_field_is_the_database_text_of_its_value(kind, logical, value, text):
    assert key_text(kind, logical, value) == text


@pytest.mark.parametrize("kind, logical, value", [
    ("INT32", T + "Date", 2_147_483_647),  # PostgreSQL's infinity sentinel: beyond Python's dates
    ("INT64", T + "MicroTimestamp", 9223372036825200000),
    ("STRING", T + "ZonedTime", "10:00:00Z"),  # a timetz equals only in its own zone
    ("BYTES", "io.debezium.data.Bits", b"\x01"),
    ("STRUCT", "io.debezium.data.geometry.Point", None),
])
def test_a_key_field_without_database_text_is_none(kind, logical, value):
    assert key_text(kind, logical, value) is None


def test_mysql_compares_a_key_as_its_column_type():
    assert key_cast("bigint", "bigint(20) unsigned", 20, 0) == "CAST({} AS UNSIGNED)"
    assert key_cast("INT", "int(11)", 10, 0) == "CAST({} AS SIGNED)"
    assert key_cast("decimal", "decimal(30,10)", 30, 10) == "CAST({} AS DECIMAL(30,10))"
    assert key_cast("varbinary", "varbinary(16)", None, None).format("'\\x00ff'") == "UNHEX(SUBSTRING('\\x00ff', 3))"
    assert "DATETIME(6)" in key_cast("timestamp", "timestamp(6)", None, None)
    assert key_cast("date", "date", None, None) == key_cast("varchar", "varchar(10)", None, None) == "{}"
