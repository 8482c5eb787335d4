"""`hudi-cdc demo DIR --from-mariadb` through the real CLI (lean: one run): its own MariaDB, a typed
table loaded, Debezium's MariaDB connector, bootstrap and stream --once through spark-submit, SQL
changes with a DDL, verify; the lake read back with hudi-rs equals the database; the password stays
out of every file the demo writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hudi_cdc.config import load_pipeline
from hudi_cdc.lake.reader import read_table
from tests.cli import run_cli
from tests.shared import missing

pytestmark = [pytest.mark.mariadb, pytest.mark.e2e]
SECRET = "demo-secret-0815"


def test_demo_from_mariadb(tmp_path):
    import pymysql

    from hudi_cdc.demo.mariadb import DATABASE, PASSWORD_ENV, SERVER_DIR
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.sources.mysql import local as mariadb_local

    try:
        mariadb_local.server_binary()
    except EnvironmentProblem as exc:
        missing(str(exc))
    d = tmp_path / "demo"
    env = {**os.environ, PASSWORD_ENV: SECRET}
    try:
        proc = run_cli("demo", str(d), "--from-mariadb", "--keep-db", cwd=tmp_path, env=env, timeout=1200)
        assert proc.returncode == 0, proc.stderr[-3000:]
        err = proc.stderr
        assert "capture --once: snapshot, 200 events" in err
        assert "verify orders (COPY_ON_WRITE): equal" in err and "verify orders (MERGE_ON_READ): equal" in err, err
        p = load_pipeline(d / "hudi-cdc.yaml")
        assert p.source.database.kind == "mariadb"
        server = mariadb_local.LocalMariaDB(d / SERVER_DIR, port=p.source.database.port)
        conn = server.connect(DATABASE)
        with conn.cursor(pymysql.cursors.DictCursor) as cur:
            cur.execute("SELECT order_id, customer, region, qty, note FROM orders")
            want = {r["order_id"]: r for r in cur.fetchall()}
        conn.close()
        assert 2 not in want and want[3]["region"] == "moved" and 1002 in want and len(want) == 201
        for tt in ("COPY_ON_WRITE", "MERGE_ON_READ"):
            rows = read_table(p.base_path("orders", tt), columns=["order_id", "customer", "region", "qty", "note"])
            assert {r["order_id"]: r for r in rows} == want, tt
        written = [f for f in d.rglob("*") if f.is_file() and SERVER_DIR.parts[-1] not in f.parts]
        assert written and not [f for f in written if SECRET.encode() in f.read_bytes()]
    finally:
        server = mariadb_local.LocalMariaDB(d / SERVER_DIR)
        server.stop()
    assert not Path(d / SERVER_DIR / "mariadbd.pid").exists() or not server.running()
