"""Upload the rendered files (properties, and schemas when the renderer emits them), and for
hudi.engine hudi-cdc the job file and the job zip next to them (hudi_cdc/job_package.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hudi_cdc.config import Pipeline
from hudi_cdc.core import render as rnd
from hudi_cdc.job_package import JOB_ZIP_NAME, job_files
from hudi_cdc.runners.aws.checks import check_no_secrets
from hudi_cdc.runners.aws.client import call
from hudi_cdc.runners.aws.layout import properties_root, split_s3


def upload_rendered(pipeline: Pipeline, s3: Any, echo: Callable[[str], None], dry_run: bool,
                    with_job: bool = False, rendered: dict[str, str] | None = None) -> dict[str, str]:
    """Upload every rendered file (``rendered``, else the properties files) to the pipeline's properties
    root, secrets checked first (and, with ``with_job``, hudi-cdc's job file and zip); returns name -> s3 URI."""
    texts = rendered if rendered is not None else rnd.render_properties(pipeline)
    files = {n: t.encode("utf-8") for n, t in texts.items()}
    check_no_secrets(pipeline, [(f"properties file {n}", t.decode("utf-8")) for n, t in files.items()])
    if with_job:
        files.update(job_files())
    root = properties_root(pipeline)
    out: dict[str, str] = {}
    for name in sorted(files):
        uri = f"{root}/{name}"
        bucket, key = split_s3(uri)
        kind = "application/zip" if name == JOB_ZIP_NAME else "text/plain"
        call(s3, "put_object", Bucket=bucket, Key=key, Body=files[name], ContentType=kind)
        out[name] = uri
    if not dry_run:
        echo(f"uploaded {len(out)} file(s) to {root}/")
    return out
