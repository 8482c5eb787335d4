#!/usr/bin/env python3
"""Regenerate properties/ (the rendered MoMA example) from hudi-cdc.yaml.

Paths are rendered as if this checkout lived at /opt/hudi-cdc, so the files do not depend on
where the repository was cloned; tests/core/test_render.py keeps them current."""

import sys
from pathlib import Path

from hudi_cdc.config import load_pipeline
from hudi_cdc.core import render

ROOT = Path(__file__).resolve().parent.parent
AS_IF = "/opt/hudi-cdc"


def example():
    p = load_pipeline(ROOT / "hudi-cdc.yaml")
    return p.model_copy(update={"base_dir": AS_IF})


def main() -> int:
    out = ROOT / "properties"
    for path in render.write_properties(example(), out):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
