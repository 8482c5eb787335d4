"""A real MariaDB (Debian's mariadb-server, binlog ROW/FULL) for the MySQL-family capture tests, once per
session.

``mariadb``: the started LocalMariaDB (root over TCP on 127.0.0.1, a free port).
``mariadb_database``: a factory making a fresh database readable by a capture user ``hudi_cdc`` that
has what Debezium's binlog connectors document (SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE,
REPLICATION CLIENT / BINLOG MONITOR) and whose password is only in the environment variable
HUDI_CDC_TEST_MYSQL_PASSWORD (made up here). The server is stopped and its directory removed at the end
of the session, also on failure.
"""

from __future__ import annotations

import os

import pytest

from tests.shared import missing

PASSWORD_ENV = "HUDI_CDC_TEST_MYSQL_PASSWORD"
USER = "hudi_cdc"


@pytest.fixture(scope="session")
def mariadb():
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.sources.mysql import local as mariadb_local

    try:
        import pymysql  # noqa: F401
    except ImportError:
        missing("pymysql is not installed (pip install pymysql; scripts/install-mariadb.sh)")
    try:
        server = mariadb_local.throwaway()
    except EnvironmentProblem as exc:
        missing(str(exc))
    server.start()
    try:
        os.environ[PASSWORD_ENV] = "capture-test-password"
        conn = server.connect()
        with conn.cursor() as cur:
            cur.execute(f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY %s", (os.environ[PASSWORD_ENV],))
            cur.execute(f"GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT, BINLOG MONITOR "
                        f"ON *.* TO '{USER}'@'127.0.0.1'")
        conn.close()
        yield server
    finally:
        server.remove()


@pytest.fixture(scope="session")
def mariadb_database(mariadb):
    """make(name) -> the database's settings for a pipeline file's source.database block."""
    made = set()

    def make(name: str) -> dict:
        if name not in made:
            conn = mariadb.connect()
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{name}`")
            conn.close()
            made.add(name)
        return {"kind": "mariadb", "host": "127.0.0.1", "port": mariadb.port, "name": name, "user": USER,
                "password_env": PASSWORD_ENV, "slot": f"hudi_cdc_{name}"}

    return make
