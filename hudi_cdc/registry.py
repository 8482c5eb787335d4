"""Client for the Confluent-compatible schema registry API (Apicurio 3.x: ``/apis/ccompat/v7``).

One ``requests.Session`` per client. Every call maps the statuses the API documents to its own
error (``{404: ..., 409: ..., 422: ...}``); the JSON error body (``{"error_code", "message"}``) is
parsed and an empty or non-JSON body survives; connection failures and 5xx are retried a bounded
number of times with exponential backoff, then reported in one line naming the URL.

Credentials are held by reference: the pipeline names two environment variables
(``source.registry_username_env`` / ``registry_password_env``); their values are read when a
client is built and are never put in a message, a rendered file or a log line.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type, Union

from .errors import ConfigError, DataError, RegistryError

log = logging.getLogger(__name__)

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"
TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
COMPATIBILITY_LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
                        "FULL", "FULL_TRANSITIVE", "NONE")
# the variables the local streamer job reads (hudi_cdc/jobs/streamer.py)
JOB_USERNAME_ENV = "HUDI_CDC_REGISTRY_USERNAME"
JOB_PASSWORD_ENV = "HUDI_CDC_REGISTRY_PASSWORD"


# ---- errors: one per documented status ------------------------------------------
class RegistryHTTPError(RegistryError):
    """The registry answered with an error status."""

    def __init__(self, message: str, status: Optional[int] = None, error_code: Optional[int] = None,
                 url: str = "") -> None:
        super().__init__(message)
        self.status, self.error_code, self.url = status, error_code, url


class SubjectNotFound(RegistryHTTPError):
    """404 / 40401."""


class VersionNotFound(RegistryHTTPError):
    """404 / 40402."""


class SchemaNotFound(RegistryHTTPError):
    """404 / 40403."""


class IncompatibleSchema(RegistryHTTPError):
    """409: the schema breaks the subject's compatibility rule."""


class InvalidSchema(RegistryHTTPError):
    """422 / 42201 (invalid schema), 42202 (invalid version)."""


class Unauthorized(RegistryHTTPError):
    """401: no or wrong credentials."""


class Forbidden(RegistryHTTPError):
    """403: authenticated but not allowed."""


class RegistryUnavailable(RegistryError):
    """Connection refused, timeout or 5xx, after the retries."""


_BY_CODE: Dict[int, Type[RegistryHTTPError]] = {40401: SubjectNotFound, 40402: VersionNotFound,
                                                 40403: SchemaNotFound, 42201: InvalidSchema,
                                                 42202: InvalidSchema}
_ALWAYS: Dict[int, Type[RegistryHTTPError]] = {401: Unauthorized, 403: Forbidden}


def redact(url: str) -> str:
    """A URL fit for messages: user-info removed."""
    return re.sub(r"://[^/@]*@", "://", url)


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
    messages: List[str] = field(default_factory=list)


class RegistryClient:
    """``RegistryClient("http://127.0.0.1:8080/apis/ccompat/v7", auth=("user", "pw"))``."""

    def __init__(self, url: str, auth: Optional[Tuple[str, str]] = None, *, retries: int = 3,
                 backoff: float = 0.5, timeout: float = 10.0, session=None) -> None:
        import requests  # lazy: the CLI's --help must not pay for it

        if not re.match(r"^https?://", url or ""):
            raise ConfigError(f"schema registry URL {url!r} must start with http:// or https://")
        m = re.match(r"^(https?://)([^/@]*)@(.*)$", url)
        if m and auth is None:  # user-info in the URL, the way HoodieStreamer's provider takes it
            user, _, pw = m.group(2).partition(":")
            from urllib.parse import unquote

            auth = (unquote(user), unquote(pw))
        self.url = redact(url).rstrip("/")
        self.retries = max(0, retries)
        self.backoff = backoff
        self.timeout = timeout
        self._requests = requests
        self.session = session or requests.Session()
        self.session.headers.update({"Accept": ACCEPT})
        if auth:
            self.session.auth = auth

    @classmethod
    def from_pipeline(cls, pipeline, **kwargs) -> "RegistryClient":
        url = pipeline.source.schema_registry
        if not url:
            raise ConfigError(f"source.schema_registry: not set ({pipeline.source_file}); "
                              "e.g. http://127.0.0.1:8080/apis/ccompat/v7 (hudi-cdc local up)")
        return cls(url, auth=credentials(pipeline), **kwargs)

    # ---- URLs -------------------------------------------------------------------
    def subject_url(self, subject: str, version: Union[int, str] = "latest") -> str:
        """What HoodieStreamer's SchemaRegistryProvider reads (registry.url)."""
        return f"{self.url}/subjects/{_q(subject)}/versions/{version}"

    # ---- calls ------------------------------------------------------------------
    def subjects(self) -> List[str]:
        return list(self._call("GET", "/subjects", "list subjects"))

    def versions(self, subject: str) -> List[int]:
        return list(self._call("GET", f"/subjects/{_q(subject)}/versions", f"list versions of {subject!r}",
                               {404: SubjectNotFound}))

    def get(self, subject: str, version: Union[int, str] = "latest") -> SchemaVersion:
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

    def register(self, subject: str, schema: Union[str, Mapping], compatibility: Optional[str] = "BACKWARD") -> int:
        """Register schema under subject (a no-op returning the same id when it is already there).

        A new subject gets ``compatibility`` as its rule (Confluent's default is BACKWARD; Apicurio
        has no rule unless one is set, so without this every change would be accepted)."""
        new = compatibility is not None and not self.exists(subject)
        body = self._call("POST", f"/subjects/{_q(subject)}/versions", f"register a schema under {subject!r}",
                          {409: IncompatibleSchema, 422: InvalidSchema}, payload={"schema": _text(schema)})
        if new:
            self.set_compatibility(subject, compatibility)
        return int(body["id"])

    def check(self, subject: str, schema: Union[str, Mapping], version: Union[int, str] = "latest") -> Compatibility:
        """Ask whether schema is compatible with subject's version under the subject's rule."""
        body = self._call("POST", f"/compatibility/subjects/{_q(subject)}/versions/{version}",
                          f"check {subject!r} compatibility", {404: SubjectNotFound, 422: InvalidSchema},
                          payload={"schema": _text(schema)}, params={"verbose": "true"})
        msgs = body.get("messages") or []
        return Compatibility(subject, str(version), bool(body.get("is_compatible")),
                             [str(m) for m in (msgs if isinstance(msgs, list) else [msgs])])

    def compatibility(self, subject: Optional[str] = None) -> str:
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

    def delete_subject(self, subject: str, permanent: bool = False) -> List[int]:
        out = self._call("DELETE", f"/subjects/{_q(subject)}", f"delete {subject!r}", {404: SubjectNotFound})
        if permanent:
            out = self._call("DELETE", f"/subjects/{_q(subject)}", f"delete {subject!r}",
                             {404: SubjectNotFound}, params={"permanent": "true"})
        return list(out or [])

    # ---- the one place HTTP happens -------------------------------------------------
    def _call(self, method: str, path: str, what: str, errors: Optional[Mapping[int, Type[RegistryHTTPError]]] = None,
              payload: Any = None, params: Optional[Mapping[str, str]] = None) -> Any:
        url = self.url + path
        req = self._requests
        attempts = self.retries + 1
        last = ""
        for attempt in range(1, attempts + 1):
            try:
                resp = self.session.request(
                    method, url, params=params, timeout=self.timeout,
                    data=None if payload is None else json.dumps(payload),
                    headers={"Content-Type": CONTENT_TYPE} if payload is not None else None)
            except (req.ConnectionError, req.Timeout) as exc:
                last = _short_reason(exc)
            else:
                if resp.status_code < 400:
                    return _json_or_empty(resp)
                if resp.status_code not in TRANSIENT_STATUS:
                    raise _http_error(resp, url, what, errors or {})
                last = f"HTTP {resp.status_code}{_detail(resp)}"
            if attempt < attempts:
                delay = self.backoff * (2 ** (attempt - 1))
                log.info("schema registry %s %s: %s; retry %d/%d in %.1fs", method, url, last, attempt,
                         self.retries, delay)
                time.sleep(delay)
        raise RegistryUnavailable(f"schema registry at {url} unavailable after {attempts} attempts "
                                  f"({what}): {last}")

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> "RegistryClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---- helpers --------------------------------------------------------------------
def _q(part: str) -> str:
    from urllib.parse import quote

    return quote(str(part), safe="")


def _text(schema: Union[str, Mapping]) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))


def _json_or_empty(resp) -> Any:
    if not resp.content:
        return {}
    try:
        return resp.json()
    except ValueError:
        raise RegistryError(f"schema registry at {redact(resp.url)} answered HTTP {resp.status_code} with a "
                            f"body that is not JSON: {resp.text[:200]!r}") from None


def _error_body(resp) -> Tuple[Optional[int], str]:
    """(error_code, message) from a JSON error body; (None, short text) for anything else."""
    text = (resp.text or "").strip()
    if not text:
        return None, ""
    try:
        body = json.loads(text)
    except ValueError:
        return None, text.splitlines()[0][:200]
    if not isinstance(body, dict):
        return None, text[:200]
    code = body.get("error_code")
    msg = body.get("message") or body.get("detail") or body.get("title") or ""
    try:
        code = int(code) if code is not None else None
    except (TypeError, ValueError):
        code = None
    return code, str(msg)


def _detail(resp) -> str:
    code, msg = _error_body(resp)
    parts = [p for p in (str(code) if code else "", msg) if p]
    return f" ({': '.join(parts)})" if parts else ""


def _http_error(resp, url: str, what: str, errors: Mapping[int, Type[RegistryHTTPError]]) -> RegistryHTTPError:
    status = resp.status_code
    code, msg = _error_body(resp)
    cls = _ALWAYS.get(status) or (_BY_CODE.get(code) if code and code // 100 == status else None) \
        or errors.get(status) or RegistryHTTPError
    detail = f" ({msg})" if msg else ""
    where = redact(url)
    if cls is SubjectNotFound:
        text = f"{what}: subject not found at {where}{detail}; register it first (hudi-cdc schemas register)"
    elif cls is VersionNotFound:
        text = f"{what}: version not found at {where}{detail}"
    elif cls is SchemaNotFound:
        text = f"{what}: schema id not found at {where}{detail}"
    elif cls is IncompatibleSchema:
        text = (f"{what}: the schema is incompatible with the subject's compatibility rule{detail}; "
                "nothing was registered")
    elif cls is InvalidSchema:
        text = f"{what}: the registry rejected the schema as invalid{detail}"
    elif cls is Unauthorized:
        text = (f"{what}: {where} needs valid credentials (HTTP 401{detail}); set the variables named by "
                "source.registry_username_env / registry_password_env")
    elif cls is Forbidden:
        text = f"{what}: the registry user is not allowed to do this (HTTP 403{detail}) at {where}"
    else:
        text = f"{what}: HTTP {status} from {where}{detail or ' (empty body)'}"
    return cls(text, status=status, error_code=code, url=where)


def _short_reason(exc: Exception) -> str:
    s = str(exc)
    for needle in ("Connection refused", "Name or service not known", "timed out", "Connection reset",
                   "Remote end closed connection"):
        if needle in s:
            return needle
    return type(exc).__name__


# ---- credentials by reference ------------------------------------------------------
def credentials(pipeline) -> Optional[Tuple[str, str]]:
    """(user, password) read from the environment variables the pipeline names; None without auth."""
    s = pipeline.source
    if not s.registry_username_env:
        return None
    missing = [v for v in (s.registry_username_env, s.registry_password_env) if not os.environ.get(v)]
    if missing:
        raise ConfigError(f"source.registry_username_env/registry_password_env: environment variable(s) "
                          f"{', '.join(missing)} not set ({pipeline.source_file})")
    return os.environ[s.registry_username_env], os.environ[s.registry_password_env]


def job_env(pipeline) -> Dict[str, str]:
    """Environment for a local job (spark-submit) so it can read the registry: the values travel in
    the child's environment only (HUDI_CDC_REGISTRY_USERNAME / _PASSWORD), never in argv or files."""
    creds = credentials(pipeline)
    return {JOB_USERNAME_ENV: creds[0], JOB_PASSWORD_ENV: creds[1]} if creds else {}


def subject_for(pipeline, table: str) -> str:
    return f"{pipeline.table(table).topic}-value"


# ---- where schemas come from -----------------------------------------------------------
def schema_from_avsc(path: Union[str, Path]) -> Dict[str, Any]:
    p = Path(path)
    try:
        schema = json.loads(p.read_text())
    except OSError as exc:
        raise DataError(f"{p}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise DataError(f"{p}: not JSON ({exc})") from None
    _parse_avro(schema, str(p))
    return schema


def _parse_avro(schema: Any, where: str) -> None:
    import fastavro

    try:
        fastavro.parse_schema(schema)
    except Exception as exc:  # noqa: BLE001 - fastavro raises several types
        raise DataError(f"{where}: not a valid Avro schema ({exc})") from None


def landed_files(pipeline, table: str) -> List[Path]:
    from .config import uri_to_path

    d = uri_to_path(pipeline.topic_dir(table))
    if not d.is_dir():
        raise DataError(f"no landed files for table {table!r}: {d} does not exist (hudi-cdc sample lands the MoMA sample)")
    files = sorted(p for p in d.iterdir() if p.suffix == ".avro" and p.is_file())
    if not files:
        raise DataError(f"no .avro files in {d} for table {table!r}")
    return files


def schema_from_landed(pipeline, table: str) -> Dict[str, Any]:
    """The writer schema of the newest landed Avro file of a table (what the S3 sink wrote with)."""
    import fastavro

    files = landed_files(pipeline, table)
    newest = max(files, key=_offset_key)
    try:
        with open(newest, "rb") as fh:
            r = fastavro.reader(fh)
            raw = r.metadata.get("avro.schema")
            # the schema text exactly as the sink wrote it (writer_schema is fastavro's parsed form,
            # with names folded into full names)
            return json.loads(raw) if raw else r.writer_schema
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{newest}: not a readable Avro container file ({exc})") from None


def _offset_key(p: Path) -> Tuple[int, str]:
    """<topic>+<partition>+<offset>.avro sorts by offset; anything else by name."""
    m = re.search(r"\+(\d+)\.avro$", p.name)
    return (int(m.group(1)) if m else -1, p.name)


def _schemas_to_use(pipeline, tables: Optional[Sequence[str]], avsc: Optional[Union[str, Path]]):
    """(table, subject, schema text) for each table: from the .avsc, or the newest landed file."""
    names = list(tables) if tables else list(pipeline.tables)
    if avsc and len(names) != 1:
        raise ConfigError("--avsc needs exactly one --table")
    for name in names:
        yield name, subject_for(pipeline, name), (schema_from_avsc(avsc) if avsc else schema_from_landed(pipeline, name))


def register_pipeline(client: RegistryClient, pipeline, tables: Optional[Sequence[str]] = None,
                      avsc: Optional[Union[str, Path]] = None, compatibility: Optional[str] = "BACKWARD",
                      check_first: bool = True) -> List[Dict[str, Any]]:
    """Register each table's value schema under <topic>-value; returns one row per subject."""
    rows = []
    for name, subject, schema in _schemas_to_use(pipeline, tables, avsc):
        if check_first and client.exists(subject):
            result = client.check(subject, schema)
            if not result.is_compatible:
                why = f": {'; '.join(result.messages)}" if result.messages else ""
                raise IncompatibleSchema(f"register {subject!r}: the schema is incompatible with the latest "
                                         f"registered version under rule {client.compatibility(subject) or '?'}{why}; "
                                         "nothing was registered", status=409, url=client.subject_url(subject))
        sid = client.register(subject, schema, compatibility)
        latest = client.get(subject)
        rows.append({"table": name, "subject": subject, "id": sid, "version": latest.version,
                     "url": client.subject_url(subject)})
    return rows


def check_pipeline(client: RegistryClient, pipeline, tables: Optional[Sequence[str]] = None,
                   avsc: Optional[Union[str, Path]] = None) -> List[Dict[str, Any]]:
    rows = []
    for name, subject, schema in _schemas_to_use(pipeline, tables, avsc):
        if not client.exists(subject):
            rows.append({"table": name, "subject": subject, "compatible": True,
                         "messages": "not registered yet: the first version will be this schema"})
            continue
        result = client.check(subject, schema)
        rows.append({"table": name, "subject": subject, "compatible": result.is_compatible,
                     "messages": "; ".join(result.messages)})
    return rows
