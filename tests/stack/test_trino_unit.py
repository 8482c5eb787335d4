"""The Trino service's configuration and the `local up --trino` plumbing, without starting anything
(tests/stack/test_trino.py runs the real server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_cdc.cli import main
from hudi_cdc.stack import StackConfig
from hudi_cdc.stack.local import with_optional
from hudi_cdc.stack.s3proxy import LOCAL_SECRET_KEY
from hudi_cdc.stack.trino import Trino, catalogs


def test_up_with_trino_adds_it_to_the_services():
    assert with_optional(()) == ()
    assert with_optional((), trino=True) == ("registry", "metastore", "thriftserver", "trino")
    assert with_optional(("metastore",), trino=True) == ("metastore", "trino")
    assert with_optional(("trino",), trino=True) == ("trino",)
    assert with_optional((), s3=True, trino=True)[-2:] == ("s3", "trino")


def test_catalogs_on_the_stack_metastore(tmp_path):
    cfg = StackConfig(data_dir=tmp_path, metastore_port=19999)
    cats = catalogs(cfg)
    assert set(cats) == {"hive", "iceberg", "hudi"}
    for props in cats.values():
        assert props["hive.metastore.uri"] == "thrift://127.0.0.1:19999"
        assert props["fs.hadoop.enabled"] == "true" and "fs.native-s3.enabled" not in props
    # Hive 2.3 on Derby has no lock tables
    assert cats["iceberg"]["iceberg.hive-catalog.locking-enabled"] == "false"
    s3 = catalogs(StackConfig(data_dir=tmp_path, s3=True, s3_port=19000))
    assert s3["hudi"]["s3.endpoint"] == "http://127.0.0.1:19000" and s3["hive"]["s3.path-style-access"] == "true"


def test_server_config_files_hold_no_secret(tmp_path):
    cfg = StackConfig(data_dir=tmp_path, s3=True, trino_port=18123)
    server = tmp_path / "server"
    for p in ("hive", "iceberg", "hudi"):
        (server / "plugin" / p).mkdir(parents=True)
    svc = Trino(cfg)
    svc._write_config(server)
    etc = Path(svc.etc_dir)
    text = "".join(p.read_text() for p in etc.rglob("*.properties"))
    assert LOCAL_SECRET_KEY not in text
    config = (etc / "config.properties").read_text()
    assert "http-server.http.port=18123\n" in config and "query.max-memory-per-node=1GB\n" in config
    assert "node.bind-ip=127.0.0.1\n" in (etc / "node.properties").read_text()
    assert sorted(p.name for p in (svc.dir / "plugin").iterdir()) == ["hive", "hudi", "iceberg"]


def test_status_of_trino_that_never_ran(tmp_path, capsys):
    assert main(["local", "status", "--data-dir", str(tmp_path), "--only", "trino", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"service": "trino", "state": "stopped", "pid": None, "url": "http://127.0.0.1:8090",
                     "log": str(tmp_path.resolve() / "logs" / "trino.log")}]


def test_s3_file_system_key_of_each_release(tmp_path):
    new = catalogs(StackConfig(data_dir=tmp_path, s3=True))  # the default release, 483
    assert new["hudi"]["fs.s3.enabled"] == "true" and "fs.native-s3.enabled" not in new["hudi"]
    old = catalogs(StackConfig(data_dir=tmp_path, s3=True, trino_version="476"))
    assert old["hudi"]["fs.native-s3.enabled"] == "true" and "fs.s3.enabled" not in old["hudi"]


def test_releases_after_the_last_tarball_are_assembled_from_modules(tmp_path):
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.stack.trino import java_major
    from hudi_cdc.stack.trino_modules import MAIN_CLASS, MAIN_JAR, SERVER_PROVIDED, main_class

    assert (java_major("476"), java_major("483")) == (24, 25)
    with pytest.raises(EnvironmentProblem, match="'latest' is not a release number"):
        java_major("latest")
    (tmp_path / "lib").mkdir()
    assert main_class(tmp_path) == "io.trino.server.TrinoServer"  # an unpacked tarball
    (tmp_path / "lib" / MAIN_JAR).write_bytes(b"")
    assert main_class(tmp_path) == MAIN_CLASS
    # the jars a plugin folder leaves to the server (Trino's plugin class loader takes them from it)
    names = ["trino-spi-483.jar", "slice-2.8.jar", "jackson-annotations-2.22.jar", "opentelemetry-api-1.64.0.jar",
             "opentelemetry-context-1.64.0.jar", "opentelemetry-api-incubator-1.64.0-alpha.jar",
             "trino-hudi-483.jar", "hudi-common-1.2.0.jar", "jackson-databind-2.22.0.jar"]
    assert [n for n in names if not SERVER_PROVIDED.match(n)] == [
        "opentelemetry-api-incubator-1.64.0-alpha.jar", "trino-hudi-483.jar", "hudi-common-1.2.0.jar",
        "jackson-databind-2.22.0.jar"]
