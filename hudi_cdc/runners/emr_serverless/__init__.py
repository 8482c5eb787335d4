"""The EMR Serverless runner: one job run per job on an EMR Serverless Spark application."""

from .plan import argv_of, job_driver, split_spark_submit
from .runner import EmrServerlessRunner

__all__ = ["EmrServerlessRunner", "argv_of", "job_driver", "split_spark_submit"]
