"""The registry's errors, one per documented status, and the one-line message for each."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_cdc.errors import RegistryError
from hudi_cdc.http import error_body, redact


class RegistryHTTPError(RegistryError):
    """The registry answered with an error status."""

    def __init__(self, message: str, status: int | None = None, error_code: int | None = None,
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


ErrorMap = Mapping[int, type[RegistryHTTPError]]
_BY_CODE: dict[int, type[RegistryHTTPError]] = {40401: SubjectNotFound, 40402: VersionNotFound,
                                                 40403: SchemaNotFound, 42201: InvalidSchema,
                                                 42202: InvalidSchema}
_ALWAYS: dict[int, type[RegistryHTTPError]] = {401: Unauthorized, 403: Forbidden}


def detail(resp) -> str:
    """' (code: message)' of an error body, '' for an empty one."""
    code, msg = error_body(resp)
    parts = [p for p in (str(code) if code else "", msg) if p]
    return f" ({': '.join(parts)})" if parts else ""


def _text(cls: type[RegistryHTTPError], what: str, where: str, status: int, detail_text: str) -> str:
    if cls is SubjectNotFound:
        return f"{what}: subject not found at {where}{detail_text}; register it first (hudi-cdc schemas register)"
    if cls is VersionNotFound:
        return f"{what}: version not found at {where}{detail_text}"
    if cls is SchemaNotFound:
        return f"{what}: schema id not found at {where}{detail_text}"
    if cls is IncompatibleSchema:
        return (f"{what}: the schema is incompatible with the subject's compatibility rule{detail_text}; "
                "nothing was registered")
    if cls is InvalidSchema:
        return f"{what}: the registry rejected the schema as invalid{detail_text}"
    if cls is Unauthorized:
        return (f"{what}: {where} needs valid credentials (HTTP 401{detail_text}); set the variables named by "
                "source.registry_username_env / registry_password_env")
    if cls is Forbidden:
        return f"{what}: the registry user is not allowed to do this (HTTP 403{detail_text}) at {where}"
    return f"{what}: HTTP {status} from {where}{detail_text or ' (empty body)'}"


def http_error(resp, url: str, what: str, errors: ErrorMap) -> RegistryHTTPError:
    """The error for an error status: 401/403 always, else by the body's error_code, else by status."""
    status = resp.status_code
    code, msg = error_body(resp)
    cls = _ALWAYS.get(status) or (_BY_CODE.get(code) if code and code // 100 == status else None) \
        or errors.get(status) or RegistryHTTPError
    where = redact(url)
    return cls(_text(cls, what, where, status, f" ({msg})" if msg else ""), status=status, error_code=code, url=where)
