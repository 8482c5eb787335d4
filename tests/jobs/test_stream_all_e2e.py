"""`hudi-cdc stream --all` through the real CLI (spark-submit, Hudi 1.2.0): three tables in ONE continuous
Spark application; one table's landing holds a corrupt file, so that table fails, backs off and is shown
by `status` while the other two land every change exactly (= the replay of every event landed); SIGTERM
stops it with exit 0 and no half commit. The loops' policies without a JVM: tests/jobs/test_stream_all.py."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hudi_cdc import sample
from hudi_cdc.config import load_pipeline
from hudi_cdc.errors import ExitCode
from tests.cli import cli_env, run_cli
from tests.faults.harness import DATA_COLS, ev, land_file

pytestmark = [pytest.mark.e2e]

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
TABLES = {"painters": [COW, MOR], "sculptors": [COW], "broken": [COW]}


class Lake:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.config = tmp / "hudi-cdc.yaml"
        self.config.write_text(yaml.safe_dump({
            "pipeline": "all", "source": {"root": "landing"}, "lake": {"root": "lake", "hive_database": "a"},
            "spark": {"shuffle_partitions": 2, "driver_memory": "1g"},
            "stream": {"min_sync_interval_seconds": 1, "max_restarts": 50, "restart_backoff_seconds": 1,
                       "restart_backoff_max_seconds": 2, "stop_timeout_seconds": 240},
            "tables": {t: {"topic": f"all.public.{t}", "record_key": "artist_id", "partition_field": "nationality",
                           "table_types": types} for t, types in TABLES.items()}}))
        self.pipeline = load_pipeline(self.config)
        self.events: dict[str, list[dict]] = {t: [] for t in TABLES}
        self.offset = {t: 0 for t in TABLES}
        self.last_ms = {t: 0 for t in TABLES}
        self.lsn = 1000

    def dir(self, table: str) -> Path:
        d = self.tmp / "landing" / f"all.public.{table}" / "partition=0"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def land(self, table: str, records: list[dict]) -> Path:
        path, self.last_ms[table] = land_file(self.dir(table), f"all.public.{table}", self.offset[table], records,
                                              max(self.last_ms.values()))
        self.offset[table] += len(records)
        self.events[table].extend(records)
        return path

    def next_lsn(self) -> int:
        self.lsn += 3
        return self.lsn

    def cli(self, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
        return run_cli("--config", str(self.config), *args, cwd=self.tmp, timeout=timeout)

    def checkpoint(self, table: str, tt: str) -> str | None:
        from hudi_cdc.jobs.stream.table import read_checkpoint

        return read_checkpoint(self.pipeline.base_path(table, tt))

    def caught_up(self, table: str) -> bool:
        return all(self.checkpoint(table, tt) == str(self.last_ms[table]) for tt in TABLES[table])

    def assert_exact(self, table: str) -> None:
        from hudi_cdc.lake.reader import read_table

        want = {k: {c: v[c] for c in DATA_COLS} for k, v in sample.replay(self.events[table], "artist_id").items()}
        for tt in TABLES[table]:
            rows = read_table(self.pipeline.base_path(table, tt))
            got = {r["artist_id"]: {c: r[c] for c in DATA_COLS} for r in rows}
            assert len(rows) == len(got), f"{table} {tt}: a key twice"
            assert got == want, f"{table} {tt}: differs from the replay"

    def dangling(self, table: str, tt: str) -> list[str]:
        from hudi_cdc.common.instants import COMPLETED, parse_instant_file
        from tests.shared import timeline_files

        parsed = [i for i in (parse_instant_file(n) for n in timeline_files(self.pipeline.base_path(table, tt))) if i]
        done = {i.requested_time for i in parsed if i.state == COMPLETED}
        return sorted(i.file_name for i in parsed if i.state != COMPLETED and i.requested_time not in done)


def _wait_for(cond, timeout: float, what: str, proc: subprocess.Popen | None = None, out: Path | None = None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"stream --all exited ({proc.returncode}) while waiting for {what}: "
                                 + (out.read_text()[-3000:] if out else ""))
        try:
            if cond():
                return
        except Exception:  # a timeline being written
            pass
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}: " + (out.read_text()[-3000:] if out else ""))


def test_stream_all_one_table_fails_and_backs_off_the_others_land_exactly_then_a_clean_stop(tmp_path):
    lake = Lake(tmp_path)
    nations = ["American", "French", "German"]
    for i, table in enumerate(TABLES):
        lake.land(table, [ev(k, lake.next_lsn(), nations[k % 3], op="r") for k in range(1, 11 + i)])
    boot = lake.cli("bootstrap")
    assert boot.returncode == 0, boot.stderr[-3000:]
    bad = lake.dir("broken") / "zz-broken.avro"
    bad.write_bytes(b"this is not an Avro container")

    dry = lake.cli("stream", "--all", "--dry-run", "-o", "json")
    assert dry.returncode == 0, dry.stderr[-2000:]
    argv = json.loads(dry.stdout)[0]["argv"]
    assert argv.count("--all-tables") == 4 and argv.count("--next") == 3

    out, res = tmp_path / "stream-all.err", tmp_path / "stream-all.json"
    with open(out, "w") as err, open(res, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "--config", str(lake.config), "stream", "--all",
                                 "-o", "json"], cwd=tmp_path, env=cli_env(), stdout=fh, stderr=err,
                                text=True, start_new_session=True)
    try:
        for step in range(2):  # changes to two tables: updates, a partition move, a delete, an insert
            for table in ("painters", "sculptors"):
                lake.land(table, [ev(1, lake.next_lsn(), "French", name=f"moved {step}"),
                                  ev(2 + step, lake.next_lsn(), deleted=True),
                                  ev(100 + step, lake.next_lsn(), "German", op="c"),
                                  ev(5, lake.next_lsn(), "American", name=f"renamed {step}")])
            _wait_for(lambda: all(lake.caught_up(t) for t in ("painters", "sculptors")), 900,
                      f"round {step} of the good tables", proc, out)
        _wait_for(lambda: out.read_text().count(".broken: round failed") >= 2, 120, "the broken table's retries",
                  proc, out)

        status = lake.cli("status", "-o", "json")
        rows = {(r["table"], r["table_type"]): r for r in json.loads(status.stdout)}
        failure = rows[("broken", COW)]["last_failure"]
        assert failure and failure["label"] == "stream-all" and "zz-broken.avro" in failure["message"], failure
        assert failure["state"] == "backing_off" and failure["failures"] >= 2
        assert rows[("painters", MOR)]["last_failure"] is None and rows[("sculptors", COW)]["last_failure"] is None
        assert all(rows[k]["writer_held"] and rows[k]["writer"]["pid"] == proc.pid for k in rows)
        assert status.returncode != 0 and "broken (COPY_ON_WRITE): last round failed" in status.stderr  # a breach

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) == 0, out.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    text = out.read_text()
    assert "SIGTERM: the job stops after its current round" in text
    result = {r["base_path"].rsplit("/", 1)[1]: r for r in json.loads(res.read_text())}
    assert sorted(result) == ["broken_cow", "painters_cow", "painters_mor", "sculptors_cow"]
    assert result["broken_cow"]["commits"] == 0 and result["broken_cow"]["kind"] == "input"
    assert result["painters_mor"]["commits"] >= 2 and result["sculptors_cow"]["state"] == "stopped"
    for table, types in TABLES.items():
        for tt in types:
            assert lake.dangling(table, tt) == [], (table, tt)
    for table in ("painters", "sculptors"):
        lake.assert_exact(table)
    lake.assert_exact("broken")  # as bootstrapped: the corrupt file wrote nothing

    # `stream --all --once`: the tables' rounds side by side in one JVM; the broken table's failure does not
    # keep the others from their round, and the command exits with it (one line naming the file)
    for table in ("painters", "sculptors"):
        lake.land(table, [ev(1, lake.next_lsn(), "German", name="once"), ev(6, lake.next_lsn(), deleted=True)])
    once = lake.cli("stream", "--all", "--once", "-o", "json")
    assert once.returncode == int(ExitCode.DATA) and "zz-broken.avro" in once.stderr, once.stderr[-3000:]
    assert all(lake.caught_up(t) for t in ("painters", "sculptors"))
    for table in ("painters", "sculptors"):
        lake.assert_exact(table)
    bad.unlink()
    again = lake.cli("stream", "--all", "--once", "-o", "json")
    assert again.returncode == 0, again.stderr[-3000:]
    assert {r["table"].rpartition(".")[2] for r in json.loads(again.stdout)} == set(TABLES)
    lake.assert_exact("broken")
