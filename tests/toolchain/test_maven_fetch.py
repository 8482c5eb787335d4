"""maven.fetch over HTTP: the artifact is checked against the repository's published .sha1 before it takes
its name (a real HTTP server on 127.0.0.1 serving a repository layout; no Maven Central involved)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading

import pytest

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.toolchain.maven import Artifact, fetch

ART = Artifact("org.example", "thing", "1.0")
BODY = b"PK\x03\x04 a jar's bytes " * 1000


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    folder = root / "org" / "example" / "thing" / "1.0"
    folder.mkdir(parents=True)
    (folder / ART.filename).write_bytes(BODY)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()


def test_a_download_matching_its_sha1_is_kept(repo, tmp_path):
    url, folder = repo
    (folder / (ART.filename + ".sha1")).write_text(hashlib.sha1(BODY).hexdigest() + "  " + ART.filename + "\n")
    path = fetch(ART, tmp_path / "cache", timeout=30, repository=url)
    assert path == tmp_path / "cache" / ART.filename and path.read_bytes() == BODY
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [ART.filename]


def test_a_download_not_matching_its_sha1_is_discarded(repo, tmp_path):
    url, folder = repo
    (folder / (ART.filename + ".sha1")).write_text(hashlib.sha1(b"other bytes").hexdigest())
    with pytest.raises(EnvironmentProblem, match=r"org.example:thing:1.0:jar: the download from .* has SHA-1 "
                                                 + hashlib.sha1(BODY).hexdigest() + r", but .*\.sha1 says"):
        fetch(ART, tmp_path / "cache", timeout=30, repository=url)
    assert list((tmp_path / "cache").iterdir()) == []  # neither the artifact nor a .part left


def test_no_published_sha1_is_an_error_naming_it(repo, tmp_path):
    url, folder = repo
    with pytest.raises(EnvironmentProblem, match=r"could not fetch org.example:thing:1.0:jar from .*thing-1.0.jar: "
                                                 r".*thing-1.0.jar.sha1: HTTP Error 404"):
        fetch(ART, tmp_path / "cache", timeout=30, repository=url)
    (folder / (ART.filename + ".sha1")).write_text("<html>not a checksum</html>")
    with pytest.raises(EnvironmentProblem, match=r"\.sha1 holds no SHA-1"):
        fetch(ART, tmp_path / "cache", timeout=30, repository=url)
    assert list((tmp_path / "cache").iterdir()) == []
