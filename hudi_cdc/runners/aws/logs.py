"""The tail of a log object on S3 (gzip or plain), as EMR and EMR Serverless write them."""

from __future__ import annotations

import gzip
from typing import Any

from hudi_cdc.errors import AwsError
from hudi_cdc.runners.aws.layout import split_s3


def read_log_tail(s3: Any, uri: str, lines: int) -> str | None:
    """Last ``lines`` lines of ``uri`` (gzip or plain); None when the object does not exist (yet)."""
    bucket, key = split_s3(uri)
    candidates = [key] if key.endswith(".gz") else [key + ".gz", key]
    for k in candidates:
        try:
            body = s3.get_object(Bucket=bucket, Key=k)["Body"].read()
        except Exception as exc:  # noqa: BLE001 - NoSuchKey / 404 / AccessDenied all mean "not here"
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", "")
            if code in ("NoSuchKey", "404", "NotFound"):
                continue
            raise AwsError(f"s3.get_object s3://{bucket}/{k} failed: {code or exc}") from exc
        if body[:2] == b"\x1f\x8b":
            body = gzip.decompress(body)
        text = body.decode("utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])
    return None
