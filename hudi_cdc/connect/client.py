"""Client for the Kafka Connect REST API: deploy, status, restart, delete and validate connectors.

One ``requests.Session`` (hudi_cdc/http.py's ``retrying_session``, as the registry client): connection
errors, read errors and the statuses a worker answers while it is busy (409 during a rebalance, 502,
503, 504, and a 500 saying a rebalance is expected) are retried a bounded number of times with
exponential backoff, then reported in one line naming the worker's URL (EnvironmentProblem, exit 5).
A config the worker refuses is a ConfigError (exit 2) carrying the worker's own words. Nothing here
prints a secret: the configs hudi-cdc sends hold ``${env:...}`` references
that the worker resolves with its EnvVarConfigProvider.

API (Kafka Connect 4.x, connect-runtime's ConnectorsResource / ConnectorPluginsResource):
GET /connectors/<n>/config, PUT /connectors/<n>/config (201 created, 200 updated),
GET /connectors/<n>/status, POST /connectors/<n>/restart?includeTasks=&onlyFailed=,
DELETE /connectors/<n>, GET /connectors/<n>/topics, PUT /connector-plugins/<class>/config/validate.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from hudi_cdc.errors import ConfigError, EnvironmentProblem, ExitCode, HudiCdcError, SourceError
from hudi_cdc.http import error_body, one_line, retrying_session, short_reason
from hudi_cdc.http import redact as _redact

RETRY_STATUS = frozenset({409, 502, 503, 504})
# A worker answers 409 while its group rebalances, which follows every connector created, deleted or
# restarted; on a loaded machine a rebalance outlasted 4 attempts (~3 s). 7 attempts wait ~31 s in all
# (backoff 0, 1, 2, 4, 8, 16 s); a worker that does not answer at all is still reported after 4.
BUSY_RETRIES = 6


class ConnectUnavailable(EnvironmentProblem):
    """The worker could not be reached, or stayed busy, after the retries."""


class ConnectRequestError(HudiCdcError):
    """The worker answered a request with an error status (not a config it refused)."""

    exit_code = ExitCode.ENVIRONMENT

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class ConnectorFailed(SourceError):
    """A connector or one of its tasks is FAILED (exit 11: the capture side of the pipeline)."""


def session(retries: int, backoff: float, base=None, busy_retries: int | None = None):
    """A requests.Session whose adapters retry connection errors and a busy worker's statuses
    (PUT config / DELETE / restart repeat safely)."""
    return retrying_session(retries, backoff, RETRY_STATUS, base, status_retries=busy_retries)


def _message(resp) -> str:
    """The worker's error message (its JSON ``message``), else the body's first line."""
    _, msg = error_body(resp, limit=300)
    return msg or (resp.text or "").strip()[:300]


@dataclass
class TaskState:
    id: int
    state: str
    worker_id: str = ""
    trace: str = ""


@dataclass
class ConnectorStatus:
    name: str
    state: str  # RUNNING | PAUSED | STOPPED | FAILED | UNASSIGNED | RESTARTING | NOT DEPLOYED
    worker_id: str = ""
    trace: str = ""
    type: str = ""
    tasks: list[TaskState] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.state == "FAILED" or any(t.state == "FAILED" for t in self.tasks)

    @property
    def running(self) -> bool:
        return self.state == "RUNNING" and bool(self.tasks) and all(t.state == "RUNNING" for t in self.tasks)

    def failure(self) -> str:
        """One line: what failed and the first line of its trace (plus its root cause when the trace
        has one), '' when nothing failed."""
        where, trace = "", ""
        if self.state == "FAILED":
            where, trace = f"connector {self.name} FAILED on {self.worker_id}", self.trace
        else:
            for t in self.tasks:
                if t.state == "FAILED":
                    where, trace = f"connector {self.name} task {t.id} FAILED on {t.worker_id}", t.trace
                    break
        if not where:
            return ""
        return f"{where}: {trace_line(trace)}"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "state": self.state, "worker_id": self.worker_id, "type": self.type,
                "trace": self.trace.splitlines()[0] if self.trace else "",
                "tasks": [{"id": t.id, "state": t.state, "worker_id": t.worker_id,
                           "trace": t.trace.splitlines()[0] if t.trace else ""} for t in self.tasks]}


def trace_line(trace: str) -> str:
    """A Java stack trace's first line, and its last 'Caused by:' line when there is one."""
    lines = [line.strip() for line in (trace or "").splitlines() if line.strip()]
    if not lines:
        return "(no trace)"
    first = lines[0][:300]
    causes = [line for line in lines if line.startswith("Caused by:")]
    if causes and causes[-1][len("Caused by:"):].strip() not in first:
        return f"{first} | {causes[-1][:300]}"
    return first


@dataclass(frozen=True)
class ValidationError:
    key: str
    message: str


class ConnectClient:
    """``ConnectClient("http://127.0.0.1:8083")``: one worker (any worker of a distributed cluster)."""

    def __init__(self, url: str, *, retries: int = 3, backoff: float = 0.5, timeout: float = 90.0,
                 session_=None, busy_retries: int = BUSY_RETRIES) -> None:
        if not re.match(r"^https?://", url or ""):
            raise ConfigError(f"Kafka Connect URL {url!r} must start with http:// or https://")
        self.url = url.rstrip("/")
        self.retries = max(0, retries)
        self.backoff = backoff
        self.timeout = timeout  # validation connects to the database: it may take a while
        self.busy_retries = max(0, busy_retries)
        self.session = session(self.retries, backoff, session_, self.busy_retries)
        self.session.headers.update({"Accept": "application/json"})

    @classmethod
    def from_pipeline(cls, pipeline, url: str | None = None, **kwargs) -> ConnectClient:
        connect = pipeline.source.connect
        url = url or (connect.url if connect else None)
        if not url:
            raise ConfigError(f"source.connect.url: not set ({pipeline.source_file}); set it to a Kafka "
                              "Connect worker's REST URL (e.g. http://127.0.0.1:8083) or give --connect-url")
        return cls(url, **kwargs)

    # ---- connectors
    def config(self, name: str) -> dict[str, str] | None:
        """The connector's config as the worker stores it (None when it is not deployed)."""
        return self._call("GET", f"/connectors/{_q(name)}/config", f"read {name}'s config", missing_ok=True)

    def put_config(self, name: str, config: Mapping[str, Any]) -> bool:
        """Create or update; True when the connector was created."""
        resp = self._call("PUT", f"/connectors/{_q(name)}/config", f"deploy {name}",
                          payload={k: str(v) for k, v in config.items()}, want_response=True)
        return resp.status_code == 201

    def status(self, name: str) -> ConnectorStatus:
        body = self._call("GET", f"/connectors/{_q(name)}/status", f"read {name}'s status", missing_ok=True)
        if body is None:
            return ConnectorStatus(name, "NOT DEPLOYED")
        c = body.get("connector") or {}
        tasks = [TaskState(int(t.get("id", 0)), str(t.get("state", "")), str(t.get("worker_id", "")),
                           str(t.get("trace", "") or "")) for t in body.get("tasks") or []]
        return ConnectorStatus(name=str(body.get("name", name)), state=str(c.get("state", "")),
                               worker_id=str(c.get("worker_id", "")), trace=str(c.get("trace", "") or ""),
                               type=str(body.get("type", "")), tasks=sorted(tasks, key=lambda t: t.id))

    def restart(self, name: str, include_tasks: bool = True, only_failed: bool = False) -> str:
        """'restarted' (or the state Connect reports, e.g. RESTARTING), 'not deployed' when absent."""
        body = self._call("POST", f"/connectors/{_q(name)}/restart", f"restart {name}", missing_ok=True,
                          params={"includeTasks": str(include_tasks).lower(), "onlyFailed": str(only_failed).lower()},
                          want_response=True)
        if body is None:
            return "not deployed"
        if body.status_code == 202:
            try:
                return str(body.json().get("connector", {}).get("state") or "restarting")
            except ValueError:
                return "restarting"
        return "restarted"

    def delete(self, name: str) -> bool:
        """True when it existed and was deleted."""
        return self._call("DELETE", f"/connectors/{_q(name)}", f"delete {name}", missing_ok=True,
                          want_response=True) is not None

    def topics(self, name: str) -> list[str]:
        body = self._call("GET", f"/connectors/{_q(name)}/topics", f"read {name}'s topics", missing_ok=True)
        return list((body or {}).get(name, {}).get("topics", []))

    def connectors(self) -> list[str]:
        return list(self._call("GET", "/connectors", "list connectors"))

    def plugins(self) -> list[dict[str, str]]:
        return list(self._call("GET", "/connector-plugins", "list connector plugins"))

    def validate(self, config: Mapping[str, Any], name: str | None = None) -> list[ValidationError]:
        """Every error the connector's plugin (and the worker's own checks) find in config, by key.
        A plugin the worker does not have is one error on connector.class."""
        if name is not None:
            config = {"name": name, **config}
        cls = str(config.get("connector.class", ""))
        if not cls:
            return [ValidationError("connector.class", "missing")]
        short = cls.rsplit(".", 1)[-1]
        try:  # the full class in the path: Connect checks that it ends with connector.class
            body = self._call("PUT", f"/connector-plugins/{_q(cls)}/config/validate", f"validate {short}",
                              payload={k: str(v) for k, v in config.items()})
        except ConnectRequestError as exc:
            if exc.status in (400, 404, 500) and ("find" in str(exc) or "not found" in str(exc).lower()):
                return [ValidationError("connector.class", f"the worker has no plugin {cls}: {exc}")]
            raise
        errors = []
        for item in body.get("configs") or []:
            value = item.get("value") or {}
            for msg in value.get("errors") or []:
                errors.append(ValidationError(str(value.get("name", "?")), one_line(msg)))
        if body.get("error_count") and not errors:
            errors.append(ValidationError("?", f"{body['error_count']} error(s) without a key"))
        return errors

    # ---- the one place HTTP happens
    def _call(self, method: str, path: str, what: str, payload: Any = None,
              params: Mapping[str, str] | None = None, missing_ok: bool = False, want_response: bool = False) -> Any:
        import requests

        url = self.url + path
        for attempt in range(self.busy_retries + 1):
            try:
                resp = self.session.request(
                    method, url, params=params, timeout=self.timeout,
                    data=None if payload is None else json.dumps(payload),
                    headers={"Content-Type": "application/json"} if payload is not None else None)
            except (requests.ConnectionError, requests.Timeout, requests.exceptions.RetryError) as exc:
                reason = short_reason(exc, first_line=True)
                raise ConnectUnavailable(f"Kafka Connect worker at {_redact(self.url)} not reachable after "
                                         f"{self.retries + 1} attempts ({what}): {reason}") from None
            if not _rebalancing(resp) or attempt == self.busy_retries:
                break
            time.sleep(min(self.backoff * 2 ** attempt, 16.0))  # 0.5 .. 16 s: the group settles
        if _rebalancing(resp):
            raise ConnectUnavailable(f"Kafka Connect worker at {_redact(self.url)} still rebalancing after "
                                     f"{self.busy_retries + 1} attempts ({what}): {one_line(_message(resp), 300)}")
        if resp.status_code == 404 and missing_ok:
            return None
        if resp.status_code in RETRY_STATUS:
            raise ConnectUnavailable(f"Kafka Connect worker at {_redact(self.url)} still busy after "
                                     f"{self.busy_retries + 1} attempts ({what}): HTTP {resp.status_code} "
                                     f"{one_line(_message(resp), 300)}")
        if resp.status_code >= 400:
            msg = one_line(_message(resp))
            if resp.status_code == 400 and method == "PUT" and "/config" in path and "invalid" in msg:
                raise ConfigError(f"Kafka Connect at {_redact(self.url)} refused {what}: {msg}")
            raise ConnectRequestError(f"Kafka Connect at {_redact(self.url)}: {what}: HTTP {resp.status_code} "
                                      f"{msg}", resp.status_code)
        if want_response:
            return resp
        if not resp.content:
            return {}
        try:
            return resp.json()
        except ValueError:
            return {}

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> ConnectClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _rebalancing(resp) -> bool:
    """A worker whose group is about to rebalance answers 500 "Request cannot be completed because a
    rebalance is expected" (connect-runtime's RebalanceNeededException): retried like a 409."""
    return resp.status_code == 500 and "rebalance" in _message(resp).lower()


def _q(part: str) -> str:
    return quote(str(part), safe="")
