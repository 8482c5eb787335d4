"""The pipeline file (hudi-cdc.yaml): pydantic models (its sections in config/settings.py), validated
once at load.

Every problem is reported as ``<key path>: <message> (<file>)`` so a user can find it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from hudi_cdc.common.table_types import TYPE_SUFFIX  # re-exported: config.TYPE_SUFFIX
from hudi_cdc.config.settings import (
    CURRENT_HUDI,
    EmrSettings,
    HudiSettings,
    LakeSettings,
    Model,
    SourceSettings,
    SparkSettings,
    StorageSettings,
    StreamSettings,
    TableSettings,
)
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import ConfigError

DEFAULT_CONFIG = "hudi-cdc.yaml"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Pipeline(Model):
    pipeline: str
    hudi: HudiSettings = Field(default_factory=HudiSettings)
    source: SourceSettings
    lake: LakeSettings
    spark: SparkSettings = Field(default_factory=SparkSettings)
    stream: StreamSettings = Field(default_factory=StreamSettings)
    emr: EmrSettings = Field(default_factory=EmrSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    tables: dict[str, TableSettings]
    # Where the pipeline file lives; relative paths are resolved against it.
    base_dir: str = Field(default=".", exclude=True)
    source_file: str = Field(default=DEFAULT_CONFIG, exclude=True)

    @field_validator("pipeline")
    @classmethod
    def _pipeline_name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError("must be letters, digits and _ (it names Hive databases)")
        return v

    @field_validator("tables")
    @classmethod
    def _tables(cls, v: dict[str, TableSettings]) -> dict[str, TableSettings]:
        if not v:
            raise ValueError("at least one table is needed")
        seen: dict[str, str] = {}
        for name in v:
            if not _NAME.match(name):
                raise ValueError(f"table name {name!r} must be letters, digits and _")
            if name.lower() in seen:  # one Hive table (and one folder on a case-insensitive file system)
                raise ValueError(f"tables {seen[name.lower()]} and {name} differ only in case: Hive's table names do "
                                 "not, rename one")
            seen[name.lower()] = name
        return v

    @model_validator(mode="after")
    def _registry_auth_pairs(self) -> Pipeline:
        s = self.source
        if bool(s.registry_username_env) != bool(s.registry_password_env):
            raise ValueError("source.registry_username_env and source.registry_password_env go together")
        hashing = sorted(n for n, t in self.tables.items() if "hash" in t.mask.values())
        if hashing and not s.mask_salt_env:
            raise ValueError(f"tables.{hashing[0]}.mask: hash needs source.mask_salt_env (the environment variable "
                             "holding the salt)")
        return self

    @model_validator(mode="after")
    def _routes(self) -> Pipeline:
        """A source table feeds one lake table: no shard is another table's topic or another route's shard."""
        own = {t.topic.rsplit(".", 2)[-2] + "." + t.topic.rsplit(".", 2)[-1]: n
               for n, t in self.tables.items() if not t.route and t.topic.count(".") >= 2}
        seen: dict[str, str] = {}
        for name, t in self.tables.items():
            if not t.route:
                continue
            if self.hudi.version != CURRENT_HUDI or self.hudi.engine == "hoodiestreamer":
                raise ValueError(f"tables.{name}.route: a routed table (several source tables) is read by hudi-cdc's "
                                 f"streamer only; HoodieStreamer (hudi.version {self.hudi.version}, engine "
                                 f"{self.hudi.engine or 'default'}) reads one landing folder per table; use "
                                 f"hudi.version {CURRENT_HUDI} with hudi.engine hudi-cdc")
            for shard in t.route.tables:
                other = own.get(shard) or seen.get(shard)
                if other:
                    raise ValueError(f"tables.{name}.route.tables: {shard} already feeds table {other}")
                seen[shard] = name
            hit = sorted(q for q in own if t.route.covers(q))
            if t.route.pattern is not None and hit:
                raise ValueError(f"tables.{name}.route.pattern: {t.route.pattern!r} matches {hit[0]}, the source "
                                 f"of table {own[hit[0]]}")
        return self

    def route(self, table: str):
        """A routed table's shards and source column as the streamer reads them (common/routing.py); None
        when the table has one source table."""
        from hudi_cdc.config.route import to_route

        t = self.table(table)
        return to_route(t.route, t.topic.rsplit(".", 2)[0]) if t.route else None

    @model_validator(mode="after")
    def _async_compaction_version(self) -> Pipeline:
        if self.hudi.writes_table_version != 6:
            return self
        for name, t in self.tables.items():
            if (t.hudi_options.get("hoodie.streamer.hudi_cdc.compaction") or "").strip().lower() == "async":
                raise ValueError(f"tables.{name}.hudi_options: hoodie.streamer.hudi_cdc.compaction: async needs "
                                 "hudi.table_version 8 or 9 (on 6 an update written beside a pending compaction "
                                 "was lost: docs/operations.md); remove it to compact inline")
        return self

    def shape(self, table: str):
        """The table's shaping as every engine applies it (common/shaping.py: Shape)."""
        from hudi_cdc.config.shape import to_shape

        return to_shape(self.table(table), self.source.mask_salt_env)

    def mask_salt(self, table: str | None = None) -> str | None:
        """The hash salt from source.mask_salt_env (None when no table hashes); never logged or written."""
        if not any("hash" in t.mask.values() for n, t in self.tables.items() if table in (None, n)):
            return None
        env = self.source.mask_salt_env
        value = os.environ.get(env or "")
        if not value:
            raise ConfigError(f"source.mask_salt_env: environment variable {env} is not set or empty "
                              f"({self.source_file})")
        return value

    @model_validator(mode="after")
    def _history_tables(self) -> Pipeline:
        """History tables are written by hudi-cdc's streamer (Hudi 1.2.0) only, and their names are free."""
        with_history = [name for name, t in self.tables.items() if t.history]
        if not with_history:
            return self
        first = with_history[0]
        if self.hudi.version != CURRENT_HUDI or self.hudi.engine == "hoodiestreamer":
            raise ValueError(f"tables.{first}.history: history tables are written by hudi-cdc's streamer "
                             f"(hudi.version {CURRENT_HUDI}, hudi.engine hudi-cdc); HoodieStreamer has no "
                             "SCD type 2 output (docs/history.md)")
        for name in with_history:
            if history_name(name) in self.tables:
                raise ValueError(f"tables.{name}.history: its history table {history_name(name)} "
                                 "has the name of another table")
        return self

    # ---- derived, never stored -------------------------------------------------
    @property
    def slot_name(self) -> str:
        db = self.source.database
        return (db.slot if db and db.slot else f"hudi_cdc_{self.pipeline}").lower()

    @property
    def publication_name(self) -> str:
        db = self.source.database
        return (db.publication if db and db.publication else f"hudi_cdc_{self.pipeline}").lower()

    def table(self, name: str) -> TableSettings:
        try:
            return self.tables[name]
        except KeyError:
            known = ", ".join(sorted(self.tables))
            raise ConfigError(f"unknown table {name!r} in {self.source_file}; tables: {known}") from None

    def resolve_uri(self, value: str) -> str:
        """A plain or relative path becomes an absolute file:// URI; s3:// and file:// stay."""
        if re.match(r"^[a-z][a-z0-9+.-]*://", value):
            if value.startswith("file://"):
                p = Path(value[len("file://"):])
                if not p.is_absolute():
                    p = Path(self.base_dir) / p
                return "file://" + str(p.resolve())
            return value.rstrip("/")
        p = Path(value)
        if not p.is_absolute():
            p = Path(self.base_dir) / p
        return "file://" + str(p.resolve())

    @property
    def work_dir(self) -> Path:
        """``<pipeline dir>/.hudi-cdc``: logs, capture offsets, failures, job files (never in the lake)."""
        return Path(self.base_dir) / ".hudi-cdc"

    @property
    def source_root(self) -> str:
        return self.resolve_uri(self.source.root)

    @property
    def lake_root(self) -> str:
        return self.resolve_uri(self.lake.root)

    @property
    def uses_s3(self) -> bool:
        return is_s3_uri(self.source_root) or is_s3_uri(self.lake_root)

    def s3_endpoint(self):
        """The S3 endpoint of local runs and readers (hudi_cdc.common.s3.Endpoint)."""
        from hudi_cdc.common import s3

        st = self.storage
        return s3.endpoint(st.s3_endpoint, st.s3_region, st.s3_path_style)

    def topic_dir(self, table: str) -> str:
        return self.landing_dir(self.table(table).topic)

    def landing_dirs(self, table: str) -> list[str]:
        """The table's landing folders: its topic's, or every routed shard's found under the root now."""
        route = self.route(table)
        if route is None:
            return [self.topic_dir(table)]
        from hudi_cdc.common import storage

        return [self.landing_dir(t) for t in storage.list_folders(self.source_root) if route.matches(t)]

    def landing_dir(self, topic: str) -> str:
        """Where a topic's files land: <root>/<Kafka topic>/partition=<n> (a routed table's shards: one each;
        the Kafka topic: Debezium's name for it, config/topic.py)."""
        return f"{self.source_root}/{kafka_topic(topic)}/partition={self.source.partition}"

    def base_path(self, table: str, table_type: str) -> str:
        return f"{self.lake_root}/{table}_{TYPE_SUFFIX[table_type]}"

    def history_tables(self) -> list[str]:
        """The tables kept with a history table too (`history: scd2`)."""
        return [name for name, t in self.tables.items() if t.history]

    def history_base_path(self, table: str, table_type: str) -> str:
        """Where the streamer writes `table`'s history table (`<lake.root>/<table>_history_<cow|mor>`)."""
        return f"{self.lake_root}/{history_name(table)}_{TYPE_SUFFIX[table_type]}"

    def hive_db(self, table_type: str) -> str:
        return f"{self.lake.hive_database}_{TYPE_SUFFIX[table_type]}"

    def targets(self, table: str | None = None) -> list[tuple]:
        names = [table] if table else list(self.tables)
        out = []
        for name in names:
            for tt in self.table(name).table_types:
                out.append((name, tt))
        return out


def history_name(table: str) -> str:
    """The name of a table's history table (its Hudi and Hive table name)."""
    return f"{table}_history"


def is_s3_uri(uri: str) -> bool:
    return uri.startswith(("s3://", "s3a://"))


def uri_to_path(uri: str) -> Path:
    if uri.startswith("file://"):
        return Path(uri[len("file://"):])
    if "://" in uri:
        raise ConfigError(f"{uri} is not a local path")
    return Path(uri)


def _loc(loc: tuple) -> str:
    return ".".join(str(p) for p in loc) or "<top>"


def format_validation_error(err: ValidationError, path: str) -> str:
    """One line per problem, each naming the key path and the file."""
    lines = []
    for e in err.errors():
        msg = e["msg"]
        if e["type"] == "missing":
            msg = "field required"
        elif e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        lines.append(f"{_loc(e['loc'])}: {msg} ({path})")
    return "; ".join(lines)


def parse_pipeline(data: object, path: str = DEFAULT_CONFIG, base_dir: str = ".") -> Pipeline:
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the pipeline file must be a YAML mapping")
    try:
        return Pipeline(**data, base_dir=str(base_dir), source_file=str(path))
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, str(path))) from None
    except TypeError as exc:  # e.g. duplicate keyword from a key named base_dir
        raise ConfigError(f"{path}: {exc}") from None


def load_pipeline(path: str | os.PathLike | None = None) -> Pipeline:
    p = Path(path or DEFAULT_CONFIG)
    if not p.exists():
        raise ConfigError(f"{p}: pipeline file not found (create one with `hudi-cdc init`, or pass --config FILE)")
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{p}:{where}: malformed YAML: {problem}") from None
    if data is None:
        raise ConfigError(f"{p}: the pipeline file is empty (`hudi-cdc init` writes one: it writes the file itself, "
                          "so do not redirect its output into it)")
    pipeline = parse_pipeline(data, str(p), str(p.resolve().parent))
    if pipeline.storage.s3_endpoint:  # readers and checks in this process reach S3 there
        from hudi_cdc.common import s3

        s3.use(pipeline.s3_endpoint())
    return pipeline
