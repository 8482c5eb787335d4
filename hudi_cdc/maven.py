"""Fetch one artifact from Maven Central into a folder.

Maven itself does the download when `mvn` is on PATH (`mvn dependency:copy`), so the proxies and
mirrors configured for Maven apply; a plain HTTPS download from Maven Central is the fallback
(also when `mvn` fails). A failure is one EnvironmentProblem naming the artifact and the URL.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .errors import EnvironmentProblem

MAVEN_CENTRAL = "https://repo.maven.apache.org/maven2"


@dataclass(frozen=True)
class Artifact:
    group: str
    artifact: str
    version: str
    packaging: str = "jar"
    classifier: str | None = None

    @property
    def coords(self) -> str:
        base = f"{self.group}:{self.artifact}:{self.version}:{self.packaging}"
        return f"{base}:{self.classifier}" if self.classifier else base

    @property
    def filename(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.{self.packaging}"

    @property
    def url(self) -> str:
        return f"{MAVEN_CENTRAL}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.filename}"


def _mvn_copy(art: Artifact, dest: Path) -> str:
    """'' when mvn copied the artifact, else why not."""
    mvn = shutil.which("mvn")
    if not mvn:
        return "mvn not on PATH"
    cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={art.coords}", f"-DoutputDirectory={dest}",
           "-Dmdep.overWriteReleases=false", "-Dtransitive=false"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode == 0 and (dest / art.filename).exists():
        return ""
    return "mvn: " + " ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])


def _http_copy(art: Artifact, dest: Path, timeout: float) -> None:
    tmp = dest / (art.filename + ".part")
    with urllib.request.urlopen(art.url, timeout=timeout) as resp, open(tmp, "wb") as out:
        shutil.copyfileobj(resp, out)
    tmp.rename(dest / art.filename)


def fetch(art: Artifact, dest: Path, timeout: float = 300.0) -> Path:
    """dest/<filename>, downloaded unless it is already there."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / art.filename
    if path.exists() and path.stat().st_size > 0:
        return path
    why_not_mvn = _mvn_copy(art, dest)
    if why_not_mvn:
        try:
            _http_copy(art, dest, timeout)
        except OSError as exc:  # urllib's URLError and HTTPError are OSErrors
            (dest / (art.filename + ".part")).unlink(missing_ok=True)
            raise EnvironmentProblem(f"could not fetch {art.coords} from Maven Central: {art.url}: {exc} "
                                     f"({why_not_mvn})") from None
    if not path.exists():
        raise EnvironmentProblem(f"{art.coords} was not found after download into {dest}")
    return path
