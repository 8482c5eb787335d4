"""A throwaway MariaDB server from Debian's packages (mariadb-server), for development and tests.

``LocalMariaDB(directory).start()`` runs mariadb-install-db (once) in ``directory`` and starts
mariadbd on 127.0.0.1 on a free port, its socket, pid file, error log and binary logs inside the
directory, with what change capture needs: ``log_bin``, ``binlog_format=ROW``,
``binlog_row_image=FULL`` and a ``server_id``. ``stop()`` shuts it down. No option file is read
(``--no-defaults``): the Debian service's /etc/mysql settings never leak in. As root the server
runs as root (``--user=root``): it is a throwaway server in a private directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack.process import free_port

SUPERUSER = "root"
SETTINGS = {
    "binlog-format": "ROW",
    "binlog-row-image": "FULL",
    "server-id": "1",
    "bind-address": "127.0.0.1",
    "skip-name-resolve": None,
    "innodb-buffer-pool-size": "64M",
    "innodb-log-file-size": "48M",
    "innodb-flush-log-at-trx-commit": "2",  # throwaway servers: durability of the server is not what tests check
    "sync-binlog": "0",
    "max-connections": "40",
    "performance-schema": "OFF",
    "character-set-server": "utf8mb4",
    "collation-server": "utf8mb4_general_ci",
    "default-time-zone": "+00:00",
}


def server_binary() -> Path:
    for name in ("mariadbd", "mysqld"):
        found = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
        if found:
            return Path(found)
    raise EnvironmentProblem("MariaDB server not found (install it with scripts/install-mariadb.sh: "
                             "apt-get install mariadb-server)")


def _install_db() -> str:
    for name in ("mariadb-install-db", "mysql_install_db"):
        found = shutil.which(name)
        if found:
            return found
    raise EnvironmentProblem("mariadb-install-db not found (apt-get install mariadb-server)")


@dataclass
class LocalMariaDB:
    directory: Path
    port: int = 0

    def __post_init__(self):
        self.directory = Path(self.directory).absolute()
        self.binary = server_binary()

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def socket(self) -> Path:
        return self.directory / "mariadbd.sock"

    @property
    def pid_file(self) -> Path:
        return self.directory / "mariadbd.pid"

    @property
    def log_file(self) -> Path:
        return self.directory / "mariadbd.err"

    @property
    def binlog_base(self) -> Path:
        return self.directory / "binlog" / "mariadb-bin"

    def _user_args(self) -> list[str]:
        return [f"--user={SUPERUSER}"] if os.geteuid() == 0 else []

    def install_db(self) -> None:
        if (self.data_dir / "mysql").is_dir():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "binlog").mkdir(exist_ok=True)
        # root logs in over the socket (unix_socket auth as the OS root) and over TCP with no
        # password from 127.0.0.1 only: a throwaway server; other users get passwords
        argv = [_install_db(), "--no-defaults", f"--datadir={self.data_dir}",
                "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve", *self._user_args()]
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            detail = (proc.stderr or proc.stdout).strip().splitlines()
            last = detail[-1] if detail else f"exit {proc.returncode}"
            raise EnvironmentProblem(f"mariadb-install-db failed: {last}")

    def _pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except OSError:
            return None
        return pid

    def running(self) -> bool:
        return self._pid() is not None

    def argv(self) -> list[str]:
        args = [str(self.binary), "--no-defaults", f"--datadir={self.data_dir}", f"--port={self.port}",
                f"--socket={self.socket}", f"--pid-file={self.pid_file}", f"--log-error={self.log_file}",
                f"--log-bin={self.binlog_base}", *self._user_args()]
        for key, value in SETTINGS.items():
            args.append(f"--{key}" if value is None else f"--{key}={value}")
        return args

    def start(self, timeout: float = 60.0) -> LocalMariaDB:
        """install the system tables (once), then start the server and wait until it answers."""
        self.install_db()
        if self.running():
            return self
        if not self.port:
            self.port = free_port()
        with open(self.directory / "mariadbd.out", "ab") as out:
            proc = subprocess.Popen(self.argv(), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise EnvironmentProblem(f"mariadbd exited with {proc.returncode} (log: {self.log_file})")
            if self.socket.exists() and self._answers():
                return self
            time.sleep(0.2)
        proc.kill()
        raise EnvironmentProblem(f"mariadbd did not answer within {timeout:.0f} s (log: {self.log_file})")

    def _answers(self) -> bool:
        try:
            conn = self.connect()
        except Exception:  # noqa: BLE001 - not up yet
            return False
        conn.close()
        return True

    def connect(self, database: str | None = None, autocommit: bool = True):
        """A pymysql connection as root over TCP."""
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.port, user=SUPERUSER, database=database,
                               autocommit=autocommit, connect_timeout=10, charset="utf8mb4")

    def stop(self, timeout: float = 60.0) -> None:
        pid = self._pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGTERM)  # a clean shutdown
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:  # started by this process: reaped here, else it stays a zombie that kill(pid, 0) finds for ever
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    return
            except ChildProcessError:
                pass  # another process's child (or reaped already): kill(pid, 0) says whether it runs
            try:
                os.kill(pid, 0)
            except OSError:
                return
            time.sleep(0.2)
        os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalMariaDB:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def throwaway(prefix: str = "hudi-cdc-mariadb-") -> LocalMariaDB:
    """A server in a new directory under the system temp dir."""
    return LocalMariaDB(Path(tempfile.mkdtemp(prefix=prefix)))
