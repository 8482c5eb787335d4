"""`hudi-cdc run` with a real PostgreSQL (issue 25): capture (Debezium) and `stream --all` (one Spark
application) under one supervisor; changes to two tables reach the lake (verify: the lake equals the
database, value by value), SIGTERM stops both with exit 0 and no half commit."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from tests.capture.test_capture import _cli, _load_moma, _pipeline_dict, _sql
from tests.cli import cli_env
from tests.jobs.test_stream_all_e2e import Lake

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


def test_run_captures_and_streams_every_table_then_stops_cleanly(tmp_path, pg_database):
    from hudi_cdc.sources.verify import verify

    db = pg_database("run_all")
    _load_moma(db, artists=40, artworks=30)
    conf = _pipeline_dict(db, types=("COPY_ON_WRITE",), flush_size=50)
    conf["stream"] = {"min_sync_interval_seconds": 1, "stop_timeout_seconds": 240}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(conf, sort_keys=False))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")

    snap = _cli(tmp_path, "capture", "--once")
    assert snap.returncode == 0, snap.stderr[-3000:]
    early = _cli(tmp_path, "run")  # nothing bootstrapped: refused before capture or Spark starts
    assert early.returncode == 6 and "run `hudi-cdc bootstrap` first" in early.stderr, early.stderr
    boot = _cli(tmp_path, "bootstrap")
    assert boot.returncode == 0, boot.stderr[-3000:]
    dry = _cli(tmp_path, "run", "--dry-run")
    assert dry.returncode == 0 and "would capture artists, artworks" in dry.stderr, dry.stderr[-2000:]

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
             "VALUES (5000, 'new', 1, 'Print', 1.5)")
        deadline = time.time() + 900  # a ceiling (a loaded machine), not a timing assert
        results = {}
        while time.time() < deadline:
            assert proc.poll() is None, out.read_text()[-3000:]
            results = {t: verify(p, t, "COPY_ON_WRITE") for t in ("artists", "artworks")}
            if all(r.equal for r in results.values()):
                break
            time.sleep(2)
        assert all(r.equal for r in results.values()), {t: r.summary() for t, r in results.items()}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(300) == 0, out.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    result = json.loads(res.read_text())
    assert result["capture"]["events"] >= 7 and not result["capture"]["snapshot"]
    assert sorted(r["state"] for r in result["stream"]) == ["stopped", "stopped"]
    assert all(r["failures"] == 0 for r in result["stream"]) and sum(r["commits"] for r in result["stream"]) >= 2
    lake = Lake.__new__(Lake)
    lake.pipeline = p
    assert [lake.dangling(t, "COPY_ON_WRITE") for t in ("artists", "artworks")] == [[], []]
    text = out.read_text()
    assert "SIGTERM: the job stops after its current round" in text and "Traceback" not in text
