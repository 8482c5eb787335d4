"""The few file operations hudi-cdc makes itself, on local paths / file:// URIs and on s3:// (boto3).

Spark and Hudi reach S3 through s3a (hudi_cdc/common/s3.py's hadoop_conf), hudi-rs through its storage
options; this module is for the rest: landing-file listings with modification times (the streamer's
checkpoint), the timeline's file names, small side files (tombstones), and checks before a run.

Standard library only at import: the local streamer job imports it in the Spark driver.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from hudi_cdc.common import s3

IGNORED_PREFIXES = (".", "_")
SourceFile = tuple[str, int, int]  # (path or URI, modification time in ms, size)


def local(uri: str) -> str:
    return uri[len("file://"):] if uri.startswith("file://") else uri


def normalize(uri: str) -> str:
    """An absolute local path for local tables (~ expanded); s3:// URIs stay as they are (without a
    trailing /)."""
    uri = local(uri)
    if "://" in uri:
        return uri.rstrip("/")
    return os.path.abspath(os.path.expanduser(uri))


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


def list_folders(uri: str) -> list[str]:
    """Names of the folders directly in a folder, sorted; [] when it does not exist."""
    if s3.is_s3(uri):
        return sorted(s3.list_prefixes(uri))
    d = local(uri)
    return sorted(n for n in os.listdir(d) if os.path.isdir(os.path.join(d, n))) if os.path.isdir(d) else []


def list_files(uri: str) -> list[tuple[str, int]]:
    """(name, size) of the files directly in a folder; [] when the folder does not exist."""
    if s3.is_s3(uri):
        bucket, prefix = s3.split(uri)
        prefix = prefix.rstrip("/") + "/"
        return [(o["Key"][len(prefix):], o["Size"])
                for o in s3.list_objects(f"s3://{bucket}/{prefix}", delimiter="/")]
    try:
        with os.scandir(local(uri)) as it:
            return [(e.name, e.stat().st_size) for e in it if e.is_file()]
    except (FileNotFoundError, NotADirectoryError):
        return []


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


def delete(uri: str) -> None:
    """Remove a file (none there: nothing to do)."""
    if s3.is_s3(uri):
        s3.delete(uri)
        return
    try:
        os.remove(local(uri))
    except FileNotFoundError:
        pass


def newest_mtime_ms(uri: str) -> int:
    """The newest modification time (ms) of the files under a folder; 0 when there are none."""
    return max((f[1] for f in walk_files(uri)), default=0) if is_dir(uri) else 0


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def land(staged: Path, uri: str, after_ms: int, *, attempts: int = 5) -> int:
    """Put a finished file (written and fsync'ed at `staged`) at uri: it appears whole or not at all,
    is durable when this returns, and its modification time is later than after_ms (the streamer's
    checkpoint is the newest modification time it consumed, so a file landing at a time already
    passed would never be read). Returns that time in ms; `staged` is gone afterwards.

    Local: `staged` (a hidden name in uri's folder) gets its time, is fsync'ed and renamed, and the
    folder fsync'ed. S3: one PUT of the whole object (atomic: no temp object, no rename; durable once
    it returned 200), made in a later whole second than after_ms, as S3 lists modification times to
    the second; the time is read back from a listing, as the streamer reads it."""
    if not s3.is_s3(uri):
        path = local(uri)
        mtime_ms = max(time.time_ns() // 1_000_000, after_ms + 1)
        os.utime(staged, ns=(mtime_ms * 1_000_000, mtime_ms * 1_000_000))
        _fsync(str(staged))  # the modification time too
        os.rename(staged, path)
        _fsync(os.path.dirname(path) or ".")
        return mtime_ms
    data = staged.read_bytes()
    for _ in range(attempts):
        next_second = (after_ms // 1000 + 1) * 1000
        while (now := time.time() * 1000) < next_second:
            time.sleep((next_second - now) / 1000 + 0.01)
        s3.write_bytes(uri, data)
        got = s3.modified_ms(uri)
        if got is not None and got > after_ms:
            staged.unlink(missing_ok=True)
            return got
        time.sleep(1.0)  # the endpoint's clock is behind this machine's: once more, a second later
    raise s3.S3Problem(f"{uri} on {s3.endpoint().name}: its modification time stays at or before "
                       f"{after_ms} ms, the newest already landed (is the endpoint's clock behind?)")


def check_roots(pipeline) -> None:
    """Before a run touches anything: every s3:// root's bucket exists and its endpoint answers
    (one line naming the endpoint and the bucket otherwise)."""
    ep = pipeline.s3_endpoint()
    seen = set()
    for root in (pipeline.source_root, pipeline.lake_root):
        if s3.is_s3(root) and s3.split(root)[0] not in seen:
            seen.add(s3.split(root)[0])
            s3.check_bucket(root, ep)
