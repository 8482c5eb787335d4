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
    assert key_cast("bit", "bit(1)", None, None).format("'True'") == "IF(LOWER('True') IN ('true', '1'), 1, 0)"
    assert key_cast("date", "date", None, None) == key_cast("varchar", "varchar(10)", None, None) == "{}"


def test_the_suspect_value_tests_made_once_per_row_schema():
    """specials.py asks each lookup once per row schema for a test per field, then runs it on every row event:
    a zero date may stand behind NULL, the epoch or the column's default; a numeric NaN behind NULL, in an array
    behind a NULL element."""
    from hudi_cdc.capture.pg_numerics import _has_null_element, _is_null
    from hudi_cdc.capture.zerodates import _zero_date_test

    with_default, without = _zero_date_test(19723), _zero_date_test(None)
    assert with_default(None) and with_default(0) and with_default("1970-01-01T00:00:00Z") and with_default(19723)
    assert not with_default(19724) and without(0) and not without(19723)
    assert _is_null(None) and not _is_null(0)
    assert _has_null_element([1, None]) and not _has_null_element([1, 2]) and not _has_null_element(None)


@pytest.mark.postgres
def test_postgres_reads_a_row_by_key_texts_of_bytea_times_interval_floats_numeric(postgres):
    """The lookup's query (pg_numerics.py) finds the row by the texts key_text gives (no Debezium: its key
    values as JPype yields them)."""
    import psycopg

    from hudi_cdc.capture.pg_numerics import PgNumerics

    with psycopg.connect(postgres.dsn(), autocommit=True) as c:
        c.execute("CREATE SCHEMA keytexts")
        c.execute("CREATE TABLE keytexts.t (b bytea, tm time, tm3 time(3), iv interval, ts3 timestamp(3), f real, "
                  "u numeric, n numeric, PRIMARY KEY (b, tm, tm3, iv, ts3, f, u))")
        c.execute("INSERT INTO keytexts.t VALUES ('\\x00ff', '23:59:59.999999', '12:34:56.789', "
                  "'1 year 2 mons 3 days 04:05:06.78', '2024-01-01 10:00:00.123', 0.1, 1e-30, 'NaN')")
    f32 = 0.10000000149011612  # real 0.1 as Java's float reaches Python
    key = (key_text("BYTES", None, b"\x00\xff"), key_text("INT64", T + "MicroTime", 86_399_999_999),
           key_text("INT32", T + "Time", 45296789), key_text("STRING", T + "Interval", "P1Y2M3DT4H5M6.78S"),
           key_text("INT64", T + "Timestamp", 1704103200123), key_text("FLOAT32", None, f32),
           key_text("STRUCT", "io.debezium.data.VariableScaleDecimal", (30, b"\x01")))
    look = PgNumerics(lambda: psycopg.connect(postgres.dsn(), autocommit=True))
    try:
        assert look.query("keytexts", "t", ["b", "tm", "tm3", "iv", "ts3", "f", "u"], [key], ["n"]) == [
            (key, {"n": "NaN"})]
    finally:
        look.close()


@pytest.mark.mariadb
def test_mariadb_reads_a_row_by_key_texts_exactly(mariadb):
    """zerodates.py's casts: a TIMESTAMP key (UTC text, the row written in another zone), VARBINARY, a negative
    TIME, BIGINT (UNSIGNED) beyond 2^53 (not as a double: its neighbour is not read) and DECIMAL."""
    from hudi_cdc.capture.zerodates import ZeroDates

    conn = mariadb.connect()
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE keytexts")
        cur.execute("SET SESSION sql_mode = ''")
        cur.execute("SET time_zone = '+05:00'")
        cur.execute("CREATE TABLE keytexts.t (ts TIMESTAMP(6) NOT NULL, b VARBINARY(4), tm TIME(6), "
                    "ub BIGINT UNSIGNED, i BIGINT, dc DECIMAL(30,10), zd DATE, PRIMARY KEY (ts, b, tm, ub, i, dc))")
        for i in (9007199254740993, 9007199254740992):
            cur.execute(f"INSERT INTO keytexts.t VALUES ('2024-01-01 15:00:00.5', x'00ff', '-838:59:59', "
                        f"18446744073709551615, {i}, 12345678901234567890.0123456789, '0000-00-00')")
    conn.commit()
    conn.close()
    key = (key_text("STRING", T + "ZonedTimestamp", "2024-01-01T10:00:00.5Z"), key_text("BYTES", None, b"\x00\xff"),
           key_text("INT64", T + "MicroTime", -(838 * 3600 + 59 * 60 + 59) * 10**6),
           key_text("BYTES", "org.apache.kafka.connect.data.Decimal", "18446744073709551615"),
           key_text("INT64", None, 9007199254740993),
           key_text("BYTES", "org.apache.kafka.connect.data.Decimal", "12345678901234567890.0123456789"))
    look = ZeroDates(mariadb.connect)
    try:
        assert look.query("keytexts", "t", ["ts", "b", "tm", "ub", "i", "dc"], [key], ["zd"]) == [
            (key, {"zd": "0000-00-00"})]
    finally:
        look.close()
