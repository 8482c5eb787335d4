"""The versions a history table (`history: scd2`, docs/history.md) must hold, replayed from every landed
event of its table in plain Python: what `verify --history --whole` compares the table with
(sources/scd2_verify.py).

The rules are the streamer's (jobs/stream/history.py), applied to the whole stream at once instead of
round by round, so a mistake in the rounds' recomputation (a version lost, a range cut wrong, a
version written twice) or a corrupted version shows as a difference:
- the events in LSN order; one event per key and LSN (a redelivered event, landed twice, counts once;
  an insert or update before a delete at the same LSN);
- an unchanged TOAST placeholder takes the key's newest earlier value (a key change: the old key's,
  named by capture's `__oldkey_` columns), as the round's fill does; none known: null;
- an insert or update opens a version when the key has none open or a visible value differs; a delete
  (`__op = d`, or the delete field true) ends the open version; a TRUNCATE (`__op = t`) ends every
  version open at its LSN; a version ends at the next event that opens a version or deletes;
- each start and end keeps the last commit LSN before its change's transaction (`__sequence`'s first
  element; a snapshot row or an event without it: its LSN - 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from hudi_cdc.common.lake_types import OLDKEY_PREFIX
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER, is_placeholder

TS_FIELD = "__source_ts_ms"
OPEN, END = "o", "d"


@dataclass
class Version:
    key: tuple
    values: dict
    from_lsn: int
    from_ts_ms: int | None
    op: str | None
    from_prev: int
    to_lsn: int | None = None
    to_ts_ms: int | None = None
    to_prev: int | None = None

    @property
    def current(self) -> bool:
        return self.to_lsn is None


@dataclass
class _Event:
    key: tuple
    lsn: int
    ts_ms: int | None
    kind: str
    op: str | None
    prev: int
    values: dict = field(default_factory=dict)
    old_key: tuple | None = None


def value_columns(record: dict, keys: Sequence[str]) -> list[str]:
    """The columns of a landed record a user sees (capture's `__` columns left out), keys excluded."""
    return [c for c in record if c not in keys and not c.startswith(("__", "_hoodie"))]


def _deleted(record: dict, delete_field: str) -> bool:
    return record.get("__op") == "d" or str(record.get(delete_field)).lower() == "true" \
        or record.get("_hoodie_is_deleted") is True


def prev_commit(record: dict, lsn: int) -> int:
    """The last commit LSN before the record's transaction (jobs/stream/history.py's rule)."""
    seq = record.get("__sequence")
    if seq and record.get("__op") != "r":
        try:
            first = json.loads(seq)[0]
        except (ValueError, TypeError, IndexError):
            first = None
        if first is not None:
            return int(first)
    return lsn - 1


def _events(records: Iterable[dict], keys: Sequence[str], lsn_field: str, delete_field: str
            ) -> tuple[list[_Event], list[tuple[int, int | None, int]]]:
    records = list(records)
    columns: dict[str, None] = {}  # every file's (a column added mid-stream is null in older events)
    for r in records:
        columns.update(dict.fromkeys(value_columns(r, keys)))
    rows, truncates = [], []
    for r in records:
        lsn, ts = int(r[lsn_field]), r.get(TS_FIELD)
        if r.get("__op") == "t":
            truncates.append((lsn, ts, prev_commit(r, lsn)))
            continue
        old = tuple(r.get(OLDKEY_PREFIX + k) for k in keys)
        rows.append(_Event(tuple(r.get(k) for k in keys), lsn, ts, END if _deleted(r, delete_field) else OPEN,
                           r.get("__op"), prev_commit(r, lsn), {c: r.get(c) for c in columns},
                           old if any(v is not None for v in old) else None))
    return rows, sorted(set(truncates), key=lambda t: t[0])


def _fill(events: list[_Event], placeholder: str) -> None:
    """Placeholders (in LSN order) take the key's newest earlier value, or the old key's on a key change."""
    known: dict[tuple, dict] = {}
    for e in events:
        if e.kind != OPEN:
            continue
        before = known.get(e.old_key if e.old_key is not None else e.key) or known.get(e.key) or {}
        for c, v in e.values.items():
            if v is not None and is_placeholder(v, placeholder):
                e.values[c] = before.get(c)
        known[e.key] = dict(e.values)


def _one_per_lsn(events: list[_Event]) -> list[_Event]:
    seen: dict[tuple, _Event] = {}
    for e in events:
        had = seen.get((e.key, e.lsn))
        if had is None or (had.kind == END and e.kind == OPEN):
            seen[(e.key, e.lsn)] = e
    return sorted(seen.values(), key=lambda e: e.lsn)


def replay(records: Iterable[dict], keys: Sequence[str], lsn_field: str = "__lsn", delete_field: str = "__deleted",
           placeholder: str = DEFAULT_PLACEHOLDER) -> list[Version]:
    """Every version the landed records (in any order: each file's, oldest file first) make, by key then
    start LSN."""
    rows, truncates = _events(records, keys, lsn_field, delete_field)
    rows.sort(key=lambda e: e.lsn)  # stable: a redelivery keeps its landing order
    _fill(rows, placeholder)
    by_key: dict[tuple, list[_Event]] = {}
    for e in _one_per_lsn(rows):
        by_key.setdefault(e.key, []).append(e)
    out: list[Version] = []
    for key in sorted(by_key, key=lambda k: tuple((v is None, str(v)) for v in k)):
        ends = [_Event(key, lsn, ts, END, "t", prev) for lsn, ts, prev in truncates]
        out.extend(_versions(key, sorted(by_key[key] + ends, key=lambda e: (e.lsn, e.kind != OPEN))))
    return out


def _versions(key: tuple, events: list[_Event]) -> list[Version]:
    out: list[Version] = []
    open_: Version | None = None
    for e in events:
        if e.kind == END:
            if open_ is not None:
                open_.to_lsn, open_.to_ts_ms, open_.to_prev, open_ = e.lsn, e.ts_ms, e.prev, None
            continue
        if open_ is not None and open_.values == e.values:
            continue  # nothing a user sees changed
        if open_ is not None:
            open_.to_lsn, open_.to_ts_ms, open_.to_prev = e.lsn, e.ts_ms, e.prev
        open_ = Version(key, dict(e.values), e.lsn, e.ts_ms, e.op, e.prev)
        out.append(open_)
    return out


def valid_at(v: Version, cut_lsn: int) -> bool:
    """Is the version in the cut at commit LSN `cut_lsn`? (query/consistent_sql.py's WHERE, in Python)"""
    return v.from_prev < cut_lsn and (v.to_lsn is None or (v.to_prev if v.to_prev is not None else v.to_lsn - 1)
                                      >= cut_lsn)
