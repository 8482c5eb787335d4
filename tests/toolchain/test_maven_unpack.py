"""maven.extract_tgz: what the stack's installers (Apicurio, Debezium's plugin) unpack downloads with."""

from __future__ import annotations

import io
import os
import tarfile

import pytest

from hudi_cdc.toolchain.maven import extract_tgz


def _tgz(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_unpacks_the_tree(tmp_path):
    tgz = _tgz(tmp_path / "a.tgz", {"plugin/lib/x.jar": b"jar", "plugin/README": b"r"})
    extract_tgz(tgz, tmp_path / "out")
    assert (tmp_path / "out" / "plugin" / "lib" / "x.jar").read_bytes() == b"jar"


def test_refuses_a_member_outside_the_tree(tmp_path):
    tgz = _tgz(tmp_path / "evil.tgz", {"../escaped": b"x"})
    with pytest.raises(tarfile.TarError):
        extract_tgz(tgz, tmp_path / "out")
    assert not (tmp_path / "escaped").exists()


def test_a_truncated_download_is_an_error(tmp_path):
    good = _tgz(tmp_path / "a.tgz", {"f": os.urandom(200_000)})
    cut = tmp_path / "cut.tgz"
    cut.write_bytes(good.read_bytes()[:100_000])
    with pytest.raises(tarfile.ReadError, match="truncated"):  # the installers turn TarError into one line
        extract_tgz(cut, tmp_path / "out")
