"""One pipeline variant of the benchmark: a pipeline file over a landing folder, its lake, and the
hudi-cdc commands on it, each a whole process (procs.run)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import procs, stream

# Where a round's keys are looked up: hudi-cdc's streamer finds each stored key's file group in the
# snapshot read it makes anyway (jobs/stream/located.py, the default for the global indexes it renders);
# "index" hands the round to Hudi's index instead, as HoodieStreamer does.
THROUGH_INDEX = {"hoodie.streamer.hudi_cdc.locations": "index"}
# hudi_options of each lookup choice of the growth scenario (all global: partition moves and key-only
# deletes need one). GLOBAL_RECORD_LEVEL_INDEX is Hudi 1.2's name of the record-level index
# (RECORD_INDEX, deprecated alias, is what Hudi 1.0.x on EMR 7 knows): key -> file group in the
# metadata table; hudi-cdc leaves it to Hudi.
INDEXES: dict[str, dict[str, str]] = {
    "LOCATED": {},  # the defaults: GLOBAL_SIMPLE rendered, keys located by hudi-cdc's snapshot read
    "GLOBAL_SIMPLE": {"hoodie.index.type": "GLOBAL_SIMPLE", "hoodie.simple.index.update.partition.path": "true",
                      "hoodie.metadata.enable": "false", **THROUGH_INDEX},
    "RECORD_INDEX": {"hoodie.index.type": "RECORD_INDEX", "hoodie.metadata.enable": "true",
                     "hoodie.metadata.record.index.enable": "true",
                     "hoodie.record.index.update.partition.path": "true"},
    "GLOBAL_BLOOM": {"hoodie.index.type": "GLOBAL_BLOOM", "hoodie.bloom.index.update.partition.path": "true",
                     "hoodie.metadata.enable": "false", **THROUGH_INDEX},
}
# The seed's settings (seed 001, Hudi 0.9.0) on Hudi 1.2.0: GLOBAL_BLOOM with partition moves, Hudi's
# default bloom filter size (the seed set none), HoodieDeltaStreamer's default payload
# (OverwriteWithLatestAvroPayload = commit-time ordering in 1.x), no metadata table (0.9.0's
# default), and the lookup done by the index (the seed ran HoodieDeltaStreamer). The seed's parallelism
# is the rendered shuffle parallelism, as templates/seed renders it.
SEED = {**INDEXES["GLOBAL_BLOOM"], "hoodie.index.bloom.num_entries": "60000",
        "hoodie.parquet.small.file.limit": "134217728",  # set by the seed's properties files
        "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
        "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"}
# The defaults plus Hudi's global record-level index in the metadata table: hudi-cdc's own lookup then
# reads only the file groups the index names for the round's keys (jobs/stream/keyloc.py; without the
# column and partition stats indexes the metadata table builds by default, which it cannot work with)
RECORD_LEVEL = {"hoodie.metadata.enable": "true", "hoodie.metadata.global.record.level.index.enable": "true",
                "hoodie.metadata.index.column.stats.enable": "false",
                "hoodie.metadata.index.partition.stats.enable": "false"}
SETTINGS = {"defaults": {}, "index": THROUGH_INDEX, "seed": SEED, **{f"index-{k}": v for k, v in INDEXES.items()}}


@dataclass
class Variant:
    """A pipeline file (one table, one table type) in `work`, reading `landing`."""

    work: Path
    landing: Path
    table_type: str  # COPY_ON_WRITE | MERGE_ON_READ
    hudi_options: dict[str, str] = field(default_factory=dict)
    stream_settings: dict[str, int] = field(default_factory=dict)
    compaction_delta_commits: int | None = None

    @property
    def config(self) -> Path:
        return self.work / "hudi-cdc.yaml"

    @property
    def lake(self) -> Path:
        return self.work / "lake"

    @property
    def pristine(self) -> Path:
        return self.work / "pristine"

    @property
    def kind(self) -> str:
        return "cow" if self.table_type == "COPY_ON_WRITE" else "mor"

    @property
    def table_path(self) -> Path:
        return self.lake / f"{stream.TABLE}_{self.kind}"

    def write(self) -> Variant:
        self.work.mkdir(parents=True, exist_ok=True)
        table: dict = {"topic": stream.TOPIC, "record_key": stream.KEY, "ordering_field": "__lsn",
                       "partition_field": stream.PARTITION, "table_types": [self.table_type],
                       "deletes": "hard", "hudi_options": self.hudi_options}
        if self.compaction_delta_commits:
            table["compaction_delta_commits"] = self.compaction_delta_commits
        doc: dict = {"pipeline": "bench", "source": {"root": str(self.landing)},
                     "lake": {"root": str(self.lake), "hive_database": "bench"},
                     "tables": {stream.TABLE: table}}
        if self.stream_settings:
            doc["stream"] = self.stream_settings
        self.config.write_text(yaml.safe_dump(doc, sort_keys=False))
        return self

    def cli(self, *args: str) -> list[str]:
        return procs.hudi_cdc("--config", str(self.config), *args)

    def bootstrap(self, log: Path) -> procs.Measured:
        if self.lake.exists():
            shutil.rmtree(self.lake)
        return procs.run(self.cli("bootstrap", "--table", stream.TABLE), log)

    def stream_once(self, log: Path) -> procs.Measured:
        return procs.run(self.cli("stream", "--table", stream.TABLE, "--type", self.kind, "--once"), log)

    def keep(self) -> None:
        """Keep the bootstrapped lake aside, so every measured round starts from the same table."""
        if self.pristine.exists():
            shutil.rmtree(self.pristine)
        shutil.copytree(self.lake, self.pristine, symlinks=True)

    def restore(self) -> None:
        if self.lake.exists():
            shutil.rmtree(self.lake)
        shutil.copytree(self.pristine, self.lake, symlinks=True)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.table_path.rglob("*") if p.is_file() and ".hoodie" not in p.parts)
