"""A routed table's round (docs/shaping.md#routing; the spec: common/routing.py's Route, rendered into the
table's properties as ``hoodie.streamer.hudi_cdc.route``): every shard lands under its own topic folder, and
one round reads them all.

- Files: every folder under the landing root whose topic the route matches (a shard created later is read
  from its first file on, no restart), merged oldest first by modification time, under the table's one
  checkpoint (files.py; a modification time is comparable across folders: one capture writes them all).
- Cuts: the round ends on the newest transaction cut whose files, for every shard the cut names, are all
  among the round's files and are exactly its oldest ones (a prefix of the merged list, with no later file
  sharing the last one's modification time): the checkpoint then skips nothing and every commit holds whole
  transactions of every shard. A shard newer than a cut has nothing under it.
- The source column: each row's ``<schema>.<table>``, from the topic folder of the file it was read from.
"""

from __future__ import annotations

from hudi_cdc.common import storage
from hudi_cdc.common.routing import ROUTE_KEY, Route
from hudi_cdc.jobs.stream import cuts
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.files import list_source_files


def route_of(props: dict[str, str]) -> Route | None:
    return Route.from_json(props.get(ROUTE_KEY))


def _topic(path: str) -> str:
    """<landing root>/<topic>/partition=<n>/<file> -> <topic>."""
    return str(path).rstrip("/").rsplit("/", 3)[-3]


def shard_roots(root: str, route: Route) -> tuple[str, list[str]]:
    """(the landing root, every shard's landing folder there now) for a table whose own folder is root."""
    where = cuts.topic_of_root(root)
    if where is None:
        raise JobInputError(f"{root}: a routed table's landing folder must be <root>/<topic>/partition=<n>")
    landing, _ = where
    partition = root.rstrip("/").rsplit("/", 1)[-1]
    return landing, [storage.join(landing, t, partition) for t in storage.list_folders(landing) if route.matches(t)]


def pick(root: str, route: Route, checkpoint: str | None, source_limit: int, missing_ok: bool, table: str, log):
    """The round's files over every shard, its new checkpoint and the cut's metadata (cuts.apply)."""
    landing, roots = shard_roots(root, route)
    pending, _ = list_source_files(landing, checkpoint, 2**62, missing_ok, roots=roots)
    files: list = []
    total = 0
    for f in pending:  # files.py's source limit: never split files sharing one modification time
        if files and total + f[2] > source_limit and f[1] != files[-1][1]:
            break
        files.append(f)
        total += f[2]
    new_cp = str(files[-1][1]) if files else checkpoint
    return cuts.apply(files, new_cp, root, checkpoint, table, log,
                      trimmer=lambda fs: trim(fs, pending, landing, route))


def trim(files: list, pending: list, landing: str, route: Route) -> tuple[list, dict | None, bool]:
    """cuts.trim over several topics: (files, the cut or None, waiting); ``pending``: every shard file
    newer than the checkpoint (files: the round's oldest ones of them, within the source limit)."""
    picked = {f[0] for f in files}
    seen = False
    for cut in cuts.newest_first(cuts.cuts_dir(landing)):
        named = {tp: name for tp, name in cut["topics"].items() if route.matches(tp)}
        if not named:
            continue
        seen = True
        want = [f for f in pending if named.get(_topic(f[0])) is not None
                and cuts.file_offset(str(f[0]).rsplit("/", 1)[-1]) <= cuts.file_offset(named[_topic(f[0])])]
        if not want:
            return [], None, True  # older cuts end on older files still
        n = len(want)
        if any(f[0] not in picked for f in want) or {f[0] for f in files[:n]} != {f[0] for f in want}:
            continue  # the cut ends past the round's files (the source limit), or not on a prefix of them
        if n < len(files) and files[n][1] <= files[n - 1][1]:
            continue  # a later file shares the last one's modification time: the checkpoint would skip it
        return files[:n], cut, False
    if not seen:
        return files, None, False
    return [], None, True


def with_source_column(df, route: Route):
    """The events with the route's source column: <schema>.<table> from each row's file's topic folder
    (evaluated in the scan, before any shuffle)."""
    from pyspark.sql import functions as F

    topic = F.regexp_extract(F.input_file_name(), r"([^/]+)/[^/]+/[^/]+$", 1)
    return df.withColumn(route.column, topic.substr(len(route.prefix) + 2, 1 << 20))


def landed_schema(route: Route | None, shaped):
    """evolve.py's landed schema with the source column (it is in the table, not in any landed file);
    ``shaped`` (shape.landed_schema) as it is for an unrouted table."""
    if route is None:
        return shaped

    def routed(schema: dict) -> dict:
        schema = shaped(schema) if shaped is not None else schema
        return {**schema, "fields": [*schema.get("fields", []), {"name": route.column, "type": "string"}]}

    return routed
