"""What tests share: where the project's shared material lives (fixture tables, seed texts:
$HUDI_CDC_SHARED, else `shared/` beside the checkout), and the one way a test says a component it
needs is missing.

``missing(reason)`` skips on a developer's machine, but FAILS when the ``CI`` environment variable is
true (as `.ci/run` gets it): a CI run on a machine without PostgreSQL, Kafka Connect, the 0.14.0 runtime,
the fixture tables or the seed texts must not turn green by skipping what it could not run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

SHARED = Path(os.environ.get("HUDI_CDC_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")


def in_ci() -> bool:
    """True when the ``CI`` environment variable says so (true/1/yes, any case)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(reason: str) -> NoReturn:
    """A component this test needs is not there: skip, or under CI=true fail with the reason."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing component fails instead of skipping)", pytrace=False)
    pytest.skip(reason)


def require(ok: object, reason: str) -> None:
    """``missing(reason)`` unless ``ok``."""
    if not ok:
        missing(reason)
