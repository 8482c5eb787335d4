"""The local stack: Apicurio Registry, a Hive metastore and the Spark Thrift Server on 127.0.0.1.

One module per service (apicurio, metastore, thriftserver) over a shared Service base, and a
manager that starts, waits for, reports and stops them. The CLI is hudi_cdc/commands/local.py.
"""

from .manager import SERVICES, Stack, StackConfig, default_data_dir

__all__ = ["SERVICES", "Stack", "StackConfig", "default_data_dir"]
