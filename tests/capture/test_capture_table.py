"""`capture --table T` (one table on a slot, publication and offsets of its own) and
`capture --drop-slot` (removes what capture created), on a real PostgreSQL 15 with Debezium's embedded
engine in this process (mark postgres)."""

from __future__ import annotations

import json
import os

import pytest

from hudi_cdc.capture.offsets import offsets_file
from hudi_cdc.cli import main
from tests.capture.test_capture import _files, _load_moma, _records, _write_pipeline


def _server(postgres, sql: str) -> list:
    import psycopg

    with psycopg.connect(postgres.dsn(), autocommit=True) as conn:
        return conn.execute(sql).fetchall()


def _run(capsys, cfg, *args) -> tuple[int, str, str]:
    code = main(["-c", str(cfg), "capture", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.postgres
def test_capture_one_table_then_drop_its_slot(tmp_path, capsys, postgres, pg_database):
    db = pg_database("cap_table")
    _load_moma(db, artists=30, artworks=10)
    p = _write_pipeline(tmp_path, db, flush_size=100)
    cfg = tmp_path / "hudi-cdc.yaml"
    assert _run(capsys, cfg, "--once", "--drop-slot")[0] == 2  # one or the other: a usage error

    code, out, err = _run(capsys, cfg, "--once", "--table", "artists", "--timeout", "300", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["events"] == 30
    assert len({r["artist_id"] for r in _records(_files(p, "artists"))}) == 30
    assert _files(p, "artworks") == []  # the other table is not captured
    slots = {r[0] for r in _server(postgres, "SELECT slot_name FROM pg_replication_slots")}
    assert "hudi_cdc_cap_table_artists" in slots and "hudi_cdc_cap_table" not in slots  # the pipeline's slot untouched
    import psycopg

    with psycopg.connect(postgres.dsn("cap_table"), autocommit=True) as conn:
        published = conn.execute("SELECT pubname, tablename FROM pg_publication_tables").fetchall()
    assert published == [("hudi_cdc_cap_artists", "artists")]  # <publication>_<table>, for that table only
    from hudi_cdc.capture.capture import for_table

    narrowed = for_table(p, "artists")
    assert offsets_file(narrowed).exists() and not offsets_file(p).exists()

    code, out, err = _run(capsys, cfg, "--drop-slot", "--table", "artists", "-o", "json")
    assert code == 0, err
    assert json.loads(out) == {"slot": True, "publication": True, "offsets": True}
    assert "dropped replication slot hudi_cdc_cap_table_artists" in err
    assert "hudi_cdc_cap_table_artists" not in {r[0] for r in _server(postgres, "SELECT slot_name FROM "
                                                                                "pg_replication_slots")}
    assert not offsets_file(narrowed).exists()
    code, out, err = _run(capsys, cfg, "--drop-slot", "--table", "artists")
    assert code == 0 and "nothing to drop" in err
    code, out, err = _run(capsys, cfg, "--drop-slot", "--table", "nope")
    assert code == 2 and "unknown table 'nope'" in err


@pytest.mark.postgres
def test_continuous_capture_lands_changes_as_they_come_and_stops_on_sigterm(tmp_path, pg_database):
    """`capture` without --once: the snapshot, then changes committed while it runs land within the
    rotation time (a quiet topic's file is closed too); SIGTERM stops it with exit 0; a later
    `capture --once` resumes from its offsets, and the landed events replay to the database's rows."""
    import signal
    import subprocess
    import sys
    import time

    from hudi_cdc.capture.capture import capture_once
    from tests.capture.test_capture import ROOT, _db_state, _landed_state, _sql

    db = pg_database("cap_cont")
    _load_moma(db, artists=40, artworks=5)
    p = _write_pipeline(tmp_path, db, flush_size=1000)  # files close by time, not by count
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(tmp_path / "hudi-cdc.yaml"),
                             "capture", "--rotate-seconds", "1", "-o", "json"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(what, check, seconds=600):
        deadline = time.monotonic() + seconds
        while not check():
            assert proc.poll() is None, f"capture exited while waiting for {what}: {proc.communicate()}"
            assert time.monotonic() < deadline, f"no {what} within {seconds} s"
            time.sleep(0.2)

    try:
        wait_for("the snapshot", lambda: len(_records(_files(p, "artists"))) >= 40)
        _sql(db, "UPDATE artists SET name = 'live' WHERE artist_id = (SELECT min(artist_id) FROM artists)",
             "DELETE FROM artists WHERE artist_id = (SELECT max(artist_id) FROM artists)")
        wait_for("the changes", lambda: len(_records(_files(p, "artists"))) >= 42)
        assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "SIGTERM: stopping capture" in err
    assert json.loads(out)["events"] >= 42
    _sql(db, "UPDATE artists SET name = 'after' WHERE artist_id = (SELECT min(artist_id) FROM artists)")
    again = capture_once(p, progress=lambda m: None, timeout_seconds=300)
    assert not again.snapshot  # resumed from the continuous run's offsets
    assert _landed_state(p, "artists", "artist_id") == _db_state(db, "artists", "artist_id")
    assert _landed_state(p, "artworks", "artwork_id").keys() == _db_state(db, "artworks", "artwork_id").keys()
