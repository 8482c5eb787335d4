"""The local stack: Apicurio Registry, a Hive metastore, the Spark Thrift Server and
(optionally) an S3-compatible endpoint (s3proxy) on 127.0.0.1.

One module per service (apicurio, metastore, thriftserver, s3proxy) over a shared Service base, and a
manager that starts, waits for, reports and stops them. The CLI is hudi_cdc/cli/commands/local.py.
"""

from hudi_cdc.stack.manager import ALL_SERVICES, SERVICES, Stack, StackConfig, default_data_dir

__all__ = ["ALL_SERVICES", "SERVICES", "Stack", "StackConfig", "default_data_dir"]
