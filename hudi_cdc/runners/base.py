"""What every runner offers: the ``Runner`` protocol, and the error for what a target cannot do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from hudi_cdc.core.render import Job
from hudi_cdc.errors import ConfigError


class NotSupported(ConfigError):
    """The command does not apply to this target (e.g. `emr status` for a local run)."""


@runtime_checkable
class Runner(Protocol):
    """Runs the jobs of a command on one target ("local", "emr", "emr-serverless")."""

    target: str

    def plan(self, jobs: Sequence[Job], label: str = "") -> list[dict[str, Any]]:
        """What ``run`` would do (argv, AWS calls), said through the runner's progress/stdout; nothing
        runs, nothing is written. One dict per job (local: one for all) with ``dry_run: True``."""
        ...

    def preflight(self) -> None:
        """Check what must be there before a table is touched (Java, jars, settings, credentials)."""
        ...

    def run(self, jobs: Sequence[Job], label: str) -> list[dict[str, Any]]:
        """Run the jobs (``plan`` when the runner was made with dry_run); one result dict per job."""
        ...

    def status(self, run_id: str | None = None) -> list[dict[str, Any]]:
        """One run, or all of this pipeline's, as rows (id, name, state, created, reason, ...)."""
        ...

    def logs(self, run_id: str, kind: str = "stderr", lines: int = 200) -> str:
        """The last ``lines`` lines of a run's stderr or stdout."""
        ...

    def cancel(self, run_id: str) -> str:
        """Ask for a run to stop; returns its id."""
        ...
