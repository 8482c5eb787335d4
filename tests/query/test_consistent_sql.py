"""`hudi-cdc query consistent`: the SQL per engine at a consistent point (the point itself is
query/consistent.py's; here it is given), and the command's text and JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hudi_cdc.config import parse_pipeline
from hudi_cdc.query import consistent_sql as cs
from hudi_cdc.query.consistent import ConsistentPoint, TableAt

TABLES = {"accounts": {"topic": "db.public.accounts", "record_key": "aid", "history": "scd2"},
          "branches": {"topic": "db.public.branches", "record_key": "bid"}}


def _pipeline(tmp_path):
    data = {"pipeline": "bank", "source": {"root": str(tmp_path / "landing")},
            "lake": {"root": str(tmp_path / "lake"), "hive_database": "bank"}, "tables": TABLES}
    return parse_pipeline(data, str(tmp_path / "hudi-cdc.yaml"), str(tmp_path))


def _point(table_type):
    return ConsistentPoint(table_type, 7, "4242", 1_700_000_000_000, newest_cut=9, tables={
        "accounts": TableAt("accounts", "/lake/accounts", "20261128080000000", "f1"),
        "branches": TableAt("branches", "/lake/branches", None, None)})


def test_sql_per_engine(tmp_path, monkeypatch):
    monkeypatch.setattr(cs, "consistent_point", lambda p, tt, cut=None: _point(tt))
    res = cs.consistent_sql(_pipeline(tmp_path), "MERGE_ON_READ")
    by = {(t.table, t.kind): t for t in res.tables}
    assert sorted(by) == [("accounts", "current"), ("accounts_history", "history"), ("branches", "current")]
    where = ("coalesce(__valid_from_prev_commit_lsn, __valid_from_lsn - 1) < 4242 AND (__valid_to_lsn IS NULL OR "
             "coalesce(__valid_to_prev_commit_lsn, __valid_to_lsn - 1) >= 4242)")
    hist = by[("accounts_history", "history")]
    assert hist.sql == {"trino": f'SELECT * FROM hudi."bank_mor"."accounts_history_ro" WHERE {where}',
                        "athena": f'SELECT * FROM "bank_mor"."accounts_history_rt" WHERE {where}',
                        "hive": f"SELECT * FROM `bank_mor`.`accounts_history_rt` WHERE {where}",
                        "spark": f"SELECT * FROM `bank_mor`.`accounts_history_rt` WHERE {where}"}
    assert hist.base_path.endswith("/lake/accounts_history_mor")
    cur = by[("accounts", "current")]
    assert cur.sql["spark"] == "SELECT * FROM `bank_mor`.`accounts_rt` TIMESTAMP AS OF '20261128080000000'"
    assert "--at 20261128080000000 --engine native" in cur.sql["hudi-cdc"]
    assert by[("branches", "current")].sql == {}  # empty at the cut


def test_query_consistent_command(tmp_path, monkeypatch):
    from hudi_cdc.cli import cli

    _pipeline(tmp_path)
    (tmp_path / "hudi-cdc.yaml").write_text(json.dumps({
        "pipeline": "bank", "source": {"root": str(tmp_path / "landing")},
        "lake": {"root": str(tmp_path / "lake"), "hive_database": "bank"}, "tables": TABLES}))
    monkeypatch.setattr(cs, "consistent_point", lambda p, tt, cut=None: _point(tt))
    runner = CliRunner()
    out = runner.invoke(cli, ["-c", str(tmp_path / "hudi-cdc.yaml"), "query", "consistent", "-o", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert (doc["cut"], doc["lsn"], doc["table_type"]) == (7, "4242", "COPY_ON_WRITE")
    assert {t["table"] for t in doc["tables"]} == {"accounts", "accounts_history", "branches"}
    text = runner.invoke(cli, ["-c", str(tmp_path / "hudi-cdc.yaml"), "query", "consistent"])
    assert text.exit_code == 0 and "cut 7 of 9, LSN 4242, source time 2023-11-14T22:13:20+00:00" in text.output
    assert 'hudi."bank_cow"."accounts_history" WHERE' in text.output and "(empty at this point)" in text.output


def _bank_event(k, balance, lsn, op, last_commit):
    seq = None if last_commit is None else json.dumps([str(last_commit), str(lsn)])
    return {"aid": k, "balance": balance, "__op": op, "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "false",
            "__sequence": seq}


def test_a_transaction_committing_after_the_cut_is_not_in_it():
    """Two interleaved transactions: T1 updates account 1 at LSN 200 and commits at 400; T2 updates account 2
    at LSN 300 and commits at 350. PostgreSQL streams them in commit order (T2, then T1), each change with
    Debezium's source.sequence = [last commit LSN before it, its LSN]. At the cut at T2's commit (350) the
    database held account 1 at 100 (T1 not committed): the WHERE `query consistent` prints, run on the
    versions the history replay gives (the streamer's rules), says so; the LSN range alone showed 50."""
    import sqlite3

    from hudi_cdc.jobs.stream import history as h
    from hudi_cdc.sources.scd2_replay import replay, valid_at

    landed = [_bank_event(1, 100, 100, "r", None), _bank_event(2, 100, 100, "r", None),  # snapshot, cut at 100
              _bank_event(2, 150, 300, "u", 100),  # T2, committed at 350: cut
              _bank_event(1, 50, 200, "u", 350)]  # T1, committed at 400: cut
    versions = replay(landed, ["aid"])
    db = sqlite3.connect(":memory:")
    cols = ["aid", "balance", h.FROM_LSN, h.TO_LSN, h.FROM_PREV, h.TO_PREV]
    db.execute(f"CREATE TABLE accounts_history ({', '.join(cols)})")
    db.executemany("INSERT INTO accounts_history VALUES (?, ?, ?, ?, ?, ?)",
                   [(v.key[0], v.values["balance"], v.from_lsn, v.to_lsn, v.from_prev, v.to_prev) for v in versions])
    truth = {100: {1: 100, 2: 100}, 350: {1: 100, 2: 150}, 400: {1: 50, 2: 150}}  # what each commit left
    for cut, want in truth.items():
        got = dict(db.execute(f"SELECT aid, balance FROM accounts_history WHERE {cs.validity_where(cut)}"))
        assert got == want, cut
        assert {v.key[0]: v.values["balance"] for v in versions if valid_at(v, cut)} == want, cut
    early = dict(db.execute("SELECT aid, balance FROM accounts_history WHERE __valid_from_lsn <= 350 AND "
                            "(__valid_to_lsn IS NULL OR __valid_to_lsn > 350)"))
    assert early == {1: 50, 2: 150}  # the limit the commit LSN removes


def test_binlog_cuts_at_the_last_change_landed():
    """A binlog source (MySQL, MariaDB): transactions are in the binlog whole, in commit order, so their
    changes' __lsn (binlog file, pos, row) never interleave, no __sequence lands, and a cut's position is the
    __lsn of the last change landed before it (capture/txn.py with sources/mysql/binlog.py change_lsn). The
    WHERE at each cut gives what each commit left: T1 moves 30 from account 1 to 2 (two rows of one event),
    T2 updates account 1 and deletes account 2."""
    import sqlite3

    from hudi_cdc.jobs.stream import history as h
    from hudi_cdc.sources.mysql.binlog import lsn as binlog_lsn
    from hudi_cdc.sources.scd2_replay import replay

    snap = binlog_lsn("mariadb-bin.000001", 342, 0)  # the snapshot's binlog position, every row of it
    t1 = [binlog_lsn("mariadb-bin.000001", 871, 0), binlog_lsn("mariadb-bin.000001", 871, 1)]
    t2 = [binlog_lsn("mariadb-bin.000002", 256, 0), binlog_lsn("mariadb-bin.000002", 420, 0)]
    landed = [_bank_event(1, 100, snap, "r", None), _bank_event(2, 100, snap, "r", None),
              _bank_event(1, 70, t1[0], "u", None), _bank_event(2, 130, t1[1], "u", None),
              _bank_event(1, 75, t2[0], "u", None), {**_bank_event(2, 130, t2[1], "d", None), "__deleted": "true"}]
    versions = replay(landed, ["aid"])
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE TABLE accounts_history (aid, balance, {h.FROM_LSN}, {h.TO_LSN}, {h.FROM_PREV}, {h.TO_PREV})")
    db.executemany("INSERT INTO accounts_history VALUES (?, ?, ?, ?, ?, ?)",
                   [(v.key[0], v.values["balance"], v.from_lsn, v.to_lsn, v.from_prev, v.to_prev) for v in versions])
    truth = {snap: {1: 100, 2: 100}, t1[1]: {1: 70, 2: 130}, t2[1]: {1: 75}}  # each cut: its last change
    for cut, want in truth.items():
        got = dict(db.execute(f"SELECT aid, balance FROM accounts_history WHERE {cs.validity_where(cut)}"))
        assert got == want, cut
