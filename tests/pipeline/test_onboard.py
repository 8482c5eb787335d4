"""Onboarding (issue 15): `hudi-cdc add-table` puts a table into the pipeline file, bootstraps it alone
from what has landed and hands over to its continuous stream, while `stream` runs for another table,
whose process, checkpoint and commits it never touches. The e2e test runs the real CLI (spark-submit,
Hudi 1.2.0; three JVMs at once at its peak, ~1 min on an idle 2-core machine)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.config import load_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.jobs.stream.table import read_checkpoint
from hudi_cdc.lake.reader import read_table
from hudi_cdc.pipeline.onboard import add_to_file
from tests.faults.harness import DATA_COLS, TYPES, FaultLake, ev, kill, land_file

PAINTERS = "moma.public.painters"


def _config(tmp_path):
    config = tmp_path / "hudi-cdc.yaml"
    config.write_text(yaml.safe_dump({"pipeline": "t", "source": {"root": "landing"}, "lake": {"root": "lake"},
                                      "tables": {"artists": {"topic": "moma.public.artists",
                                                             "record_key": "artist_id"}}}))
    return config


def test_add_to_file_validates_keeps_a_backup_and_never_changes_a_known_table(tmp_path):
    config = _config(tmp_path)
    before = config.read_text()
    with pytest.raises(ConfigError, match="topic"):  # invalid: the file stays as it was
        add_to_file(config, "painters", {"record_key": "artist_id"})
    assert config.read_text() == before and not (tmp_path / "hudi-cdc.yaml.bak").exists()
    p = add_to_file(config, "painters", {"topic": PAINTERS, "record_key": "artist_id",
                                         "table_types": ["COPY_ON_WRITE"]})
    assert p.table("painters").topic == PAINTERS and p.table("painters").table_types == ["COPY_ON_WRITE"]
    assert load_pipeline(config).table("artists").topic == "moma.public.artists"
    assert (tmp_path / "hudi-cdc.yaml.bak").read_text() == before
    with pytest.raises(ConfigError, match="already in"):
        add_to_file(config, "artists", {"topic": "other", "record_key": "x"})
    assert add_to_file(config, "painters", None).table("painters").topic == PAINTERS  # in the file: used as is
    with pytest.raises(ConfigError, match="--topic and --record-key"):
        add_to_file(config, "sculptors", None)


def test_add_table_refuses_a_topic_with_nothing_landed_in_one_line(tmp_path, capsys):
    from hudi_cdc.cli import main

    config = _config(tmp_path)
    code = main(["--config", str(config), "add-table", "painters", "--topic", PAINTERS, "--record-key", "artist_id"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "landing directory" in err[0] and PAINTERS in err[0], err


def _wait(cond, timeout, what, procs=()):
    deadline = time.time() + timeout
    while time.time() < deadline:
        for p in procs:
            assert p.poll() is None, f"{what}: a process exited ({p.returncode}) early"
        try:
            if cond():
                return
        except Exception:  # a timeline being written
            pass
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Painters:
    """A second topic landed beside the fault lake's artists."""

    def __init__(self, lake: FaultLake):
        self.lake, self.events = lake, []
        self.dir = lake.tmp / "landing" / PAINTERS / "partition=0"
        self.dir.mkdir(parents=True)
        self.offset, self.last_ms = 0, 0

    def land(self, records):
        _, self.last_ms = land_file(self.dir, PAINTERS, self.offset, records, self.last_ms)
        self.offset += len(records)
        self.events.extend(records)

    def base(self):
        return load_pipeline(self.lake.config).base_path("painters", "COPY_ON_WRITE")

    def caught_up(self):
        return read_checkpoint(self.base()) == str(self.last_ms)

    def assert_exact(self):
        want = {k: {c: v[c] for c in DATA_COLS} for k, v in sample.replay(self.events, "artist_id").items()}
        rows = read_table(self.base())
        assert len(rows) == len(want)
        assert {r["artist_id"]: {c: r[c] for c in DATA_COLS} for r in rows} == want


@pytest.mark.e2e
def test_add_table_while_another_table_streams(tmp_path):
    lake = FaultLake(tmp_path, seed=11)
    lake.snapshot(20)
    boot = lake.cli("bootstrap")
    assert boot.returncode == 0, boot.stderr[-2000:]
    artists = lake.start_stream("artists")
    painters = Painters(lake)
    add = None
    try:
        lake.change_file()
        lake.wait_caught_up(artists, 300)
        painters.land([ev(k, 2000 + k, "French", op="r") for k in range(1, 11)])  # what has landed before
        painters.land([ev(3, 2100, "German", name="moved"), ev(4, 2101, deleted=True), ev(5, 1, name="stale")])
        timeline = {tt: lake.timeline(tt) for tt in TYPES}
        checkpoint = {tt: lake.checkpoint(tt) for tt in TYPES}

        out = open(tmp_path / "add.out", "w")
        add = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", str(lake.config), "add-table",
                                "painters", "--topic", PAINTERS, "--record-key", "artist_id", "--partition-field",
                                "nationality", "--type", "cow", "--stream"], cwd=tmp_path, env=lake.env,
                               stdout=out, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        # bootstrapped from everything landed, then handed over to its continuous stream
        _wait(lambda: "streaming from its checkpoint" in (tmp_path / "add.out").read_text(), 600,
              "the bootstrap", [artists, add])
        assert painters.caught_up()
        painters.assert_exact()
        # landed after the hand-over: the new table's stream applies it
        painters.land([ev(6, 2200, "French", name="updated"), ev(11, 2201, "Japanese", op="c"),
                       ev(1, 2202, deleted=True)])
        _wait(painters.caught_up, 300, "the new table's stream", [artists, add])
        painters.assert_exact()

        # both writers seen by status, each holding its own tables
        st = subprocess.run([sys.executable, "-m", "hudi_cdc.cli", "--config", str(lake.config), "status",
                             "-o", "json"], cwd=tmp_path, env=lake.env, capture_output=True, text=True)
        writers = {(r["table"], r["table_type"]): (r["writer"] or {}).get("pid") for r in json.loads(st.stdout)}
        assert writers == {("artists", tt): artists.pid for tt in TYPES} | {
            ("painters", "COPY_ON_WRITE"): add.pid}, st.stdout

        # the other table: not one commit and the same checkpoint, its stream never restarted ...
        assert {tt: lake.timeline(tt) for tt in TYPES} == timeline
        assert {tt: lake.checkpoint(tt) for tt in TYPES} == checkpoint
        # ... and it still streams
        lake.change_file()
        lake.wait_caught_up(artists, 300)
        for proc in (artists, add):
            proc.send_signal(signal.SIGTERM)
        assert artists.wait(300) == 0 and add.wait(300) == 0
    finally:
        for proc in (artists, add):
            if proc is not None and proc.poll() is None:
                kill(proc.pid)
    assert "restart" not in (tmp_path / "artists.out").read_text()
    lake.assert_exact()
    painters.assert_exact()
    assert load_pipeline(lake.config).table("painters").topic == PAINTERS
