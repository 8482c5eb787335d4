"""`hudi-cdc local up | down | status` and the stack library, against the real services."""

from __future__ import annotations

import json
import os
import socket

import pytest

from hudi_cdc.cli import main
from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack import Stack, StackConfig, process
from hudi_cdc.stack.manager import OPTIONAL


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_down_never_signals_a_process_it_did_not_start(tmp_path):
    cfg = StackConfig(data_dir=tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    (run / "registry.pid").write_text(f"{os.getpid()}\n")  # this very test process: alive, no marker
    rows = Stack(cfg).down()
    assert {r["service"]: r["state"] for r in rows}["registry"] == "not running"
    assert process.is_alive(os.getpid())
    assert Stack(cfg).status()[0]["state"] == "stopped"


def test_kafka_cluster_id_never_starts_with_a_dash():
    """StorageTool's parser takes `-t -Abc...` for an option: an id starting with '-' made 1 Kafka start in 64
    fail ("argument --cluster-id/-t: expected one argument"); such a draw is replaced."""
    import base64
    import uuid

    from hudi_cdc.stack.kafka_connect import _cluster_id

    dash = uuid.UUID(bytes=base64.urlsafe_b64decode("-" + "A" * 21 + "=="))  # encodes to '-AAAA...'
    draws = iter([dash, dash, uuid.UUID(int=7)])
    got = _cluster_id(lambda: next(draws))
    assert got == base64.urlsafe_b64encode(uuid.UUID(int=7).bytes).rstrip(b"=").decode() and not got.startswith("-")
    assert all(not _cluster_id().startswith("-") for _ in range(2000))


def test_status_of_a_stack_that_never_ran(tmp_path, capsys):
    assert main(["local", "status", "--data-dir", str(tmp_path), "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["service"], r["state"]) for r in rows] == [
        ("registry", "stopped"), ("metastore", "stopped"), ("thriftserver", "stopped")]
    assert rows[1]["url"] == "thrift://127.0.0.1:9083"


def test_a_port_taken_by_someone_else_is_reported(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        taken = s.getsockname()[1]
        cfg = StackConfig(data_dir=tmp_path, metastore_port=taken)
        with pytest.raises(EnvironmentProblem, match=f"port {taken} .* in use by a process this stack did not start"):
            Stack(cfg).up(["metastore"])


def test_registry_management_port_avoids_a_taken_next_port(tmp_path):
    """Apicurio's management interface goes on the registry port + 1 only when that is free: a port taken
    there (another service, an outgoing connection) once failed every registry test of a CI run."""
    from hudi_cdc.stack.apicurio import Apicurio

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        mgmt = Apicurio(StackConfig(data_dir=tmp_path, registry_port=port - 1)).management_port
        assert mgmt != port and process.port_bindable("127.0.0.1", mgmt)
    free = process.free_port()
    if process.port_bindable("127.0.0.1", free + 1):
        assert Apicurio(StackConfig(data_dir=tmp_path, registry_port=free)).management_port == free + 1


@pytest.mark.registry
def test_up_fails_with_the_service_own_error(tmp_path):
    cfg = StackConfig(data_dir=tmp_path, registry_port=_port(), registry_heap="1k")
    with pytest.raises(EnvironmentProblem) as ei:
        Stack(cfg).up(["registry"])
    msg = str(ei.value)
    assert "registry exited" in msg and "heap" in msg.lower() and str(tmp_path / "logs" / "registry.log") in msg
    assert "\n" not in msg
    assert Stack(cfg).status(["registry"])[0]["state"] == "stopped"


@pytest.mark.registry
def test_up_is_idempotent_and_status_says_where(stack_config, registry_url, capsys):
    d = str(stack_config.data_dir)
    assert main(["local", "up", "--data-dir", d, "--only", "registry", "-o", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["state"] == "already running" and rows[0]["url"] == registry_url
    assert main(["local", "status", "--data-dir", d, "--only", "registry"]) == 0
    out = capsys.readouterr().out
    assert "running" in out and registry_url in out
    pid = Stack(stack_config).status(["registry"])[0]["pid"]
    assert f"{process.MARKER_PROP}={stack_config.data_dir}" in process.cmdline(pid)
    sockets = open("/proc/net/tcp6").read().splitlines()[1:] + open("/proc/net/tcp").read().splitlines()[1:]
    listening = [s for s in sockets if s.split()[3] == "0A" and int(s.split()[1].rsplit(":", 1)[1], 16) in
                 (stack_config.registry_port, stack_config.registry_port + 1)]
    assert listening, "the registry should listen"
    for line in listening:  # bound to 127.0.0.1 (v4 or v4-mapped v6), never the wildcard
        addr = line.split()[1].rsplit(":", 1)[0]
        assert addr in ("0100007F", "0000000000000000FFFF00000100007F"), line


@pytest.mark.hive
def test_full_stack_answers(hive_stack):
    from hudi_cdc.stack.metastore import list_databases

    assert "default" in list_databases(hive_stack.host, hive_stack.metastore_port)
    rows = Stack(hive_stack).status()
    # the three of `up`, all running; the test stack is shared with the S3 tests, so when one of them ran
    # first an optional service (s3proxy) is listed too, running
    assert [r["state"] for r in rows[:3]] == ["running", "running", "running"]
    assert all(r["state"] == "running" for r in rows[3:]) and len(rows) <= 3 + len(OPTIONAL)
