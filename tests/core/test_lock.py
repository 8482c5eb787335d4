"""One writer per table (issue 11): the lock, its holder message, stale-lock takeover, and the
refusal through `hudi-cdc bootstrap`/`stream` while another writer holds the table."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from hudi_cdc import pipeline as pipe
from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import lock
from hudi_cdc.errors import TableLocked, TableStateError

TOPIC = "moma.public.artists"


def _pipeline(tmp_path):
    (tmp_path / "landing" / TOPIC / "partition=0").mkdir(parents=True, exist_ok=True)
    data = {"pipeline": "t", "source": {"root": "landing"}, "lake": {"root": "lake"},
            "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id"}}}
    import yaml

    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(data))
    return parse_pipeline(data, str(tmp_path / "hudi-cdc.yaml"), str(tmp_path))


HOLD = textwrap.dedent("""
    import sys, time
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.core.lock import table_lock
    p = load_pipeline(sys.argv[1])
    with table_lock(p, "artists", sys.argv[2], "stream", progress=lambda m: None):
        print("held", flush=True)
        time.sleep(600)
""")


def _holder(tmp_path, table_type="COPY_ON_WRITE"):
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "hudi-cdc.yaml"), table_type],
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_lock_file_lives_beside_the_tables_outside_their_folders(tmp_path):
    p = _pipeline(tmp_path)
    path = lock.lock_path(p, "artists", "MERGE_ON_READ")
    assert path == tmp_path / "lake" / ".hudi-cdc-locks" / "artists_mor.lock"
    assert not str(path).startswith(p.base_path("artists", "MERGE_ON_READ")[len("file://"):] + "/")


def test_second_writer_is_refused_naming_table_and_holder(tmp_path, capsys):
    p = _pipeline(tmp_path)
    proc = _holder(tmp_path)
    try:
        with pytest.raises(TableLocked) as err:
            with lock.table_lock(p, "artists", "COPY_ON_WRITE", "bootstrap"):
                pass
        msg = str(err.value)
        assert "\n" not in msg and "artists (COPY_ON_WRITE)" in msg
        assert f"pid {proc.pid} on {socket.gethostname()} (stream), for " in msg
        assert isinstance(err.value, TableStateError) and err.value.exit_code == 12
        # the other table type is free
        with lock.table_lock(p, "artists", "MERGE_ON_READ", "stream"):
            pass
        # through the CLI: refused before planning or preflight, one line, exit 12
        for args in (["bootstrap", "--table", "artists"], ["stream", "--table", "artists", "--type", "cow"]):
            code = main(["--config", str(tmp_path / "hudi-cdc.yaml"), *args])
            err_lines = capsys.readouterr().err.strip().splitlines()
            assert code == 12, err_lines
            assert len(err_lines) == 1 and f"pid {proc.pid}" in err_lines[0] and "table artists" in err_lines[0]
    finally:
        proc.kill()
        proc.wait()


def test_stale_lock_of_a_killed_writer_is_taken_over(tmp_path):
    p = _pipeline(tmp_path)
    proc = _holder(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    path = lock.lock_path(p, "artists", "COPY_ON_WRITE")
    assert json.loads(path.with_suffix(".json").read_text())["pid"] == proc.pid  # left behind
    said = []
    with lock.table_lock(p, "artists", "COPY_ON_WRITE", "stream", progress=said.append):
        assert json.loads(path.with_suffix(".json").read_text())["pid"] == os.getpid()
        assert lock.held_fds()
    assert len(said) == 1 and f"left by pid {proc.pid}" in said[0] and "gone" in said[0]
    assert not path.with_suffix(".json").exists() and not lock.held_fds()
    # a clean release leaves nothing to take over
    said.clear()
    with lock.table_lock(p, "artists", "COPY_ON_WRITE", "stream", progress=said.append):
        pass
    assert said == []


def test_holder_on_another_host_is_never_presumed_dead():
    assert lock.Holder(2 ** 22 + 12345, "elsewhere.example", time.time()).alive()
    assert not lock.Holder(2 ** 22 + 12345, socket.gethostname(), time.time()).alive()


def test_locks_are_local_runs_of_local_tables_only(tmp_path):
    p = _pipeline(tmp_path)
    targets = p.targets("artists")
    assert pipe._local_targets(p, "local", targets) == targets
    assert pipe._local_targets(p, "emr", targets) == []


def test_status_names_the_writer_holding_a_table_without_taking_its_lock(tmp_path, capsys, monkeypatch):
    p = _pipeline(tmp_path)
    config = ["--config", str(tmp_path / "hudi-cdc.yaml")]
    assert not lock.probe(p, "artists", "COPY_ON_WRITE").held  # no lock file yet
    proc = _holder(tmp_path)
    try:
        state = lock.probe(p, "artists", "COPY_ON_WRITE")
        assert state.held and state.holder is not None and state.holder.pid == proc.pid
        assert not lock.probe(p, "artists", "MERGE_ON_READ").held
        assert main([*config, "status", "--table", "artists", "-o", "json"]) == 0
        rows = {r["table_type"]: r for r in json.loads(capsys.readouterr().out)}
        cow, mor = rows["COPY_ON_WRITE"], rows["MERGE_ON_READ"]
        assert cow["writer_held"] is True and mor["writer_held"] is False and mor["writer"] is None
        assert cow["writer"]["pid"] == proc.pid and cow["writer"]["host"] == socket.gethostname()
        # the age is the holder's own record's: since the `since` it wrote, never more than until now
        assert cow["writer"]["command"] == "stream"
        assert 0 <= cow["writer"]["age_seconds"] <= time.time() - state.holder.since
        assert main([*config, "status", "--table", "artists", "--type", "cow"]) == 0
        assert f"pid {proc.pid} on {socket.gethostname()} (stream)" in capsys.readouterr().out
        # probing took nothing: the holder still holds, and a writer here is still refused
        with pytest.raises(TableLocked):
            with lock.table_lock(p, "artists", "COPY_ON_WRITE", "bootstrap"):
                pass
        # without /proc/locks: the recorded holder's process decides
        monkeypatch.setattr(lock, "_flocked", lambda path: None)
        assert lock.probe(p, "artists", "COPY_ON_WRITE").held
        monkeypatch.undo()
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    # a killed writer leaves its holder file behind, but no lock: not held
    assert lock.lock_path(p, "artists", "COPY_ON_WRITE").with_suffix(".json").exists()
    assert not lock.probe(p, "artists", "COPY_ON_WRITE").held
    assert main([*config, "status", "--table", "artists", "--type", "cow", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["writer_held"] is False
    # and a probe leaves the lock free for the next writer
    with lock.table_lock(p, "artists", "COPY_ON_WRITE", "stream", progress=lambda m: None):
        pass
