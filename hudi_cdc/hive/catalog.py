"""What `hudi-cdc hive ...` asks HiveServer2: the pipeline's synced tables, names qualified."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hudi_cdc.hive import HiveClient, default_server, hive_tables_of, parse_server


def client(server: str | None) -> HiveClient:
    """HOST:PORT, else $HUDI_CDC_HIVESERVER2, else the local stack's thrift server."""
    host, port = parse_server(server) if server else default_server()
    return HiveClient(host, port)


def qualify(name: str, load_pipeline: Callable) -> str:
    """'artists_rt' or 'moma_mor.artists_rt'; a bare pipeline table name means its CoW table."""
    if "." in name:
        return name
    for row in hive_tables_of(load_pipeline()):
        _db, _, tbl = row["hive_table"].partition(".")
        if tbl == name:
            return row["hive_table"]
    return name


def table_rows(hive: HiveClient, databases: Sequence[str], load_pipeline: Callable) -> list[dict[str, Any]]:
    """The tables of DATABASES (default: the pipeline's), each with the pipeline table it holds."""
    known: dict[str, dict[str, str]] = {}
    if not databases:
        known = {r["hive_table"]: r for r in hive_tables_of(load_pipeline())}
        databases = sorted({r["hive_table"].split(".")[0] for r in known.values()})
    present = set(hive.databases())
    rows: list[dict[str, Any]] = []
    for db in databases:
        if db not in present:
            rows.append({"database": db, "table": "", "pipeline_table": "",
                         "query": "(database missing: not synced yet)"})
            continue
        for t in hive.tables(db):
            info = known.get(f"{db}.{t}", {})
            rows.append({"database": db, "table": t, "pipeline_table": info.get("table", ""),
                         "query": info.get("query", "")})
    return rows
