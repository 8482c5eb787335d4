"""Supervision of a continuous stream (issue 11), without a JVM: restarts with exponential backoff,
each said with its cause, the bound, the clean stop. The same through spark-submit is in
tests/faults/test_supervision.py."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from hudi_cdc.config.settings import StreamSettings
from hudi_cdc.errors import ConfigError, DataError, JobError
from hudi_cdc.jobs.stream import main as stream_main
from hudi_cdc.runners.supervise import Stopper, supervise


def _settings(**kw):
    base = dict(max_restarts=3, restart_backoff_seconds=0.01, restart_backoff_max_seconds=0.04)
    base.update(kw)
    return StreamSettings(**base)


class FakeRunner:  # only what Stopper touches: where the stop file goes, how to stop the job now
    def __init__(self):
        self.stop_file = None
        self.terminated = threading.Event()

    def terminate(self):
        self.terminated.set()


def test_restarts_with_backoff_then_succeeds():
    said, calls = [], []

    def run():
        calls.append(1)
        if len(calls) < 3:
            raise JobError(f"stream-artists failed: java.lang.OutOfMemoryError #{len(calls)} (log: x.log)")
        return ["ok"]

    assert supervise(run, _settings(), "stream-artists", said.append) == ["ok"]
    assert len(calls) == 3 and len(said) == 2
    assert "restart 1" in said[0] and "OutOfMemoryError #1" in said[0] and "in 0s" in said[0]
    assert "restart 2" in said[1] and "OutOfMemoryError #2" in said[1]


def test_gives_up_after_the_bound_with_one_line_naming_the_last_cause():
    said = []

    def run():
        raise DataError("artists: file landing/x.avro: not an Avro file (table left unchanged; log: y.log)")

    with pytest.raises(DataError) as err:
        supervise(run, _settings(max_restarts=2), "stream-artists", said.append)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("stream-artists: gave up after 2 restart(s)")
    assert "stream.max_restarts=2" in msg and "not an Avro file" in msg
    assert err.value.exit_code == DataError.exit_code and len(said) == 2


def test_backoff_is_exponential_and_capped():
    waits = []
    s = _settings(max_restarts=5, restart_backoff_seconds=1, restart_backoff_max_seconds=4)
    stopper_like = type("S", (), {"requested": threading.Event(), "wait": lambda self, t: waits.append(t),
                                  "forced": False})()

    def run():
        raise JobError("boom")

    with pytest.raises(JobError):
        supervise(run, s, "x", lambda m: None, stopper_like)
    assert waits == [1, 2, 4, 4, 4]


def test_failures_outside_the_window_do_not_count(monkeypatch):
    clock = iter(range(0, 10_000, 100))  # each failure 100s after the previous
    monkeypatch.setattr("hudi_cdc.runners.supervise.time.monotonic", lambda: next(clock))
    calls = []

    def run():
        calls.append(1)
        if len(calls) < 6:
            raise JobError("boom")
        return []

    supervise(run, _settings(max_restarts=1, restart_window_seconds=150), "x", lambda m: None)
    assert len(calls) == 6


def test_what_a_restart_cannot_cure_is_not_restarted():
    calls = []

    def run():
        calls.append(1)
        raise ConfigError("bad key")

    with pytest.raises(ConfigError):
        supervise(run, _settings(), "x", lambda m: None)
    assert len(calls) == 1


def test_sigterm_asks_the_job_to_stop_after_its_round(tmp_path, monkeypatch):
    runner, said = FakeRunner(), []
    stop_file = tmp_path / "stop" / "s"
    monkeypatch.setenv(stream_main.STOP_ENV, str(stop_file))
    with Stopper(runner, stop_file, timeout=30, progress=said.append) as stopper:
        assert runner.stop_file == stop_file and not stream_main.stop_requested()

        def run():  # the job: rounds until the stop file appears
            os.kill(os.getpid(), signal.SIGTERM)
            while not stream_main.stop_requested():
                pass
            return ["round"]

        assert supervise(run, _settings(), "x", said.append, stopper) == ["round"]
        assert not runner.terminated.is_set() and "SIGTERM" in said[0]
        os.kill(os.getpid(), signal.SIGTERM)  # a second signal: stop now
        assert runner.terminated.wait(5)
    assert not stop_file.exists() and runner.stop_file is None
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_job_killed_on_request_is_not_restarted(tmp_path):
    runner, said = FakeRunner(), []
    with Stopper(runner, tmp_path / "stop", timeout=0.05, progress=said.append) as stopper:
        def run():
            stopper.request("SIGTERM")
            assert runner.terminated.wait(5)  # the timeout forced it
            raise JobError("stream-x failed: killed")

        assert supervise(run, _settings(), "x", said.append, stopper) == []
    assert "rolls back" in said[-1]


def test_streamer_loop_leaves_between_rounds_on_the_stop_file(tmp_path, monkeypatch):
    stop_file = tmp_path / "stop"
    monkeypatch.setenv(stream_main.STOP_ENV, str(stop_file))
    rounds = []

    def fake_round(spark, t, props, log):
        rounds.append(t)
        if len(rounds) == 2:
            stop_file.touch()
        return len(rounds)

    monkeypatch.setattr(stream_main, "run_round", fake_round)
    monkeypatch.setattr(stream_main, "target_properties", lambda t: {})
    t = type("T", (), {"continuous": True, "min_sync_interval_seconds": 0, "max_rounds": None,
                     "table_type": "COPY_ON_WRITE"})()
    assert stream_main.run_targets(None, [t]) == [1, 2]  # the round in flight ends, no other starts
    # asked while waiting out the sync interval: it leaves within a second
    stop_file.unlink()
    rounds.clear()
    t.min_sync_interval_seconds = 3600
    threading.Timer(0.3, stop_file.touch).start()
    assert stream_main.run_targets(None, [t]) == [1]
