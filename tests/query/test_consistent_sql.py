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
    where = "__valid_from_lsn <= 4242 AND (__valid_to_lsn IS NULL OR __valid_to_lsn > 4242)"
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
