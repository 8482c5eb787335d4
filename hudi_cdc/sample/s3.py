"""Land the MoMA sample into s3://bucket/prefix in the sink's layout: the files are written into a
staging folder (which mirrors the names already in S3, so the same files are skipped) and each new
file is PUT in landing order, so S3's modification times keep that order."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from hudi_cdc.common import s3, storage


def land_to_s3(root_uri: str, land: Callable[[Path], list[Path]], progress: Callable[[str], None]) -> list[str]:
    """Run land(staging_dir) and upload what it wrote under root_uri; returns the new object URIs."""
    s3.check_bucket(root_uri)
    with tempfile.TemporaryDirectory(prefix="hudi-cdc-sample-") as tmp:
        staging = Path(tmp)
        for uri, _, _ in storage.walk_files(root_uri):  # names already landed: empty stand-ins
            rel = uri[len(root_uri.rstrip("/")) + 1:]
            stand_in = staging / rel
            stand_in.parent.mkdir(parents=True, exist_ok=True)
            stand_in.touch()
        written = land(staging)
        uris = []
        for path in sorted(written, key=lambda p: p.stat().st_mtime_ns):
            uri = storage.join(root_uri, str(path.relative_to(staging)))
            storage.write_bytes(uri, path.read_bytes())
            uris.append(uri)
        progress(f"uploaded {len(uris)} file(s) to {root_uri} on {s3.endpoint().name}")
        return uris
