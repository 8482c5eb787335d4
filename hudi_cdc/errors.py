"""One exception root; the CLI edge turns every HudiCdcError into one line and a non-zero exit."""


class HudiCdcError(Exception):
    """Base of every error hudi-cdc reports to a user."""

    exit_code = 1


class ConfigError(HudiCdcError):
    """The pipeline file is missing, malformed or invalid."""

    exit_code = 2


class DataError(HudiCdcError):
    """Landed data cannot be used: corrupt Avro file, missing record key field, missing landing root."""

    exit_code = 3


class JobError(HudiCdcError):
    """A Spark/Hudi job failed; the message carries the root cause and the log path."""

    exit_code = 4


class EnvironmentProblem(HudiCdcError):
    """Something the machine needs is missing: Java, a jar, a service."""

    exit_code = 5


class TableStateError(HudiCdcError):
    """The table is not in the state the command needs (exists already, not a Hudi table, ...)."""

    exit_code = 6


class RegistryError(HudiCdcError):
    """The schema registry refused or could not be reached."""

    exit_code = 7


class AwsError(HudiCdcError):
    """An AWS call (EMR, EMR Serverless, S3) failed, timed out or was cancelled."""

    exit_code = 8


class SourceError(HudiCdcError):
    """The source database cannot be used: down, refused, misconfigured, or its slot is in use."""

    exit_code = 11
