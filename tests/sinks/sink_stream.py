"""The one landed stream every other-sink test runs (tests/sinks/test_iceberg_sink.py on Iceberg,
tests/sinks/test_sinks_postgres.py on PostgreSQL): four rounds of artists events, each one landed file
(round 2 carries all of round 1 again, as a redelivered file). What each round holds:

0. the snapshot (12 keys) plus two updates of key 2 in the same millisecond (the LSN decides);
1. a partition move, a key-only delete (null partition), a stale update, a same-millisecond pair in
   reversed file order, a delete and a newer re-insert of one key in one file;
2. round 1 redelivered, an update of key 3 older than its delete, a stale delete of key 6;
3. key 3 back with a newer change, a key deleted before it was ever seen;
4. that key again with a change older than its delete (only a kept tombstone can refuse it), a stale
   update of key 3.
"""

from __future__ import annotations

from tests.jobs.test_cdc_semantics import DATA_COLS, SNAPSHOT, ev

ALL_COLS = DATA_COLS + ["__db", "__table", "__schema", "__source_ts_ms"]


def same_ms(aid, lsn, ts, **kw):
    e = ev(aid, lsn, **kw)
    e["__source_ts_ms"] = ts
    return e


ROUND_1 = [ev(1, 200, nat="German", name="moved"), ev(3, 210, deleted=True), ev(4, 50, name="stale"),
           same_ms(5, 221, 7000, name="five-b"), same_ms(5, 220, 7000, name="five-a"),
           ev(7, 230, deleted=True), ev(7, 240, name="seven-back")]
ROUNDS: list[list[dict]] = [
    SNAPSHOT[:12] + [same_ms(2, 151, 5000, name="two-late"), same_ms(2, 150, 5000, name="two-early")],
    ROUND_1,
    ROUND_1 + [ev(3, 205, name="older than the delete"), ev(6, 90, deleted=True)],
    [ev(3, 400, nat="French", name="three-back"), ev(8, 410, deleted=True)],
    [ev(8, 405, name="older than its delete"), ev(3, 390, name="stale")],
]


def check_round(i: int, rows: dict, previous: dict) -> None:
    """What the table must show after round i (beyond equalling the replayed state); `previous`: the
    rows after round i - 1."""
    if i == 0:
        assert rows[2]["name"] == "two-late"
    if i == 1:
        assert rows[1]["nationality"] == "German" and 3 not in rows and rows[4]["name"] == "artist 4"
        assert rows[5]["name"] == "five-b" and rows[7]["name"] == "seven-back"
    if i in (2, 4):
        assert rows == previous, "a redelivery, an older or a stale event changed the table"
    if i in (3, 4):
        assert rows[3]["name"] == "three-back" and 8 not in rows


# ---- the same stream into a shaped table (docs/shaping.md) -------------------------------------------
# gender excluded; name masked (mask_in: streamer: hash or redact); rows of French artists filtered out;
# label = upper(nationality) derived; birth_year as decimal(10,2). Round 1 also moves key 2 out of the
# filter (an update to French) while key 1 moves in (French -> German), and deletes key 10, a row the
# target never held (French since the snapshot).
SHAPE = {"columns": {"exclude": ["gender"]}, "mask_in": "streamer", "filter": "nationality <> 'French'",
         "derive": {"label": "upper(nationality)"}, "types": {"label": "string", "birth_year": "decimal(10,2)"}}
SHAPED_COLS = ["artist_id", "name", "nationality", "birth_year", "death_year", "__op", "__db", "__table", "__schema",
               "__lsn", "__source_ts_ms", "__deleted", "label"]
SHAPED_ROUNDS: list[list[dict]] = [ROUNDS[0], ROUND_1 + [ev(2, 250, nat="French", name="two-out"),
                                                         ev(10, 260, deleted=True)], *ROUNDS[2:]]


def shaped_expected(events: list[dict], mask) -> dict:
    """The shaped table's rows, from the state replayed from the events: the filter holds for the latest
    change of each key (a change leaving it is a delete of the key)."""
    from decimal import Decimal

    from hudi_cdc import sample

    out = {}
    for k, e in sample.replay(events, "artist_id").items():
        if e["nationality"] in (None, "French"):
            continue
        by = e["birth_year"]
        out[k] = {**{c: e[c] for c in SHAPED_COLS if c in e}, "name": mask(e["name"]),
                  "birth_year": None if by is None else Decimal(by).quantize(Decimal("0.01")),
                  "label": e["nationality"].upper()}
    return out


def check_shaped_round(i: int, rows: dict) -> None:
    if i == 0:
        assert 2 in rows and 1 not in rows and 10 not in rows
    if i == 1:
        assert 1 in rows and rows[1]["label"] == "GERMAN", "an update moving a row into the filter inserts it"
        assert 2 not in rows, "an update moving a row out of the filter deletes it"
        assert 10 not in rows
    assert all("gender" not in r for r in rows.values())
