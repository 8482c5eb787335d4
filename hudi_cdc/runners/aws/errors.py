"""One error class per outcome of a step or job run, so callers and tests can tell them apart."""

from __future__ import annotations

from ...errors import AwsError


class JobFailed(AwsError):
    """The EMR step or job run ended in FAILED."""


class JobCancelled(AwsError):
    """The EMR step or job run was cancelled (by a user, `hudi-cdc emr cancel`, or the cluster)."""


class WaitTimeout(AwsError):
    """hudi-cdc stopped waiting; the step or job run itself may still be running."""


class AlreadyRunning(AwsError):
    """A step or job run writing the same table is still pending or running."""
