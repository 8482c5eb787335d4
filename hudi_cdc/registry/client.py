"""Client for the Confluent-compatible schema registry API (Apicurio 3.x: ``/apis/ccompat/v7``).

One ``requests.Session`` per client (hudi_cdc/http.py's ``retrying_session``): connection
errors, read errors and 5xx are retried a bounded number of times with exponential backoff (none
before the first retry, then ``backoff * 2**(n-1)`` seconds), then reported in one line naming the
URL. Every call maps the statuses the API documents to its own error (see errors.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from hudi_cdc.errors import ConfigError, RegistryError
from hudi_cdc.http import redact, short_reason
from hudi_cdc.http import retrying_session as _retrying_session
from hudi_cdc.registry.credentials import credentials
from hudi_cdc.registry.errors import (
    ErrorMap,
    IncompatibleSchema,
    InvalidSchema,
    RegistryUnavailable,
    SubjectNotFound,
    detail,
    http_error,
)
from hudi_cdc.registry.urls import quote_part as _q

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
COMPATIBILITY_LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
                        "FULL", "FULL_TRANSITIVE", "NONE")


@dataclass(frozen=True)
class SchemaVersion:
    subject: str
    version: int
    id: int
    schema: str

    @property
    def parsed(self) -> Any:
        return json.loads(self.schema)


@dataclass(frozen=True)
class Compatibility:
    subject: str
    version: str
    is_compatible: bool
    messages: list[str] = field(default_factory=list)


def retrying_session(retries: int, backoff: float, session=None):
    """A requests.Session whose adapters retry transient failures (5xx; register is idempotent)."""
    return _retrying_session(retries, backoff, TRANSIENT_STATUS, session)


class RegistryClient:
    """``RegistryClient("http://127.0.0.1:8080/apis/ccompat/v7", auth=("user", "pw"))``."""

    def __init__(self, url: str, auth: tuple[str, str] | None = None, *, retries: int = 3,
                 backoff: float = 0.5, timeout: float = 10.0, session=None) -> None:
        if not re.match(r"^https?://", url or ""):
            raise ConfigError(f"schema registry URL {url!r} must start with http:// or https://")
        m = re.match(r"^(https?://)([^/@]*)@(.*)$", url)
        if m and auth is None:  # user-info in the URL, the way HoodieStreamer's provider takes it
            user, _, pw = m.group(2).partition(":")
            auth = (unquote(user), unquote(pw))
        self.url = redact(url).rstrip("/")
        self.retries = max(0, retries)
        self.timeout = timeout
        self.session = retrying_session(self.retries, backoff, session)
        self.session.headers.update({"Accept": ACCEPT})
        if auth:
            self.session.auth = auth

    @classmethod
    def from_pipeline(cls, pipeline, **kwargs) -> RegistryClient:
        url = pipeline.source.schema_registry
        if not url:
            raise ConfigError(f"source.schema_registry: not set ({pipeline.source_file}); "
                              "e.g. http://127.0.0.1:8080/apis/ccompat/v7 (hudi-cdc local up)")
        return cls(url, auth=credentials(pipeline), **kwargs)

    # ---- URLs -------------------------------------------------------------------
    def subject_url(self, subject: str, version: int | str = "latest") -> str:
        """What HoodieStreamer's SchemaRegistryProvider reads (registry.url)."""
        return f"{self.url}/subjects/{_q(subject)}/versions/{version}"

    # ---- calls ------------------------------------------------------------------
    def subjects(self) -> list[str]:
        return list(self._call("GET", "/subjects", "list subjects"))

    def versions(self, subject: str) -> list[int]:
        return list(self._call("GET", f"/subjects/{_q(subject)}/versions", f"list versions of {subject!r}",
                               {404: SubjectNotFound}))

    def get(self, subject: str, version: int | str = "latest") -> SchemaVersion:
        body = self._call("GET", f"/subjects/{_q(subject)}/versions/{version}",
                          f"get {subject!r} version {version}", {404: SubjectNotFound, 422: InvalidSchema})
        return SchemaVersion(subject=body.get("subject", subject), version=int(body["version"]),
                             id=int(body["id"]), schema=body["schema"])

    def exists(self, subject: str) -> bool:
        try:
            self.versions(subject)
            return True
        except SubjectNotFound:
            return False

    def register(self, subject: str, schema: str | Mapping, compatibility: str | None = "BACKWARD") -> int:
        """Register schema under subject (a no-op returning the same id when it is already there).

        A new subject gets ``compatibility`` as its rule (Confluent's default is BACKWARD; Apicurio
        has no rule unless one is set, so without this every change would be accepted)."""
        new = compatibility is not None and not self.exists(subject)
        body = self._call("POST", f"/subjects/{_q(subject)}/versions", f"register a schema under {subject!r}",
                          {409: IncompatibleSchema, 422: InvalidSchema}, payload={"schema": _text(schema)})
        if new and compatibility is not None:
            self.set_compatibility(subject, compatibility)
        return int(body["id"])

    def check(self, subject: str, schema: str | Mapping, version: int | str = "latest") -> Compatibility:
        """Ask whether schema is compatible with subject's version under the subject's rule."""
        body = self._call("POST", f"/compatibility/subjects/{_q(subject)}/versions/{version}",
                          f"check {subject!r} compatibility", {404: SubjectNotFound, 422: InvalidSchema},
                          payload={"schema": _text(schema)}, params={"verbose": "true"})
        msgs = body.get("messages") or []
        return Compatibility(subject, str(version), bool(body.get("is_compatible")),
                             [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])])

    def compatibility(self, subject: str | None = None) -> str:
        path = f"/config/{_q(subject)}" if subject else "/config"
        body = self._call("GET", path, "read compatibility", {404: SubjectNotFound})
        return str(body.get("compatibilityLevel") or body.get("compatibility") or "")

    def set_compatibility(self, subject: str, level: str) -> str:
        level = level.upper()
        if level not in COMPATIBILITY_LEVELS:
            raise ConfigError(f"compatibility {level!r}: one of {', '.join(COMPATIBILITY_LEVELS)}")
        body = self._call("PUT", f"/config/{_q(subject)}", f"set compatibility of {subject!r}",
                          {404: SubjectNotFound, 422: InvalidSchema}, payload={"compatibility": level})
        return str(body.get("compatibility") or level)

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        out = self._call("DELETE", f"/subjects/{_q(subject)}", f"delete {subject!r}", {404: SubjectNotFound})
        if permanent:
            out = self._call("DELETE", f"/subjects/{_q(subject)}", f"delete {subject!r}",
                             {404: SubjectNotFound}, params={"permanent": "true"})
        return list(out or [])

    # ---- the one place HTTP happens -------------------------------------------------
    def _call(self, method: str, path: str, what: str, errors: ErrorMap | None = None,
              payload: Any = None, params: Mapping[str, str] | None = None) -> Any:
        import requests

        url = self.url + path
        try:
            resp = self.session.request(
                method, url, params=params, timeout=self.timeout,
                data=None if payload is None else json.dumps(payload),
                headers={"Content-Type": CONTENT_TYPE} if payload is not None else None)
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.RetryError) as exc:
            self._unavailable(url, what, short_reason(exc))
        if resp.status_code in TRANSIENT_STATUS:
            self._unavailable(url, what, f"HTTP {resp.status_code}{detail(resp)}")
        if resp.status_code >= 400:
            raise http_error(resp, url, what, errors or {})
        return _json_or_empty(resp)

    def _unavailable(self, url: str, what: str, reason: str) -> None:
        raise RegistryUnavailable(f"schema registry at {url} unavailable after {self.retries + 1} attempts "
                                  f"({what}): {reason}")

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> RegistryClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _text(schema: str | Mapping) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))


def _json_or_empty(resp) -> Any:
    if not resp.content:
        return {}
    try:
        return resp.json()
    except ValueError:
        raise RegistryError(f"schema registry at {redact(resp.url)} answered HTTP {resp.status_code} with a "
                            f"body that is not JSON: {resp.text[:200]!r}") from None
