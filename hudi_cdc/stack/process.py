"""Background processes the stack starts: spawn detached, pid files, liveness, stop, log tails.

Every process is started in its own session (its pid is its process-group id) and carries a
marker on its command line (``-Dhudi_cdc.stack=<data dir>``), so ``down`` signals only a process
that ``up`` started from the same data dir, never a stranger that reused the pid.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from hudi_cdc.common.causes import error_lines

MARKER_PROP = "hudi_cdc.stack"


def marker(data_dir: Path) -> str:
    return f"-D{MARKER_PROP}={data_dir}"


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited child not yet reaped) is not alive
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def owned_pid(pid_file: Path, mark: str) -> int | None:
    """The pid in pid_file if that process is alive and carries our marker, else None."""
    pid = read_pid(pid_file)
    if pid is None or not is_alive(pid):
        return None
    if Path("/proc").is_dir() and mark not in cmdline(pid):
        return None
    return pid


def spawn(argv: Sequence[str], log_file: Path, pid_file: Path, cwd: Path,
          env: Mapping[str, str] | None = None) -> int:
    """Start argv in the background (own session), output to log_file; write its pid."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    full_env: dict[str, str] = dict(os.environ)
    if env:
        full_env.update(env)
    with open(log_file, "ab") as log:
        log.write(f"\n==== hudi-cdc local up {time.strftime('%Y-%m-%dT%H:%M:%S')} ====\n".encode())
        log.flush()
        proc = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(cwd), env=full_env, start_new_session=True, close_fds=True)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(f"{proc.pid}\n")
    _children[proc.pid] = proc
    return proc.pid


# Popen objects of children started by this Python process, so their exit is reaped (no zombies)
_children: dict[int, subprocess.Popen] = {}


def exit_code(pid: int) -> int | None:
    proc = _children.get(pid)
    return proc.poll() if proc is not None else None


def stop(pid: int, timeout: float = 20.0) -> bool:
    """SIGTERM the process group led by pid, SIGKILL after timeout. True if it was running."""
    if not is_alive(pid):
        return False
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    except PermissionError:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid in _children:
            _children[pid].poll()
        if not is_alive(pid):
            return True
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if pid in _children:
        try:
            _children[pid].wait(5)
        except subprocess.TimeoutExpired:
            pass
    return True


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


_INTERESTING = re.compile(r"(ERROR|Exception|Error:|FATAL|Caused by|Address already in use|BindException)")


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the OS's pick)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_bindable(host: str, port: int) -> bool:
    """Could a server listen on ``port`` now? (SO_REUSEADDR as a server sets it: a port in TIME_WAIT after
    the last stop is free for it)"""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def log_tail(log_file: Path, lines: int = 6) -> str:
    """The service's own words: the last error-looking lines of its latest run, else its last lines."""
    try:
        text = log_file.read_text(errors="replace")
    except OSError:
        return "(no log)"
    run = text.rsplit("==== hudi-cdc local up", 1)[-1].splitlines()[1:]
    return error_lines(run, _INTERESTING, keep=lines, empty="(empty log)")


def wait_until(check: Callable[[], bool], timeout: float, still_running: Callable[[], bool],
               interval: float = 0.5) -> str:
    """Poll check() until True ('ready'), the process dies ('exited') or timeout ('timeout')."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check():
                return "ready"
        except Exception:  # noqa: BLE001 - a probe failing means "not yet"
            pass
        if not still_running():
            return "exited"
        if time.monotonic() >= deadline:
            return "timeout"
        time.sleep(interval)
