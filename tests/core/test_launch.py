"""The one launcher of every spark-submit (hudi_cdc/spark/launch.py), on small Python jobs: the result and
error protocol, the log file, the time limit, the inherited table lock and death with its parent.
The real JVM case (HoodieDeltaStreamer 0.14 dies with a killed hudi-cdc) is in
tests/runners/test_deltastreamer_real.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import lock
from hudi_cdc.spark import launch

ROOT = Path(__file__).resolve().parents[2]


def _job(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


def test_result_progress_and_log(tmp_path):
    said = []
    out = launch.Launcher().run(_job("""
        import json
        print("some java noise")
        print("hudi-cdc: round 1 committed", flush=True)
        print("HUDI_CDC_RESULT " + json.dumps([{"table": "a"}]))
    """), env=dict(os.environ), cwd=tmp_path, log_path=tmp_path / "logs" / "j.log", progress=said.append)
    assert out.ok and out.result == [{"table": "a"}] and out.error is None
    assert said == ["  round 1 committed"]
    log = (tmp_path / "logs" / "j.log").read_text()
    assert log.startswith("argv: ") and "some java noise" in log and "HUDI_CDC_RESULT" in log


def test_error_line_and_root_cause(tmp_path):
    out = launch.Launcher().run(_job("""
        import json, sys
        print("HUDI_CDC_ERROR " + json.dumps({"message": "landing file x.avro is corrupt", "kind": "input"}))
        sys.exit(3)
    """), env=dict(os.environ), cwd=tmp_path, log_path=tmp_path / "j.log")
    assert out.code == 3 and out.error["kind"] == "input" and out.cause() == "landing file x.avro is corrupt"
    out = launch.Launcher().run(_job("raise SystemExit('java.lang.OutOfMemoryError: Java heap space')"),
                                env=dict(os.environ), cwd=tmp_path, log_path=tmp_path / "k.log")
    assert out.code == 1 and "OutOfMemoryError" in out.cause()


def test_time_limit_kills_the_job(tmp_path):
    out = launch.Launcher().run(_job("import time; time.sleep(600)"), env=dict(os.environ), cwd=tmp_path,
                                log_path=tmp_path / "j.log", timeout=1)
    assert out.timed_out and out.cause() == "timed out"


def test_spark_env_keeps_secrets_out_of_argv_and_drops_what_it_must():
    env = launch.spark_env(spark_home="/s", java_home="/j", python="/p", extra={"REGISTRY_PASSWORD": "x"},
                           drop=("PYTHONPATH",), force_local_ip=True)
    assert env["SPARK_HOME"] == "/s" and env["JAVA_HOME"] == "/j" and env["PYSPARK_DRIVER_PYTHON"] == "/p"
    assert env["SPARK_LOCAL_IP"] == "127.0.0.1" and env["REGISTRY_PASSWORD"] == "x" and "PYTHONPATH" not in env


def test_the_job_inherits_the_table_lock(tmp_path):
    pipeline = parse_pipeline({"pipeline": "t", "source": {"root": str(tmp_path / "landing")},
                               "lake": {"root": str(tmp_path / "lake")},
                               "tables": {"a": {"topic": "x.a", "record_key": "id"}}}, "t.yaml", str(tmp_path))
    with lock.table_lock(pipeline, "a", "COPY_ON_WRITE", "test", progress=lambda m: None) as path:
        out = launch.Launcher().run(_job("""
            import json, os, sys
            fds = []
            for fd in os.listdir("/proc/self/fd"):
                try:
                    fds.append(os.readlink("/proc/self/fd/" + fd))
                except OSError:  # the listing's own descriptor, closed by now
                    pass
            print("HUDI_CDC_RESULT " + json.dumps(sys.argv[1] in fds))
        """) + [str(path)], env=dict(os.environ), cwd=tmp_path, log_path=tmp_path / "j.log")
    assert out.result is True


def test_the_job_dies_with_its_parent(tmp_path):
    """A parent launches a job that would sleep for 10 minutes; kill -9 of the parent ends the job."""
    pid_file = tmp_path / "job.pid"
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from hudi_cdc.spark import launch
        job = [sys.executable, "-c", "import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
               "time.sleep(600)"]
        launch.Launcher().run(job, env={{}}, cwd={str(tmp_path)!r}, log_path=Path({str(tmp_path / 'j.log')!r}))
    """)], env=dict(os.environ, PYTHONPATH=str(ROOT)))
    job_pid = None
    try:
        deadline = time.monotonic() + 60  # bounded wait for the job to start
        while job_pid is None and time.monotonic() < deadline:
            text = pid_file.read_text() if pid_file.exists() else ""
            job_pid = int(text) if text else None
            time.sleep(0.1)
        assert job_pid is not None
        parent.send_signal(signal.SIGKILL)
        parent.wait(30)
        deadline = time.monotonic() + 60
        while _alive(job_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(job_pid), "the job outlived its killed parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if job_pid and _alive(job_pid):
            os.kill(job_pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


def test_the_result_protocol_is_the_jobs():
    from hudi_cdc.jobs import iceberg_apply, streamer

    assert launch.RESULT_MARK == streamer.RESULT_MARK == iceberg_apply.RESULT_MARK
    assert launch.ERROR_MARK == streamer.ERROR_MARK == iceberg_apply.ERROR_MARK


def test_the_childs_death_signal_is_set_without_importing(tmp_path):
    """die_with_parent runs in the forked child, where only the forking thread lives: a module another thread was
    importing at the fork stays locked there (capture's JPype thread beside `run`'s stream made an `import
    ctypes` in the child wait for ever). So the child imports nothing: with imports refused it still sets the
    death signal (read back with PR_GET_PDEATHSIG)."""
    code = textwrap.dedent("""
        import builtins, ctypes, signal
        from hudi_cdc.spark import launch
        real = builtins.__import__
        def refuse(name, *args, **kwargs):
            raise AssertionError("imported in the child: " + name)
        builtins.__import__ = refuse
        try:
            launch.die_with_parent()
        finally:
            builtins.__import__ = real
        got = ctypes.c_int()
        ctypes.CDLL("libc.so.6").prctl(2, ctypes.byref(got))  # PR_GET_PDEATHSIG
        print(got.value == signal.SIGKILL)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr[-2000:]
