"""Fetch one artifact from Maven Central into a folder.

Maven itself does the download when `mvn` is on PATH (`mvn dependency:copy`, with strict checksums),
so the proxies and mirrors configured for Maven apply; a plain HTTPS download from Maven Central is the
fallback (also when `mvn` fails), checked against the repository's `.sha1` before it takes the
artifact's name. A failure is one EnvironmentProblem naming the artifact and the URL.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem

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
        return self.url_in(MAVEN_CENTRAL)

    def url_in(self, repository: str) -> str:
        return f"{repository}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.filename}"


def _mvn_copy(art: Artifact, dest: Path) -> str:
    """'' when mvn copied the artifact, else why not."""
    mvn = shutil.which("mvn")
    if not mvn:
        return "mvn not on PATH"
    cmd = [mvn, "-q", "-B", "-C", "dependency:copy", f"-Dartifact={art.coords}", f"-DoutputDirectory={dest}",
           "-Dmdep.overWriteReleases=false", "-Dtransitive=false"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if proc.returncode == 0 and (dest / art.filename).exists():
        return ""
    return "mvn: " + " ".join((proc.stdout + proc.stderr).strip().splitlines()[-3:])


_SHA1 = re.compile(r"[0-9a-f]{40}")


def sha1_of(path: Path) -> str:
    digest = hashlib.sha1(usedforsecurity=False)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _published_sha1(url: str, timeout: float) -> str:
    """The SHA-1 a repository publishes beside an artifact (``<url>.sha1``: the hex digest, sometimes
    followed by the file name)."""
    try:
        with urllib.request.urlopen(url + ".sha1", timeout=timeout) as resp:
            text: str = resp.read(4096).decode("ascii", "replace")
    except OSError as exc:
        raise OSError(f"{url}.sha1: {exc}") from None
    words: list[str] = text.split()
    if not words or not _SHA1.fullmatch(words[0].lower()):
        raise OSError(f"{url}.sha1 holds no SHA-1 ({text[:60]!r})")
    return words[0].lower()


def _http_copy(art: Artifact, dest: Path, timeout: float, repository: str) -> None:
    url = art.url_in(repository)
    tmp = dest / (art.filename + ".part")
    with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
        shutil.copyfileobj(resp, out)
    expected, got = _published_sha1(url, timeout), sha1_of(tmp)
    if got != expected:
        tmp.unlink(missing_ok=True)
        raise EnvironmentProblem(f"{art.coords}: the download from {url} has SHA-1 {got}, but {url}.sha1 says "
                                 f"{expected}; it was discarded (a proxy or a cut connection?): run again")
    tmp.rename(dest / art.filename)


def fetch(art: Artifact, dest: Path, timeout: float = 300.0, repository: str = MAVEN_CENTRAL) -> Path:
    """dest/<filename>, downloaded unless it is already there. From Maven Central through `mvn` when it is
    on PATH, else (or when it fails, or for another ``repository``) over HTTP(S), SHA-1 checked."""
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / art.filename
    if path.exists() and path.stat().st_size > 0:
        return path
    why_not_mvn = _mvn_copy(art, dest) if repository == MAVEN_CENTRAL else f"repository {repository}"
    if why_not_mvn:
        url = art.url_in(repository)
        try:
            _http_copy(art, dest, timeout, repository)
        except OSError as exc:  # urllib's URLError and HTTPError are OSErrors
            (dest / (art.filename + ".part")).unlink(missing_ok=True)
            where = f"Maven Central: {url}" if repository == MAVEN_CENTRAL else url
            raise EnvironmentProblem(f"could not fetch {art.coords} from {where}: {exc} ({why_not_mvn})") from None
    if not path.exists():
        raise EnvironmentProblem(f"{art.coords} was not found after download into {dest}")
    return path


def _pom(artifacts: list[Artifact], excludes: list[str]) -> str:
    deps = []
    for a in artifacts:
        classifier = f"<classifier>{a.classifier}</classifier>" if a.classifier else ""
        exclusions = "".join(f"<exclusion><groupId>{g}</groupId><artifactId>*</artifactId></exclusion>"
                             for g in excludes)
        deps.append(f"<dependency><groupId>{a.group}</groupId><artifactId>{a.artifact}</artifactId>"
                    f"<version>{a.version}</version><type>{a.packaging}</type>{classifier}"
                    f"<exclusions>{exclusions}</exclusions></dependency>")
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>"
            "<groupId>hudi-cdc.generated</groupId><artifactId>closure</artifactId><version>1</version>"
            "<packaging>pom</packaging><dependencies>" + "".join(deps) + "</dependencies></project>\n")


def copy_dependencies(artifacts: list[Artifact], dest: Path, excludes: list[str] | None = None,
                      timeout: float = 900.0) -> list[Path]:
    """The artifacts and their runtime dependency closure as jars in dest, resolved by Maven itself
    (`mvn dependency:copy-dependencies` on a generated pom; mvn is needed: the closure of a Kafka or
    a converter is what Maven's resolver is for). ``excludes``: group ids left out of the closure
    (e.g. org.apache.kafka for a Connect plugin: the worker provides it). A ``.complete`` file marks
    a finished copy: a second call returns the jars without running Maven."""
    done = dest / ".complete"
    if done.exists():
        return sorted(dest.glob("*.jar"))
    mvn = shutil.which("mvn")
    if not mvn:
        raise EnvironmentProblem(f"mvn is needed to resolve {', '.join(a.coords for a in artifacts)} and their "
                                 "dependencies from Maven Central (apt-get install maven)")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hudi-cdc-pom-") as tmp:
        pom = Path(tmp) / "pom.xml"
        pom.write_text(_pom(artifacts, excludes or []))
        cmd = [mvn, "-q", "-B", "-C", "-f", str(pom), "dependency:copy-dependencies", f"-DoutputDirectory={dest}",
               "-DincludeScope=runtime", "-Dmdep.overWriteReleases=false"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise EnvironmentProblem(f"mvn did not resolve {artifacts[0].coords} within {int(timeout)}s") from None
    if proc.returncode != 0:
        tail = " ".join(line for line in (proc.stdout + proc.stderr).strip().splitlines()[-3:])
        raise EnvironmentProblem(f"mvn could not resolve {', '.join(a.coords for a in artifacts)}: {tail}")
    done.write_text("".join(a.coords + "\n" for a in artifacts))
    return sorted(dest.glob("*.jar"))


def extract_tgz(tgz: Path, into: Path) -> None:
    """Unpack a downloaded .tar.gz into `into`, with the "data" extraction filter where this Python has
    it (no absolute paths, links out of the tree or device files); raises tarfile.TarError (a truncated
    archive too) or OSError."""
    try:
        with tarfile.open(tgz) as tf:
            try:
                tf.extractall(into, filter="data")
            except TypeError:  # Python without extraction filters
                tf.extractall(into)
    except EOFError as exc:  # gzip's answer to a download cut short; callers catch TarError
        raise tarfile.ReadError(f"{tgz} is truncated (download cut short?): {exc}") from exc

