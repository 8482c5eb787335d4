"""One error class per outcome of a step or job run, so callers and tests can tell them apart."""

from __future__ import annotations

from hudi_cdc.errors import AwsError


class JobFailed(AwsError):
    """The EMR step or job run ended in FAILED. The message is one line (what failed, AWS's reason, the
    root cause in the job's stderr, where the log is); ``details`` holds AWS's failure lines and the
    stderr's last lines, which ``hudi-cdc --debug`` prints."""

    def __init__(self, message: str, details: str = "") -> None:
        super().__init__(message)
        self.details = details


class JobCancelled(AwsError):
    """The EMR step or job run was cancelled (by a user, `hudi-cdc emr cancel`, or the cluster)."""


class WaitTimeout(AwsError):
    """hudi-cdc stopped waiting; the step or job run itself may still be running."""


class AlreadyRunning(AwsError):
    """A step or job run writing the same table is still pending or running."""
