"""TRUNCATE: "every row of this table is gone as of this position".

Capture lands a TRUNCATE as one row with `__op='t'` and the truncate's ordering value (its `__lsn`)
in the table's topic (hudi_cdc/capture/unwrap.py). A round that holds one (the newest, T):
- drops every event at or before T (the rows they wrote are gone) and the truncate rows themselves;
- writes what is left, the table's whole content after T (latest event per key, deletes dropped),
  with Hudi's `insert_overwrite_table`: one replacecommit that replaces every file group (CoW and
  MoR), so no stored row survives, whatever its partition;
- records T as the table's truncate floor, in `.hoodie/.aux/hudi-cdc-truncates/cp-<checkpoint>.json`
  BEFORE the commit (counted once the committed checkpoint reaches it, as tombstones.py) and in the
  commit's metadata (`streamer.hudi_cdc.truncated_at`, for history/status).
Every later round drops events no newer than the floor: a redelivered or late event from before the
truncate cannot bring a row back, and a redelivered truncate (at or below the floor) is ignored.
"""

from __future__ import annotations

import json

from hudi_cdc.common import storage
from hudi_cdc.common.properties import local_path

OP_FIELD = "__op"
TRUNCATE_OP = "t"
TRUNCATED_AT_KEY = "streamer.hudi_cdc.truncated_at"
OVERWRITE_OPERATION = "insert_overwrite_table"
FLOOR_DIR = (".hoodie", ".aux", "hudi-cdc-truncates")
_PREFIX = "cp-"
_COL = "__hudi_cdc_truncate_"


def _floor_dir(base_path: str) -> str:
    return storage.join(local_path(base_path), *FLOOR_DIR)


def read_floor(base_path: str, checkpoint: str | None) -> list | None:
    """The ordering values of the newest truncate the table's committed checkpoint has reached."""
    if checkpoint in (None, ""):
        return None
    d = _floor_dir(base_path)
    best: list | None = None
    for name in sorted(storage.listdir(d)):
        if not (name.startswith(_PREFIX) and name.endswith(".json")):
            continue
        if int(name[len(_PREFIX):-len(".json")]) > int(str(checkpoint)):
            continue  # a round that failed after writing it: counts when a later round commits past it
        doc = json.loads((storage.read_bytes(storage.join(d, name)) or b"{}").decode("utf-8"))
        values = doc.get("ordering")
        if values is not None and (best is None or values > best):
            best = values
    return best


def write_floor(base_path: str, checkpoint: str, ordering: list[str], values: list) -> None:
    """Durably, before the round's commit: the truncate the round that commits `checkpoint` applies."""
    name = f"{_PREFIX}{int(checkpoint):020d}.json"
    doc = {"ordering_fields": ordering, "ordering": values}
    storage.write_bytes(storage.join(_floor_dir(base_path), name), json.dumps(doc).encode("utf-8"))


def is_truncate(df):
    """A column: the row is a truncate (False when the events carry no __op)."""
    from pyspark.sql import functions as F

    if OP_FIELD not in df.columns:
        return F.lit(False)
    return F.coalesce(F.col(OP_FIELD) == TRUNCATE_OP, F.lit(False))


def summary_columns(df, ordering: list[str]) -> list:
    """Aggregates for the round's one pass: how many truncates, and the newest one's ordering values."""
    from pyspark.sql import functions as F

    if OP_FIELD not in df.columns or not ordering:
        return []
    t = is_truncate(df)
    newest = F.max(F.when(t, F.struct(*[F.col(o).alias(o) for o in ordering])))
    return [F.sum(F.when(t, 1).otherwise(0)).alias(f"{_COL}n"), newest.alias(f"{_COL}at")]


def newest_truncate(counts: dict, ordering: list[str]) -> list | None:
    """The newest truncate's ordering values from the pass's aggregates, or None."""
    if not counts.get(f"{_COL}n"):
        return None
    at = counts.get(f"{_COL}at")
    if at is None:
        return None
    values = at.asDict() if hasattr(at, "asDict") else dict(at)
    return [values[o] for o in ordering]


def _after(ordering: list[str], values: list):
    """A column: the event's ordering values are greater than `values` (lexicographically)."""
    from pyspark.sql import functions as F

    cond = None
    for o, v in reversed(list(zip(ordering, values, strict=True))):
        here = F.col(o) > F.lit(v)
        cond = here if cond is None else (here | ((F.col(o) == F.lit(v)) & cond))
    assert cond is not None
    return F.coalesce(cond, F.lit(False))


def split(df, ordering: list[str], truncated_at: list | None, floor: list | None):
    """The round's events that still apply: after the round's truncate and after the table's floor,
    truncate rows removed. Returns (events, the truncate this round applies or None)."""
    applies = truncated_at if truncated_at is not None and (floor is None or truncated_at > floor) else None
    cut = max([v for v in (applies, floor) if v is not None], default=None)
    if cut is not None:
        df = df.where(_after(ordering, cut))
    if applies is not None or truncated_at is not None:
        df = df.where(~is_truncate(df))
    return df, applies
