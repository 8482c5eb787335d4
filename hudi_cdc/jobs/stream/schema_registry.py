"""The reader schema from a Confluent-compatible registry subject URL, and the check that the
landed files carry no field it lacks. Credentials come from the job's environment only."""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request

from hudi_cdc.common.causes import first_line
from hudi_cdc.jobs.stream.errors import JobInputError, RegistryDown, RegistryReadError

# the variables the local runner puts the registry credentials in (never argv or files)
USERNAME_ENV = "HUDI_CDC_REGISTRY_USERNAME"
PASSWORD_ENV = "HUDI_CDC_REGISTRY_PASSWORD"
_ACCEPT = "application/vnd.schemaregistry.v1+json, application/json"


def registry_schema(url: str) -> str:
    """The Avro schema text of a subject version (…/subjects/<topic>-value/versions/latest)."""
    req = urllib.request.Request(url, headers={"Accept": _ACCEPT})
    user, pw = os.environ.get(USERNAME_ENV), os.environ.get(PASSWORD_ENV)
    if user and pw:
        req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode())
    where = url.split("?")[0]
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read().decode() or "{}")
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            raise RegistryReadError(
                f"schema registry {where} refused the request (HTTP {exc.code} {exc.reason}): check the "
                "credentials named by source.registry_username_env / registry_password_env and their rights"
            ) from None
        cls = RegistryDown if exc.code >= 500 else RegistryReadError
        raise cls(f"schema registry {where} answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:  # refused, reset, timed out, name not found
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise RegistryDown(f"schema registry {where} could not be reached: {first_line(str(reason))}") from None
    except ValueError as exc:
        raise RegistryReadError(f"schema registry {where} answered no JSON: {first_line(exc)}") from None
    schema = body.get("schema")
    if not schema:
        raise RegistryReadError(f"schema registry {where} returned no schema")
    return schema


def check_registry_compat(registry_schema_text: str, file_schemas: list[tuple[str, dict]]) -> None:
    """Every field a landed file carries must exist in the registry schema; otherwise the
    registry was not updated for a source change and reading would silently drop a column.
    (Fields of a different type are found when the files are read with the registry schema as the
    reader schema: files.validate_avro_files.) `file_schemas`: (a file, its writer schema)."""
    reg = json.loads(registry_schema_text)
    reg_fields = {f["name"] for f in reg.get("fields", [])}
    for path, s in file_schemas:
        missing = [f["name"] for f in s.get("fields", []) if f["name"] not in reg_fields]
        if missing:
            raise JobInputError(
                f"landed file {path} carries field(s) {', '.join(missing)} that the registry schema lacks; "
                "register the new schema version first (hudi-cdc schemas register)")
