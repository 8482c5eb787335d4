"""Registry credentials by reference: the pipeline names two environment variables
(``source.registry_username_env`` / ``registry_password_env``); their values are read when a
client is built and are never put in a message, a rendered file or a log line."""

from __future__ import annotations

import os

from hudi_cdc.errors import ConfigError
from hudi_cdc.jobs.stream.schema_registry import PASSWORD_ENV, USERNAME_ENV


def credentials(pipeline) -> tuple[str, str] | None:
    """(user, password) read from the environment variables the pipeline names; None without auth."""
    s = pipeline.source
    if not s.registry_username_env:
        return None
    missing = [v for v in (s.registry_username_env, s.registry_password_env) if not os.environ.get(v)]
    if missing:
        raise ConfigError(f"source.registry_username_env/registry_password_env: environment variable(s) "
                          f"{', '.join(missing)} not set ({pipeline.source_file})")
    return os.environ[s.registry_username_env], os.environ[s.registry_password_env]


def registry_env(pipeline) -> dict[str, str]:
    """Registry credentials for a local job's environment (never its argv or files): the names the
    streamer job reads (jobs/stream/schema_registry.py)."""
    found = credentials(pipeline)
    return {USERNAME_ENV: found[0], PASSWORD_ENV: found[1]} if found else {}
