"""Where Java and Spark are: a Java runtime of at least a given major version (Apicurio 3.3 needs
21, Hive/Spark run on 17), the Spark home of the pyspark package, its spark-submit and jars."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterable
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem


def _major(version_text: str, pattern: str) -> int | None:
    """The Java major version in a version string ("17.0.2" -> 17, "1.8.0" -> 8)."""
    m = re.search(pattern + r'"(\d+)(?:\.(\d+))?', version_text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def _release_version(java_home: Path) -> int | None:
    try:
        return _major((java_home / "release").read_text(), "JAVA_VERSION=")
    except OSError:
        return None


def java_version(java: Path) -> int | None:
    """Major version of a java executable (reads JAVA_HOME/release, else runs java -version)."""
    home = java.resolve().parent.parent
    v = _release_version(home)
    if v is not None:
        return v
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=30).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    return _major(out, "version ")


def _install_patterns() -> list[str]:
    """Where JDKs are usually installed; HUDI_CDC_JAVA_DIRS (glob patterns joined by ':') replaces
    the list, and set empty it limits the search to HUDI_CDC_JAVA_HOME, JAVA_HOME and PATH."""
    if "HUDI_CDC_JAVA_DIRS" in os.environ:
        return [p for p in os.environ["HUDI_CDC_JAVA_DIRS"].split(":") if p]
    return ["/usr/lib/jvm/*/bin/java", "/opt/java/*/bin/java", "/opt/*jdk*/bin/java",
            "/Library/Java/JavaVirtualMachines/*/Contents/Home/bin/java",
            str(Path.home() / ".sdkman/candidates/java/*/bin/java")]


def _candidates() -> Iterable[Path]:
    for var in ("HUDI_CDC_JAVA_HOME", "JAVA_HOME"):
        if os.environ.get(var):
            yield Path(os.environ[var]) / "bin" / "java"
    on_path = shutil.which("java")
    if on_path:
        yield Path(on_path)
    for pat in _install_patterns():
        for p in sorted(glob.glob(pat)):
            yield Path(p)


def find_java(min_major: int, purpose: str, max_major: int | None = None) -> Path:
    """The first java (HUDI_CDC_JAVA_HOME, JAVA_HOME, PATH, usual install dirs) with major >= min_major
    (and <= max_major when given: Spark 3.4 runs on Java 8 to 17 only)."""
    seen: list[tuple[Path, int | None]] = []
    for cand in _candidates():
        if not cand.is_file() or any(cand.resolve() == s.resolve() for s, _ in seen):
            continue
        v = java_version(cand)
        seen.append((cand, v))
        if v is not None and v >= min_major and (max_major is None or v <= max_major):
            return cand
    found = ", ".join(f"{p} ({v})" for p, v in seen) or "none"
    wanted = f"{min_major}+" if max_major is None else f"{min_major} to {max_major}"
    raise EnvironmentProblem(
        f"{purpose} needs Java {wanted}; found: {found}. Install a JDK {wanted} and point "
        f"HUDI_CDC_JAVA_HOME at it")


def class_file_java(jar: Path) -> int | None:
    """The Java major version a jar's classes were compiled for (class file major - 44)."""
    try:
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                if name.endswith(".class") and not name.startswith(("META-INF/", "module-info")):
                    head = z.read(name)[:8]
                    if head[:4] == b"\xca\xfe\xba\xbe":
                        return int.from_bytes(head[6:8], "big") - 44
    except (OSError, zipfile.BadZipFile):
        return None
    return None


def spark_home() -> Path:
    """$SPARK_HOME when set, else the Spark inside the pyspark package (found without importing it)."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise EnvironmentProblem("pyspark is not installed (pip install pyspark==3.5.5)")
    return Path(list(spec.submodule_search_locations)[0])


def spark_submit() -> Path:
    path = spark_home() / "bin" / "spark-submit"
    if not path.exists():
        raise EnvironmentProblem(f"spark-submit not found at {path}; is pyspark installed?")
    return path


def spark_jars() -> Path:
    """Spark's jars folder, with the Hive jars the metastore and Hive sync run on."""
    jars = spark_home() / "jars"
    if not list(jars.glob("hive-metastore-*.jar")):
        raise EnvironmentProblem(f"no Hive metastore jars in {jars}; is SPARK_HOME a Spark 3.5 with Hive support?")
    return jars
