"""`verify --history --whole`: the whole history table (`history: scd2`) against the replay of every landed
event of its table (scd2_replay.py), version by version and value by value, without a JVM: the landed
files read by fastavro (jobs/stream/files.py), the history table by hudi-rs (lake/reader.py).

A version is named by its key and start LSN. Compared per version: the row's values, the end LSN, the
start and end source times, the current flag and the opening operation. The values compared are the
ones the lake holds as landed; a column the lake converts from Debezium's encoding (typed columns:
dates, timestamps, decimals, ..., common/lake_types.py) takes part in making versions but its value is
not compared (named in the result as not compared). Needs every landed file since the table's bootstrap
(a landing folder pruned by a retention rule gives differences), and refuses a shaped table or one with
a transformer SQL (the replay reads the events as landed).
"""

from __future__ import annotations

from hudi_cdc.common.lake_types import schema_types
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.jobs.stream import history as h
from hudi_cdc.jobs.stream.files import list_source_files, read_records
from hudi_cdc.jobs.stream.table import read_checkpoint
from hudi_cdc.jobs.stream.toast import PLACEHOLDER_PROP, placeholder_of
from hudi_cdc.sources.comparison import SAMPLES, VerifyResult, _canon, require_lake_table
from hudi_cdc.sources.scd2_replay import Version, replay

_EVERY_FILE = 1 << 62  # a source limit no landing folder reaches: every file at once


def _checkpoint(pipeline: Pipeline, table: str, table_type: str) -> int | None:
    """The newest landed file time the history table holds: the current-state table's checkpoint, or the
    history table's when newer (a crash between the two commits; a round that changed nothing visible
    commits no history)."""
    found = [read_checkpoint(b) for b in (pipeline.base_path(table, table_type),
                                           pipeline.history_base_path(table, table_type))]
    times = [int(c) for c in found if c and str(c).isdigit()]
    return max(times) if times else None


def landed_events(pipeline: Pipeline, table: str, table_type: str) -> tuple[list[dict], set[str]]:
    """Every landed record of the table the stream has read (files up to the checkpoint: a capture and a
    stream may run beside verify), oldest file first, and the columns the lake converts."""
    files, _ = list_source_files(pipeline.topic_dir(table), None, _EVERY_FILE, missing_ok=True)
    upto = _checkpoint(pipeline, table, table_type)
    files = [f for f in files if upto is None or f[1] <= upto]
    records: list[dict] = []
    converted: set[str] = set()
    t = pipeline.table(table)
    for path, _, _ in files:
        schema, rows = read_records(path)
        converted |= {c.name for c in schema_types(schema, table=table, props=t.hudi_options) if c.converts}
        records.extend(rows)
    return records, converted


def _refuse_reshaped(pipeline: Pipeline, table: str) -> None:
    t = pipeline.table(table)
    if not pipeline.shape(table).empty:
        raise TableStateError(f"verify --whole: table {table} is shaped (columns, mask, filter, derive or types in "
                              f"{pipeline.source_file}); the replay reads the events as landed")
    sql = [k for k in t.hudi_options if k.endswith("transformer.sql")]
    if sql:
        raise TableStateError(f"verify --whole: table {table} has {sql[0]} in {pipeline.source_file}; the replay "
                              "reads the events as landed")


def _lake_versions(pipeline: Pipeline, table: str, table_type: str, keys: list[str]) -> dict[tuple, dict]:
    """{(key..., start LSN): row} of the history table (hudi-rs), times as epoch microseconds."""
    import pyarrow as pa

    from hudi_cdc.lake.reader import read_arrow

    lake = read_arrow(pipeline.history_base_path(table, table_type))
    if lake is None:
        return {}
    for c in (h.FROM_TS, h.TO_TS):
        if c in lake.column_names:
            i = lake.column_names.index(c)
            lake = lake.set_column(i, c, lake.column(c).cast(pa.timestamp("us")).cast(pa.int64()))
    out: dict[tuple, dict] = {}
    for row in lake.to_pylist():
        out.setdefault((*(_canon(row.get(k)) for k in keys), row.get(h.FROM_LSN)), row)
    return out


def _expected(v: Version) -> dict:
    ms = lambda x: None if x is None else int(x) * 1000  # noqa: E731
    return {**v.values, h.TO_LSN: v.to_lsn, h.FROM_TS: ms(v.from_ts_ms), h.TO_TS: ms(v.to_ts_ms),
            h.CURRENT: v.current, h.OP: v.op, h.FROM_PREV: v.from_prev, h.TO_PREV: v.to_prev}


def _version_text(keys: list[str], key: tuple) -> str:
    return ",".join(f"{k}={v}" for k, v in zip(keys, key[:-1], strict=True)) + f" from LSN {key[-1]}"


def verify_whole(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES) -> VerifyResult:
    """The history table against the replay of every landed event; `details`: one line per differing
    version (the first `samples` of each kind)."""
    require_lake_table(pipeline, table, table_type, history=True)
    _refuse_reshaped(pipeline, table)
    t = pipeline.table(table)
    keys = t.record_keys
    records, converted = landed_events(pipeline, table, table_type)
    placeholder = placeholder_of({PLACEHOLDER_PROP: t.hudi_options.get(PLACEHOLDER_PROP, "")})
    want = {(*(_canon(k) for k in v.key), v.from_lsn): _expected(v)
            for v in replay(records, keys, t.ordering_fields[0], t.delete_field, placeholder)}
    got = _lake_versions(pipeline, table, table_type, keys)
    value_cols = sorted({c for row in want.values() for c in row} - set(h.COLUMNS) - converted)
    compared = [*value_cols, h.TO_LSN, h.FROM_TS, h.TO_TS, h.CURRENT, h.OP, h.FROM_PREV, h.TO_PREV]
    result = VerifyResult(f"{table} history", table_type, equal=False, db_rows=len(want), lake_rows=len(got),
                          columns=compared)
    result.not_compared = sorted(converted)
    for key in sorted(want, key=str):
        if key not in got:
            result.missing += 1
            _sample(result, result.missing_keys, keys, key, "in the replay, not in the history table", samples)
            continue
        names = [c for c in compared if _canon(want[key].get(c)) != _canon(got[key].get(c))]
        if names:
            result.different += 1
            for n in names:
                result.column_differences[n] = result.column_differences.get(n, 0) + 1
            shown = "; ".join(f"{n}: table {_canon(got[key].get(n))}, replay {_canon(want[key].get(n))}"
                              for n in names)
            if _sample(result, result.different_keys, keys, key, shown, samples):
                result.different_columns[_version_text(keys, key)] = names
    for key in sorted(set(got) - set(want), key=str):
        result.extra += 1
        _sample(result, result.extra_keys, keys, key, "in the history table, not in the replay", samples)
    result.equal = not (result.missing or result.extra or result.different)
    return result


def _sample(result: VerifyResult, into: list[str], keys: list[str], key: tuple, why: str, samples: int) -> bool:
    if len(into) >= samples:
        return False
    into.append(_version_text(keys, key))
    result.details.append(f"version {_version_text(keys, key)}: {why}")
    return True
