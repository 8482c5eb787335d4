"""Apicurio Registry 3.x from its Maven Central distribution, in-memory storage, on 127.0.0.1.

Distribution: ``io.apicurio:apicurio-registry-app:<v>:tar.gz:all`` (a Quarkus fast-jar), fetched
once into ``$HUDI_CDC_HOME/apicurio/`` and started with ``java -jar quarkus-run.jar``. 3.3.x is
compiled for Java 21 (the Java it needs is read from the jar's class files, so another version
just works). The Confluent-compatible API is at ``/apis/ccompat/v7``; Quarkus' management
interface (health) is at ``registry_port + 1``. Optional basic auth uses Quarkus' embedded users;
their passwords reach the JVM through its environment, never its command line.
"""

from __future__ import annotations

import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import process
from hudi_cdc.stack.service import Launch, Service
from hudi_cdc.toolchain.jars import home
from hudi_cdc.toolchain.java_spark import class_file_java, find_java
from hudi_cdc.toolchain.maven import Artifact, extract_tgz, fetch

GROUP, ARTIFACT, CLASSIFIER = "io.apicurio", "apicurio-registry-app", "all"
DEFAULT_VERSION = "3.3.3"
CCOMPAT_PATH = "/apis/ccompat/v7"


def distribution(version: str) -> Artifact:
    return Artifact(GROUP, ARTIFACT, version, "tar.gz", CLASSIFIER)


def install_dir(version: str) -> Path:
    return home() / "apicurio" / version


def ensure_distribution(version: str = DEFAULT_VERSION, progress=None) -> Path:
    """The unpacked Quarkus app dir (with quarkus-run.jar), downloading it once."""
    app = install_dir(version)
    if (app / "quarkus-run.jar").exists():
        return app
    if progress:
        progress(f"fetching Apicurio Registry {version} from Maven Central (once) ...")
    tgz = fetch(distribution(version), home() / "apicurio")
    tmp = Path(tempfile.mkdtemp(prefix=f"apicurio-{version}-", dir=str(app.parent)))
    try:
        extract_tgz(tgz, tmp)
        root = next((p.parent for p in tmp.rglob("quarkus-run.jar")), None)
        if root is None:
            raise EnvironmentProblem(f"{tgz} has no quarkus-run.jar; delete it and retry")
        if app.exists():
            shutil.rmtree(app)
        root.rename(app)
    except (tarfile.TarError, OSError) as exc:
        raise EnvironmentProblem(f"could not unpack {tgz}: {exc}; delete it and retry") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return app


def required_java(app: Path) -> int:
    jars = sorted((app / "app").glob("apicurio-registry-app-*.jar"))
    return (class_file_java(jars[0]) if jars else None) or 17


class Apicurio(Service):
    name = "registry"
    start_timeout = 180.0

    @property
    def port(self) -> int:
        return self.cfg.registry_port

    _management_port: int | None = None

    @property
    def management_port(self) -> int:
        """Quarkus' management interface (health): the registry port + 1 when that is free, else any free
        port (the next port may be another service's, or an outgoing connection's: "Address already in use")."""
        if self._management_port is None:
            nxt = self.cfg.registry_port + 1
            self._management_port = nxt if process.port_bindable(self.host, nxt) else process.free_port(self.host)
        return self._management_port

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return self.base_url + CCOMPAT_PATH

    def prepare(self, progress=None) -> Launch:
        app = ensure_distribution(self.cfg.apicurio_version, progress)
        java = find_java(required_java(app), f"Apicurio Registry {self.cfg.apicurio_version}")
        props: dict[str, str] = {
            "quarkus.http.host": self.host,
            "quarkus.http.port": str(self.port),
            "quarkus.management.host": self.host,
            "quarkus.management.port": str(self.management_port),
            "quarkus.http.access-log.enabled": "false",
        }
        env: dict[str, str] = {}
        users = self.cfg.registry_users
        if users:
            props.update({
                "quarkus.http.auth.basic": "true",
                "quarkus.security.users.embedded.plain-text": "true",
                "apicurio.authn.mechanism.priority": "basic",
                "apicurio.auth.role-based-authorization": "true",
            })
            for user, (password, role) in users.items():
                key = user.upper().replace("-", "_").replace(".", "_")
                env[f"QUARKUS_SECURITY_USERS_EMBEDDED_USERS_{key}"] = password
                props[f"quarkus.security.users.embedded.roles.{user}"] = role
        argv: list[str] = [str(java), f"-Xmx{self.cfg.registry_heap}", process.marker(self.cfg.data_dir)]
        argv += [f"-D{k}={v}" for k, v in props.items()]
        argv += ["-jar", str(app / "quarkus-run.jar")]
        return Launch(argv=argv, env=env, cwd=self.dir)

    def probe(self) -> None:
        req = urllib.request.Request(self.url + "/subjects", headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                resp.read()
        except urllib.error.HTTPError as exc:
            if exc.code != 401:  # a registry asking for credentials answers too
                raise
