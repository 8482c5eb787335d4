"""The schema registry (Confluent-compatible API, Apicurio 3.x ``/apis/ccompat/v7``):

  client.py       RegistryClient: one session, urllib3 Retry, one call per API operation
  errors.py       an error per documented status, one-line messages
  credentials.py  credentials by reference (environment variables the pipeline names)
  schemas.py      a table's schema from an .avsc or the newest landed Avro file
  register.py     a pipeline's tables registered / checked under <topic>-value
"""

from hudi_cdc.registry.client import (
                     ACCEPT,
                     COMPATIBILITY_LEVELS,
                     CONTENT_TYPE,
                     TRANSIENT_STATUS,
                     Compatibility,
                     RegistryClient,
                     SchemaVersion,
)
from hudi_cdc.registry.credentials import credentials
from hudi_cdc.registry.errors import (
                     Forbidden,
                     IncompatibleSchema,
                     InvalidSchema,
                     RegistryHTTPError,
                     RegistryUnavailable,
                     SchemaNotFound,
                     SubjectNotFound,
                     Unauthorized,
                     VersionNotFound,
)
from hudi_cdc.registry.register import check_pipeline, register_pipeline, subject_for
from hudi_cdc.registry.schemas import landed_files, schema_from_avsc, schema_from_landed
from hudi_cdc.registry.urls import redact

__all__ = [
    "ACCEPT", "COMPATIBILITY_LEVELS", "CONTENT_TYPE", "Compatibility", "Forbidden", "IncompatibleSchema",
    "InvalidSchema", "RegistryClient", "RegistryHTTPError", "RegistryUnavailable", "SchemaNotFound",
    "SchemaVersion", "SubjectNotFound", "TRANSIENT_STATUS", "Unauthorized", "VersionNotFound", "check_pipeline",
    "credentials", "landed_files", "redact", "register_pipeline", "schema_from_avsc", "schema_from_landed",
    "subject_for",
]
