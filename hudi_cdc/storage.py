"""The few file operations hudi-cdc makes itself, on local paths / file:// URIs and on s3:// (boto3).

Spark and Hudi reach S3 through s3a (hudi_cdc/s3.py's hadoop_conf), hudi-rs through its storage
options; this module is for the rest: landing-file listings with modification times (the streamer's
checkpoint), the timeline's file names, small side files (tombstones), and checks before a run.

Standard library only at import: the local streamer job imports it in the Spark driver.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from . import s3

IGNORED_PREFIXES = (".", "_")
SourceFile = tuple[str, int, int]  # (path or URI, modification time in ms, size)


def local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def join(base: str, *parts: str) -> str:
    if s3.is_s3(base):
        return "/".join([base.rstrip("/"), *[p.strip("/") for p in parts if p]])
    return os.path.join(base, *parts)


def is_dir(uri: str) -> bool:
    """A local directory, or an S3 prefix with at least one object under it."""
    if s3.is_s3(uri):
        return s3.exists(uri.rstrip("/") + "/")
    return os.path.isdir(local(uri))


def exists(uri: str) -> bool:
    if s3.is_s3(uri):
        return s3.exists(uri)
    return os.path.exists(local(uri))


def listdir(uri: str) -> list[str]:
    """Names of the files directly in a folder; [] when it does not exist."""
    if s3.is_s3(uri):
        prefix = s3.split(uri)[1].rstrip("/") + "/"
        return [o["Key"][len(prefix):] for o in s3.list_objects(uri, delimiter="/")]
    d = local(uri)
    return os.listdir(d) if os.path.isdir(d) else []


def _ignored(rel_parts: Iterable[str]) -> bool:
    return any(p.startswith(IGNORED_PREFIXES) for p in rel_parts)


def walk_files(uri: str) -> list[SourceFile]:
    """Every file under a folder (names and folders starting with . or _ skipped), oldest first."""
    files: list[SourceFile] = []
    if s3.is_s3(uri):
        bucket, prefix = s3.split(uri)
        prefix = prefix.rstrip("/") + "/"
        for o in s3.list_objects(uri):
            rel = o["Key"][len(prefix):]
            if not rel or rel.endswith("/") or _ignored(rel.split("/")):
                continue
            mtime_ms = int(o["LastModified"].timestamp() * 1000)
            files.append((f"{uri.split('://', 1)[0]}://{bucket}/{o['Key']}", mtime_ms, int(o["Size"])))
    else:
        for dirpath, dirnames, filenames in os.walk(local(uri)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(IGNORED_PREFIXES))
            for name in filenames:
                if name.startswith(IGNORED_PREFIXES):
                    continue
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                files.append((full, st.st_mtime_ns // 1_000_000, st.st_size))
    files.sort(key=lambda f: (f[1], f[0]))
    return files


def read_bytes(uri: str) -> bytes | None:
    """The file's bytes, None when it does not exist."""
    if s3.is_s3(uri):
        return s3.read_bytes(uri)
    try:
        with open(local(uri), "rb") as fh:
            return fh.read()
    except (FileNotFoundError, NotADirectoryError):
        return None


def write_bytes(uri: str, data: bytes) -> None:
    """Write a whole file at once (a local file appears complete or not at all; an S3 PUT is atomic)."""
    if s3.is_s3(uri):
        s3.write_bytes(uri, data)
        return
    path = local(uri)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def check_roots(pipeline) -> None:
    """Before a run touches anything: every s3:// root's bucket exists and its endpoint answers
    (one line naming the endpoint and the bucket otherwise)."""
    ep = pipeline.s3_endpoint()
    seen = set()
    for root in (pipeline.source_root, pipeline.lake_root):
        if s3.is_s3(root) and s3.split(root)[0] not in seen:
            seen.add(s3.split(root)[0])
            s3.check_bucket(root, ep)
