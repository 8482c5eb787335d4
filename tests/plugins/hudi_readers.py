"""Read Hudi tables with the Hudi runtimes users have beside hudi-cdc's own 1.2.0, each in ONE spark-submit
for all its reads, the runtimes side by side (started together, waited for together):

- "0.14.0": pyspark 3.4.3 + the hudi-spark3.4-bundle 0.14.0 of hudi-cdc's 0.14 engine (the Hudi release
  Athena's reader is built on; scripts/install-deltastreamer.sh installs it);
- "1.0.2": the pip pyspark 3.5 + the hudi-spark3.5-bundle 1.0.2 (EMR 7.11-7.13's Hudi), fetched once into
  hudi-cdc's jar cache (hudi_cdc/toolchain/jars.py; scripts/setup-tests.sh fetches it too).

Each read is (base path, query type: snapshot | read_optimized, "key=value" read options...). Rows come
back as dicts of JSON values in UTC: timestamps as 'yyyy-MM-dd HH:mm:ss.SSSSSS' strings (micros kept),
dates as ISO strings, decimals as strings, arrays as lists; or {"error": the reader's refusal in one line}.
A runtime that is not installed or cannot be fetched is `missing` (a skip, a failure under CI)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.spark.launch import spark_env

MARK = "HUDI_READS "
SCRIPT = '''
import json, sys
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[1]").appName("hudi-reader")
         .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
         .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false").getOrCreate())
out = []
for path, query_type, *options in json.loads(sys.argv[1]):
    try:
        df = (spark.read.format("hudi").option("hoodie.datasource.query.type", query_type)
              .options(**dict(o.split("=", 1) for o in options)).load(path))
        df = df.select([F.date_format(F.col(f.name), "yyyy-MM-dd HH:mm:ss.SSSSSS").alias(f.name)
                        if f.dataType.typeName() == "timestamp" else F.col(f.name) for f in df.schema.fields])
        out.append([r.asDict(recursive=True) for r in df.collect()])
    except Exception as exc:  # the reader's refusal, as one line: {"error": ...}
        causes = [ln.strip() for ln in str(exc).splitlines() if "Exception" in ln]
        out.append({"error": (causes[-1] if causes else str(exc).splitlines()[0])[:500]})
print("HUDI_READS " + json.dumps(out, default=str))
'''


@dataclass(frozen=True)
class Runtime:
    spark_submit: str
    spark_home: str
    java_home: str
    python: str
    jars: tuple[str, ...]


def _hudi_014() -> Runtime:
    from hudi_cdc.runners.deltastreamer import runtime

    rt = runtime.load()
    return Runtime(str(rt.spark_submit), str(rt.spark_home), str(rt.java().resolve().parent.parent), str(rt.python),
                   tuple(str(j) for j in rt.jars if "bundle" in j.name))


def _hudi_102() -> Runtime:
    from hudi_cdc.toolchain import jars
    from hudi_cdc.toolchain.java_spark import find_java, spark_home, spark_submit

    bundle = jars.ensure(jars.hudi_spark_bundle("1.0.2"), progress=lambda m: print(m, file=sys.stderr))
    return Runtime(str(spark_submit()), str(spark_home()), str(find_java(17, "Spark").resolve().parent.parent),
                   sys.executable, (str(bundle),))


RUNTIMES = {"0.14.0": _hudi_014, "1.0.2": _hudi_102}


def runtime(version: str) -> Runtime:
    """The runtime of Hudi `version`, or `missing` (one line: what is not there)."""
    from tests.shared import missing

    try:
        return RUNTIMES[version]()
    except EnvironmentProblem as exc:
        missing(f"the Hudi {version} reader runtime: {exc}")


class Reads:
    """The spark-submits of `start_reads`, running: `collect()` waits for them, `kill()` ends them (a test that
    fails before it collects)."""

    def __init__(self, reads: dict[str, list[tuple[str, ...]]], procs: dict[str, subprocess.Popen], timeout: float):
        self.reads, self.procs, self.timeout = reads, procs, timeout

    def collect(self) -> dict[str, dict]:
        """{runtime version: {read: rows or {"error": ...}}}."""
        got = {}
        try:
            for version, proc in self.procs.items():
                stdout, stderr = proc.communicate(timeout=self.timeout)
                line = next((ln for ln in stdout.splitlines() if ln.startswith(MARK)), None)
                assert proc.returncode == 0 and line, \
                    f"Hudi {version} read failed ({proc.returncode}): {stderr[-3000:]}"
                got[version] = dict(zip(self.reads[version], json.loads(line[len(MARK):]), strict=True))
        finally:
            self.kill()
        return got

    def kill(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def start_reads(tmp: Path, reads: dict[str, list[tuple[str, ...]]], timeout: float = 600) -> Reads:
    """One spark-submit per runtime version for its reads, all started now (collect them later: the JVMs
    start while the test reads with other readers)."""
    script = tmp / "hudi_read.py"
    script.write_text(SCRIPT)
    procs: dict[str, subprocess.Popen] = {}
    started = Reads(reads, procs, timeout)
    try:
        for version, wanted in reads.items():
            rt = runtime(version)
            env = spark_env(spark_home=rt.spark_home, java_home=rt.java_home, python=rt.python,
                            drop=("PYTHONPATH",), force_local_ip=True)
            argv = [rt.spark_submit, "--master", "local[1]", "--driver-memory", "1g", "--jars", ",".join(rt.jars),
                    str(script), json.dumps([list(r) for r in wanted])]
            procs[version] = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              text=True)
    except BaseException:
        started.kill()
        raise
    return started


def read_with_hudi(tmp: Path, reads: dict[str, list[tuple[str, ...]]], timeout: float = 600) -> dict[str, dict]:
    """{runtime version: {read: rows or {"error": ...}}}, the runtimes side by side."""
    return start_reads(tmp, reads, timeout).collect()


def read_with_hudi_014(tmp: Path, reads: list[tuple[str, str]], timeout: float = 600) -> dict[tuple[str, str], list]:
    """Hudi 0.14.0's reads alone."""
    return read_with_hudi(tmp, {"0.14.0": reads}, timeout)["0.14.0"]
