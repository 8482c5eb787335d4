"""`hudi-cdc local up | down | status`: the registry, the metastore and the thrift server together
(and, when asked for, the S3 endpoint and Trino).

State lives in the data dir (default ``$HUDI_CDC_HOME/stack``): ``stack.json`` (host, ports,
versions; never a password), ``run/<service>.pid``, ``logs/<service>.log`` and each service's own
files. ``up`` is idempotent (a running, answering service is left alone), ``down`` stops only
processes whose pid file and command-line marker say this data dir's ``up`` started them.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import process
from hudi_cdc.stack.apicurio import DEFAULT_VERSION as APICURIO_VERSION
from hudi_cdc.stack.apicurio import Apicurio
from hudi_cdc.stack.metastore import Metastore
from hudi_cdc.stack.s3proxy import DEFAULT_BUCKET as S3_BUCKET
from hudi_cdc.stack.s3proxy import DEFAULT_VERSION as S3PROXY_VERSION
from hudi_cdc.stack.s3proxy import S3Proxy
from hudi_cdc.stack.service import Service
from hudi_cdc.stack.thriftserver import ThriftServer
from hudi_cdc.stack.trino import DEFAULT_VERSION as TRINO_VERSION
from hudi_cdc.stack.trino import Trino
from hudi_cdc.toolchain.jars import home

SERVICES = ("registry", "metastore", "thriftserver")  # what `up` starts by default
OPTIONAL = ("s3", "trino")  # started when asked for (`up --s3`, `up --trino` or `--only s3|trino`)
ALL_SERVICES = SERVICES + OPTIONAL
STATE_FILE = "stack.json"


def default_data_dir() -> Path:
    return home() / "stack"


@dataclass(frozen=True)
class StackConfig:
    data_dir: Path = field(default_factory=default_data_dir)
    host: str = "127.0.0.1"
    registry_port: int = 8080
    metastore_port: int = 9083
    thrift_port: int = 10000
    apicurio_version: str = APICURIO_VERSION
    hudi_version: str = "1.2.0"
    registry_heap: str = "512m"
    metastore_heap: str = "512m"
    thrift_memory: str = "1g"
    s3_port: int = 9000
    s3proxy_version: str = S3PROXY_VERSION
    s3_bucket: str = S3_BUCKET
    # `up --s3`: the metastore and the thrift server also read and write table locations on the stack's
    # S3 endpoint (s3a jars and settings, the endpoint's fixed local keys in their environment)
    s3: bool = False
    # `up --trino`: Trino with hive/iceberg/hudi catalogs on the metastore (hudi_cdc/stack/trino.py)
    trino_port: int = 8090
    trino_version: str = field(default_factory=lambda: os.environ.get("HUDI_CDC_TRINO_VERSION") or TRINO_VERSION)
    trino_heap: str = "2G"
    trino_query_memory: str = "1GB"
    # user -> (password, role: sr-admin | sr-developer | sr-readonly); empty = no auth
    registry_users: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir).expanduser().resolve())

    # what a pipeline file should point at
    @property
    def registry_url(self) -> str:
        return f"http://{self.host}:{self.registry_port}/apis/ccompat/v7"

    @property
    def metastore_uri(self) -> str:
        return f"thrift://{self.host}:{self.metastore_port}"

    @property
    def s3_endpoint(self) -> str:
        return f"http://{self.host}:{self.s3_port}"

    def to_state(self) -> dict[str, object]:
        d = asdict(self)
        d["data_dir"] = str(self.data_dir)
        d["registry_users"] = {u: role for u, (_, role) in self.registry_users.items()}  # no passwords
        return d

    @classmethod
    def saved(cls, data_dir: Path | None = None) -> StackConfig:
        """The config `up` last used for data_dir (defaults when it never ran)."""
        d = Path(data_dir).expanduser() if data_dir else default_data_dir()
        try:
            state = json.loads((d / STATE_FILE).read_text())
        except (OSError, ValueError):
            return cls(data_dir=d)
        known = {k: v for k, v in state.items() if k in cls.__dataclass_fields__ and k != "registry_users"}
        known["data_dir"] = d
        return cls(**known)


def services_of(cfg: StackConfig, names: Sequence[str] | None = None) -> list[Service]:
    classes = {"registry": Apicurio, "metastore": Metastore, "thriftserver": ThriftServer, "s3": S3Proxy,
               "trino": Trino}
    wanted = list(names) if names else list(SERVICES)
    unknown = [n for n in wanted if n not in classes]
    if unknown:
        raise EnvironmentProblem(f"unknown service(s) {', '.join(unknown)}; known: {', '.join(ALL_SERVICES)}")
    return [classes[n](cfg) for n in ALL_SERVICES if n in wanted]


class Stack:
    def __init__(self, cfg: StackConfig, progress: Callable[[str], None] | None = None) -> None:
        self.cfg = cfg
        self.progress = progress or (lambda msg: None)

    # ---- up ---------------------------------------------------------------------
    def up(self, names: Sequence[str] | None = None) -> list[dict[str, object]]:
        """Start what is not running, wait until every service answers; one result row per service."""
        services = services_of(self.cfg, names)
        self.cfg.data_dir.mkdir(parents=True, exist_ok=True)
        (self.cfg.data_dir / STATE_FILE).write_text(json.dumps(self.cfg.to_state(), indent=2) + "\n")
        results: dict[str, dict[str, Any]] = {}
        started: dict[str, float] = {}
        # the thrift server connects to the metastore while starting: start it after the metastore answers
        first = [s for s in services if s.name != "thriftserver"]
        later = [s for s in services if s.name == "thriftserver"]
        for svc in first:
            self._start(svc, started, results)
        # the metastore first, so the thrift server starts while the registry is still booting
        for svc in sorted(first, key=lambda s: s.name != "metastore"):
            if svc.name == "metastore" or not later:
                self._wait(svc, started, results)
        for svc in later:
            with_metastore = "metastore" in [s.name for s in services]
            if not with_metastore and not process.port_open(self.cfg.host, self.cfg.metastore_port):
                raise EnvironmentProblem(f"the thrift server needs the metastore at {self.cfg.metastore_uri}; "
                                         "start it too (hudi-cdc local up)")
            self._start(svc, started, results)
        for svc in first:
            if later and svc.name != "metastore":
                self._wait(svc, started, results)
        for svc in later:
            self._wait(svc, started, results)
        for svc in services:
            if isinstance(svc, S3Proxy) and svc.create_bucket(self.cfg.s3_bucket):
                self.progress(f"s3: created bucket {self.cfg.s3_bucket}")
            if isinstance(svc, S3Proxy):
                results[svc.name]["url"] = f"{svc.url} (bucket s3://{self.cfg.s3_bucket})"
        return [results[s.name] for s in services]

    def _start(self, svc: Service, started: dict[str, float], results: dict[str, dict[str, Any]]) -> None:
        pid = svc.pid()
        if pid is not None:
            if svc.answers():
                self.progress(f"{svc.name}: already running (pid {pid})")
                state = "already running"
            else:  # started by an earlier `up` that did not wait for it: wait now
                self.progress(f"{svc.name}: still starting (pid {pid}), waiting")
                started[svc.name] = time.monotonic()
                state = "starting"
            results[svc.name] = {"service": svc.name, "state": state, "pid": pid, "url": svc.url}
            return
        if process.port_open(self.cfg.host, svc.port):
            raise EnvironmentProblem(
                f"{svc.name}: port {svc.port} on {self.cfg.host} is in use by a process this stack did not "
                f"start; stop it or choose another port (hudi-cdc local up --{svc.name}-port N)")
        launch = svc.prepare(self.progress)
        self.progress(f"{svc.name}: starting on {svc.url} (log: {svc.log_file})")
        started[svc.name] = time.monotonic()
        pid = process.spawn(launch.argv, svc.log_file, svc.pid_file, launch.cwd or svc.dir, launch.env)
        results[svc.name] = {"service": svc.name, "state": "starting", "pid": pid, "url": svc.url}

    def _wait(self, svc: Service, started: dict[str, float], results: dict[str, dict[str, Any]]) -> None:
        row = results[svc.name]
        pid = int(row["pid"])
        t0 = started.get(svc.name, time.monotonic())
        quick = getattr(svc, "quick_probe", None)
        if quick is not None:  # don't open HS2 sessions before its port is even open
            process.wait_until(quick, svc.start_timeout, lambda: process.is_alive(pid))
        outcome = process.wait_until(svc.answers, svc.start_timeout - (time.monotonic() - t0),
                                     lambda: process.is_alive(pid), interval=1.0)
        if outcome != "ready":
            code = process.exit_code(pid)
            if outcome == "timeout":
                process.stop(pid)
                why = f"did not answer within {int(svc.start_timeout)}s"
            else:
                why = "exited" + (f" with code {code}" if code is not None else "")
            svc.pid_file.unlink(missing_ok=True)
            raise EnvironmentProblem(f"{svc.name} {why}: {process.log_tail(svc.log_file)} (log: {svc.log_file})")
        if svc.name in started:
            row["seconds"] = round(time.monotonic() - t0, 1)
            row["state"] = "started"
            self.progress(f"{svc.name}: answering after {row['seconds']}s")

    # ---- down / status ----------------------------------------------------------
    def down(self, names: Sequence[str] | None = None) -> list[dict[str, object]]:
        rows: list[dict[str, object]] = []
        # stop in reverse order: the thrift server first, the metastore it uses after
        for svc in reversed(services_of(self.cfg, names or ALL_SERVICES)):
            pid = svc.pid()
            if pid is None and not names and svc.name in OPTIONAL:
                continue  # an optional service that was not started: nothing to say
            if pid is None:
                state = "not running"
            else:
                self.progress(f"{svc.name}: stopping pid {pid}")
                process.stop(pid)
                state = "stopped"
            svc.pid_file.unlink(missing_ok=True)
            rows.append({"service": svc.name, "state": state, "pid": pid})
        return list(reversed(rows))

    def status(self, names: Sequence[str] | None = None) -> list[dict[str, object]]:
        """Every service asked for; by default the three of `up` and any optional one that runs."""
        if names:
            return [svc.describe() for svc in services_of(self.cfg, names)]
        rows = [svc.describe() for svc in services_of(self.cfg, SERVICES)]
        rows += [row for row in (svc.describe() for svc in services_of(self.cfg, OPTIONAL))
                 if row["state"] != "stopped"]
        return rows

