"""A throwaway PostgreSQL cluster from Debian's packages, for development and tests.

``LocalPostgres(directory).start()`` runs initdb (once) in ``directory`` with wal_level=logical,
listens on 127.0.0.1 on a free port (no Unix socket outside the directory) and starts it with
pg_ctl; ``stop()`` stops it. PostgreSQL refuses to run as root, so when hudi-cdc runs as root the
server runs as the ``postgres`` system user and ``directory`` must be one that user can reach
(e.g. made with tempfile.mkdtemp under /tmp, which ``throwaway()`` does).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hudi_cdc.errors import EnvironmentProblem
from hudi_cdc.stack.process import free_port

SUPERUSER = "postgres"
SETTINGS = {
    "wal_level": "logical",
    # a test session or a demo creates a slot per database/table and leaves them for inspection: room for many
    "max_replication_slots": "64",
    "max_wal_senders": "32",
    "listen_addresses": "'127.0.0.1'",
    "fsync": "off",  # throwaway clusters: durability of the server is not what tests check
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "64MB",
    "max_connections": "100",
}


def bin_dir(version: str | None = None) -> Path:
    """The newest (or the given) PostgreSQL server version installed from Debian's packages."""
    pattern = f"/usr/lib/postgresql/{version or '*'}/bin/initdb"
    found = sorted(glob.glob(pattern), key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if not found:
        raise EnvironmentProblem("PostgreSQL server not found under /usr/lib/postgresql "
                                 "(install it with scripts/install-postgres.sh: apt-get install postgresql-15)")
    return Path(found[-1]).parent


def _as_server_user(argv: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", SUPERUSER, "--", *argv]


def _chown_tree(path: Path) -> None:
    if os.geteuid() != 0:
        return
    pw = pwd.getpwnam(SUPERUSER)
    for root, _dirs, files in os.walk(path):
        os.chown(root, pw.pw_uid, pw.pw_gid)
        for name in files:
            os.chown(os.path.join(root, name), pw.pw_uid, pw.pw_gid)


def _check_reachable(path: Path) -> None:
    """As root the server runs as the postgres user, which must be able to enter ``path``."""
    if os.geteuid() != 0:
        return
    ok = subprocess.run(_as_server_user(["test", "-x", str(path), "-a", "-w", str(path)]),
                        capture_output=True).returncode == 0
    if not ok:
        raise EnvironmentProblem(f"PostgreSQL runs as user {SUPERUSER} here (hudi-cdc runs as root) and cannot "
                                 f"enter {path}: use a directory whose parents every user may enter (e.g. under "
                                 "/tmp), or a database of your own")


def _run(argv: list[str], what: str) -> str:
    proc = subprocess.run(_as_server_user(argv), capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise EnvironmentProblem(f"{what} failed: {detail[-1] if detail else f'exit {proc.returncode}'}")
    return proc.stdout


@dataclass
class LocalPostgres:
    directory: Path
    port: int = 0
    version: str | None = None

    def __post_init__(self):
        self.directory = Path(self.directory).absolute()  # the server runs with its data dir as cwd
        self.bin = bin_dir(self.version)

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def log_file(self) -> Path:
        return self.directory / "postgres.log"

    def dsn(self, dbname: str = "postgres", user: str = SUPERUSER) -> str:
        return f"host=127.0.0.1 port={self.port} dbname={dbname} user={user}"

    def initdb(self) -> None:
        if (self.data_dir / "PG_VERSION").exists():
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        _chown_tree(self.directory)
        _check_reachable(self.directory)
        # Local superuser by trust over TCP from 127.0.0.1 only (a throwaway cluster); other
        # roles log in with scram passwords, as a real server would ask.
        _run([str(self.bin / "initdb"), "-D", str(self.data_dir), "-U", SUPERUSER, "-E", "UTF8",
              "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync"], "initdb")
        hba = self.data_dir / "pg_hba.conf"
        trust = (f"host all {SUPERUSER} 127.0.0.1/32 trust\n"
                 f"host replication {SUPERUSER} 127.0.0.1/32 trust\n")
        hba.write_text(trust + hba.read_text())
        _chown_tree(self.directory)

    def running(self) -> bool:
        """Is this cluster's server up (``pg_ctl status``)? Its port is then taken from postmaster.pid."""
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.exists():
            return False
        proc = subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data_dir), "status"]),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return False
        lines = pid_file.read_text().splitlines()
        if len(lines) > 3 and lines[3].strip().isdigit():  # line 4 of postmaster.pid: the port
            self.port = int(lines[3])
        return True

    def start(self) -> LocalPostgres:
        """initdb (once), then start the server; a server of this directory that runs already is
        used as it is (its port from postmaster.pid)."""
        self.initdb()
        if self.running():
            return self
        if not self.port:
            self.port = free_port()
        opts = " ".join(f"-c {k}={v}" for k, v in SETTINGS.items())
        opts += f" -p {self.port} -c unix_socket_directories={self.data_dir}"
        _run([str(self.bin / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_file), "-o", opts,
              "-w", "-t", "60", "start"], f"starting PostgreSQL (log: {self.log_file})")
        return self

    def stop(self) -> None:
        if (self.data_dir / "postmaster.pid").exists():
            _run([str(self.bin / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
                 "stopping PostgreSQL")

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def throwaway(prefix: str = "hudi-cdc-pg-") -> LocalPostgres:
    """A cluster in a new directory under the system temp dir (reachable by the server user)."""
    d = Path(tempfile.mkdtemp(prefix=prefix))
    d.chmod(0o755)
    return LocalPostgres(d)
