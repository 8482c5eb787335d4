"""Debezium's offsets file of a capture: where it lives, the copy saved after the last finished run,
and the check before the engine starts that it is not truncated."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import SourceError

# where capture keeps its state (sources.base: the sources read it too), named here as before
from hudi_cdc.sources.base import good_copy as good_copy
from hudi_cdc.sources.base import offsets_file as offsets_file
from hudi_cdc.sources.base import work_dir as work_dir

Progress = Callable[[str], None]


def offsets_loadable(path: Path) -> bool:
    """Kafka's FileOffsetBackingStore writes its file in place: a kill during the write leaves it
    truncated, and its load() then silently starts from no offsets (a new snapshot, whose rows deleted
    meanwhile never get their delete events). Read it as the store does (needs the JVM)."""
    from jpype import JClass

    try:
        stream = JClass("java.io.ObjectInputStream")(JClass("java.io.FileInputStream")(str(path)))
        try:
            stream.readObject()
        finally:
            stream.close()
        return True
    except Exception:  # noqa: BLE001 - EOFException, StreamCorruptedException, ...: not loadable
        return False


def stored_offsets(path: Path) -> list[dict]:
    """The source offsets the file holds (Debezium's JSON of each partition's offset), as Kafka's
    FileOffsetBackingStore loads them; read in a process whose JVM runs Debezium (capture's)."""
    import json

    from jpype import JClass

    stream = JClass("java.io.ObjectInputStream")(JClass("java.io.FileInputStream")(str(path)))
    try:
        raw = stream.readObject()
    finally:
        stream.close()
    return [json.loads(bytes(raw.get(k)).decode()) for k in raw.keySet() if raw.get(k) is not None]


def guard_offsets(pipeline: Pipeline, progress: Progress) -> None:
    """Before the engine starts: a truncated offsets file is replaced by the copy saved after the last
    run that finished (older offsets: the changes since come again, which the Hudi side absorbs); with
    no such copy, refuse rather than take a new snapshot silently."""
    f, good = offsets_file(pipeline), good_copy(pipeline)
    if not f.exists() or offsets_loadable(f):
        return
    if good.exists() and offsets_loadable(good):
        tmp = f.with_name(f.name + ".restore")
        tmp.write_bytes(good.read_bytes())
        tmp.replace(f)
        progress(f"{f.name} was truncated (a kill while Debezium wrote it): restored the last good copy "
                 "(taken after every committed batch); the changes since come again")
        return
    if not good.exists():
        # a good copy is taken before Debezium writes the file a second time (GoodCopies): none means the
        # kill hit the very first write, so no offsets were ever committed and the snapshot starts over
        f.unlink()
        progress(f"{f.name} was truncated in its first write (a kill during the first batch): no offsets were "
                 "committed yet, so Debezium takes the snapshot again")
        return
    raise SourceError(f"{f}: Debezium's offsets file and its good copy are both unreadable; capture --drop-slot "
                      "and capture again would take a new snapshot")


def save_good_copy(pipeline: Pipeline) -> bool:
    """Copy the offsets file to its good copy when it is whole (written by Debezium, loadable); True if copied."""
    f, good = offsets_file(pipeline), good_copy(pipeline)
    if f.exists() and offsets_loadable(f):
        tmp = good.with_name(good.name + ".tmp")
        tmp.write_bytes(f.read_bytes())
        tmp.replace(good)
        return True
    return False


class GoodCopies:
    """Takes the good copy while capture runs: Debezium commits offsets after a batch, in the engine's
    thread, before it hands over the next batch; at the start of a batch the file is whole. Copied at most
    every `interval` seconds, and always while no good copy exists yet (so a truncated file without a good
    copy can only come from the very first write)."""

    def __init__(self, pipeline: Pipeline, interval: float = 1.0):
        self.pipeline = pipeline
        self.interval = interval
        self.last = 0.0
        self.have = good_copy(pipeline).exists()

    def __call__(self) -> None:
        now = time.monotonic()
        if self.have and now - self.last < self.interval:
            return
        if save_good_copy(self.pipeline):
            self.have, self.last = True, now
