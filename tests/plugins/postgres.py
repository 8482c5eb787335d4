"""A real PostgreSQL (Debian's packages, wal_level=logical) for the capture tests, once per session.

``postgres``: the started LocalPostgres (superuser ``postgres`` over TCP on 127.0.0.1, a free port).
``pg_database``: a factory making a fresh database owned by a replication role ``hudi_cdc``
whose password is only in the environment variable HUDI_CDC_TEST_PGPASSWORD (made up here).
The cluster is stopped and its directory removed at the end of the session, also on failure.
"""

from __future__ import annotations

import os

import pytest

from tests.shared import missing

PASSWORD_ENV = "HUDI_CDC_TEST_PGPASSWORD"
ROLE = "hudi_cdc"


@pytest.fixture(scope="session")
def postgres():
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.sources.postgres import local as pg_local

    try:
        pg = pg_local.throwaway()
    except EnvironmentProblem as exc:
        missing(str(exc))
    pg.start()
    try:
        import psycopg

        os.environ[PASSWORD_ENV] = "capture-test-password"
        with psycopg.connect(pg.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {ROLE} LOGIN REPLICATION PASSWORD '{os.environ[PASSWORD_ENV]}'")
        yield pg
    finally:
        pg.remove()


@pytest.fixture(scope="session")
def pg_database(postgres):
    """make(name) -> the database's settings for a pipeline file's source.database block."""
    import psycopg

    made = set()

    def make(name: str) -> dict:
        if name not in made:
            with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name} OWNER {ROLE}")
            made.add(name)
        # replication slots are per server: one per test database
        return {"host": "127.0.0.1", "port": postgres.port, "name": name, "user": ROLE, "password_env": PASSWORD_ENV,
                "slot": f"hudi_cdc_{name}"}

    return make
