"""The local runner: spark-submit from pyspark, the cached jars, one JVM per command."""

from hudi_cdc.runners.local.plan import job_script, work_dir
from hudi_cdc.runners.local.runner import LocalRunner

__all__ = ["LocalRunner", "job_script", "work_dir"]
