"""Java-properties files as Hudi reads them.

Two dialects, both Hudi's own:
  - hoodie.properties (the table config Hudi writes with java.util.Properties.store): the whole
    java.util.Properties grammar (`=`, `:` or whitespace separates, backslash escapes, `\\uXXXX`,
    line continuations, # and ! comments), read by the `javaproperties` package -> parse_properties(text);
  - the streamer's properties (DFSPropertiesConfiguration): key=value split at the first `=`,
    # and ! comments, `include=FILE` relative to the including file -> load_properties(path).

Standard library only at import: the local streamer job (hudi_cdc/jobs/) imports it in the Spark driver
for load_properties; javaproperties is imported only when parse_properties is called (never by the job).
"""

from __future__ import annotations

import os


class PropertiesError(ValueError):
    """A properties file that cannot be read; the message names the file (and line)."""


def parse_properties(text: str) -> dict[str, str]:
    """java.util.Properties text (as Hudi writes hoodie.properties) as a dict; a later key wins."""
    import javaproperties

    return dict(javaproperties.loads(text))


def local_path(uri: str) -> str:
    """A file:// URI (or a plain path) as a local path."""
    return uri[len("file://"):] if uri.startswith("file://") else uri


def _read_text(local: str) -> str | None:
    """The text of a local file or an s3:// object (as EMR steps name them); None when absent."""
    from hudi_cdc.common import storage  # stdlib + boto3 for s3:// only

    data = storage.read_bytes(local)
    return None if data is None else data.decode("utf-8")


def _include(local: str, value: str) -> str:
    """An include's location: absolute (a path or a URI) as given, else next to the including file."""
    if "://" in value or os.path.isabs(local_path(value)):
        return value
    if "://" in local:
        return f"{local.rsplit('/', 1)[0]}/{value}"
    return os.path.join(os.path.dirname(local), value)


def load_properties(path: str, _seen: set[str] | None = None) -> dict[str, str]:
    """A streamer properties file (local path, file:// or s3:// URI) with its includes, the later key
    winning."""
    local = local_path(path)
    seen = _seen if _seen is not None else set()
    if local in seen:
        raise PropertiesError(f"{path}: include cycle")
    seen.add(local)
    text = _read_text(local)
    if text is None:
        raise PropertiesError(f"{path}: properties file not found")
    props: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        if "=" not in line:
            raise PropertiesError(f"{path}:{lineno}: expected key=value")
        key, value = (part.strip() for part in line.split("=", 1))
        if key == "include":
            props.update(load_properties(_include(local, value), seen))
        else:
            props[key] = value
    return props
