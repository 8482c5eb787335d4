"""`hudi-cdc demo DIR --from-postgres` through the real CLI: its own PostgreSQL 15 cluster, the MoMA
sample loaded, Debezium capture, bootstrap and stream --once through spark-submit, seed 001's SQL,
verify; then the results read back with hudi-rs and from the database, and a second run that
changes nothing (no snapshot, no bootstrap, no commit) and stops the cluster."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from hudi_cdc.config import load_pipeline
from hudi_cdc.lake.reader import read_table, rows_by_key
from tests.cli import run_cli
from tests.shared import missing, timeline_files

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[2]
SECRET = "demo-secret-4711"
DIMENSIONS = "composition: 20 13/16 x 25 3/16 in (52.9 x 64 cm); sheet: 24 7/16 x 29 1/2 in (62.1 x 75 cm)"
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def _cli(*args, cwd: Path, env: dict):
    return run_cli(*args, cwd=cwd, env=env, timeout=1200)


@pytest.fixture
def base():
    """A directory the postgres user can enter (tests run as root: pytest's tmp_path is 0700)."""
    from hudi_cdc.errors import EnvironmentProblem
    from hudi_cdc.sources.postgres import local as pg_local

    try:
        pg_local.bin_dir()
    except EnvironmentProblem as exc:
        missing(str(exc))
    d = Path(tempfile.mkdtemp(prefix="hudi-cdc-pgdemo-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        cluster = d / "demo" / ".hudi-cdc" / "postgres"
        if (cluster / "data" / "PG_VERSION").exists():
            pg_local.LocalPostgres(cluster).stop()
        shutil.rmtree(d, ignore_errors=True)


def _timelines(d: Path) -> dict[str, list[str]]:
    return {t.parent.parent.name: timeline_files(t.parent.parent)
            for t in (d / "lake").glob("*/.hoodie/hoodie.properties")}


def _files_holding(root: Path, needle: bytes) -> list[Path]:
    data = root / ".hudi-cdc" / "postgres" / "data"  # the server's own files (the role's scram hash)
    return [p for p in root.rglob("*") if p.is_file() and data not in p.parents and needle in p.read_bytes()]


def test_demo_from_postgres_verifies_and_reruns(base):
    import psycopg

    d = base / "demo"
    env = {k: v for k, v in os.environ.items() if k != "HUDI_CDC_DEMO_PGPASSWORD"}
    started = time.monotonic()
    first = _cli("demo", str(d), "--from-postgres", "--keep-db", cwd=base,
                 env={**env, "HUDI_CDC_DEMO_PGPASSWORD": SECRET})
    first_s = time.monotonic() - started
    assert first.returncode == 0, first.stderr[-4000:]
    err = first.stderr
    assert "capture --once: snapshot, 20090 events" in err, err[-3000:]
    assert "capture --once: no new snapshot, 11 events" in err
    for table in ("artists", "artworks"):
        for tt in TYPES:
            assert f"verify {table} ({tt}): equal" in err
    assert first.stdout.count("(no row: artists 299 is deleted)") == 3  # CoW, MoR, the database
    assert first.stdout.count("Picador (La Pique)") == 3
    assert "PostgreSQL left running" in err
    # the password: only in the environment (never in argv, the pipeline file, logs or output)
    assert SECRET not in first.stdout + err and not _files_holding(d, SECRET.encode())
    assert "password_env: HUDI_CDC_DEMO_PGPASSWORD" in (d / "hudi-cdc.yaml").read_text()

    p = load_pipeline(d / "hudi-cdc.yaml")
    for tt in TYPES:  # read back with hudi-rs
        art = rows_by_key(read_table(p.base_path("artworks", tt)), "artwork_id")[128447]
        assert (art["date"], art["acquisition_date"], art["dimensions"], art["__op"]) == (1960, "2009-04-19",
                                                                                           DIMENSIONS, "u")
        artists = rows_by_key(read_table(p.base_path("artists", tt)), "artist_id")
        assert 299 not in artists and len(artists) == 15088
    db = p.source.database
    assert db is not None
    with psycopg.connect(host=db.host, port=db.port, dbname=db.name, user=db.user, password=SECRET) as conn:
        assert conn.execute("SELECT date, acquisition_date, dimensions FROM artworks WHERE artwork_id = 128447"
                            ).fetchone() == (1960, "2009-04-19", DIMENSIONS)
        assert conn.execute("SELECT count(*) FROM artists WHERE artist_id = 299").fetchone() == (0,)
    timelines = _timelines(d)
    assert len(timelines) == 4

    started = time.monotonic()
    second = _cli("demo", str(d), "--from-postgres", cwd=base, env=env)  # a random password this time
    second_s = time.monotonic() - started
    assert second.returncode == 0, second.stderr[-4000:]
    err = second.stderr
    assert "runs already" in err and "capture --once: no new snapshot, 0 events" in err
    assert "tables exist already: skipping bootstrap" in err and "seed 001's changes applied already" in err
    assert err.count(": equal (") == 4 and "stopped PostgreSQL" in err
    assert _timelines(d) == timelines  # the stream rounds committed nothing
    from hudi_cdc.sources.postgres import local as pg_local

    assert not pg_local.LocalPostgres(d / ".hudi-cdc" / "postgres").running()
    print(f"\ndemo --from-postgres: first run {first_s:.1f} s, second run {second_s:.1f} s")
