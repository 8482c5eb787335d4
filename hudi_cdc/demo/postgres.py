"""`hudi-cdc demo DIR --from-postgres`: the seed's story from a real PostgreSQL, end to end, locally.

A PostgreSQL 15 cluster of the demo's own (Debian's package, wal_level=logical, a free port, its data
in DIR/.hudi-cdc/postgres) is started, unless ``dsn`` names a database or DIR's pipeline file has a
``source.database`` already. The MoMA sample is loaded into it (hudi_cdc/demo/moma_db.py), the
pipeline file gets a ``source.database`` block (the password only in the environment variable it
names), then: capture --once (the snapshot) -> bootstrap (CoW and MoR) -> seed 001's changes by SQL
-> capture --once -> stream --once per table -> verify every table and type -> the rows of artist 299
and artwork 128447, in the lake and in the database. Differences found by verify raise TablesDiffer
(exit 10) after the rows are shown. The demo's own server is stopped at the end unless ``keep_db``.

Re-running is safe: the cluster, the capture offsets and the tables are kept in DIR, so a second run
takes no new snapshot, skips bootstrap and the seed's statements (artist 299 is gone), its stream
rounds commit nothing and verify passes again.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hudi_cdc import pipeline as pipe
from hudi_cdc.common.text import log_progress, text_table
from hudi_cdc.config import Pipeline, load_pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources.postgres.local import LocalPostgres

if TYPE_CHECKING:
    from hudi_cdc.sources.verify import VerifyResult

Progress = Callable[[str], None]
ROLE = "hudi_cdc"
DBNAME = "moma"
PASSWORD_ENV = "HUDI_CDC_DEMO_PGPASSWORD"
CLUSTER_DIR = Path(".hudi-cdc") / "postgres"
DB_SHOW = {
    "artists": ("artist_id", 299, ["artist_id", "name", "nationality", "gender", "birth_year", "death_year"]),
    "artworks": ("artwork_id", 128447, ["artwork_id", "title", "date", "acquisition_date", "dimensions",
                                        "classification"]),
}


@dataclass
class Source:
    """Where the demo's database is: the pipeline and, when the demo runs it, its own server."""

    pipeline: Pipeline
    server: LocalPostgres | None = None
    password_generated: bool = False  # the role's password is random, known to this process only


def database_from_dsn(dsn: str, password_env: str | None) -> dict:
    """A source.database block from a libpq DSN (key=value or postgresql:// URI) without a password."""
    from psycopg import conninfo

    try:
        parts = conninfo.conninfo_to_dict(dsn)
    except Exception as exc:  # psycopg.ProgrammingError: not a DSN
        raise ConfigError(f"--pg-dsn: not a libpq connection string: {' '.join(str(exc).split())}") from None
    if "password" in parts:
        raise ConfigError("--pg-dsn: holds a password; put it in an environment variable and name that with "
                          "--password-env (passwords never go in argv or files)")
    missing = [k for k in ("dbname", "user") if not parts.get(k)]
    if missing:
        raise ConfigError(f"--pg-dsn: needs {' and '.join(missing)} (e.g. 'host=db port=5432 dbname=moma user=hudi')")
    return {"host": str(parts.get("host") or "127.0.0.1"), "port": int(parts.get("port") or 5432),
            "name": str(parts["dbname"]), "user": str(parts["user"]), "password_env": password_env or "PGPASSWORD"}


def database_line(db: dict, comment: str = "") -> str:
    """The pipeline file's source.database entry, on one line (flow style)."""
    body = ", ".join(f"{k}: {db[k]}" for k in ("host", "port", "name", "user", "password_env"))
    return f"database: {{{body}}}" + (f"   # {comment}" if comment else "")


def _write_pipeline(directory: Path, db: dict, comment: str, registry: str, metastore: str) -> Path:
    from hudi_cdc.demo.workspace import PIPELINE_FILE, sample_pipeline_text

    directory.mkdir(parents=True, exist_ok=True)
    path = directory / PIPELINE_FILE
    path.write_text(sample_pipeline_text(registry, metastore, database_line(db, comment)))
    return path


def _set_port(path: Path, port: int) -> None:
    """The demo's own server got another port than the file names (the old one was taken)."""
    text = path.read_text()
    new, n = re.subn(r"(\n  database: \{host: 127\.0\.0\.1, port: )\d+", rf"\g<1>{port}", text, count=1)
    if n != 1:
        raise ConfigError(f"{path}: source.database is not the demo's one-line block; set its port to {port} "
                          "or use another directory")
    path.write_text(new)


def _own_server(directory: Path, cfg: Path, registry: str, metastore: str, progress: Progress) -> Source:
    """Start (initdb the first time) the demo's cluster in DIR/.hudi-cdc/postgres, with the role and
    database the pipeline file names; the role's password is set from PASSWORD_ENV (random if unset)."""
    import psycopg
    from psycopg import sql

    from hudi_cdc.stack.process import port_bindable

    server = LocalPostgres(directory / CLUSTER_DIR)
    saved = load_pipeline(cfg).source.database if cfg.exists() else None
    fresh = not (server.data_dir / "PG_VERSION").exists()
    if not server.running():
        server.port = saved.port if saved and port_bindable("127.0.0.1", saved.port) else 0
        progress(f"{'initdb and ' if fresh else ''}starting PostgreSQL {server.bin.parent.name} in {server.directory}")
        server.start()
        progress(f"PostgreSQL listens on 127.0.0.1:{server.port} (wal_level=logical)")
    else:
        progress(f"PostgreSQL of {server.directory} runs already on 127.0.0.1:{server.port}")
    try:
        generated = not os.environ.get(PASSWORD_ENV)
        password = os.environ.get(PASSWORD_ENV) or secrets.token_urlsafe(18)
        os.environ[PASSWORD_ENV] = password  # capture and verify read it from there (hidden from Spark jobs)
        with psycopg.connect(server.dsn(), autocommit=True) as su:
            if su.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone() is None:
                su.execute(sql.SQL("CREATE ROLE {} LOGIN REPLICATION").format(sql.Identifier(ROLE)))
                progress(f"created role {ROLE} (LOGIN REPLICATION)")
            su.execute(sql.SQL("ALTER ROLE {} PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(password)))
            if su.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DBNAME,)).fetchone() is None:
                su.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DBNAME), sql.Identifier(ROLE)))
                progress(f"created database {DBNAME} owned by {ROLE}")
        db = {"host": "127.0.0.1", "port": server.port, "name": DBNAME, "user": ROLE, "password_env": PASSWORD_ENV}
        if saved is None:
            written = _write_pipeline(directory, db, "the demo's own PostgreSQL (.hudi-cdc/postgres)", registry,
                                      metastore)
            progress(f"wrote {written}")
        elif saved.port != server.port:
            _set_port(cfg, server.port)
            progress(f"{cfg}: source.database.port {saved.port} -> {server.port}")
        return Source(load_pipeline(cfg), server, generated)
    except BaseException:
        server.stop()
        raise


def open_source(directory: Path, dsn: str | None, password_env: str | None, registry: str, metastore: str,
                progress: Progress) -> Source:
    from hudi_cdc.demo.workspace import PIPELINE_FILE

    cfg = directory / PIPELINE_FILE
    own = (directory / CLUSTER_DIR / "data" / "PG_VERSION").exists()
    if cfg.exists():
        p = load_pipeline(cfg)
        if p.source.database is None:
            raise ConfigError(f"{cfg} has no source.database (a MoMA demo's file?): give --from-postgres another "
                              "directory, or --pg-dsn with a new one")
        if dsn:
            want = database_from_dsn(dsn, password_env)
            have = p.source.database
            if (have.host, have.port, have.name, have.user) != (want["host"], want["port"], want["name"], want["user"]):
                raise ConfigError(f"{cfg} reads {have.user}@{have.host}:{have.port}/{have.name}, not the --pg-dsn's "
                                  f"database: use another directory or drop --pg-dsn")
            return Source(p)
        if own:
            return _own_server(directory, cfg, registry, metastore, progress)
        progress(f"{cfg}: source.database {p.source.database.user}@{p.source.database.host}:"
                 f"{p.source.database.port}/{p.source.database.name}")
        return Source(p)
    if dsn:
        db = database_from_dsn(dsn, password_env)
        progress(f"wrote {_write_pipeline(directory, db, '', registry, metastore)}")
        return Source(load_pipeline(cfg))
    return _own_server(directory, cfg, registry, metastore, progress)


@contextlib.contextmanager
def _hidden(var: str | None) -> Iterator[None]:
    """The password variable the demo set itself stays out of the Spark jobs' environment."""
    value = os.environ.pop(var, None) if var else None
    try:
        yield
    finally:
        if var and value is not None:
            os.environ[var] = value


def _capture(p: Pipeline, progress: Progress) -> dict:
    from hudi_cdc.capture.capture import capture_once

    r = capture_once(p, progress=progress)
    progress(f"capture --once: {'snapshot, ' if r.snapshot else 'no new snapshot, '}{r.events} events into "
             f"{r.files} file(s) in {r.seconds} s")
    return r.to_dict()


def verify_all(p: Pipeline, progress: Progress) -> list:
    from hudi_cdc.sources.verify import verify

    results = []
    for table, tt in p.targets():
        r = verify(p, table, tt)
        progress(f"verify {r.summary()}")
        results.append(r)
    return results


def _show_db_rows(p: Pipeline, progress: Progress, show: Progress) -> None:
    from psycopg import sql
    from psycopg.rows import dict_row

    from hudi_cdc.sources import tables as src
    from hudi_cdc.sources.postgres import db as pg

    with pg.connect(p) as conn:
        for table, (key, value, cols) in DB_SHOW.items():
            if table not in p.tables:
                continue
            st = src.source_table(p, table)
            query = sql.SQL("SELECT {} FROM {} WHERE {} = %s").format(
                sql.SQL(", ").join(sql.Identifier(c) for c in cols), sql.Identifier(st.schema, st.table),
                sql.Identifier(key))
            rows = conn.cursor(row_factory=dict_row).execute(query, (value,)).fetchall()
            progress("")
            progress(f"{table} {value} in the database ({st.qualified}):")
            show(text_table(rows, cols) if rows else f"(no row: {table} {value} is deleted)")


def raise_if_differ(results: Sequence[VerifyResult]) -> None:
    """The demo's outcome once the rows are shown: TablesDiffer (exit 10) naming every table that differs."""
    from hudi_cdc.sources.verify import TablesDiffer

    differ = [r for r in results if not r.equal]
    if differ:
        raise TablesDiffer(f"verify: {len(differ)} of {len(results)} tables differ from the database: "
                           + "; ".join(r.summary() for r in differ))


def run_postgres_demo(directory: Path, *, dsn: str | None = None, password_env: str | None = None,
                      keep_db: bool = False, registry: str = "", metastore: str = "",
                      progress: Progress = log_progress, show: Progress = log_progress) -> dict:
    from hudi_cdc.demo import moma_db, register_schemas, show_rows
    from hudi_cdc.sources.postgres import db as pg

    t0 = time.time()
    timings: dict = {}
    source = open_source(Path(directory), dsn, password_env, registry, metastore, progress)
    p = source.pipeline
    hide = PASSWORD_ENV if source.password_generated else None
    results: list = []
    try:
        with pg.connect(p) as conn:
            moma_db.load_sample(conn, progress)
        started = time.time()
        first = _capture(p, progress)
        timings["capture_snapshot_s"] = round(time.time() - started, 1)
        register_schemas(p, progress)
        if any(not pipe.table_exists(p, t, tt) for t, tt in p.targets()):
            started = time.time()
            with _hidden(hide):
                pipe.bootstrap(p, force=True, progress=progress)
            timings["bootstrap_s"] = round(time.time() - started, 1)
        else:
            progress("tables exist already: skipping bootstrap")
        with pg.connect(p) as conn:
            moma_db.apply_seed_changes(conn, progress)
        started = time.time()
        second = _capture(p, progress)
        timings["capture_changes_s"] = round(time.time() - started, 1)
        for table in p.tables:
            started = time.time()
            with _hidden(hide):
                pipe.stream(p, table, once=True, progress=progress)
            timings[f"stream_{table}_s"] = round(time.time() - started, 1)
        started = time.time()
        results = verify_all(p, progress)
        timings["verify_s"] = round(time.time() - started, 1)
        show_rows(p, progress, show)
        _show_db_rows(p, progress, show)
    finally:
        server = source.server
        if server is not None and keep_db:
            progress(f"PostgreSQL left running on 127.0.0.1:{server.port} (--keep-db; a run without it stops it)"
                     + (f"; the role's password was random: export {PASSWORD_ENV} before the demo to use "
                        "`hudi-cdc capture/verify` on it yourself" if source.password_generated else ""))
        elif server is not None:
            server.stop()
            progress(f"stopped PostgreSQL (its data stays in {server.directory} for the next run)")
    timings["total_s"] = round(time.time() - t0, 1)
    progress(f"timings: {timings}")
    raise_if_differ(results)
    return {"timings": timings, "snapshot": first["snapshot"], "captured": [first["events"], second["events"]],
            "verify": [r.to_dict() for r in results]}
