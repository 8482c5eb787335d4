"""Trino, one coordinator that is also its worker, on 127.0.0.1, with catalogs for the stack's metastore.

Distribution, kept in ``$HUDI_CDC_HOME/trino/<v>/``: the default release, 483, is assembled once from its
module jars on Maven Central (stack/trino_modules.py: Maven Central serves the ``trino-server`` tarball
only up to 476); 476 and older can still be chosen (``HUDI_CDC_TRINO_VERSION=476``)
and come as that tarball (~820 MB). Trino 476 needs Java 24+, 477+ Java 25. The server runs
``java -cp lib/* <main class>`` directly (no launcher), with only the plugins the catalogs use linked into
``<stack>/trino/plugin`` (all 55 plugins take longer to load), a 2 GB heap and small query memory limits
(a 2-core machine shared with Spark). Its data dir, etc dir and catalogs live under ``<stack>/trino``, its
log is ``<stack>/logs/trino.log``.

Catalogs, all on the stack's Hive metastore, with Hadoop's local file system for ``file:`` locations
(see ``catalogs``) and, when the stack runs with ``--s3``, Trino's native S3 file system on
the stack's endpoint (path-style; the endpoint's keys reach the JVM through its environment, never
a file or the command line):

- ``hive``: the landed Avro files as external tables (``hive.recursive-directories``: the S3 sink
  writes ``<topic>/partition=<n>/``);
- ``iceberg``: Iceberg tables in the metastore (``iceberg.catalog.type=hive_metastore``);
- ``hudi``: the Hudi tables hudi-cdc syncs (CoW ``<t>``, MoR ``<t>_ro``; Trino's Hudi connector reads
  ``_rt`` as read-optimized too; Trino 483 reads table versions 6, 8 and 9, Trino 476 only 6: docs/trino.md).
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import process, trino_modules
from hudi_cdc.stack.service import Launch, Service
from hudi_cdc.stack.trino_client import TrinoClient
from hudi_cdc.toolchain.jars import home
from hudi_cdc.toolchain.java_spark import find_java
from hudi_cdc.toolchain.maven import Artifact, extract_tgz, fetch

GROUP, ARTIFACT = "io.trino", "trino-server"
DEFAULT_VERSION = "483"
LAST_TARBALL = 476  # the newest io.trino:trino-server tar.gz on Maven Central; later ones are assembled
PLUGINS = ("hive", "iceberg", "hudi")


def distribution(version: str) -> Artifact:
    return Artifact(GROUP, ARTIFACT, version, "tar.gz")


def install_dir(version: str) -> Path:
    return home() / "trino" / version


def java_major(version: str) -> int:
    """The Java a Trino release's classes are compiled for: 24 for 476, 25 from 477 (class files checked)."""
    return 24 if _number(version) <= LAST_TARBALL else 25


def _number(version: str) -> int:
    try:
        return int(version)
    except ValueError:
        raise EnvironmentProblem(f"Trino version {version!r} is not a release number (e.g. 476, 483)") from None


def ensure_distribution(version: str = DEFAULT_VERSION, progress=None) -> Path:
    """The server dir (lib/, plugin/), fetched or assembled once: the tarball up to LAST_TARBALL, later
    releases from their module jars (stack/trino_modules.py)."""
    server = install_dir(version)
    if (server / "lib").is_dir() and (server / "plugin").is_dir():
        return server
    if _number(version) > LAST_TARBALL:
        server.parent.mkdir(parents=True, exist_ok=True)
        java = find_java(java_major(version), f"Trino {version}")
        return trino_modules.assemble(version, server, java, progress)
    if progress:
        progress(f"fetching Trino {version} from Maven Central (once, ~820 MB) ...")
    tgz = fetch(distribution(version), home() / "trino", timeout=1800)
    server.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"trino-{version}-", dir=str(server.parent)))
    try:
        if progress:
            progress(f"unpacking {tgz.name} ...")
        extract_tgz(tgz, tmp)
        root = next((p.parent for p in tmp.glob("*/lib") if p.is_dir()), None)
        if root is None or not (root / "plugin").is_dir():
            raise EnvironmentProblem(f"{tgz} has no trino-server-{version}/lib; delete it and retry")
        if server.exists():
            shutil.rmtree(server)
        root.rename(server)
    except (tarfile.TarError, OSError) as exc:
        raise EnvironmentProblem(f"could not unpack {tgz}: {exc}; delete it and retry") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return server


def _props(values: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in values.items())


def catalogs(cfg) -> dict[str, dict[str, str]]:
    """catalog name -> its properties, for the stack config cfg (manager.StackConfig)."""
    # file: locations through Hadoop's local file system: the metastore keeps them as file:/path, and
    # Trino 476's native local file system lists local:///path entries that the Hive connector does not
    # match with them (no rows, or "path local:///... does not start with prefix file:/...")
    fs = {"fs.hadoop.enabled": "true"}
    if cfg.s3:
        # Trino 477+ calls it fs.s3.enabled (the old name still works there, with a warning)
        s3_key = "fs.native-s3.enabled" if _number(cfg.trino_version) <= LAST_TARBALL else "fs.s3.enabled"
        fs.update({s3_key: "true", "s3.endpoint": cfg.s3_endpoint, "s3.region": "us-east-1",
                   "s3.path-style-access": "true"})
    metastore = {"hive.metastore.uri": cfg.metastore_uri}
    iceberg_writer = {}
    if _number(cfg.trino_version) > LAST_TARBALL:
        # Trino 483's Iceberg writer encodes strings DELTA_LENGTH_BYTE_ARRAY (trinodb/trino#29616), which
        # Iceberg <= 1.10's vectorized reader (Spark) and pyarrow 26's dictionary reads (pyiceberg's delete
        # files) cannot decode: plain encoding keeps the tables readable by every engine
        iceberg_writer = {"parquet.writer.delta-length-byte-array-encoding-enabled": "false"}
    return {
        "hive": {"connector.name": "hive", **metastore, **fs},
        # the stack's metastore (Hive 2.3 on embedded Derby) has no transaction tables, so no HMS locks:
        # Iceberg commits without them (one writer per table at a time)
        "iceberg": {"connector.name": "iceberg", "iceberg.catalog.type": "hive_metastore", **metastore, **fs,
                    "iceberg.hive-catalog.locking-enabled": "false", **iceberg_writer},
        "hudi": {"connector.name": "hudi", **metastore, **fs},
    }


class Trino(Service):
    name = "trino"
    start_timeout = 300.0

    @property
    def port(self) -> int:
        return self.cfg.trino_port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def etc_dir(self) -> Path:
        return self.dir / "etc"

    def _write_config(self, server: Path) -> None:
        etc = self.etc_dir
        (etc / "catalog").mkdir(parents=True, exist_ok=True)
        for old in (etc / "catalog").glob("*.properties"):
            old.unlink()
        (etc / "config.properties").write_text(_props({
            "coordinator": "true",
            "node-scheduler.include-coordinator": "true",
            "http-server.http.port": str(self.port),
            "discovery.uri": self.url,
            "catalog.config-dir": str(etc / "catalog"),
            "plugin.dir": str(self.dir / "plugin"),
            # a small machine shared with Spark: 2 GB heap, one query at a time in practice
            "query.max-memory": self.cfg.trino_query_memory,
            "query.max-memory-per-node": self.cfg.trino_query_memory,
            "memory.heap-headroom-per-node": "512MB",
            "task.concurrency": "2",
            "task.max-worker-threads": "4",
            "query.min-expire-age": "5m",
        }))
        (etc / "node.properties").write_text(_props({
            "node.environment": "hudi_cdc", "node.id": "hudi-cdc-local", "node.data-dir": str(self.dir / "data"),
            "node.bind-ip": self.host, "node.internal-address": self.host}))
        (etc / "log.properties").write_text("io.trino=INFO\n")
        for name, values in catalogs(self.cfg).items():
            (etc / "catalog" / f"{name}.properties").write_text(_props(values))
        plugins = self.dir / "plugin"
        if plugins.exists():
            shutil.rmtree(plugins)
        plugins.mkdir(parents=True)
        for p in PLUGINS:
            (plugins / p).symlink_to(server / "plugin" / p, target_is_directory=True)

    def prepare(self, progress=None) -> Launch:
        server = ensure_distribution(self.cfg.trino_version, progress)
        java = find_java(java_major(self.cfg.trino_version), f"Trino {self.cfg.trino_version}")
        self._write_config(server)
        env: dict[str, str] = {}
        if self.cfg.s3:
            from hudi_cdc.stack.s3proxy import local_credentials_env

            env.update(local_credentials_env())  # the native S3 file system's default credential chain
        argv = [str(java), f"-Xmx{self.cfg.trino_heap}", process.marker(self.cfg.data_dir),
                "-XX:+UseG1GC", "-XX:+ExitOnOutOfMemoryError", "-Djdk.attach.allowAttachSelf=true",
                "-XX:+EnableDynamicAgentLoading", "--add-modules=jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED", "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC",
                "-cp", f"{server / 'lib'}/*",
                f"-Dconfig={self.etc_dir / 'config.properties'}",
                f"-Dlog.levels-file={self.etc_dir / 'log.properties'}",
                *(f"-D{k}={v}" for k, v in (line.split("=", 1) for line in
                                             (self.etc_dir / "node.properties").read_text().splitlines() if line)),
                trino_modules.main_class(server), self.cfg.trino_version]
        return Launch(argv=argv, env=env, cwd=self.dir)

    def quick_probe(self) -> bool:
        return process.port_open(self.host, self.port)

    def probe(self) -> None:
        client = TrinoClient(self.url, timeout=10.0)
        if client.info().get("starting", True):
            raise RuntimeError("Trino is still starting")
        client.query("SELECT 1")
