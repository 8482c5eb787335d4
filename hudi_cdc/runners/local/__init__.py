"""The local runner: spark-submit from pyspark, the cached jars, one JVM per command."""

from .plan import job_script, registry_env, work_dir
from .runner import LocalRunner
from .spark import find_java, root_cause, spark_home, spark_submit

__all__ = ["LocalRunner", "find_java", "job_script", "registry_env", "root_cause", "spark_home", "spark_submit",
           "work_dir"]
