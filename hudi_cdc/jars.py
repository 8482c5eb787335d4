"""Fetch the jars a local Spark job needs from Maven Central, once, into a cache.

Cache: $HUDI_CDC_HOME/jars (default ~/.cache/hudi-cdc/jars). Maven itself does the download
(`mvn dependency:copy`), so proxies and mirrors configured for Maven apply; a plain HTTPS
download from Maven Central is the fallback when `mvn` is not on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional

from .errors import EnvironmentProblem

MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"
SPARK_VERSION = "3.5.5"  # pyspark pin; spark-avro must match Spark's minor version
SCALA = "2.12"


@dataclass(frozen=True)
class Artifact:
    group: str
    artifact: str
    version: str
    packaging: str = "jar"

    @property
    def coords(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}:{self.packaging}"

    @property
    def filename(self) -> str:
        return f"{self.artifact}-{self.version}.{self.packaging}"

    @property
    def url(self) -> str:
        return f"{MAVEN_CENTRAL}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.filename}"


def home() -> Path:
    return Path(os.environ.get("HUDI_CDC_HOME", Path.home() / ".cache" / "hudi-cdc"))


def cache_dir() -> Path:
    return home() / "jars"


def hudi_spark_bundle(hudi_version: str) -> Artifact:
    return Artifact("org.apache.hudi", f"hudi-spark3.5-bundle_{SCALA}", hudi_version)


def spark_avro() -> Artifact:
    return Artifact("org.apache.spark", f"spark-avro_{SCALA}", SPARK_VERSION)


def local_job_artifacts(hudi_version: str) -> List[Artifact]:
    """What the local runner puts on --jars.

    The Hudi utilities (slim) bundle, which carries HoodieStreamer, is not served by the Maven
    repository this project can reach for any 1.x release, so the local runner drives Hudi's
    Spark datasource from hudi_cdc/jobs/streamer.py instead (see ARCHITECTURE.md).
    """
    return [hudi_spark_bundle(hudi_version), spark_avro()]


def _mvn_copy(art: Artifact, dest: Path) -> None:
    mvn = shutil.which("mvn")
    if not mvn:
        raise FileNotFoundError("mvn")
    cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={art.coords}", f"-DoutputDirectory={dest}",
           "-Dmdep.overWriteReleases=false", "-Dtransitive=false"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise EnvironmentProblem(f"could not fetch {art.coords} from Maven Central: {' '.join(tail)}")


def _http_copy(art: Artifact, dest: Path) -> None:
    tmp = dest / (art.filename + ".part")
    try:
        with urllib.request.urlopen(art.url, timeout=120) as resp, open(tmp, "wb") as out:
            shutil.copyfileobj(resp, out)
        tmp.rename(dest / art.filename)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"could not download {art.url}: {exc}") from None


def ensure(art: Artifact, progress=None, dest: Optional[Path] = None) -> Path:
    """The artifact's path in `dest` (default: the jar cache), downloading it once."""
    dest = dest or cache_dir()
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / art.filename
    if path.exists() and path.stat().st_size > 0:
        return path
    if progress:
        progress(f"fetching {art.coords} from Maven Central (once) ...")
    try:
        _mvn_copy(art, dest)
    except FileNotFoundError:
        _http_copy(art, dest)
    if not path.exists():
        raise EnvironmentProblem(f"{art.coords} was not found after download into {dest}")
    return path


def ensure_jars(hudi_version: str, progress=None) -> List[Path]:
    """Paths of the Hudi Spark bundle and spark-avro for local jobs, downloading them once."""
    return [ensure(a, progress) for a in local_job_artifacts(hudi_version)]
