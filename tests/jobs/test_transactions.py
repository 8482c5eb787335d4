"""Transaction-consistent commits and keyless tables as raw history (issue 24 items 2(b) and 5).

Unit tests check the streamer's cut rule on landed files without a database; the ``postgres`` +
``spark`` tests run the real chain: Debezium capture (transaction metadata, cuts) -> hudi-cdc's
streamer in-process on the tests' SparkSession -> hudi-rs reads at consistent points -> verify.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from tests import pgbench as tests_pgbench
from tests.capture.test_capture import _files, _records
from tests.cli import cli_env, run_cli


def _connect(db: dict):
    import psycopg

    return psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                           password=os.environ[db["password_env"]], autocommit=True)


def _sql(db: dict, *statements):
    with _connect(db) as conn:
        return [conn.execute(st).fetchall() if st.lstrip().upper().startswith("SELECT") else conn.execute(st)
                for st in statements]


def _write(base: Path, db: dict, tables: dict, flush_size: int = 1000):
    base.mkdir(parents=True, exist_ok=True)
    cfg = {"pipeline": "txn", "source": {"root": "landing", "database": {**db, "flush_size": flush_size}},
           "lake": {"root": "lake", "hive_database": "txn"}, "spark": {"shuffle_partitions": 2}, "tables": tables}
    (base / "hudi-cdc.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return load_pipeline(base / "hudi-cdc.yaml")


def _run_rounds(spark, p, op: str) -> list:
    """hudi-cdc's streamer in-process: one round for every table and type of the pipeline."""
    from hudi_cdc.core import render
    from hudi_cdc.jobs import streamer

    props_dir = Path(str(p.base_dir)) / ".hudi-cdc" / "test-props"
    render.write_properties(p, props_dir)
    targets = []
    for table, tt in p.targets():
        props = props_dir / render.props_filename(p, table, tt)
        flags = render.streamer_flags(p, render.Job(table, tt, op), f"file://{props}")
        for kv in render.LOCAL_HOODIE_CONF:
            flags += ["--hoodie-conf", kv]
        targets.append(streamer.parse_argv(flags)[0])
    return streamer.run_targets(spark, targets, log=lambda m: None)


# ------------------------------------------------------------------ unit
def _land(folder: Path, topic: str, offset: int, mtime_s: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    f = folder / f"{topic}+0+{offset:010d}.avro"
    f.write_bytes(b"x")
    os.utime(f, (mtime_s, mtime_s))
    return f


def test_rounds_end_on_the_newest_cut(tmp_path):
    """The streamer's cut rule: a round's files end on the newest cut's file for the topic; files after
    it wait; with no cut at all (another landing writer), nothing changes; a table with no change since
    an earlier cut names the same file in later cuts."""
    from hudi_cdc.jobs.stream import cuts
    from hudi_cdc.jobs.stream.files import list_source_files

    root = tmp_path / "landing"
    a, b = root / "db.public.a" / "partition=0", root / "db.public.b" / "partition=0"
    fa = [_land(a, "db.public.a", i * 10, 1000 + i) for i in range(4)]
    _land(b, "db.public.b", 0, 1000)
    files, cp = list_source_files(str(a), None, 10**9)
    assert cuts.trim(files, str(a)) == (files, None, False)  # no cuts: unchanged

    def cut(n, a_file, b_file):
        (root / cuts.CUTS_DIR).mkdir(exist_ok=True)
        (root / cuts.CUTS_DIR / cuts.cut_name(n)).write_text(json.dumps(
            {"cut": n, "lsn": 100 + n, "topics": {"db.public.a": a_file, "db.public.b": b_file}}))

    cut(1, fa[0].name, None)
    cut(2, fa[2].name, "db.public.b+0+0000000000.avro")
    cut(3, fa[2].name, "db.public.b+0+0000000000.avro")  # a: no change since cut 2
    kept, c, waiting = cuts.trim(files, str(a))
    assert [Path(f[0]).name for f in kept] == [f.name for f in fa[:3]] and c["cut"] == 3 and not waiting
    log: list[str] = []
    now = 1010 * 1000  # the files landed seconds ago
    kept, new_cp, meta = cuts.apply(files, cp, str(a), None, "a", log.append, now_ms=now)
    assert new_cp == str(kept[-1][1])
    assert meta == {"streamer.hudi_cdc.cut": "3", "streamer.hudi_cdc.complete_lsn": "103",
                    "streamer.hudi_cdc.last_file": fa[2].name}
    assert "1 newer file(s) wait" in log[-1]
    after, _ = list_source_files(str(a), new_cp, 10**9)  # only the file after the cut
    assert cuts.apply(after, new_cp, str(a), new_cp, "a", log.append, now_ms=now)[:2] == ([], new_cp)
    assert "wait for capture's next transaction cut" in log[-1]
    # no cut came for them in NO_CUT_AFTER_MS (another writer after a capture that died): applied, no cut
    late = 1003 * 1000 + cuts.NO_CUT_AFTER_MS
    assert cuts.apply(after, new_cp, str(a), new_cp, "a", log.append, now_ms=late) == (after, new_cp, {})
    assert "got no transaction cut" in log[-1]
    assert cuts.apply(files, cp, str(a), None, "a", log.append, now_ms=late) == (files, cp, {})
    # a --once run of several tables pins the newest cut at its start (main._pin_cut): a cut written while
    # it runs is not ended on, even by the tables whose rounds start later; its files wait, also when old
    assert cuts.newest_number(str(a)) == 3
    cut(4, fa[3].name, "db.public.b+0+0000000000.avro")
    assert cuts.trim(files, str(a), ceiling=3)[1]["cut"] == 3 and cuts.trim(files, str(a))[1]["cut"] == 4
    kept, _, meta = cuts.apply(files, cp, str(a), None, "a", log.append, now_ms=late, ceiling=3)
    assert len(kept) == 3 and meta["streamer.hudi_cdc.cut"] == "3"


def test_history_replay_and_key():
    from collections import Counter

    from hudi_cdc.sources import history

    assert history.history_key(["tid", "delta"]) == ["__lsn", "tid", "delta"]
    assert history.is_history(["__lsn", "tid"]) and not history.is_history(["tid", "__lsn"])
    rows, updates = history.replay(["r", "c", "c", "d", "u", "t"], [b"1", b"2", b"2", b"2", b"3", b"0"])
    assert rows == Counter({b"1": 1, b"2": 1, b"3": 1}) and updates == 1
    assert history.differences(Counter({b"1": 2}), Counter({b"1": 1, b"9": 1})) == ([b"1"], [b"9"])


# ------------------------------------------------------------------ real components
HISTORY_DDL = ("CREATE TABLE public.history (tid int, bid int, aid int, delta int, mtime timestamp, "
               "filler char(22))")  # pgbench_history: no primary key


@pytest.mark.postgres
@pytest.mark.spark
def test_keyless_history_table(tmp_path, capsys, spark, pg_database):
    """A pgbench_history-like table (no key): init --from-database offers it as an append-only raw history
    (record key __lsn + its columns, soft deletes) and says REPLICA IDENTITY FULL; source check fails
    until then and passes after; the application's UPDATE and DELETE keep working; every change event
    is a lake row and verify compares the table as a multiset."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.cli import main
    from hudi_cdc.lake.reader import read_table
    from hudi_cdc.sources import source_check
    from hudi_cdc.sources.verify import verify

    db = pg_database("txn_keyless")
    _sql(db, HISTORY_DDL, "INSERT INTO history VALUES (1, 1, 1, 5, '2024-01-01 10:00', 'x'), "
                          "(2, 1, 2, -3, '2024-01-01 10:01', NULL)")
    d = tmp_path / "p"
    code = main(["init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--port",
                 str(db["port"]), "--password-env", db["password_env"]])
    _, err = capsys.readouterr()
    assert code == 0, err
    text = (d / "hudi-cdc.yaml").read_text()
    assert "    record_key: [__lsn, tid, bid, aid, delta, mtime, filler]  # the event position, then the row\n" in text
    assert "    deletes: soft" in text
    # CoW only: a raw history on MoR (its __lsn key, soft deletes, verify equal) is pgbench_history in
    # test_pgbench_invariant_at_consistent_points below
    both = "table_types: [COPY_ON_WRITE, MERGE_ON_READ]"
    assert text.count(both) == 1
    (d / "hudi-cdc.yaml").write_text(text.replace(both, "table_types: [COPY_ON_WRITE]"))
    assert ("public.history: no primary key: added as an append-only raw history" in err
            and "ALTER TABLE public.history REPLICA IDENTITY FULL;" in err)
    p = load_pipeline(d / "hudi-cdc.yaml")
    checks = {c.name: c for c in source_check(p)}
    assert checks["history: replica identity"].status == "fail"
    assert "append-only raw history" in checks["history: replica identity"].detail
    assert checks["history: primary key"].status == "ok"
    _sql(db, "ALTER TABLE history REPLICA IDENTITY FULL")
    assert {c.name: c for c in source_check(p)}["history: replica identity"].status == "ok"

    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run_rounds(spark, p, "BULK_INSERT")
    _sql(db, "INSERT INTO history VALUES (3, 1, 3, 7, '2024-01-01 10:02', 'z'), (3, 1, 3, 7, '2024-01-01 10:02', 'z')",
         "DELETE FROM history WHERE tid = 2")  # the application's DELETE works (FULL)
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run_rounds(spark, p, "UPSERT")
    assert [tt for _, tt in p.targets()] == ["COPY_ON_WRITE"]
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal and r.db_rows == 3, r.summary()
        rows = read_table(p.base_path(table, tt))
        assert sorted((x["__op"], x["tid"], x["__deleted"]) for x in rows) == [
            ("c", 3, "false"), ("c", 3, "false"), ("d", 2, "true"), ("r", 1, "false"), ("r", 2, "false")]
    _sql(db, "UPDATE history SET delta = delta + 100 WHERE tid = 1")  # works too; the event is a row
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run_rounds(spark, p, "UPSERT")
    for table, tt in p.targets():
        rows = read_table(p.base_path(table, tt))
        assert sorted(x["delta"] for x in rows if x["__op"] == "u") == [105]
        r = verify(p, table, tt)  # the update's old version is not in its event: one extra row
        assert (r.missing, r.extra) == (0, 1), r.summary()


def _landed_sums_at_every_cut(p) -> list[tuple[int, int, tuple]]:
    """Replay the landed files cut by cut (no lake): [(cut, transactions ended since the previous cut,
    the four sums)] - each cut must fall between two source transactions."""
    from hudi_cdc.jobs.stream import cuts

    folder = cuts.cuts_dir(p.source_root[len("file://"):] if p.source_root.startswith("file://") else p.source_root)
    numbers = cuts.cut_numbers(folder)  # before the files: a cut is written after the files it names
    files = {t: _files(p, t) for t in p.tables}
    done = {t: 0 for t in p.tables}
    state: dict[str, dict] = {"accounts": {}, "tellers": {}, "branches": {}}
    column = {"accounts": ("aid", "abalance"), "tellers": ("tid", "tbalance"), "branches": ("bid", "bbalance")}
    delta = 0
    out = []
    for n in numbers:
        c = cuts.read_cut(folder, n)
        for t in p.tables:
            name = c["topics"].get(p.table(t).topic)
            if name is None:
                continue
            upto = [f.name for f in files[t]].index(name) + 1
            for r in _records(files[t][done[t]:upto]):
                if t == "history":
                    delta += r["delta"] if r["__op"] != "d" else 0
                else:
                    key, col = column[t]
                    if r["__lsn"] >= state[t].get(r[key], (-1, 0))[0]:
                        state[t][r[key]] = (r["__lsn"], r[col])
            done[t] = upto
        sums = tuple(sum(v for _, v in state[t].values()) for t in ("accounts", "tellers", "branches")) + (delta,)
        out.append((n, c.get("transactions", 0), sums))
    return out


def _sums(rows: dict) -> tuple[int, int, int, int]:
    return (sum(r["abalance"] for r in rows["accounts"]), sum(r["tbalance"] for r in rows["tellers"]),
            sum(r["bbalance"] for r in rows["branches"]),
            sum(r["delta"] for r in rows["history"] if r["__op"] != "d"))


@pytest.mark.postgres
@pytest.mark.spark
def test_pgbench_invariant_at_consistent_points(tmp_path, spark, pg_database):
    """pgbench -i -s 1 (its first 10,000 accounts: tests/pgbench.py), then pgbench -c 4 against
    accounts/tellers/branches/history (history as a raw history, REPLICA IDENTITY FULL) while a
    continuous capture cuts at transaction boundaries and the streamer runs rounds: at every consistent
    point the four lake tables (MoR, read by hudi-rs) satisfy pgbench's invariant sum(abalance) =
    sum(tbalance) = sum(bbalance) = sum(delta); after pgbench stops, verify finds every table equal to
    the database and the last point equals it."""
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.query.consistent import read_consistent
    from hudi_cdc.sources.history import COMPLEX_KEYGEN, KEYGEN_OPTION, history_key
    from hudi_cdc.sources.verify import verify

    pgbench = tests_pgbench.binary()
    db = pg_database("txn_pgbench")
    env = {**os.environ, "PGPASSWORD": os.environ[db["password_env"]]}
    conn_args = ["-h", db["host"], "-p", str(db["port"]), "-U", db["user"]]
    tests_pgbench.initialise(pgbench, conn_args, db["name"], env)  # scale 1, its first 10,000 accounts
    _sql(db, "ALTER TABLE pgbench_history REPLICA IDENTITY FULL")
    prefix = db["name"]
    tables = {
        "accounts": {"topic": f"{prefix}.public.pgbench_accounts", "record_key": "aid"},
        "tellers": {"topic": f"{prefix}.public.pgbench_tellers", "record_key": "tid"},
        "branches": {"topic": f"{prefix}.public.pgbench_branches", "record_key": "bid"},
        "history": {"topic": f"{prefix}.public.pgbench_history", "deletes": "soft",
                    "record_key": history_key(["tid", "bid", "aid", "delta", "mtime", "filler"]),
                    "hudi_options": {KEYGEN_OPTION: COMPLEX_KEYGEN}},
    }
    # MoR only: its reader merges logs at each cut; a CoW table read at a cut (time travel to the cut's
    # instant) is proven for both types by tests/jobs/test_history.py (_consistent_points_agree), and the
    # cuts themselves (capture's, the rounds ending on them) do not depend on the table type
    for t in tables.values():
        t["table_types"] = ["MERGE_ON_READ"]
    base = tmp_path
    p = _write(base, db, tables, flush_size=50000)
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run_rounds(spark, p, "BULK_INSERT")

    capture = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(base / "hudi-cdc.yaml"), "capture",
                                "--rotate-seconds", "2"], cwd=base, env=cli_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    bench = subprocess.Popen([pgbench, "-c", "4", "-j", "2", "-T", "10", "-n", "-f", str(tests_pgbench.script(base)),
                              *conn_args, db["name"]], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    points: dict[tuple[str, int], tuple] = {}
    try:
        deadline = time.monotonic() + 900
        while bench.poll() is None or len({c for _, c in points}) < 3:
            assert capture.poll() is None, f"capture exited: {capture.communicate()}"
            assert time.monotonic() < deadline, f"fewer than 3 consistent points: {points}"
            if bench.poll() is not None:
                _sql(db, "UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1; "
                         "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1; "
                         "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1; "
                         "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, now())")
                time.sleep(3)  # one more pgbench-like transaction, so capture cuts again
            _run_rounds(spark, p, "UPSERT")
            for tt in ("MERGE_ON_READ",):
                point, rows = read_consistent(p, tt)
                sums = _sums(rows)
                assert len(set(sums)) == 1, f"{tt} at cut {point.cut} (LSN {point.lsn}): invariant broken {sums}"
                points[(tt, point.cut)] = sums
        assert bench.returncode == 0, bench.communicate()
        bench_out = bench.communicate()[0]
    finally:
        for proc in (bench, capture):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        capture.communicate(timeout=180)
    assert capture.returncode == 0
    capture_once(p, progress=lambda m: None, timeout_seconds=300)  # what the stopped capture left
    _run_rounds(spark, p, "UPSERT")
    [[a], [t], [b], [h]] = _sql(db, "SELECT sum(abalance) FROM pgbench_accounts",
                                "SELECT sum(tbalance) FROM pgbench_tellers",
                                "SELECT sum(bbalance) FROM pgbench_branches", "SELECT sum(delta) FROM pgbench_history")
    for table, tt in p.targets():
        r = verify(p, table, tt)
        assert r.equal, r.summary()
    cuts_written = sorted({c for _, c in points})
    for tt in ("MERGE_ON_READ",):
        point, rows = read_consistent(p, tt)
        assert _sums(rows) == (a[0], t[0], b[0], h[0])
    # every cut capture wrote, also those no round ended on: the landed events up to it keep the invariant
    at_cuts = _landed_sums_at_every_cut(p)
    broken = [(n, sums) for n, _, sums in at_cuts if len(set(sums)) != 1]
    assert not broken, f"cuts inside a transaction: {broken[:3]}"
    mid_run = [n for n, txns, sums in at_cuts if txns and sums[0] != a[0]]  # cuts while pgbench still ran
    transactions = int(next(line for line in bench_out.splitlines() if "transactions actually processed" in line)
                       .split(":")[1].split("/")[0])
    landed = len(_records(_files(p, "history")))
    print(f"pgbench: {transactions} transactions, {landed} history events landed; invariant held at "
          f"{len(points)} (type, cut) points of the lake over cuts {cuts_written}, and in the landed events at "
          f"all {len(at_cuts)} cuts ({len(mid_run)} taken while pgbench ran)")
    assert len(cuts_written) >= 3 and landed >= transactions and len(mid_run) >= 3
    out = run_cli("-c", str(base / "hudi-cdc.yaml"), "status", cwd=base, timeout=300)
    assert f"consistent through LSN {point.lsn} (transaction cut {point.cut} of" in out.stderr
