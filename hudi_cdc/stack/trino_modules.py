"""A Trino server assembled from its module jars, for releases whose server tarball Maven Central does
not serve (``io.trino:trino-server:<v>:tar.gz`` is there up to 476; 477 and later are not, while their
modules are: trino-main, trino-hive, trino-iceberg, trino-hudi, trino-hdfs, ...).

The result has the tarball's layout, so the stack starts it the same way (stack/trino.py):

- ``lib/``: trino-main's runtime closure (what the tarball's lib/ holds), resolved by Maven itself
  (toolchain/maven.copy_dependencies);
- ``plugin/<p>/``: trino-<p>'s runtime closure without the classes the server gives every plugin
  (Trino's plugin class loader takes ``io.trino.spi``, ``io.airlift.slice``, Jackson's annotations,
  JOL and OpenTelemetry's API and context from the server; Trino's own packaging leaves those jars out,
  and so do we), plus the ``META-INF/services/io.trino.spi.Plugin`` entry that Trino's packaging
  (trino-maven-plugin) writes into a ``<p>-services.jar``;
- ``plugin/<p>/hdfs/``: trino-hdfs's closure, the Hadoop file system the catalogs use for ``file:``
  locations (``fs.hadoop.enabled``), loaded by the plugin from that folder as in the tarball;
- the main class: ``io.trino.server.TrinoServer`` is in trino-server-main, which is not served either;
  it only calls ``new io.trino.server.Server().start(version)``, so a one-line class doing that is
  compiled here with the JDK's javac (``MAIN_CLASS`` in ``lib/hudi-cdc-trino-main.jar``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.toolchain.maven import Artifact, copy_dependencies

GROUP = "io.trino"
MAIN_JAR = "hudi-cdc-trino-main.jar"
MAIN_CLASS = "io.hudi_cdc.trino.TrinoMain"
PLUGIN_CLASSES = {"hive": "io.trino.plugin.hive.HivePlugin", "iceberg": "io.trino.plugin.iceberg.IcebergPlugin",
                  "hudi": "io.trino.plugin.hudi.HudiPlugin"}
# jars of the packages Trino's PluginClassLoader takes from the server (PluginManager's SPI packages)
SERVER_PROVIDED = re.compile(r"^(trino-spi|slice|jackson-annotations|jol-core|opentelemetry-api|"
                             r"opentelemetry-context)-\d[^/]*\.jar$")
MAIN_SOURCE = """package io.hudi_cdc.trino;

public final class TrinoMain {
    public static void main(String[] args) {
        new io.trino.server.Server().start(args.length > 0 ? args[0] : "unknown");
    }
}
"""


def main_class(server: Path) -> str:
    """The class that starts the server in `server` (an unpacked tarball or an assembled one)."""
    return MAIN_CLASS if (server / "lib" / MAIN_JAR).is_file() else "io.trino.server.TrinoServer"


def assemble(version: str, server: Path, java: Path, progress=None) -> Path:
    """Trino `version` in `server` (lib/, plugin/<p>/ for PLUGIN_CLASSES), built from Maven Central's module
    jars; `java` is a JDK's java (its javac compiles the main class). Raises EnvironmentProblem."""
    javac = java.parent / "javac"
    if not javac.is_file():
        raise EnvironmentProblem(f"assembling Trino {version} needs a JDK's javac beside {java} (a JRE has none)")
    tmp = Path(tempfile.mkdtemp(prefix=f"trino-{version}-", dir=str(server.parent)))
    try:
        if progress:
            progress(f"assembling Trino {version} from its module jars on Maven Central (once) ...")
        _copy(Artifact(GROUP, "trino-main", version), tmp / "lib", keep_provided=True)
        _compile_main(javac, tmp / "lib")
        for plugin, cls in PLUGIN_CLASSES.items():
            if progress:
                progress(f"  plugin {plugin} ...")
            folder = tmp / "plugin" / plugin
            _copy(Artifact(GROUP, f"trino-{plugin}", version), folder)
            _copy(Artifact(GROUP, "trino-hdfs", version), folder / "hdfs")
            _services_jar(folder / f"trino-{plugin}-{version}-services.jar", cls)
        if server.exists():
            shutil.rmtree(server)
        tmp.rename(server)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return server


def _copy(art: Artifact, dest: Path, keep_provided: bool = False) -> None:
    jars = copy_dependencies([art], dest, timeout=1800)
    (dest / ".complete").unlink(missing_ok=True)
    if not keep_provided:
        for jar in jars:
            if SERVER_PROVIDED.match(jar.name):
                jar.unlink()


def _services_jar(path: Path, plugin_class: str) -> None:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/services/io.trino.spi.Plugin", plugin_class + "\n")


def _compile_main(javac: Path, lib: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="hudi-cdc-trino-main-") as tmp:
        src = Path(tmp) / "TrinoMain.java"
        src.write_text(MAIN_SOURCE)
        main_jar = next(lib.glob("trino-main-*.jar"), None)
        if main_jar is None:
            raise EnvironmentProblem(f"no trino-main jar in {lib}")
        proc = subprocess.run([str(javac), "-cp", str(main_jar), "-d", tmp, str(src)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise EnvironmentProblem(f"javac could not compile Trino's main class: {proc.stderr.strip()[-300:]}")
        with zipfile.ZipFile(lib / MAIN_JAR, "w") as z:
            for cls in Path(tmp).rglob("*.class"):
                z.write(cls, str(cls.relative_to(tmp)))
