"""The runtime of the real HoodieDeltaStreamer 0.14.0, prepared once under the hudi-cdc cache.

Layout ($HUDI_CDC_HOME/deltastreamer-0.14.0, default ~/.cache/hudi-cdc/deltastreamer-0.14.0):
  venv/            a Python venv of its own with pyspark 3.4.3 (Hudi 0.14.0 is built for Spark 3.4;
                   the project's pyspark 3.5 cannot run it), whose spark-submit runs the jobs
  jars/            from Maven Central: hudi-spark3.4-bundle_2.12 (on --jars), jcommander 1.78 (on
                   --jars), hudi-utilities_2.12 (the application jar holding HoodieDeltaStreamer)
  classpath-first.jar
                   two unchanged classes from Hudi's own 0.14.0 module jars. The Spark bundle
                   relocates jcommander and org.apache.spark.sql.avro, but keeps (and relocates the
                   references of) these two classes, while the unbundled utilities jar references
                   them by their original names: OperationConverter (hudi-client-common) must
                   implement the original com.beust.jcommander.IStringConverter, and
                   org.apache.spark.sql.avro.HoodieAvroDeserializer (hudi-spark-client) must exist.
                   The jar goes first on the driver class path (spark.driver.extraClassPath).
  runtime.json     written last: what was prepared (is_ready() reads it)

Nothing is copied into the repository. Run `scripts/install-deltastreamer.sh` (or
`python -m hudi_cdc.runners.deltastreamer.runtime`) once; every step is skipped when done already.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem, ExitCode, HudiCdcError
from hudi_cdc.toolchain import jars as jarcache
from hudi_cdc.toolchain.java_spark import find_java

Progress = Callable[[str], None]

HUDI_VERSION = "0.14.0"
PYSPARK_VERSION = "3.4.3"
JAVA_RANGE = (11, 17)  # Spark 3.4 runs on Java 8/11/17; Java 17 preferred (first found within range)
STREAMER_CLASS = "org.apache.hudi.utilities.deltastreamer.HoodieDeltaStreamer"

BUNDLE = jarcache.Artifact("org.apache.hudi", "hudi-spark3.4-bundle_2.12", HUDI_VERSION)
JCOMMANDER = jarcache.Artifact("com.beust", "jcommander", "1.78")
UTILITIES = jarcache.Artifact("org.apache.hudi", "hudi-utilities_2.12", HUDI_VERSION)
# module jar -> the classes taken from it, unchanged
CLASSPATH_FIRST: dict[jarcache.Artifact, tuple[str, ...]] = {
    jarcache.Artifact("org.apache.hudi", "hudi-client-common", HUDI_VERSION):
        ("org/apache/hudi/client/utils/OperationConverter.class",),
    jarcache.Artifact("org.apache.hudi", "hudi-spark-client", HUDI_VERSION):
        ("org/apache/spark/sql/avro/HoodieAvroDeserializer.class",),
}
SHIM_NAME = "classpath-first.jar"
MARKER = "runtime.json"


@dataclass(frozen=True)
class Runtime:
    """Paths of a prepared runtime; argv and environment of a job are built from it."""

    root: Path
    python: Path
    spark_home: Path
    spark_submit: Path
    jars: tuple[Path, ...]  # --jars
    app_jar: Path  # the application jar (HoodieDeltaStreamer)
    classpath_first: Path  # spark.driver.extraClassPath
    streamer_class: str = STREAMER_CLASS
    hudi_version: str = HUDI_VERSION

    def java(self) -> Path:
        return find_java(JAVA_RANGE[0], f"Hudi {self.hudi_version}'s HoodieDeltaStreamer (Spark 3.4)", JAVA_RANGE[1])


def root() -> Path:
    return jarcache.home() / f"deltastreamer-{HUDI_VERSION}"


def _marker() -> Path:
    return root() / MARKER


def _from_marker(data: dict) -> Runtime:
    return Runtime(root=Path(data["root"]), python=Path(data["python"]), spark_home=Path(data["spark_home"]),
                   spark_submit=Path(data["spark_submit"]), jars=tuple(Path(p) for p in data["jars"]),
                   app_jar=Path(data["app_jar"]), classpath_first=Path(data["classpath_first"]))


def _files(rt: Runtime) -> tuple[Path, ...]:
    return (rt.python, rt.spark_submit, *rt.jars, rt.app_jar, rt.classpath_first)


def is_ready() -> bool:
    """True when the runtime was prepared and every file it names is still there."""
    try:
        rt = _from_marker(json.loads(_marker().read_text()))
    except (OSError, ValueError, KeyError):
        return False
    return all(p.exists() for p in _files(rt))


def load() -> Runtime:
    """The prepared runtime, or a one-line error saying how to prepare it."""
    if not is_ready():
        raise EnvironmentProblem(
            f"the HoodieDeltaStreamer {HUDI_VERSION} runtime is not prepared in {root()}: run "
            "scripts/install-deltastreamer.sh (python -m hudi_cdc.runners.deltastreamer.runtime)")
    return _from_marker(json.loads(_marker().read_text()))


def _venv(dest: Path, progress: Progress) -> tuple[Path, Path]:
    """The venv's python and pyspark's SPARK_HOME, creating the venv and installing pyspark once."""
    python = dest / "bin" / "python"
    if not python.exists():
        progress(f"creating a Python venv for pyspark {PYSPARK_VERSION} in {dest} ...")
        venv.EnvBuilder(with_pip=True, clear=True).create(dest)
    probe = [str(python), "-c",
             "import pyspark, os; print(pyspark.__version__); print(os.path.dirname(pyspark.__file__))"]
    out = subprocess.run(probe, capture_output=True, text=True)
    if out.returncode != 0 or out.stdout.split()[:1] != [PYSPARK_VERSION]:
        progress(f"installing pyspark=={PYSPARK_VERSION} into {dest} (once; builds a ~300 MB wheel) ...")
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                              f"pyspark=={PYSPARK_VERSION}"], capture_output=True, text=True)
        if pip.returncode != 0:
            tail = " ".join((pip.stdout + pip.stderr).strip().splitlines()[-2:])
            raise EnvironmentProblem(f"could not install pyspark=={PYSPARK_VERSION} into {dest}: {tail}")
        out = subprocess.run(probe, capture_output=True, text=True)
        if out.returncode != 0:
            raise EnvironmentProblem(f"pyspark {PYSPARK_VERSION} does not import in {dest}: "
                                     f"{(out.stderr.strip().splitlines() or ['?'])[-1]}")
    return python, Path(out.stdout.split("\n", 1)[1].strip())


def _classpath_first(dest: Path, modules: Path, progress: Progress) -> Path:
    """A small jar of the unchanged module classes the unbundled utilities jar needs."""
    shim = dest / SHIM_NAME
    if shim.exists():
        return shim
    tmp = dest / (SHIM_NAME + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: hudi-cdc\n")
        for art, classes in CLASSPATH_FIRST.items():
            jar = jarcache.ensure(art, progress, modules)
            with zipfile.ZipFile(jar) as src:
                for name in classes:
                    try:
                        out.writestr(name, src.read(name))
                    except KeyError:
                        tmp.unlink(missing_ok=True)
                        raise EnvironmentProblem(f"{art.coords} has no {name}") from None
            progress(f"took {', '.join(c.rsplit('/', 1)[-1] for c in classes)} from {art.filename}")
    tmp.rename(shim)
    shutil.rmtree(modules, ignore_errors=True)  # only the two classes are kept
    return shim


def ensure_runtime(progress: Progress | None = None) -> Runtime:
    """Prepare the runtime once (idempotent); returns its paths."""
    say: Progress = progress or (lambda _m: None)
    if is_ready():
        return load()
    base = root()
    base.mkdir(parents=True, exist_ok=True)
    python, spark_home = _venv(base / "venv", say)
    spark_submit = spark_home / "bin" / "spark-submit"
    if not spark_submit.exists():
        raise EnvironmentProblem(f"spark-submit not found in pyspark {PYSPARK_VERSION} at {spark_submit}")
    jar_dir = base / "jars"
    jars = tuple(jarcache.ensure(a, say, jar_dir) for a in (BUNDLE, JCOMMANDER))
    app_jar = jarcache.ensure(UTILITIES, say, jar_dir)
    shim = _classpath_first(base, base / "modules", say)
    rt = Runtime(root=base, python=python, spark_home=spark_home, spark_submit=spark_submit, jars=jars,
                 app_jar=app_jar, classpath_first=shim)
    data = {"root": str(base), "python": str(python), "spark_home": str(spark_home),
            "spark_submit": str(spark_submit), "jars": [str(j) for j in jars], "app_jar": str(app_jar),
            "classpath_first": str(shim), "hudi_version": HUDI_VERSION, "pyspark_version": PYSPARK_VERSION}
    tmp = base / (MARKER + ".part")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    tmp.rename(_marker())
    return rt


def disk_usage(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def main(argv=None) -> int:
    started = time.time()
    try:
        was_ready = is_ready()
        rt = ensure_runtime(lambda m: print(f"deltastreamer {HUDI_VERSION}: {m}", flush=True))
        rt.java()
    except HudiCdcError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    size = disk_usage(rt.root) / 1e6
    state = "already prepared" if was_ready else f"prepared in {time.time() - started:.0f}s"
    print(f"deltastreamer {HUDI_VERSION}: {state}: {rt.root} ({size:.0f} MB); spark-submit {rt.spark_submit}")
    return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
