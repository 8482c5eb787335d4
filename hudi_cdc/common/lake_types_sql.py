"""The Spark SQL expressions of the lake type mapping (hudi_cdc/common/lake_types.py): each turns one
Debezium-encoded value into the type a lake user reads, by the policies of docs/types.md, and never
depends on Spark's session time zone; with the constants of those policies.

No expression ever fails a round: a value the lake type cannot hold (a numeric that does not fit its
decimal exactly, a date PostgreSQL cannot hold, an unparsable timestamp) gives NULL, and its ``Refusal``
says when that happened (``refused``), what the exact source value was (``exact``, PostgreSQL's text form)
and why (``reason``): lake_types.rejects_expr keeps it in the row's ``__rejects`` column.

Standard library only: the streamer job (hudi_cdc/jobs/) imports it in the Spark driver.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_PRECISION = 38

# days since 1970-01-01 / microseconds since 1970-01-01T00:00:00 of the policy's infinity values
DATE_MAX_DAYS, DATE_MIN_DAYS = 2_932_896, -719_162  # 9999-12-31, 0001-01-01
TS_MAX_MICROS, TS_MIN_MICROS = 253_402_300_799_999_999, -62_135_596_800_000_000
# PostgreSQL's earliest date (4714-11-24 BC, Julian day 0) in days since 1970: anything below is no date
PG_MIN_DAYS = -2_440_588
PG_MIN_MICROS = PG_MIN_DAYS * 86_400_000_000  # 4714-11-24 00:00:00 BC
# What Debezium 3 emits for PostgreSQL's infinities (measured, docs/types.md): pgjdbc's
# DATE_POSITIVE/NEGATIVE_INFINITY (9223372036825200000 / -9223372036832400000) as microseconds
# (MicroTimestamp), milliseconds / 1000 (Timestamp); a date is the int overflow of those
# (snapshot and array elements, +-2 days by the JVM's time zone) or PostgreSQL's own +-2^31 (streamed).
TS_POS_INF_MICROS, TS_NEG_INF_MICROS = 9_223_372_036_825_200_000, -9_223_372_036_832_400_000
DATE_POS_INF = (-622_191_233, -2_147_472_692)
DATE_NEG_INF = (-625_821_271, -2_147_472_691)


def sql_text(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Refusal:
    """When a conversion gives NULL for a value it cannot hold: ``refused`` (SQL, true exactly then),
    ``exact`` (SQL, the source value's exact text, whatever the value) and ``reason`` (plain text; or SQL
    in ``reason_sql`` when it depends on the value)."""

    refused: str
    exact: str
    reason: str
    reason_sql: str | None = None

    def reason_expr(self) -> str:
        return self.reason_sql or sql_text(self.reason)


# ---------------------------------------------------------------- expressions over one value x
def date_expr(x: str) -> tuple[str, Refusal]:
    pos = " OR ".join(f"{x} BETWEEN {v - 2} AND {v + 2}" if v > -2_000_000_000 else f"{x} = {v}"
                      for v in DATE_POS_INF)
    neg = " OR ".join(f"{x} BETWEEN {v - 2} AND {v + 2}" if v > -2_000_000_000 else f"{x} = {v}"
                      for v in DATE_NEG_INF)
    expr = (f"CASE WHEN {x} IS NULL THEN NULL WHEN {x} >= {PG_MIN_DAYS} THEN date_from_unix_date({x}) "
            f"WHEN {pos} THEN date_from_unix_date({DATE_MAX_DAYS}) "
            f"WHEN {neg} THEN date_from_unix_date({DATE_MIN_DAYS}) ELSE NULL END")
    refused = f"coalesce({x} < {PG_MIN_DAYS} AND NOT ({pos}) AND NOT ({neg}), false)"
    return expr, Refusal(refused, f"CAST({x} AS STRING)",
                         "is no date PostgreSQL holds (io.debezium.time.Date days since 1970-01-01)")


def timestamp_expr(x: str, unit: str) -> tuple[str, Refusal | None]:
    """millis | micros | nanos since the epoch -> timestamp (the wall clock as that instant at UTC).

    PostgreSQL's infinities are pgjdbc's sentinels (exactly); a value below PostgreSQL's earliest
    timestamp is no timestamp: Debezium's long overflows for PostgreSQL's timestamps after 294247 AD
    (294276-12-31 arrives as -9223372036853775810 micros, 21 s below the -infinity sentinel), so it
    lands NULL with the long it arrived as, never as a policy value."""
    if unit == "nanos":
        micros = f"(CAST({x} DIV 1000 AS BIGINT) - CASE WHEN {x} % 1000 < 0 THEN 1 ELSE 0 END)"
        return f"CASE WHEN {x} IS NULL THEN NULL ELSE timestamp_micros({micros}) END", None
    div = 1000 if unit == "millis" else 1
    pos, neg, low = TS_POS_INF_MICROS // div, TS_NEG_INF_MICROS // div, PG_MIN_MICROS // div
    fn = "timestamp_millis" if unit == "millis" else "timestamp_micros"
    expr = (f"CASE WHEN {x} IS NULL THEN NULL WHEN {x} >= {pos} THEN timestamp_micros({TS_MAX_MICROS}) "
            f"WHEN {x} = {neg} THEN timestamp_micros({TS_MIN_MICROS}) WHEN {x} < {low} THEN NULL ELSE {fn}({x}) END")
    return expr, Refusal(f"coalesce({x} < {low} AND {x} <> {neg}, false)", f"CAST({x} AS STRING)",
                         f"is no timestamp PostgreSQL holds ({unit} since 1970-01-01: Debezium's long overflows "
                         "for timestamps after 294247 AD)")


def zoned_timestamp_expr(x: str) -> tuple[str, Refusal]:
    """Debezium's ISO-8601 string (UTC, 'Z') -> timestamp (that instant); PostgreSQL's infinities by policy."""
    parsed = f"CAST({x} AS TIMESTAMP)"
    expr = (f"CASE WHEN {x} IS NULL THEN NULL WHEN {x} = 'infinity' THEN timestamp_micros({TS_MAX_MICROS}) "
            f"WHEN {x} = '-infinity' THEN timestamp_micros({TS_MIN_MICROS}) ELSE {parsed} END")
    refused = f"coalesce({x} NOT IN ('infinity', '-infinity') AND {parsed} IS NULL, false)"
    return expr, Refusal(refused, x, "is no ISO-8601 timestamp")


def time_expr(x: str, unit: str) -> str:
    """millis | micros | nanos since midnight -> '[-]HH:MM:SS.ffffff' (24:00:00 kept, as PostgreSQL has it;
    MySQL's TIME spans -838:59:59 to 838:59:59, so hours may have three digits and a sign)."""
    us = {"millis": f"(CAST({x} AS BIGINT) * 1000)", "micros": f"CAST({x} AS BIGINT)",
          "nanos": f"(CAST({x} AS BIGINT) DIV 1000)"}[unit]
    a = f"abs({us})"
    return (f"CASE WHEN {x} IS NULL THEN NULL ELSE concat(CASE WHEN {us} < 0 THEN '-' ELSE '' END, "
            f"format_string('%02d:%02d:%02d.%06d', {a} DIV 3600000000, ({a} DIV 60000000) % 60, "
            f"({a} DIV 1000000) % 60, {a} % 1000000)) END")


def duration_expr(x: str) -> str:
    """io.debezium.time.MicroDuration (microseconds, a month taken as 30.4375 days by Debezium) -> 'PT<s>S'."""
    return (f"CASE WHEN {x} IS NULL THEN NULL ELSE concat('PT', "
            f"CAST(CAST({x} AS DECIMAL(38,6)) / 1000000 AS DECIMAL(38,6)), 'S') END")


UNBOUNDED_BITS = 2147483647  # the length Debezium gives an unbounded varbit


def bits_expr(x: str, length: int) -> str:
    """io.debezium.data.Bits (java BitSet bytes: bit i in byte i/8, bit i%8) -> PostgreSQL's text form
    '10110001': `length` characters, bit length-1 first (exact for bit(n); Debezium does not carry a
    varbit value's own length, so varbit(n) is padded to n with leading zeros, and an unbounded varbit
    drops its leading zeros)."""
    unbounded = length <= 0 or length >= UNBOUNDED_BITS
    n = f"(length({x}) * 8)" if unbounded else str(length)
    byte = f"coalesce(CAST(conv(hex(substring({x}, CAST(bitpos DIV 8 AS INT) + 1, 1)), 16, 10) AS INT), 0)"
    text = (f"concat_ws('', transform(sequence({n} - 1, 0, -1), bitpos -> "
            f"CAST(shiftright({byte}, CAST(bitpos % 8 AS INT)) & 1 AS STRING)))")
    if unbounded:
        text = f"regexp_replace({text}, '^0+', '')"
    return f"CASE WHEN {x} IS NULL THEN NULL WHEN {n} = 0 THEN '' ELSE {text} END"


def _byte(b: str, i: str) -> str:
    return f"CAST(conv(hex(substring({b}, {i}, 1)), 16, 10) AS INT)"


def unscaled_expr(b: str) -> str:
    """Big-endian two's-complement bytes -> their integer as decimal(38,0) (NULL when it has > 38 digits)."""
    neg = f"({_byte(b, '1')} >= 128)"
    mag = (f"aggregate(sequence(1, length({b})), CAST(0 AS DECIMAL(38,0)), (acc, i) -> "
           f"CAST(acc * 256 + CASE WHEN {neg} THEN 255 - {_byte(b, 'i')} ELSE {_byte(b, 'i')} END AS DECIMAL(38,0)))")
    return (f"CASE WHEN length({b}) = 0 THEN CAST(0 AS DECIMAL(38,0)) "
            f"WHEN {neg} THEN CAST(-({mag} + 1) AS DECIMAL(38,0)) ELSE {mag} END")


def decimal_text_expr(b: str, scale: str) -> str:
    """(two's-complement unscaled bytes, scale) -> the exact decimal text, PostgreSQL's form ('-0.000230',
    the scale's digits kept); an unscaled value of more than 38 digits as '0x<its bytes>E-<scale>'."""
    u = unscaled_expr(b)
    digits = f"CAST(abs({u}) AS STRING)"
    padded = f"lpad({digits}, greatest(length({digits}), {scale} + 1), '0')"
    plain = (f"concat(CASE WHEN {u} < 0 THEN '-' ELSE '' END, substring({padded}, 1, length({padded}) - {scale}), "
             f"CASE WHEN {scale} > 0 THEN concat('.', substring({padded}, length({padded}) - {scale} + 1)) "
             "ELSE '' END)")
    return (f"CASE WHEN {b} IS NULL THEN NULL WHEN {u} IS NULL OR {scale} < 0 "
            f"THEN concat('0x', hex({b}), 'E-', CAST({scale} AS STRING)) ELSE {plain} END")


def decimal_from_bytes_expr(b: str, scale: str, target_scale: int, null_when: str | None = None,
                            precision: int = MAX_PRECISION) -> tuple[str, Refusal]:
    """(two's-complement unscaled bytes, scale) -> decimal(precision, target_scale) exactly, or NULL with
    its Refusal when the value does not fit (more integer digits, or fraction digits other than zeros
    beyond the scale: never rounded)."""
    u = unscaled_expr(b)
    text = f"concat(CAST({u} AS STRING), 'E', CAST(-({scale}) AS STRING))"
    exact = (f"({scale} <= {target_scale} OR "
             f"right(CAST(abs({u}) AS STRING), {scale} - {target_scale}) RLIKE '^0+$')")
    null = null_when or f"{b} IS NULL"
    typed = f"CAST({text} AS DECIMAL({precision},{target_scale}))"
    expr = f"CASE WHEN {null} THEN NULL WHEN {u} IS NOT NULL AND {exact} THEN {typed} ELSE NULL END"
    refused = f"coalesce(NOT ({null}) AND ({expr}) IS NULL, false)"
    return expr, Refusal(refused, decimal_text_expr(b, scale),
                         f"does not fit decimal({precision},{target_scale}) exactly")
