"""Partitions attached to or detached from a partitioned table of the pipeline since the last capture.

``ALTER TABLE ... ATTACH PARTITION`` brings rows into the table and ``DETACH PARTITION`` takes them out, and
logical decoding sends no change event for either (docs/types.md, measured): the lake lacks the attached rows
and keeps the detached ones. Capture cannot know when to re-take such a table, so it says so instead of leaving
it silent (`capture snapshot --table T --replace` re-takes it by a blocking snapshot): each run compares
the leaf partitions of every partitioned table of the pipeline (``pg_partition_tree``) with what the last run
saw (``partitions-<slot>.json`` beside the offsets) and names what changed and the way to re-take the table.
"""

from __future__ import annotations

import json
from pathlib import Path

from hudi_cdc.common import storage
from hudi_cdc.config import Pipeline
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.postgres import db


def leaves(conn, t: src.SourceTable) -> list[str] | None:
    """The leaf partitions of a partitioned table (schema-qualified, sorted); None for any other table."""
    row = conn.execute("SELECT c.relkind FROM pg_class c WHERE c.oid = to_regclass(format('%%I.%%I', %s::text, "
                       "%s::text))", (t.schema, t.table)).fetchone()
    if row is None or row[0] != "p":
        return None
    return sorted(str(r[0]) for r in conn.execute(
        "SELECT relid::regclass::text FROM pg_partition_tree(to_regclass(format('%%I.%%I', %s::text, %s::text))) "
        "WHERE isleaf", (t.schema, t.table)).fetchall())


def changes(pipeline: Pipeline, state: Path) -> list[str]:
    """One warning per partitioned table of the pipeline whose leaf partitions changed since the last run."""
    tables = src.source_tables(pipeline)
    with db.connect(pipeline) as conn:
        now = {t.qualified: parts for t in tables if (parts := leaves(conn, t)) is not None}
    try:
        before = json.loads(state.read_text())
    except (FileNotFoundError, ValueError):
        before = {}
    said = []
    by_qualified = {t.qualified: t.name for t in tables}
    for table, parts in now.items():
        if table not in before:
            continue
        added = [p for p in parts if p not in before[table]]
        gone = [p for p in before[table] if p not in parts]
        if added or gone:
            what = "; ".join(x for x in (f"attached: {', '.join(added)}" if added else "",
                                         f"detached: {', '.join(gone)}" if gone else "") if x)
            said.append(f"warning: table {table}: partitions changed since the last capture ({what}): PostgreSQL "
                        "sends no change events for the rows an ATTACH brings or a DETACH takes, so the lake lacks "
                        "or keeps them; re-take the table: `hudi-cdc capture snapshot --table "
                        f"{by_qualified[table]} --replace` (docs/types.md)")
    storage.write_bytes(str(state), json.dumps({**before, **now}, indent=1, sort_keys=True).encode())
    return said
