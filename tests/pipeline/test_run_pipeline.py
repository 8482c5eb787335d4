"""`hudi-cdc run` with a real PostgreSQL (issue 25): capture (Debezium) and `stream --all` (one Spark
application) under one supervisor; changes reach the lake (verify: the lake equals the database, value by
value), SIGTERM stops both with exit 0 and no half commit.

A whole database (issue 38): 30 tables, 8 of them empty at the start, `init --from-database` ->
`capture --once` -> `bootstrap` (the empty ones bootstrapped empty) -> `run`: the changed tables (two
of them empty until the run) verify equal, `status` then shows every table with nothing landed
unapplied, and a quiet table (with rows, or empty) committed nothing in the run."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from tests.capture.test_capture import _cli, _load_moma, _sql
from tests.cli import cli_env
from tests.jobs.test_stream_all_e2e import Lake

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


WIDE = [f"w{i:02d}" for i in range(28)]  # w20..w27 empty at the start
CHANGED = ["artists", "artworks", *WIDE[:4], "w20", "w21"]


def _init(tmp_path, db) -> None:
    from hudi_cdc.cli import main

    _load_moma(db, artists=40, artworks=30)
    _sql(db, *[f"CREATE TABLE {t} (id int PRIMARY KEY, v text, n int)" for t in WIDE],
         *[f"INSERT INTO {t} SELECT g, 'v' || g, g FROM generate_series(1, 3) g" for t in WIDE[:20]])
    assert main(["init", str(tmp_path), "--from-database", "--dbname", db["name"], "--user", db["user"],
                 "--host", db["host"], "--port", str(db["port"]), "--password-env", db["password_env"]]) == 0
    cfg = tmp_path / "hudi-cdc.yaml"
    doc = yaml.safe_load(cfg.read_text())
    assert set(doc["tables"]) == {"artists", "artworks", *WIDE}, doc["tables"]
    for t in doc["tables"].values():
        t["table_types"] = ["COPY_ON_WRITE"]
    doc["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    doc["stream"] = {"min_sync_interval_seconds": 1, "stop_timeout_seconds": 240}
    cfg.write_text(yaml.safe_dump(doc, sort_keys=False))


def _verify(p, table):
    """verify's result; None while the table does not exist yet (one empty at the start)."""
    from hudi_cdc.errors import TableStateError
    from hudi_cdc.sources.verify import verify

    try:
        return verify(p, table, "COPY_ON_WRITE")
    except TableStateError:
        return None


def test_run_captures_and_streams_a_whole_database_then_stops_cleanly(tmp_path, pg_database):
    from hudi_cdc.lake.empty import is_empty_bootstrapped
    from hudi_cdc.lake.status import table_status
    from hudi_cdc.pipeline import table_exists

    db = pg_database("run_all")
    _init(tmp_path, db)
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    cow = "COPY_ON_WRITE"

    snap = _cli(tmp_path, "capture", "--once")
    assert snap.returncode == 0, snap.stderr[-3000:]
    early = _cli(tmp_path, "run")  # nothing bootstrapped: refused before capture or Spark starts
    assert early.returncode == 6 and "run `hudi-cdc bootstrap` first" in early.stderr, early.stderr
    boot = _cli(tmp_path, "bootstrap")
    assert boot.returncode == 0, boot.stderr[-3000:]
    assert all(is_empty_bootstrapped(p, t, cow) and not table_exists(p, t, cow) for t in WIDE[20:])
    dry = _cli(tmp_path, "run", "--dry-run")
    assert dry.returncode == 0 and "would capture artists, artworks" in dry.stderr, dry.stderr[-2000:]
    quiet_commits = table_status(p, "w10", cow).commits

    out, res = tmp_path / "run.err", tmp_path / "run.json"
    with open(out, "w") as err, open(res, "w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(tmp_path / "hudi-cdc.yaml"), "run",
                                 "--rotate-seconds", "1", "-o", "json"], cwd=tmp_path, env=cli_env(), stdout=fh,
                                stderr=err, text=True, start_new_session=True)
    try:
        _sql(db, "UPDATE artists SET name = 'run renamed' WHERE artist_id IN (SELECT artist_id FROM artists LIMIT 3)",
             "DELETE FROM artists WHERE artist_id = (SELECT max(artist_id) FROM artists)",
             "UPDATE artworks SET classification = 'Sculpture', price = 12.34 WHERE artwork_id = 4",
             "DELETE FROM artworks WHERE artwork_id = 5",
             "INSERT INTO artworks (artwork_id, title, artist_id, classification, price) "
             "VALUES (5000, 'new', 1, 'Print', 1.5)",
             *[f"UPDATE {t} SET v = 'changed', n = n + 10 WHERE id = 2" for t in WIDE[:4]],
             "INSERT INTO w20 VALUES (1, 'first', 1)", "INSERT INTO w21 VALUES (7, 'seven', 7), (8, NULL, 8)")
        deadline = time.time() + 900  # a ceiling (a loaded machine), not a timing assert
        results: dict = {}
        while time.time() < deadline:
            assert proc.poll() is None, out.read_text()[-3000:]
            results.update({t: _verify(p, t) for t in CHANGED if results.get(t) is None or not results[t].equal})
            if all(r is not None and r.equal for r in results.values()):
                break
            time.sleep(2)
        assert all(r is not None and r.equal for r in results.values()), \
            {t: r.summary() if r else "no table" for t, r in results.items()}
        # every table fresh: nothing landed that its table has not applied
        status = json.loads(_cli(tmp_path, "status", "-o", "json").stdout)
        assert len(status) == 30 and all(r["backlog_files"] == 0 for r in status), status
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) == 0, out.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    result = json.loads(res.read_text())
    assert result["capture"]["events"] >= 14 and not result["capture"]["snapshot"]
    by = {r["table"].rpartition(".")[2]: r for r in result["stream"]}
    assert len(by) == 30 and {r["state"] for r in by.values()} == {"stopped"}
    assert all(r["failures"] == 0 for r in by.values()) and all(by[t]["commits"] >= 1 for t in CHANGED)
    # quiet tables: no round at all (their checkpoints read without one), no commit, no file (the empty one
    # still has no table)
    assert by["w10"]["rounds"] == 0 and by["w10"]["commits"] == 0
    assert table_status(p, "w10", cow).commits == quiet_commits
    assert by["w27"]["rounds"] == 0 and not table_exists(p, "w27", cow)
    lake = Lake.__new__(Lake)
    lake.pipeline = p
    assert [lake.dangling(t, cow) for t in ("artists", "artworks", "w20")] == [[], [], []]
    text = out.read_text()
    assert "SIGTERM: the job stops after its current round" in text and "Traceback" not in text
