"""One exception root; the CLI edge turns every HudiCdcError into one line and a non-zero exit.

``ExitCode`` is every exit code hudi-cdc and its jobs use, in one place: the error classes here and
elsewhere (hive, verify, Kafka Connect) take theirs from it, and so does the streamer job (this module
is shipped with the job: stdlib only).
"""

from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    """What a ``hudi-cdc`` command (or a job it runs) exits with."""

    OK = 0
    FAILED = 1  # a HudiCdcError without a kind of its own; `status` bounds exceeded
    CONFIG = 2  # the pipeline file (or a job's arguments)
    DATA = 3  # landed data: corrupt or truncated Avro, a missing key field, a missing landing folder
    JOB = 4  # a Spark/Hudi job failed (root cause + log path)
    ENVIRONMENT = 5  # Java, jars, a service or endpoint that does not answer, a full disk
    TABLE_STATE = 6  # the table is not in the state the command needs
    REGISTRY = 7  # the schema registry refused or could not be reached
    AWS = 8  # an AWS call failed, timed out or was cancelled
    HIVE = 9  # HiveServer2 / the metastore
    DIFFERS = 10  # `verify` found differences between the lake and the database
    SOURCE = 11  # the source database (or a Kafka Connect task) cannot be used
    LOCKED = 12  # the table is being written by another process
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


class HudiCdcError(Exception):
    """Base of every error hudi-cdc reports to a user."""

    exit_code: int = ExitCode.FAILED


class ConfigError(HudiCdcError):
    """The pipeline file is missing, malformed or invalid."""

    exit_code = ExitCode.CONFIG


class DataError(HudiCdcError):
    """Landed data cannot be used: corrupt Avro file, missing record key field, missing landing root."""

    exit_code = ExitCode.DATA


class JobError(HudiCdcError):
    """A Spark/Hudi job failed; the message carries the root cause and the log path."""

    exit_code = ExitCode.JOB


class EnvironmentProblem(HudiCdcError):
    """Something the machine needs is missing: Java, a jar, a service."""

    exit_code = ExitCode.ENVIRONMENT


class TableStateError(HudiCdcError):
    """The table is not in the state the command needs (exists already, not a Hudi table, ...)."""

    exit_code = ExitCode.TABLE_STATE


class TableLocked(TableStateError):
    """Another process is writing the table (one writer per table); the message names the holder."""

    exit_code = ExitCode.LOCKED


class RegistryError(HudiCdcError):
    """The schema registry refused or could not be reached."""

    exit_code = ExitCode.REGISTRY


class AwsError(HudiCdcError):
    """An AWS call (EMR, EMR Serverless, S3) failed, timed out or was cancelled."""

    exit_code = ExitCode.AWS


class SourceError(HudiCdcError):
    """The source database cannot be used: down, refused, misconfigured, or its slot is in use."""

    exit_code = ExitCode.SOURCE


class TablesFailed(HudiCdcError):
    """Some table/type jobs of a multi-table command failed while the others went on (issue 36): ``failed``
    holds (table, table type, error) of each failed job, ``results`` the other jobs' results. It exits with
    the first failed job's own code (3 for landed data, 4 for a job, ...); its one line names every failed job."""

    def __init__(self, label: str, failed: list[tuple[str, str, HudiCdcError]], results: list[dict[str, Any]],
                 total: int, where: str = ""):
        self.failed, self.results = failed, results
        self.exit_code = failed[0][2].exit_code
        named = "; ".join(f"{table} ({table_type}): {error}" for table, table_type, error in failed)
        others = total - len(failed)
        went_on = f"; the {others} other(s) went through" if others else ""
        super().__init__(f"{label}: {len(failed)} of {total} table job(s) failed, each left as it was: "
                         f"{named}{went_on}{f' ({where})' if where else ''}")

    @property
    def names(self) -> set[tuple[str, str]]:
        """The (table, table type) pairs that failed."""
        return {(table, table_type) for table, table_type, _ in self.failed}
