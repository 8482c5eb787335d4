"""Single writer and supervision through the real CLI (spark-submit, Hudi 1.2.0), CoW and MoR in one
continuous `hudi-cdc stream`: a second writer is refused naming the holder; a job that dies is
restarted; SIGTERM in the middle of a round lets the round commit and leaves no inflight instant; a
landing file that crashes every round makes the supervisor give up after stream.max_restarts."""

from __future__ import annotations

import signal
import time

import pytest

from hudi_cdc.core.lock import lock_path

from .harness import TYPES, FaultLake, gone, job_pids, kill

pytestmark = [pytest.mark.e2e, pytest.mark.faults]


def _wait_for(cond, timeout: float, what: str, step: float = 0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def test_one_writer_restart_clean_stop_and_giving_up(tmp_path):
    lake = FaultLake(tmp_path, seed=7, max_restarts=1, restart_backoff_seconds=1)
    lake.snapshot()
    boot = lake.cli("bootstrap")
    assert boot.returncode == 0, boot.stderr[-2000:]

    proc = lake.start_stream("stream1")
    out = tmp_path / "stream1.out"
    try:
        lake.change_file()
        lake.wait_caught_up(proc, 300)

        # a second writer, stream or bootstrap --force, is refused in one line naming the holder
        for args in (("stream", "--table", "artists"), ("bootstrap", "--force")):
            second = lake.cli(*args, timeout=120)
            lines = second.stderr.strip().splitlines()
            assert second.returncode == 12, second.stderr
            assert len(lines) == 1 and "table artists" in lines[0] and f"pid {proc.pid} on " in lines[0], lines

        # the job dies (as on an OOM kill): restarted after the backoff, and catches up
        jvm = _wait_for(lambda: job_pids(proc.pid), 30, "the job's JVM")[0]
        kill(jvm)
        _wait_for(lambda: "restart 1" in out.read_text(), 60, "the restart to be logged")
        assert "job failed (JobError: stream-artists failed: the job was killed by SIGKILL" in out.read_text()
        lake.change_file()
        lake.wait_caught_up(proc, 300)

        # SIGTERM in the middle of a round: the round commits, then the job and the command exit 0
        before = {tt: set(lake.timeline(tt)) for tt in TYPES}
        lake.change_file()
        _wait_for(lambda: any(n.endswith(("commit.requested", ".inflight")) and "compaction" not in n
                              for tt in TYPES for n in set(lake.dangling(tt)) - before[tt]),
                  120, "a round writing the new file", step=0.02)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) == 0, out.read_text()[-3000:]
        assert gone(jvm, 5) and not job_pids(proc.pid)
    finally:
        if proc.poll() is None:
            kill(proc.pid)
    text = out.read_text()
    assert "SIGTERM: the job stops after its current round" in text
    assert {tt: lake.dangling(tt) for tt in TYPES} == {tt: [] for tt in TYPES}
    assert lake.caught_up()
    lake.assert_exact()
    assert not lock_path(lake.pipeline, "artists", "MERGE_ON_READ").with_suffix(".json").exists()

    # a landing file that crashes every round: restarted once (max_restarts=1), then one line, exit 3
    bad = lake.dir / "zz-broken.avro"
    bad.write_bytes(b"this is not an Avro container")
    started = time.time()
    crash = lake.cli("stream", "--table", "artists", timeout=600)
    errors = [line for line in crash.stderr.splitlines() if line.startswith("error:")]
    assert crash.returncode == 3, crash.stdout[-2000:] + crash.stderr[-2000:]
    assert len(errors) == 1 and crash.stderr.strip().splitlines()[-1] == errors[0], crash.stderr[-3000:]
    assert "gave up after 1 restart(s)" in errors[0] and "zz-broken.avro" in errors[0], errors
    assert crash.stderr.count("restart 1 ") == 1 and "restart 2 " not in crash.stderr
    print(f"give-up run: {time.time() - started:.0f}s")
    lake.assert_exact()  # the table as before
