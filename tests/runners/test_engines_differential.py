"""The two engines on the same landed files: the real HoodieDeltaStreamer 0.14.0 (hudi.version
"0.14.0", engine hoodiestreamer) and hudi-cdc's streamer on Hudi 1.2.0 (engine hudi-cdc), both
driven the way `hudi-cdc bootstrap` / `hudi-cdc stream --once` drive them, CoW and MoR, round
after round. Every difference is asserted here and explained in docs/streamers.md.

The same rounds prove the 0.14 engine's CDC semantics against the replay of the landed events
(ordering inside a batch and against the stored row, stale events, key-only hard deletes, partition
moves, redelivered files, a round with nothing new), and that status, show, query --engine native,
inspect and report read the tables it wrote without a JVM (one lake, one set of JVMs for all of it).
"""

from __future__ import annotations

import json

import pytest

from hudi_cdc import pipeline as pipe
from hudi_cdc.cli import main
from hudi_cdc.config import parse_pipeline
from hudi_cdc.lake.reader import read_table, rows_by_key
from hudi_cdc.lake.status import pipeline_status
from hudi_cdc.runners.deltastreamer import runtime
from tests.runners.test_deltastreamer_real import BOTH, DATA_COLS, SNAPSHOT, Lake, ev
from tests.shared import require

pytestmark = [pytest.mark.spark, pytest.mark.deltastreamer]


@pytest.fixture(autouse=True)
def _deltastreamer_runtime():
    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")


def _quiet(_msg: str) -> None:
    pass


def _hudi_cdc_pipeline(lake: Lake, tmp):
    data = lake.pipeline.model_dump()
    data["hudi"] = {"version": "1.2.0"}
    data["lake"]["root"] = str(tmp / "lake-hudi-cdc")
    return parse_pipeline(data, "hudi-cdc.yaml", str(tmp / "hudi-cdc-work"))


def _rows(pipeline, table_type):
    rows = rows_by_key(read_table(pipeline.base_path("artists", table_type)), "artist_id")
    return {k: {c: v[c] for c in DATA_COLS} for k, v in rows.items()}


def _differences(ds, cdc):
    out = {}
    for tt in BOTH:
        a, b = _rows(ds, tt), _rows(cdc, tt)
        out[tt] = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    return out


def _cli_json(capsys, *argv) -> list[dict]:
    capsys.readouterr()
    assert main([*argv, "-o", "json"]) == 0, argv
    return json.loads(capsys.readouterr().out)


def _records(out) -> list[dict]:
    """The rows of `query as-of -o json` (a list of rows, or an object carrying them)."""
    if isinstance(out, dict):
        out = out.get("rows") or out.get("records") or []
    return out


def _status_and_jvm_free_readers(lake: Lake, capsys, tmp_path, source_ts_ms: int) -> None:
    """Tables HoodieDeltaStreamer 0.14 wrote (its checkpoint under deltastreamer.checkpoint.key, no
    hudi-cdc source position; MoR delete blocks where a partition move's delete, ordering int 0,
    meets key-only deletes, ordering the long __lsn): status shows the checkpoint, freshness and
    no backlog once everything landed was consumed; show, query --engine native, inspect and
    report read both types without a JVM and show the replayed state."""
    newest_ms = lake.mtime_ns // 1_000_000
    want = lake.expected()
    rows = {st.table_type: st for st in pipeline_status(lake.pipeline, "artists")}
    assert set(rows) == set(BOTH)
    for tt, st in rows.items():
        assert st.checkpoint == str(newest_ms), tt
        assert (st.backlog_files, st.backlog_bytes) == (0, 0), tt
        assert (st.source_ts_ms, st.source_ts_from) == (source_ts_ms, "landing"), tt  # the last file's newest
        assert st.freshness_seconds is not None and st.freshness_seconds > 0, tt

    for tt in ("cow", "mor"):
        out = _cli_json(capsys, "--config", lake.config, "status", "--table", "artists", "--type", tt,
                        "--max-backlog-files", "0")
        assert out[0]["backlog_files"] == 0 and out[0]["freshness_seconds"] is not None and not out[0]["breaches"]
        shown = _cli_json(capsys, "--config", lake.config, "show", "--table", "artists", "--type", tt)
        assert {r["artist_id"]: {c: r[c] for c in DATA_COLS} for r in shown} == want, tt
        latest = _cli_json(capsys, "--config", lake.config, "inspect", "commits", "--table", "artists", "--type", tt)
        assert latest, tt
        asof = _cli_json(capsys, "--config", lake.config, "query", "as-of", "--engine", "native", "--table",
                         "artists", "--type", tt, "--at", "2100-01-01")
        got = {r["artist_id"]: {c: r[c] for c in DATA_COLS} for r in _records(asof)}
        assert got == want, tt
        for what in ("stats", "files", "schema", "timeline", *(("compactions",) if tt == "mor" else ())):
            _cli_json(capsys, "--config", lake.config, "inspect", what, "--table", "artists", "--type", tt)
    report = _cli_json(capsys, "--config", lake.config, "report", "--out", str(tmp_path / "report"))
    assert len(report) == 2 and all(r["error"] is None for r in report), report
    assert sorted(r["deleted"] > 0 for r in report) == [True, True], report
    assert [r["source_ts_ms"] for r in report] == [source_ts_ms] * 2, report  # from the landed files, as status


def test_deltastreamer_and_hudi_cdc_streamer_write_the_same_rows(tmp_path, capsys, inprocess_jobs):
    (tmp_path / "hudi-cdc-work").mkdir()
    lake = Lake(tmp_path)
    cdc = _hudi_cdc_pipeline(lake, tmp_path)

    def both(op):
        if op == "BULK_INSERT":
            res = pipe.bootstrap(lake.pipeline, "artists", progress=_quiet)
            pipe.bootstrap(cdc, "artists", progress=_quiet)
        else:
            res = pipe.stream(lake.pipeline, "artists", once=True, progress=_quiet)
            pipe.stream(cdc, "artists", once=True, progress=_quiet)
        return res  # the 0.14 engine's results

    lake.land(SNAPSHOT[:15])
    lake.land(SNAPSHOT[15:] + [ev(2, 150, nat="French", name="two-v2")])  # later LSN wins inside one batch
    res = both("BULK_INSERT")
    assert [len(r["instants"]) for r in res] == [1, 1] and all(r["checkpoint"] for r in res)
    assert _differences(lake.pipeline, cdc) == {tt: [] for tt in BOTH}
    lake.assert_matches()

    # updates (two of one key in the same millisecond, ordered by LSN), a partition move, a key-only
    # delete with a null partition, a stale update, an insert; French rows (id % 3 == 1) share one file
    # group: the move out of it (key 1) and the key-only delete in it (key 13), in one round, put both
    # kinds of delete into that file group's delete block (MoR)
    changes = [ev(2, 221, name="two-b"), ev(2, 220, name="two-a"), ev(1, 200, nat="German", name="moved"),
               ev(3, 210, deleted=True), ev(4, 50, name="stale"), ev(40, 230, nat="Spanish", op="c"),
               ev(13, 235, deleted=True), ev(7, 225, name="seven")]
    lake.land(changes)
    both("UPSERT")
    assert _differences(lake.pipeline, cdc) == {tt: [] for tt in BOTH}
    lake.assert_matches()
    for tt in BOTH:
        rows = [r for r in read_table(lake.pipeline.base_path("artists", tt)) if r["artist_id"] == 1]
        assert [r["_hoodie_partition_path"] for r in rows] == ["nationality=German"], f"{tt}: row 1 not moved once"

    # a redelivered file (Kafka Connect is at-least-once) and a delete
    lake.land(changes + [ev(6, 300, deleted=True)])
    both("UPSERT")
    assert _differences(lake.pipeline, cdc) == {tt: [] for tt in BOTH}
    lake.assert_matches()

    # several changes of one key in one file, the delete first in file order but not in LSN order; a
    # stale delete (older than the stored row) is ignored
    lake.land([ev(9, 320, nat="French", name="nine-final"), ev(9, 300, deleted=True), ev(11, 310, deleted=True),
               ev(31, 330, nat="Spanish", op="c"), ev(8, 40, deleted=True)])
    res = both("UPSERT")
    assert all(len(r["instants"]) >= 1 for r in res)
    assert _differences(lake.pipeline, cdc) == {tt: [] for tt in BOTH}
    lake.assert_matches()

    # nothing new: no commit, the checkpoint stays
    res2 = pipe.stream(lake.pipeline, "artists", once=True, progress=_quiet)
    assert [r["skipped"] for r in res2] == [True, True]
    assert [r["checkpoint"] for r in res2] == [r["checkpoint"] for r in res]
    _status_and_jvm_free_readers(lake, capsys, tmp_path, source_ts_ms=330)

    # a late event older than the delete of key 6: hudi-cdc's tombstones keep the row deleted;
    # HoodieDeltaStreamer has no stored row to compare it with and writes it back (docs/streamers.md)
    lake.land([ev(6, 250, nat="French", name="late")])
    both("UPSERT")
    assert _differences(lake.pipeline, cdc) == {tt: [6] for tt in BOTH}
    for tt in BOTH:
        assert 6 not in _rows(cdc, tt)
        assert _rows(lake.pipeline, tt)[6]["name"] == "late"
