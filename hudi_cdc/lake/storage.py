"""The few storage calls inspection makes itself (hudi-rs does the rest): read one small file and
list one folder, on a local path, a file:// URI or s3:// (boto3 with the pipeline's or the
environment's endpoint, hudi_cdc/common/s3.py; imported only for S3)."""

from __future__ import annotations

import os
from urllib.parse import urlparse


def normalize(uri: str) -> str:
    """An absolute local path for local tables; s3:// URIs stay as they are (without a trailing /)."""
    if uri.startswith("file://"):
        uri = uri[len("file://"):]
    if "://" in uri:
        return uri.rstrip("/")
    return os.path.abspath(os.path.expanduser(uri))


def join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *[p.strip("/") for p in parts if p]])


def is_s3(uri: str) -> bool:
    return uri.startswith(("s3://", "s3a://"))


def _bucket_key(uri: str) -> tuple[str, str]:
    u = urlparse(uri)
    return u.netloc, u.path.lstrip("/")


def read_bytes(uri: str) -> bytes | None:
    """The file's bytes, or None when it does not exist."""
    if is_s3(uri):
        from hudi_cdc.common import s3

        return s3.read_bytes(uri)
    try:
        with open(uri, "rb") as f:
            return f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def list_files(uri: str) -> list[tuple[str, int]]:
    """(name, size) of the files directly in a folder; [] when the folder does not exist."""
    if is_s3(uri):
        bucket, prefix = _bucket_key(uri)
        prefix = prefix.rstrip("/") + "/"
        from hudi_cdc.common import s3

        return [(o["Key"][len(prefix):], o["Size"])
                for o in s3.list_objects(f"s3://{bucket}/{prefix}", delimiter="/")]
    try:
        with os.scandir(uri) as it:
            return [(e.name, e.stat().st_size) for e in it if e.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []
