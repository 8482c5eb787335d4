"""The EMR Serverless runner: one job run per job on an EMR Serverless Spark application."""

from hudi_cdc.runners.emr_serverless.plan import argv_of, job_driver, split_spark_submit
from hudi_cdc.runners.emr_serverless.runner import EmrServerlessRunner

__all__ = ["EmrServerlessRunner", "argv_of", "job_driver", "split_spark_submit"]
