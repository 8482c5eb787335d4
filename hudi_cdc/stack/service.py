"""What every local service has in common: where it lives, how it starts, how we know it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hudi_cdc.stack import process


@dataclass(frozen=True)
class Launch:
    """A prepared command: argv, extra environment (secrets go here, never into argv), working dir."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None


class Service:
    """One background service of the local stack. Subclasses fill in the blanks."""

    name: str = ""
    start_timeout: float = 180.0

    def __init__(self, cfg) -> None:  # cfg: manager.StackConfig
        self.cfg = cfg

    # ---- places -----------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return self.cfg.data_dir / self.name

    @property
    def pid_file(self) -> Path:
        return self.cfg.data_dir / "run" / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.cfg.data_dir / "logs" / f"{self.name}.log"

    @property
    def host(self) -> str:
        return self.cfg.host

    @property
    def port(self) -> int:
        raise NotImplementedError

    @property
    def url(self) -> str:
        raise NotImplementedError

    # ---- life -------------------------------------------------------------------
    def prepare(self, progress=None) -> Launch:
        """Fetch/write whatever the service needs; return how to start it."""
        raise NotImplementedError

    def probe(self) -> None:
        """Raise if the service does not answer a real request; return quietly if it does."""
        raise NotImplementedError

    def answers(self) -> bool:
        try:
            self.probe()
            return True
        except Exception:  # noqa: BLE001
            return False

    def pid(self) -> int | None:
        return process.owned_pid(self.pid_file, process.marker(self.cfg.data_dir))

    def describe(self) -> dict[str, object]:
        pid = self.pid()
        if pid is None:
            state = "stopped"
        else:
            state = "running" if self.answers() else "starting/not answering"
        return {"service": self.name, "state": state, "pid": pid, "url": self.url, "log": str(self.log_file)}
