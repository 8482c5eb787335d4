"""`hudi-cdc local up|down|status` as library calls: the saved stack config with the caller's
changes, registry users named by environment variables, timed start."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from hudi_cdc.errors import ConfigError


def registry_users(user_env: str | None, password_env: str | None) -> dict[str, tuple[str, str]]:
    """{user: (password, "sr-admin")} read from the two environment variables named; {} for neither."""
    if not user_env and not password_env:
        return {}
    if not (user_env and password_env):
        raise ConfigError("--registry-username-env and --registry-password-env go together")
    missing = [v for v in (user_env, password_env) if not os.environ.get(v)]
    if missing:
        raise ConfigError(f"environment variable(s) {', '.join(missing)} not set")
    return {os.environ[user_env]: (os.environ[password_env], "sr-admin")}


def with_optional(only: Sequence[str], s3: bool = False, trino: bool = False) -> tuple[str, ...]:
    """The services `up` acts on: ONLY (empty: the default three) plus the optional ones asked for."""
    from hudi_cdc.stack import SERVICES

    extra = [name for name, wanted in (("s3", s3), ("trino", trino)) if wanted]
    if not extra:
        return tuple(only)
    base = list(only) if only else list(SERVICES)
    return tuple(base + [n for n in extra if n not in base])


def up(data_dir: Path | None, changes: dict[str, object], users: dict[str, tuple[str, str]],
       only: Sequence[str], progress: Callable[[str], None]) -> list[dict]:
    """Start (what is not running of) the stack saved in DATA_DIR, with CHANGES (None: keep)."""
    from hudi_cdc.stack import Stack, StackConfig

    base = StackConfig.saved(data_dir)
    kwargs: dict[str, Any] = {**base.to_state(), **{k: v for k, v in changes.items() if v is not None}}
    cfg = StackConfig(**{**kwargs, "data_dir": base.data_dir, "registry_users": users})
    t0 = time.monotonic()
    rows = Stack(cfg, progress).up(list(only) or None)
    progress(f"stack up in {time.monotonic() - t0:.1f}s")
    return rows


def down(data_dir: Path | None, only: Sequence[str], progress: Callable[[str], None]) -> list[dict]:
    from hudi_cdc.stack import Stack, StackConfig

    return Stack(StackConfig.saved(data_dir), progress).down(list(only) or None)


def status(data_dir: Path | None, only: Sequence[str]) -> list[dict]:
    from hudi_cdc.stack import Stack, StackConfig

    return Stack(StackConfig.saved(data_dir)).status(list(only) or None)
