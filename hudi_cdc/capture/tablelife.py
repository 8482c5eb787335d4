"""A table renamed, dropped, dropped and created again, or that Debezium cannot capture never stops capture of the
others.

Before the engine starts, capture compares the pipeline's tables with the database (source.publication_gaps:
PostgreSQL's publication, MySQL / MariaDB's schema history, sources/mysql/tablelife.py):

* a table the database no longer has (``ALTER TABLE ... RENAME TO``, ``DROP TABLE``): one line names it
  and the way forward, and this run captures the other tables (the publication follows a renamed table
  by its oid: its changes come under the new name, which the pipeline does not land until it lists it);
* a table Debezium cannot capture at all (source.uncapturable: a MariaDB INET4 / INET6 column, whose CREATE
  its DDL parser refuses; a PostgreSQL table with columns differing only in case: either stops the connector
  for every table): one line per run names it, the column and
  the way forward, and this run captures the other tables;
* a table dropped and created again under the same name that capture landed before (PostgreSQL: the
  publication lost it with the drop; MySQL / MariaDB: the schema history has a DROP of it read from the
  binlog, once): its lake copy re-taken by an incremental snapshot on the stream, as ``hudi-cdc capture
  snapshot --table T --replace`` would (published again on PostgreSQL; the dropped table's rows go, the
  rows written before the request come from the snapshot, the changes after it stream). A table never
  landed is left to the publication check (one line: a publication the user named may leave it out on
  purpose). A re-take that cannot be requested (the signal table not writable) is one line naming the
  command to run once fixed; the other tables are captured.
"""

from __future__ import annotations

from collections.abc import Callable

from hudi_cdc import sources
from hudi_cdc.capture import snapshot_requests
from hudi_cdc.common import storage
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import HudiCdcError, SourceError
from hudi_cdc.sources import tables as src


def runnable(pipeline: Pipeline, progress: Callable[[str], None]) -> Pipeline:
    """The pipeline this run captures: without the tables the database no longer has; the tables the
    publication lost published again and their re-take requested."""
    source = sources.for_pipeline(pipeline)
    gone, unpublished = source.publication_gaps(pipeline)
    by_name = {t.name: t for t in src.source_tables(pipeline)}
    for line in source.layout_changes(pipeline):  # rows moved without events (ATTACH / DETACH PARTITION): said
        progress(line)
    refused = {n: why for n, why in source.uncapturable(pipeline).items() if n not in gone}
    for name, why in refused.items():
        progress(f"warning: table {by_name[name].qualified} is not captured: {why}; the other tables are. Fix it "
                 f"or take the table out of the pipeline file; once fixed, "
                 f"`hudi-cdc capture snapshot --table {name}` brings what it missed")
    if len(refused) == len(by_name):
        raise SourceError(f"no table of the pipeline can be captured: {'; '.join(refused.values())}")
    pipeline = pipeline.model_copy(update={"tables": {n: t for n, t in pipeline.tables.items() if n not in refused}})
    by_name = {n: t for n, t in by_name.items() if n not in refused}
    for name in [n for n in unpublished if _landed(pipeline, n)]:  # never captured: capture refuses as before
        progress(f"table {by_name[name].qualified} was dropped and created again: its lake copy re-taken by an "
                 f"incremental snapshot on the stream (as hudi-cdc capture snapshot --table {name} --replace)")
        try:
            snapshot_requests.request_snapshot(pipeline, name, replace=True, progress=progress)
        except HudiCdcError as exc:  # said, with the way forward; the other tables are captured
            progress(f"WARNING table {by_name[name].qualified}: its re-take could not be requested: {exc}; once fixed: "
                     f"hudi-cdc capture snapshot --table {name} --replace")
    if not gone:
        return pipeline
    names = ", ".join(by_name[n].qualified for n in gone)
    if len(gone) == len(by_name):
        raise SourceError(f"no table of the pipeline exists in the database ({names}: renamed or dropped?)")
    progress(f"warning: table {names} of the pipeline does not exist in the database (renamed or dropped?): not "
             "captured, the other tables are; take it out of the pipeline file's tables, or, renamed, add it under "
             "its new name (`hudi-cdc add-table`, then `hudi-cdc capture snapshot --table <new>`)")
    return pipeline.model_copy(update={"tables": {n: t for n, t in pipeline.tables.items() if n not in gone}})


def _landed(pipeline: Pipeline, table: str) -> bool:
    """Has capture landed files of the table (it was published then)?"""
    folder = storage.local(pipeline.topic_dir(table))
    return storage.exists(folder) and any(n.endswith(".avro") for n in storage.listdir(folder))
