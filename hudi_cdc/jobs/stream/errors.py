"""The streamer's kinds of failure; jobs/stream/main.py reports each with its `kind` and the local
runner turns the kind into hudi-cdc's error (and exit code)."""

from hudi_cdc.common.causes import root_cause


class JobInputError(Exception):
    """Bad input the user can fix; the message names the file, field or table."""

    kind = "input"


class RegistryReadError(JobInputError):
    """The schema registry refused the request (401, 403, 404, ...): a fix of credentials or subjects."""

    kind = "registry"


class RegistryDown(RegistryReadError):
    """The schema registry could not be reached, timed out or answered 5xx: it may come back."""

    kind = "registry_unavailable"


class TableReadError(RuntimeError):
    """The table's own state could not be read (checkpoint, latest commit); one line naming the table."""


# what an OS error on a full disk says, in Python and in the JVM's (Hadoop's) messages alike
DISK_FULL = "No space left on device"


class DiskFull(RuntimeError):
    """A write found no space left on the device holding the table; one line naming the table."""

    kind = "disk"


def disk_full_in_round(table: str, base_path: str, exc: BaseException, next_step: str = "free space") -> DiskFull:
    """The one-line error of a round that ran out of disk while writing."""
    return DiskFull(f"{table} ({base_path}): {DISK_FULL} while writing the round ({root_cause(exc, 300)}); "
                    f"nothing was committed, {next_step}")


def is_disk_full(exc: BaseException) -> bool:
    """Anywhere in the exception chain (a JVM error's text carries its whole 'Caused by' chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        if DISK_FULL in str(seen) or getattr(seen, "errno", None) == 28:  # ENOSPC
            return True
        seen = seen.__cause__ or seen.__context__
    return False
