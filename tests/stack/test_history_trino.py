"""Consistent points in plain SQL on Trino (issue 40): pgbench under load with accounts, tellers and branches
kept as history tables (`history: scd2`), synced to the stack's Hive metastore and read by the stack's
Trino. At every cut capture wrote, the WHERE `hudi-cdc query consistent` prints for history tables gives,
on Trino, sums that keep pgbench's invariant sum(abalance) = sum(tbalance) = sum(bbalance); at the cuts the
streamer's rounds ended on, Trino's and Spark's answers equal what read_consistent() reads from the
current-state tables at the same cut; after the load, the newest point equals the database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from hudi_cdc.config import load_pipeline
from tests import pgbench as tests_pgbench
from tests.cli import cli_env, run_main

TABLES = {"accounts": ("aid", "abalance"), "tellers": ("tid", "tbalance"), "branches": ("bid", "bbalance")}
ACCOUNTS = 1000  # of tests/pgbench.py's 10,000: every version of each is a history row
TT = "COPY_ON_WRITE"  # Trino reads a MoR table's _rt as read-optimized (docs/trino.md): CoW for the SQL readers


def _psql(db: dict, sql: str) -> str:
    env = {**os.environ, "PGPASSWORD": os.environ[db["password_env"]]}
    return subprocess.run(["psql", "-X", "-At", "-h", db["host"], "-p", str(db["port"]), "-U", db["user"],
                           "-d", db["name"], "-c", sql], env=env, check=True, capture_output=True, text=True,
                          timeout=120).stdout.strip()


def _pipeline(tmp_path, db: dict, metastore_uri: str):
    prefix = db["name"]
    tables = {name: {"topic": f"{prefix}.public.pgbench_{name}", "record_key": key, "table_types": [TT],
                     "history": "scd2"} for name, (key, _) in TABLES.items()}
    doc = {"pipeline": "hist_trino",
           "source": {"root": "landing", "database": {**db, "flush_size": 50000}},
           "lake": {"root": "lake", "hive_database": f"ht_{os.getpid()}", "hive_metastore": metastore_uri},
           "spark": {"shuffle_partitions": 2}, "tables": tables}
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_pipeline(tmp_path / "hudi-cdc.yaml")


def _trino_sums(trino, point_sql) -> tuple:
    """The three balance sums of the history tables' rows valid at the point, on Trino."""
    out = []
    for name, (_, balance) in TABLES.items():
        q = next(t for t in point_sql.tables if t.kind == "history" and t.table == f"{name}_history")
        _, rows, _ = trino.execute(q.sql["trino"].replace("SELECT *", f"SELECT sum({balance}), count(*)", 1))
        out.append(tuple(rows[0]))
    return tuple(out)


def _spark_sums(spark, point_sql) -> tuple:
    out = []
    for name, (_, balance) in TABLES.items():
        q = next(t for t in point_sql.tables if t.kind == "history" and t.table == f"{name}_history")
        view = f"h_{name}"
        spark.read.format("hudi").load(q.base_path).createOrReplaceTempView(view)
        db, table = q.hive_table.split(".")
        sql = q.sql["spark"].replace(f"`{db}`.`{table}`", view)
        sql = sql.replace("SELECT *", f"SELECT sum({balance}), count(*)", 1)
        out.append(tuple(spark.sql(sql).collect()[0]))
    return tuple(out)


def _current_sums(pipeline, cut: int, spark) -> tuple:
    from hudi_cdc.query.consistent import read_consistent

    _, rows = read_consistent(pipeline, TT, cut=cut, spark=spark)
    return tuple((sum(r[bal] for r in rows[name]), len(rows[name])) for name, (_, bal) in TABLES.items())


def test_pgbench_invariant_in_trino_sql_at_every_cut(tmp_path, pg_database, spark, hive_stack, trino,
                                                       inprocess_jobs):
    from hudi_cdc.jobs.stream import cuts
    from hudi_cdc.query.consistent_sql import consistent_sql, validity_where

    pgbench = tests_pgbench.binary()
    db = pg_database("hist_trino")
    env = {**os.environ, "PGPASSWORD": os.environ[db["password_env"]]}
    conn_args = ["-h", db["host"], "-p", str(db["port"]), "-U", db["user"]]
    tests_pgbench.initialise(pgbench, conn_args, db["name"], env)
    _psql(db, f"DELETE FROM pgbench_accounts WHERE aid > {ACCOUNTS}")
    script = tmp_path / "tpcb-like.sql"  # its accounts drawn from those kept
    script.write_text(tests_pgbench.TPCB_LIKE.replace(f"random(1, {tests_pgbench.ACCOUNTS})", f"random(1, {ACCOUNTS})"))
    p = _pipeline(tmp_path, db, hive_stack.metastore_uri)

    def cli(*args):
        return run_main("-c", str(tmp_path / "hudi-cdc.yaml"), *args, cwd=tmp_path)

    cli("capture", "--once", "--timeout", "300")
    cli("bootstrap")
    capture = subprocess.Popen([sys.executable, "-m", "hudi_cdc.cli", "-c", str(tmp_path / "hudi-cdc.yaml"),
                                "capture", "--rotate-seconds", "2"], cwd=tmp_path, env=cli_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # pgbench until stopped (rate-limited: the load is the capture's and the rounds'), cuts taken while it runs
    bench = subprocess.Popen([pgbench, "-c", "2", "-j", "1", "-T", "900", "-R", "20", "-n",
                              "-f", str(script), *conn_args, db["name"]],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    folder = cuts.cuts_dir(p.source_root)
    round_cuts = [consistent_sql(p, TT).cut]  # the bootstrap's

    def cuts_beyond(n: int, more: int) -> None:
        deadline = time.monotonic() + 600
        while len([c for c in cuts.cut_numbers(folder) if c > n]) < more:
            assert capture.poll() is None, capture.communicate()
            assert bench.poll() is None, bench.communicate()
            assert time.monotonic() < deadline, f"capture cut fewer than {more} times after cut {n} in 600 s"
            time.sleep(1)

    try:
        cuts_beyond(round_cuts[0], 2)
        cli("stream", "--all", "--once")  # a round ending on a cut taken while pgbench runs
        round_cuts.append(consistent_sql(p, TT).cut)
        cuts_beyond(round_cuts[-1], 2)
    finally:
        bench.send_signal(signal.SIGINT)
        bench.communicate(timeout=60)
        capture.send_signal(signal.SIGTERM)
        capture.communicate(timeout=300)
    assert capture.returncode == 0
    cli("capture", "--once", "--timeout", "300")  # what the stopped capture left, ending with a cut
    cli("stream", "--all", "--once")
    newest = consistent_sql(p, TT)
    round_cuts.append(newest.cut)
    assert len(set(round_cuts)) == 3, round_cuts

    # at the rounds' cuts: Trino's SQL = Spark's SQL = the current-state tables read at the cut
    for n in round_cuts:
        point = consistent_sql(p, TT, cut=n)
        on_trino = _trino_sums(trino, point)
        assert on_trino == _spark_sums(spark, point) == _current_sums(p, n, spark), (n, point.lsn)
        assert len({s for s, _ in on_trino}) == 1, (n, on_trino)
    # at every cut capture wrote (most no round ended on): the history's WHERE keeps the invariant
    every = {n: cuts.read_cut(folder, n)["lsn"] for n in cuts.cut_numbers(folder)}
    by_cut: dict[int, list] = {n: [] for n in every}
    for name, (_, balance) in TABLES.items():  # one statement per table: the printed WHERE once per cut
        _, rows, _ = trino.execute(" UNION ALL ".join(
            f'SELECT {n}, sum({balance}) FROM hudi."{p.hive_db(TT)}"."{name}_history" WHERE {validity_where(lsn)}'
            for n, lsn in every.items()))
        for n, total in rows:
            by_cut[n].append(total)
    broken = [(n, every[n], sums) for n, sums in by_cut.items() if len(sums) != 3 or len(set(sums)) != 1]
    assert not broken, broken
    want = tuple(int(_psql(db, f"SELECT sum({bal}) FROM pgbench_{name}")) for name, (_, bal) in TABLES.items())
    assert tuple(s for s, _ in _trino_sums(trino, newest)) == want
    print(f"invariant on Trino at all {len(every)} cuts; Trino = Spark = read_consistent at cuts {round_cuts}")
    for name in TABLES:  # the history's cost (docs/history.md): rows, and Parquet bytes on disk
        rows = [trino.execute(f'SELECT count(*) FROM hudi."{p.hive_db(TT)}"."{t}"')[1][0][0]
                for t in (name, f"{name}_history")]
        size = [sum(f.stat().st_size for f in Path(path.removeprefix("file://")).rglob("*.parquet"))
                for path in (p.base_path(name, TT), p.history_base_path(name, TT))]
        print(f"{name}: {rows[0]} rows, {size[0]} bytes; history {rows[1]} rows, {size[1]} bytes")
