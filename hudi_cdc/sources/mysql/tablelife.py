"""A MySQL / MariaDB table of the pipeline renamed, dropped, or dropped and created again (capture/tablelife.py
acts on what ``gaps`` finds, before the engine starts).

The binlog has no publication that loses a dropped table: Debezium reads the new table's rows under the old
name, and the dropped table's rows stay in the lake (DROP TABLE writes no row events). What tells a table
dropped and created again is the schema history Debezium keeps beside the offsets: a ``DROP`` table change
read from the binlog (a snapshot's own ``DROP TABLE IF EXISTS`` records carry ``snapshot`` in their position
and are not one). The newest such DROP of a table the server has again, not handled before, makes the table
re-taken (an incremental snapshot with --replace); the DROPs handled are kept in
``recreated-<slot>.json`` beside the history, so each is acted on once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.mysql import catalog


def _dropped(history: Path) -> dict[str, str]:
    """{<database>.<table>: the position of its newest DROP read from the binlog} in the schema history."""
    out: dict[str, str] = {}
    try:
        lines = history.read_text().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        if '"DROP"' not in line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a partial last record: binlog.guard_history cuts it
        position = rec.get("position") or {}
        if "snapshot" in position:
            continue
        for change in rec.get("tableChanges") or []:
            if change.get("type") == "DROP":
                out[str(change.get("id", "")).replace('"', "")] = json.dumps(position, sort_keys=True)
    return out


def uncapturable(pipeline: Pipeline) -> dict[str, str]:
    """{pipeline table: why} of the tables Debezium cannot capture: a column of a type its DDL parser does not know
    (the connector would stop for every table at the table's CREATE)."""
    tables = src.source_tables(pipeline)
    found = catalog.unparseable_columns(pipeline, tables)
    why = " (Debezium's MariaDB/MySQL DDL parser does not know the type: change the column's type, e.g. VARCHAR(39))"
    out = {t.name: ", ".join(f"{c} is {ty}" for c, ty in found[t.qualified]) + why
           for t in tables if t.qualified in found}
    versioned = catalog.system_versioned(pipeline, tables)
    out.update({t.name: catalog.VERSIONED_WHY for t in tables if t.qualified in versioned and t.name not in out})
    return out


def gaps(pipeline: Pipeline, history: Path) -> tuple[list[str], list[str]]:
    """(tables of the pipeline the server no longer has, tables dropped and created again since the last
    capture looked), by pipeline name."""
    tables = src.source_tables(pipeline)
    existing = set(catalog.table_names(pipeline))
    gone = list(dict.fromkeys(t.name for t in tables if t.qualified not in existing))  # a routed table: its shards
    marks_file = history.with_name(f"recreated-{pipeline.slot_name}.json")
    try:
        marks = json.loads(marks_file.read_text())
    except FileNotFoundError:
        marks = {}
    dropped = _dropped(history)
    again = [t for t in tables if t.qualified in existing and t.qualified in dropped
             and marks.get(t.qualified) != dropped[t.qualified]]
    if again:
        marks.update({t.qualified: dropped[t.qualified] for t in again})
        tmp = marks_file.with_name(f".{marks_file.name}.tmp")
        tmp.write_text(json.dumps(marks, indent=1, sort_keys=True))
        os.replace(tmp, marks_file)
    return gone, list(dict.fromkeys(t.name for t in again))
