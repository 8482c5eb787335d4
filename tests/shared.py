"""What tests share: where the project's shared material lives (fixture tables, seed texts:
$HUDI_CDC_SHARED, else `shared/` beside the checkout), the one way a test says a component it
needs is missing, and `connectors render` run in-process on a pipeline text.

``missing(reason)`` skips on a developer's machine, but FAILS when the ``CI`` environment variable is
true (as `.ci/run` gets it): a CI run on a machine without PostgreSQL, Kafka Connect, the 0.14.0 runtime,
the fixture tables or the seed texts must not turn green by skipping what it could not run.
"""

from __future__ import annotations

import json
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


def seed_text(number: str) -> str:
    """The text of seed NUMBER (e.g. "001") in $HUDI_CDC_SHARED/seeds; ``missing`` when it is not there."""
    files = sorted((SHARED / "seeds").glob(f"{number}_*.txt"))
    if not files:
        missing(f"seed {number} not in {SHARED / 'seeds'}")
    return files[0].read_text(encoding="utf-8")


def render_connectors_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          pipeline_text: str) -> tuple[list[dict], str, list[str]]:
    """`connectors render` (in-process, exit 0 asserted) on ``pipeline_text`` written to tmp_path/hudi-cdc.yaml:
    its printed JSON, its stderr, and the file names `connectors render --seed --out tmp_path/c` printed."""
    from hudi_cdc.cli import main

    cfg = tmp_path / "hudi-cdc.yaml"
    cfg.write_text(pipeline_text)
    assert main(["-c", str(cfg), "connectors", "render"]) == 0
    out, err = capsys.readouterr()
    assert main(["-c", str(cfg), "connectors", "render", "--seed", "--out", str(tmp_path / "c")]) == 0
    names = [Path(p).name for p in capsys.readouterr().out.split()]
    return json.loads(out), err, names


def timeline_files(base: str | os.PathLike) -> list[str]:
    """The instant files of a table's timeline, sorted, whatever its layout: `.hoodie/timeline/` (table
    version 8+) or `.hoodie/` itself (version 6, the default: hudi.table_version)."""
    from hudi_cdc.common.instants import local_timeline_names, parse_instant_file

    path = str(base)[len("file://"):] if str(base).startswith("file://") else str(base)
    return sorted(n for n in local_timeline_names(path) if parse_instant_file(n) is not None)
