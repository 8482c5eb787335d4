"""The reader schema from a Confluent-compatible registry subject URL, and the check that the
landed files carry no field it lacks. Credentials come from the job's environment only."""

from __future__ import annotations

import base64
import json
import os
import urllib.request

from hudi_cdc.causes import first_line

from .errors import JobInputError

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
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = json.loads(resp.read().decode() or "{}")
    except Exception as exc:
        raise JobInputError(f"schema registry {url.split('?')[0]} could not be read: {first_line(exc)}") from None
    schema = body.get("schema")
    if not schema:
        raise JobInputError(f"schema registry {url} returned no schema")
    return schema


def check_registry_compat(registry_schema_text: str, file_schemas: list[dict], path_hint: str) -> None:
    """Every field the landed files carry must exist in the registry schema; otherwise the
    registry was not updated for a source change and reading would silently drop a column."""
    reg = json.loads(registry_schema_text)
    reg_fields = {f["name"] for f in reg.get("fields", [])}
    for s in file_schemas:
        missing = [f["name"] for f in s.get("fields", []) if f["name"] not in reg_fields]
        if missing:
            raise JobInputError(
                f"landed files under {path_hint} carry field(s) {', '.join(missing)} that the registry schema lacks; "
                "register the new schema version first (hudi-cdc schemas register)")
