"""Whole processes, timed, with the peak resident memory of their process tree (psutil sampling)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

SAMPLE_SECONDS = 0.1


@dataclass
class Measured:
    seconds: float
    peak_rss_mb: float
    rc: int
    log: str
    load_avg: float = 0.0  # the 1-minute load average when the process ended (other jobs on the machine)
    cpu_s: float = 0.0  # CPU seconds of the process tree (PeakRss.cpu_seconds)
    peak_pss_mb: float = 0.0  # the tree's peak proportional set size: shared pages counted once (PeakRss)


class PeakRss:
    """Samples the summed RSS of a process and all its descendants (spark-submit's JVM included).

    The summed RSS counts pages shared between processes (a fork's copy-on-write pages, shared
    libraries) once per process; the summed PSS (proportional set size, Linux's smaps_rollup: each shared
    page divided among its sharers) does not, and is what the tree really holds. Both peaks are kept,
    and each process's share at the RSS peak (`breakdown`: what holds the memory)."""

    PSS_SECONDS = 1.0  # smaps_rollup walks the page tables: sampled less often than RSS

    def __init__(self, pid: int):
        self.proc = psutil.Process(pid)
        self.peak = 0
        self.peak_pss = 0
        self.breakdown: dict[str, float] = {}  # "<pid> <name>" -> RSS MB at the RSS peak
        self.cpu: dict[int, float] = {}  # pid -> CPU seconds (user + system) last sampled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        next_pss = 0.0
        while not self._stop.is_set():
            total, pss, per = 0, 0, {}
            want_pss = time.monotonic() >= next_pss
            try:
                for p in [self.proc, *self.proc.children(recursive=True)]:
                    try:
                        rss = p.memory_info().rss
                        total += rss
                        per[f"{p.pid} {p.name()}"] = rss
                        if want_pss:
                            pss += p.memory_full_info().pss
                        t = p.cpu_times()
                        self.cpu[p.pid] = t.user + t.system
                    except psutil.Error:  # gone since listed
                        pass
            except psutil.Error:
                break
            if total > self.peak:
                self.peak = total
                self.breakdown = {k: round(v / 2**20) for k, v in per.items()}
            if want_pss:
                self.peak_pss = max(self.peak_pss, pss)
                next_pss = time.monotonic() + self.PSS_SECONDS
            self._stop.wait(SAMPLE_SECONDS)

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of the tree, summed over every process seen (each to its last 0.1 s sample): far
        less sensitive than wall time to other jobs on the machine."""
        return sum(self.cpu.values())

    @property
    def peak_pss_mb(self) -> float:
        return self.peak_pss / 1024 / 1024

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 1024 / 1024


def fresh_work(path: str) -> Path:
    """The benchmark's work folder, emptied (the throwaway PostgreSQL in it runs as another user: 0755)."""
    work = Path(path)
    if work.exists():
        subprocess.run(["rm", "-rf", str(work)], check=True)
    work.mkdir(parents=True)
    os.chmod(work, 0o755)
    return work


def env() -> dict[str, str]:
    """The environment of every measured process: this checkout's hudi_cdc first on the path."""
    root = str(Path(__file__).resolve().parents[1])
    out = dict(os.environ)
    out["PYTHONPATH"] = root + (os.pathsep + out["PYTHONPATH"] if out.get("PYTHONPATH") else "")
    return out


def hudi_cdc(*args: str) -> list[str]:
    """The CLI as a user runs it (python -m hudi_cdc.cli, so this checkout's code is measured)."""
    return [sys.executable, "-m", "hudi_cdc.cli", *args]


def run(argv: list[str], log: Path, cwd: Path | None = None, check: bool = True,
        timeout: float = 3600, extra_env: dict[str, str] | None = None) -> Measured:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=cwd, env={**env(), **(extra_env or {})})
        rss = PeakRss(proc.pid)
        try:
            rc = proc.wait(timeout=timeout)
        finally:
            peak = rss.stop()
        seconds = time.perf_counter() - start
    if check and rc != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError(f"{' '.join(argv[:6])}... exited {rc} after {seconds:.1f}s; log {log}:\n" + "\n".join(tail))
    return Measured(seconds, peak, rc, str(log), round(os.getloadavg()[0], 2), round(rss.cpu_seconds, 1),
                    round(rss.peak_pss_mb))


def start(argv: list[str], log: Path, env: dict[str, str]) -> tuple[subprocess.Popen, object]:
    """A long-running process (cwd: the log's folder), its output in ``log``: (the process, the log's file)."""
    fh = log.open("w")
    proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=log.parent)
    return proc, fh


def stop(proc: subprocess.Popen, timeout: float = 300) -> int | None:
    """SIGTERM (a clean stop after the round in flight), then a kill after ``timeout`` s; the exit code."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, reaped children's included) of a process and its descendants now."""
    p = psutil.Process(pid)
    total = 0.0
    for q in [p, *p.children(recursive=True)]:
        try:
            t = q.cpu_times()
            total += t.user + t.system + getattr(t, "children_user", 0) + getattr(t, "children_system", 0)
        except psutil.Error:
            pass
    return total


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of a process tree's threads so far, by thread name with its digits folded ("C2 CompilerThre#",
    "Executor task l#"): where a JVM's CPU goes (JIT compilers, GC, tasks, the driver's own threads)."""
    import re

    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    root = psutil.Process(pid)
    for q in [root, *root.children(recursive=True)]:
        for task in Path(f"/proc/{q.pid}/task").glob("*"):
            try:
                name = re.sub(r"\d+", "#", (task / "comm").read_text().strip())
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def thread_cpu_delta(before: dict[str, float], after: dict[str, float], top: int = 12) -> dict[str, float]:
    """The thread groups that used the most CPU seconds between two thread_cpu snapshots."""
    d = {k: round(v - before.get(k, 0.0), 1) for k, v in after.items()}
    return dict(sorted(d.items(), key=lambda kv: -kv[1])[:top])
