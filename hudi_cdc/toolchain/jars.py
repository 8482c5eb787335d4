"""The jars a local Spark job needs, fetched from Maven Central (hudi_cdc/toolchain/maven.py) once into a cache.

Cache: $HUDI_CDC_HOME/jars (default ~/.cache/hudi-cdc/jars).
"""

from __future__ import annotations

import os
from pathlib import Path

from hudi_cdc.config.settings import CURRENT_HUDI
from hudi_cdc.toolchain.maven import Artifact, fetch

SPARK_VERSION = "3.5.5"  # pyspark pin; spark-avro must match Spark's minor version
SCALA = "2.12"


def home() -> Path:
    return Path(os.environ.get("HUDI_CDC_HOME", Path.home() / ".cache" / "hudi-cdc"))


def cache_dir() -> Path:
    return home() / "jars"


def hudi_spark_bundle(hudi_version: str) -> Artifact:
    return Artifact("org.apache.hudi", f"hudi-spark3.5-bundle_{SCALA}", hudi_version)


def spark_avro() -> Artifact:
    return Artifact("org.apache.spark", f"spark-avro_{SCALA}", SPARK_VERSION)


HADOOP_AWS_VERSION = "3.3.4"  # pyspark 3.5's Hadoop
AWS_SDK_BUNDLE_VERSION = "1.12.262"  # what hadoop-aws 3.3.4 was built against


def s3a_artifacts() -> list[Artifact]:
    """Hadoop's s3a filesystem and the AWS SDK it needs (~280 MB), for local runs on s3:// roots."""
    return [Artifact("org.apache.hadoop", "hadoop-aws", HADOOP_AWS_VERSION),
            Artifact("com.amazonaws", "aws-java-sdk-bundle", AWS_SDK_BUNDLE_VERSION)]


def hudi_java_client(hudi_version: str) -> Artifact:
    """Hudi's Java write client (~1 MB beside the Spark bundle): small MoR rounds commit from the driver with
    it (hudi_cdc/jobs/stream/driver_write.py)."""
    return Artifact("org.apache.hudi", "hudi-java-client", hudi_version)


def local_job_artifacts(hudi_version: str, s3: bool = False) -> list[Artifact]:
    """What the local runner puts on --jars.

    The Hudi utilities (slim) bundle, which carries HoodieStreamer, is not served by the Maven
    repository this project can reach for any 1.x release, so the local runner drives Hudi's
    Spark datasource from hudi_cdc/jobs/streamer.py instead (see ARCHITECTURE.md). With the Hudi
    version hudi-cdc's own job runs, Hudi's Java write client too.
    """
    java = [hudi_java_client(hudi_version)] if hudi_version == CURRENT_HUDI else []
    return [hudi_spark_bundle(hudi_version), spark_avro(), *java] + (s3a_artifacts() if s3 else [])


def ensure(art: Artifact, progress=None, dest: Path | None = None) -> Path:
    """The artifact's path in `dest` (default: the jar cache), downloading it once."""
    dest = dest or cache_dir()
    path = dest / art.filename
    if progress and not (path.exists() and path.stat().st_size > 0):
        progress(f"fetching {art.coords} from Maven Central (once) ...")
    return fetch(art, dest, timeout=120)


def ensure_jars(hudi_version: str, progress=None, s3: bool = False) -> list[Path]:
    """Paths of the Hudi Spark bundle and spark-avro (and with s3, hadoop-aws and the AWS SDK bundle)
    for local jobs, downloading them once."""
    return [ensure(a, progress) for a in local_job_artifacts(hudi_version, s3)]
