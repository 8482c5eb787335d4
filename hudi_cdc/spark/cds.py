"""Class-data sharing for the spark-submit JVMs hudi-cdc starts (the JDK's AppCDS, a dynamic archive).

A Spark driver loads some 15,000 classes before its first job; a short `stream --once` round spends a
fifth of its CPU doing it. The JDK can keep the classes a run loaded, parsed and verified, in an archive
the next JVM maps instead (``-XX:ArchiveClassesAtExit`` / ``-XX:SharedArchiveFile``, JDK 13+). Measured
on the sample's bootstrap (2 cores, C1 only): 37.9 s of CPU without, 30.2 s with the archive.

- One archive per (java, SPARK_HOME's jars, SPARK_CONF_DIR) under $HUDI_CDC_HOME/cds/, built by the
  first spark-submit that ends well (it dumps at exit, a few seconds; later runs map it). The JDK itself
  refuses an archive that does not match the JVM or class path and runs without it.
- Only one run builds at a time (an O_EXCL claim holding its pid; the claim of a process that is gone,
  or older than an hour, is taken over); the
  archive appears by an atomic rename, so a reader never maps half a file.
- The options reach the driver JVM only, through SPARK_SUBMIT_OPTS (never argv); executors on a
  cluster are not touched.
- ``HUDI_CDC_CDS=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.toolchain.jars import home

CLAIM_STALE_SECONDS = 3600


def _key(env: Mapping[str, str]) -> str | None:
    """What an archive is valid for: the JVM and the driver's class path (SPARK_HOME's jars, conf dir)."""
    spark_home, java_home = env.get("SPARK_HOME"), env.get("JAVA_HOME")
    if not spark_home or not java_home:
        return None
    jars = Path(spark_home) / "jars"
    try:
        listing = sorted((p.name, p.stat().st_size) for p in jars.iterdir())
        java = Path(java_home).resolve()
        release = (java / "release").read_bytes() if (java / "release").exists() else str(java).encode()
    except OSError:
        return None
    h = hashlib.sha256()
    for part in (str(java).encode(), release, str(jars.resolve()).encode(), repr(listing).encode(),
                 env.get("SPARK_CONF_DIR", "").encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:20]


@dataclass
class Plan:
    """The environment of one launch, and what to do when it ends (publish a built archive)."""

    env: dict[str, str]
    building: Path | None = None  # the temporary archive this run dumps at exit
    archive: Path | None = None
    claim: Path | None = None

    def finish(self, ok: bool) -> None:
        """After the JVM ended: publish the archive it dumped (ok runs only), release the claim."""
        try:
            if self.building is not None and self.archive is not None:
                if ok and self.building.exists() and self.building.stat().st_size > 0:
                    os.replace(self.building, self.archive)
                else:
                    self.building.unlink(missing_ok=True)
        finally:
            if self.claim is not None:
                self.claim.unlink(missing_ok=True)


def plan(env: Mapping[str, str]) -> Plan:
    """``env`` with the driver's class-data sharing options added to SPARK_SUBMIT_OPTS: map the archive
    if there is one, else build it in this run if no other run is building it."""
    out = dict(env)
    if out.get("HUDI_CDC_CDS", "1") == "0":
        return Plan(out)
    key = _key(out)
    if key is None or _non_empty_dir_on_class_path(out):
        return Plan(out)
    root = home() / "cds"
    archive = root / f"spark-driver-{key}.jsa"
    if archive.exists():
        return Plan(_with_option(out, f"-XX:SharedArchiveFile={archive}"))
    try:
        root.mkdir(parents=True, exist_ok=True)
        claim = root / f"spark-driver-{key}.building"
        if claim.exists() and _stale(claim):
            claim.unlink(missing_ok=True)  # a run that died (kill -9) while building
        fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:  # another run is building it (or the cache is not writable): run without
        return Plan(out)
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    building = root / f"spark-driver-{key}.{os.getpid()}.tmp"
    return Plan(_with_option(out, f"-XX:ArchiveClassesAtExit={building}"), building=building, archive=archive,
                claim=claim)


def _non_empty_dir_on_class_path(env: Mapping[str, str]) -> bool:
    """Spark's launcher puts its conf dir (SPARK_CONF_DIR, else SPARK_HOME/conf) and Hadoop's and YARN's on the
    driver's class path. The JDK archives no class path holding a non-empty directory: a run asked to dump one
    ends with "Cannot have non-empty directory in paths" after its work, and its job fails. A user's
    spark-defaults.conf or log4j2.properties is such a directory: those launches run without an archive."""
    conf = env.get("SPARK_CONF_DIR") or str(Path(env.get("SPARK_HOME", "")) / "conf")
    for d in (conf, env.get("HADOOP_CONF_DIR"), env.get("YARN_CONF_DIR")):
        try:
            if d and Path(d).is_dir() and any(Path(d).iterdir()):
                return True
        except OSError:
            return True
    return False


def _stale(claim: Path) -> bool:
    """The claim of a builder that is gone (its pid no longer runs), or older than an hour."""
    try:
        if time.time() - claim.stat().st_mtime > CLAIM_STALE_SECONDS:
            return True
        pid = int(claim.read_text().strip() or "0")
    except (OSError, ValueError):
        return True
    if pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        (claim.parent / claim.name.replace(".building", f".{pid}.tmp")).unlink(missing_ok=True)
        return True
    except PermissionError:  # someone else's live process
        return False
    return False


def _with_option(env: dict[str, str], option: str) -> dict[str, str]:
    current = env.get("SPARK_SUBMIT_OPTS", "").strip()
    env["SPARK_SUBMIT_OPTS"] = f"{current} {option}".strip()
    return env
