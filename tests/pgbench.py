"""pgbench as the tests run it: `pgbench -i -s 1` (1 branch, 10 tellers, 100,000 accounts) cut to the first
ACCOUNTS accounts, and the built-in TPC-B-like transaction as a script drawing its account from those. Every
transaction still updates an existing account, teller and branch and inserts a history row (pgbench's invariant
sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta) holds), on a tenth of the rows to capture, write,
read back and verify."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.shared import require

ACCOUNTS = 10_000
# PostgreSQL 15's built-in "tpcb-like" script (pgbench.c), its account drawn from the accounts kept
TPCB_LIKE = f"""\\set aid random(1, {ACCOUNTS})
\\set bid random(1, 1 * :scale)
\\set tid random(1, 10 * :scale)
\\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
"""


def binary() -> str:
    found = shutil.which("pgbench") or "/usr/lib/postgresql/15/bin/pgbench"
    require(Path(found).exists(), "no pgbench (postgresql-15's client binaries): run scripts/setup.sh")
    return found


def initialise(pgbench: str, conn: list[str], dbname: str, env: dict[str, str]) -> None:
    """`pgbench -i -s 1`, then only the first ACCOUNTS accounts kept."""
    subprocess.run([pgbench, "-i", "-s", "1", "-q", "-n", *conn, dbname], env=env, check=True, capture_output=True,
                   timeout=300)
    subprocess.run(["psql", "-X", "-q", *conn, "-d", dbname, "-v", "ON_ERROR_STOP=1", "-c",
                    f"DELETE FROM pgbench_accounts WHERE aid > {ACCOUNTS}", "-c", "VACUUM pgbench_accounts"],
                   env=env, check=True, capture_output=True, timeout=300)


def script(tmp: Path) -> Path:
    """The TPC-B-like transaction over the kept accounts, for `pgbench -f`."""
    path = tmp / "tpcb-like.sql"
    path.write_text(TPCB_LIKE)
    return path
