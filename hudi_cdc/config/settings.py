"""The sections of the pipeline file (hudi-cdc.yaml) as pydantic models; hudi_cdc/config/__init__.py
holds the whole file (Pipeline) and its loading."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hudi_cdc.config.route import RouteSettings, check_route
from hudi_cdc.config.shape import ShapeSettings, check_shape

CURRENT_HUDI = "1.2.0"
SEED_HUDI = "0.9.0"
V014_HUDI = "0.14.0"  # EMR 6.15's Hudi: its real HoodieDeltaStreamer also runs locally
SUPPORTED_HUDI = (SEED_HUDI, V014_HUDI, CURRENT_HUDI)
# The Hudi table versions Hudi 1.2.0 writes (hoodie.write.table.version). 6 is the default: the version
# Athena (Hudi 0.14/0.15 readers), Trino (476 and 483), EMR's Hudi 0.15/1.0.2 and hudi-rs all read
# (docs/query-the-lake.md).
TableVersion = Literal[6, 8, 9]
TABLE_VERSIONS: tuple[int, ...] = (6, 8, 9)
DEFAULT_TABLE_VERSION: TableVersion = 6
# What `init` writes above the setting: who reads which version.
TABLE_VERSION_COMMENT = ("# table_version: 6 is read by Athena (Hudi 0.14/0.15), Trino, EMR's Hudi (0.15, 1.0.2) and "
                         "hudi-rs; 8 by Hudi 1.0+ (EMR 7.11+) and Trino 483; 9 by Hudi 1.1+ and Trino 483 "
                         "(docs/query-the-lake.md)")
# What a release writes whatever the setting: 0.14.0 writes 6, the seed's 0.9.0 writes 2.
FIXED_TABLE_VERSION = {V014_HUDI: 6, SEED_HUDI: 2}

TableType = Literal["COPY_ON_WRITE", "MERGE_ON_READ"]
TABLE_TYPES: tuple[TableType, ...] = ("COPY_ON_WRITE", "MERGE_ON_READ")


class Model(BaseModel):
    """The pipeline file's sections: unknown keys refused, frozen once validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class HudiSettings(Model):
    version: str = CURRENT_HUDI
    # Hudi's metadata table: worth it for large tables on object stores; off by default, as on a
    # 2-core machine it more than doubles the time of every small commit.
    metadata_table: bool = False
    # What runs the jobs: the profile release's real HoodieStreamer/HoodieDeltaStreamer, or hudi-cdc's
    # streamer (jobs/streamer.py) on Hudi's Spark datasource. None = the default for the target and
    # version (profiles.engine_for; docs/streamers.md).
    engine: Literal["hoodiestreamer", "hudi-cdc"] | None = None
    # The Hudi table version 1.2.0 writes (hoodie.write.table.version, never auto-upgraded): 6 (default,
    # every reader), 8 (EMR 7.11+'s Hudi 1.0.2 and newer), 9 (Hudi 1.1+, Trino 483). Moot below 1.2.0.
    table_version: TableVersion = DEFAULT_TABLE_VERSION

    @field_validator("table_version", mode="before")
    @classmethod
    def _table_version(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v)
        if v not in TABLE_VERSIONS or isinstance(v, bool):
            raise ValueError(f"{v!r} is not a Hudi table version hudi-cdc writes; one of 6, 8, 9")
        return v

    @model_validator(mode="after")
    def _version_writes(self) -> HudiSettings:
        fixed = FIXED_TABLE_VERSION.get(self.version)
        if fixed is not None and "table_version" in self.model_fields_set and self.table_version != fixed:
            raise ValueError(f"table_version {self.table_version}: Hudi {self.version} writes table version "
                             f"{fixed} only; drop table_version or use version {CURRENT_HUDI}")
        return self

    @property
    def writes_table_version(self) -> int:
        """The table version this pipeline's writers create and expect on disk."""
        return FIXED_TABLE_VERSION.get(self.version, self.table_version)

    @field_validator("version")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in SUPPORTED_HUDI:
            raise ValueError(f"unsupported Hudi version {v!r}; supported: {', '.join(SUPPORTED_HUDI)}")
        return v

    @property
    def is_seed(self) -> bool:
        return self.version == SEED_HUDI


SourceKind = Literal["postgresql", "mysql", "mariadb"]
DEFAULT_PORTS = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306}


class DatabaseSettings(Model):
    """The database the changes are captured from (hudi-cdc capture / verify): PostgreSQL, or a
    MySQL-family server (MySQL, Aurora MySQL, MariaDB: hudi_cdc/sources/mysql/binlog.py)."""

    kind: SourceKind = "postgresql"
    host: str = "127.0.0.1"
    port: int = Field(5432, ge=1, le=65535, description="default: 5432, 3306 for mysql/mariadb")
    name: str
    user: str
    # The name of an environment variable holding the password; never the password itself.
    password_env: str | None = None
    slot: str | None = None  # default: hudi_cdc_<pipeline>
    publication: str | None = None  # default: hudi_cdc_<pipeline>
    flush_size: int = Field(1000, ge=1, description="records per landed file, as the S3 sink's flush.size")
    # rows per chunk of an incremental snapshot (`capture snapshot`; Debezium's incremental.snapshot.chunk.size)
    snapshot_chunk_size: int = Field(1024, ge=1, description="rows per incremental-snapshot chunk")
    # Debezium heartbeats: the slot's confirmed position moves on while the captured tables are idle
    # (0 turns them off); the action query runs at each heartbeat and writes a WAL record the slot
    # decodes (default: a logical decoding message of capture's own, sources/postgres/heartbeat.py; "" for none)
    heartbeat_interval_ms: int = Field(10000, ge=0, description="Debezium's heartbeat.interval.ms (0: none)")
    heartbeat_action_query: str | None = Field(None, description="Debezium's heartbeat.action.query "
                                               "(default: a logical decoding message; empty: none)")
    # mysql/mariadb: the replica id the binlog connector presents (unique among the server's replicas);
    # default 5400 + a hash of the pipeline's name
    server_id: int | None = Field(None, ge=1, le=4294967295)

    @model_validator(mode="before")
    @classmethod
    def _port_of_kind(cls, data: object) -> object:
        if isinstance(data, dict) and "port" not in data and data.get("kind") in DEFAULT_PORTS:
            return {**data, "port": DEFAULT_PORTS[data["kind"]]}
        return data

    @field_validator("slot", "publication")
    @classmethod
    def _identifier(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[a-z_][a-z0-9_]{0,62}$", v):
            raise ValueError("must be lower-case letters, digits and _ (at most 63), as PostgreSQL slot names")
        return v

    @field_validator("password_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", v):
            raise ValueError("must name an environment variable (letters, digits, _), not hold a password")
        return v


class ConnectSettings(Model):
    """A Kafka Connect cluster the connectors are deployed to (hudi-cdc connectors deploy|status|...)."""

    url: str | None = Field(None, description="a worker's REST URL, e.g. http://127.0.0.1:8083")
    # The connectors' key/value converter: Apicurio's AvroConverter against source.schema_registry
    # (the default), or Connect's own JsonConverter with schemas (a cluster without Apicurio's converter)
    converter: Literal["apicurio", "json"] = "apicurio"
    # the Kafka cluster a binlog connector keeps its schema history topic in (the worker's own, as the
    # connector cannot see it), e.g. b-1.msk.example:9098
    bootstrap_servers: str | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is None:
            return v
        if not re.match(r"^https?://[^/\s]+", v):
            raise ValueError("must be an http:// or https:// URL of a Kafka Connect worker's REST API")
        return v.rstrip("/")


class SourceSettings(Model):
    root: str = Field(description="<root>/<topic>/partition=<n>/*.avro (file://, plain path or s3://)")
    partition: int = 0
    schema_registry: str | None = None
    # Names of environment variables holding registry credentials; never the values.
    registry_username_env: str | None = None
    registry_password_env: str | None = None
    # The name of an environment variable holding the salt of hashed columns (tables.<t>.mask: hash): the
    # same salt for every table and round, so hashed values still join; never the salt itself.
    mask_salt_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    database: DatabaseSettings | None = None  # enables capture and verify
    connect: ConnectSettings | None = None  # where `connectors deploy|status|restart|delete|validate` go


class LakeSettings(Model):
    root: str
    hive_database: str = "default"
    hive_metastore: str | None = None  # thrift://127.0.0.1:9083 ; enables Hive sync when set
    hive_sync: bool | None = None  # default: on when hive_metastore is set
    # Hudi's own lock for writers on EMR / EMR Serverless (hudi_cdc/core/lock_provider.py): none (the
    # default: one writer per table) | dynamodb | zookeeper; lock_options holds hoodie.write.lock.<key>
    # values ({"dynamodb.table": "locks"}), defaults filled in per provider
    lock_provider: Literal["none", "dynamodb", "zookeeper"] = "none"
    lock_options: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _lock_options(self) -> LakeSettings:
        if self.lock_options and self.lock_provider == "none":
            raise ValueError("lock_options: set lock_provider (dynamodb | zookeeper) too")
        if self.lock_provider == "zookeeper" and not self.lock_options.get("zookeeper.url"):
            raise ValueError("lock_options: zookeeper.url is needed with lock_provider: zookeeper")
        bad = [k for k in self.lock_options if k.startswith("hoodie.")]
        if bad:
            raise ValueError(f"lock_options: give keys without the hoodie.write.lock. prefix ({', '.join(bad)})")
        return self

    @property
    def sync_enabled(self) -> bool:
        return bool(self.hive_metastore) if self.hive_sync is None else self.hive_sync


class SparkSettings(Model):
    master: str = "local[2]"
    driver_memory: str = "2g"
    executor_memory: str = "2g"
    shuffle_partitions: int = Field(4, ge=1)
    conf: dict[str, str] = Field(default_factory=dict)


class StreamSettings(Model):
    source_limit: int = Field(256 * 1024 * 1024, ge=1, description="bytes of landed files per sync round")
    # continuous mode: a round starts at most this often. A landed file waits on average half of it
    # before its round starts: 30 s gave a commit-to-visible p50 of 27.7 s (issue 12); an empty round
    # (no new file) only lists the landing folder (benchmarks/README.md)
    min_sync_interval_seconds: int = Field(5, ge=0)
    # supervision of a continuous local stream (hudi_cdc/runners/supervise.py): a crashed job is restarted
    # after restart_backoff_seconds, doubling up to restart_backoff_max_seconds; more than
    # max_restarts failures within restart_window_seconds end the command (0 = never restart)
    max_restarts: int = Field(5, ge=0)
    restart_backoff_seconds: float = Field(5.0, ge=0)
    restart_backoff_max_seconds: float = Field(300.0, ge=0)
    restart_window_seconds: int = Field(3600, ge=1)
    # SIGTERM/Ctrl-C: the job finishes its round; after this long it is stopped (SIGTERM, then SIGKILL)
    stop_timeout_seconds: int = Field(300, ge=1)
    # `stream --all` (every table in one Spark application): at most this many tables' rounds at once
    # (0: from the cores, one per core, 2 to 8; jobs/stream/schedule.py); a failing table backs off
    # (restart_backoff_*) and is given up past max_restarts within the window
    max_parallel_rounds: int = Field(0, ge=0)
    # `stream --all` / `run`: the tables' rounds end on the same transaction cut, a generation at a time, so the
    # pipeline keeps reaching consistent points while it streams (jobs/stream/aligned.py); false: each round
    # ends on the newest cut at its own start
    align_cuts: bool = True


class TableSettings(ShapeSettings):
    """One lake table: its topic, keys and Hudi settings, and its shaping (config/shape.py: columns, mask,
    mask_in, filter, derive, types)."""

    topic: str
    record_key: str | list[str]
    ordering_field: str | list[str] = "__lsn"
    partition_field: str | None = None
    table_types: list[TableType] = Field(default_factory=lambda: list(TABLE_TYPES))
    deletes: Literal["hard", "soft"] = "hard"
    delete_field: str = "__deleted"
    compaction_delta_commits: int = Field(5, ge=1, description="MoR: compact inline after this many delta commits")
    # MoR: also compact once this many seconds passed since the last compaction (Hudi's NUM_OR_TIME
    # trigger), so readers of the read-optimized view (Trino, Athena, Hive `_ro`) see a change within about
    # this long plus one round; a quiet table's waiting logs are compacted by its next empty round
    compaction_max_seconds: int | None = Field(None, ge=1)
    hudi_options: dict[str, str] = Field(default_factory=dict)
    # scd2: a second table <table>_history beside the current-state one, every version of every row
    # with its validity range (docs/history.md; hudi-cdc's streamer only)
    history: Literal["scd2"] | None = None
    # several source tables (shards) into this one (config/route.py, docs/shaping.md#routing)
    route: RouteSettings | None = None

    @model_validator(mode="after")
    def _shape(self) -> TableSettings:
        if self.route:
            check_route(self.route, self.source_keys, self.ordering_fields, self.derive, self.mask, self.types)
        keys = self.record_keys + ([self.route.source_column] if self.route and not self.route.source_in_key else [])
        check_shape(self, keys, self.ordering_fields, self.partition_field, self.deletes)
        return self

    @field_validator("hudi_options")
    @classmethod
    def _no_table_version(cls, v: dict[str, str]) -> dict[str, str]:
        owned = sorted(k for k in v if k in ("hoodie.write.table.version", "hoodie.write.auto.upgrade"))
        if owned:
            raise ValueError(f"{', '.join(owned)}: set hudi.table_version instead (one version per pipeline)")
        return v

    @field_validator("table_types")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("at least one table type is needed")
        if len(set(v)) != len(v):
            raise ValueError("table types repeat")
        return v

    @model_validator(mode="after")
    def _history_orders_by_one_field(self) -> TableSettings:
        if self.history and self.route:
            raise ValueError("history: a history table of a routed table is not built yet; drop history or route")
        if self.history and len(self.ordering_fields) != 1:
            raise ValueError(f"history: {self.history} orders versions by one ordering field (__lsn); "
                             f"got {', '.join(self.ordering_fields)}")
        return self

    @property
    def source_keys(self) -> list[str]:
        """The source table's own key columns (each shard's, for a routed table)."""
        return [self.record_key] if isinstance(self.record_key, str) else list(self.record_key)

    @property
    def record_keys(self) -> list[str]:
        """The lake table's record key: a routed table's source column first when it joins the key."""
        lead = [self.route.source_column] if self.route and self.route.source_in_key else []
        return lead + self.source_keys

    @property
    def ordering_fields(self) -> list[str]:
        return [self.ordering_field] if isinstance(self.ordering_field, str) else list(self.ordering_field)


class StorageSettings(Model):
    """How local runs and readers reach s3:// roots (EMR uses EMRFS and ignores this).

    Credentials never go here: the AWS default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, ...)."""

    s3_endpoint: str | None = Field(None, description="e.g. http://127.0.0.1:9000 (`hudi-cdc local up --s3`); "
                                                         "default: AWS_ENDPOINT_URL, else AWS")
    s3_region: str | None = None  # default: AWS_REGION / AWS_DEFAULT_REGION, else us-east-1
    s3_path_style: bool | None = None  # default: on with an endpoint, off on AWS

    @field_validator("s3_endpoint")
    @classmethod
    def _http(cls, v: str | None) -> str | None:
        if v is not None and not re.match(r"^https?://[^/\s]+/?$", v):
            raise ValueError(f"{v!r} is not an http(s)://host:port endpoint")
        return v


class EmrSettings(Model):
    """Where the AWS runners put things; credentials only through boto3's standard chain."""

    region: str = "us-east-1"
    cluster_id: str | None = None
    release_label: str = "emr-7.12.0"
    bucket: str | None = None
    prefix: str = "hudi-cdc"
    log_uri: str | None = None
    serverless_application_id: str | None = None
    serverless_execution_role_arn: str | None = None
    poll_seconds: int = Field(15, ge=1)
    timeout_seconds: int = Field(3600, ge=1)
