"""The local runner: spark-submit from pyspark, the cached jars, one JVM per command."""

from .plan import job_script, work_dir
from .runner import LocalRunner

__all__ = ["LocalRunner", "job_script", "work_dir"]
