"""Hive helpers over PyHive (HiveServer2 protocol: the local Spark Thrift Server, or Hive on EMR).

``HiveClient("127.0.0.1", 10000)`` runs SQL and returns rows as dicts; ``tables``, ``partitions``
and ``describe`` are the few questions a user asks about synced tables. PyHive is imported when a
connection is opened, so the CLI stays fast. Connection failures and query errors become
``HiveError`` with the server's own message in one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from hudi_cdc.config import history_name
from hudi_cdc.errors import ExitCode, HudiCdcError

DEFAULT_PORT = 10000
SERVER_ENV = "HUDI_CDC_HIVESERVER2"  # host:port of the HiveServer2 endpoint


class HiveError(HudiCdcError):
    """HiveServer2 could not be reached or refused a statement."""

    exit_code = ExitCode.HIVE


def parse_server(value: str) -> tuple[str, int]:
    """'host:port', 'host', 'jdbc:hive2://host:port/db' or 'thrift://host:port' -> (host, port)."""
    m = re.match(r"^(?:[a-z0-9]+:)?(?://)?(?:hive2://)?\[?([^\]/:]+)\]?(?::(\d+))?", value.strip().replace("jdbc:", ""))
    if not m:
        raise HiveError(f"cannot read a HiveServer2 address from {value!r}; expected host:port")
    return m.group(1), int(m.group(2) or DEFAULT_PORT)


def default_server() -> tuple[str, int]:
    """$HUDI_CDC_HIVESERVER2, else the thrift server of the local stack (hudi-cdc local up)."""
    if os.environ.get(SERVER_ENV):
        return parse_server(os.environ[SERVER_ENV])
    from hudi_cdc.stack.manager import StackConfig

    cfg = StackConfig.saved()
    return cfg.host, cfg.thrift_port


def _one_line(exc: BaseException) -> str:
    """The server's message: Hive's TExecuteStatementResp errorMessage when there is one."""
    status = getattr(exc, "args", [None])[0]
    msg = getattr(status, "errorMessage", None) if status is not None else None
    if not msg and hasattr(status, "status"):
        msg = getattr(status.status, "errorMessage", None)
    text = str(msg or exc)
    text = re.sub(r"\s+", " ", text).strip()
    # Spark wraps the useful part: "Error running query: org.apache...AnalysisException: [TABLE...] ..."
    text = re.sub(r"^Error running query: ", "", text)
    return text[:500]


class HiveClient:
    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, username: str | None = None,
                 database: str = "default", fetch_size: int = 10000) -> None:
        self.host, self.port, self.username, self.database = host, port, username, database
        self.fetch_size = fetch_size  # rows per thrift round trip (PyHive's default is 1000)
        self._conn = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def connect(self):
        if self._conn is None:
            try:
                from pyhive import hive
            except ImportError as exc:  # pragma: no cover - declared dependency
                raise HiveError(f"PyHive is not installed ({exc}); pip install 'pyhive[hive-pure-sasl]'") from None
            try:
                self._conn = hive.connect(self.host, self.port, username=self.username, database=self.database,
                                          auth="NONE")
            except Exception as exc:  # noqa: BLE001 - thrift raises several types
                raise HiveError(f"cannot reach HiveServer2 at {self.address}: {_one_line(exc)} "
                                "(is the stack up? hudi-cdc local up)") from None
        return self._conn

    def query(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.connect().cursor(arraysize=self.fetch_size)
        try:
            cur.execute(sql, params)
            try:
                desc = cur.description
            except TypeError:  # no result set (DROP, CREATE, ...): PyHive fails to read its empty schema
                return []
            if desc is None:
                return []
            cols = [d[0].split(".", 1)[-1] if "." in d[0] else d[0] for d in desc]
            try:
                data = cur.fetchall()
            except TypeError:  # DROP/CREATE through the Spark Thrift Server: a schema but no rows
                return []
            return [dict(zip(cols, row, strict=False)) for row in data]
        except HiveError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise HiveError(f"{_short_sql(sql)}: {_one_line(exc)}") from None
        finally:
            try:
                cur.close()
            except Exception:  # noqa: BLE001
                pass

    def databases(self) -> list[str]:
        return [next(iter(r.values())) for r in self.query("SHOW DATABASES")]

    def tables(self, database: str) -> list[str]:
        rows = self.query(f"SHOW TABLES IN {quote_ident(database)}")
        return sorted(r.get("tableName") or r.get("tab_name") or list(r.values())[1] for r in rows)

    def partitions(self, table: str) -> list[str]:
        rows = self.query(f"SHOW PARTITIONS {quote_table(table)}")
        return [next(iter(r.values())) for r in rows]

    def describe(self, table: str) -> list[dict[str, Any]]:
        """Columns (name, type, comment), partition columns marked, then table properties."""
        rows = self.query(f"DESCRIBE FORMATTED {quote_table(table)}")
        out, section = [], "column"
        for r in rows:
            name = (r.get("col_name") or "").strip()
            if not name:
                continue
            if name.startswith("# Partition Information"):
                section = "partition"
                continue
            if name.startswith("# Detailed Table Information"):
                section = "detail"
                continue
            if name.startswith("#"):
                continue
            out.append({"section": section, "name": name, "type": (r.get("data_type") or "").strip(),
                        "comment": (r.get("comment") or "").strip()})
        return out

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None

    def __enter__(self) -> HiveClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_ident(name: str) -> str:
    if not _IDENT.match(name):
        raise HiveError(f"{name!r} is not a plain identifier (letters, digits, _)")
    return f"`{name}`"


def quote_table(name: str) -> str:
    parts = name.split(".")
    if len(parts) > 2:
        raise HiveError(f"{name!r}: expected table or database.table")
    return ".".join(quote_ident(p) for p in parts)


def _short_sql(sql: str) -> str:
    s = re.sub(r"\s+", " ", sql).strip()
    return s if len(s) <= 80 else s[:77] + "..."


def hive_tables_of(pipeline, table: str | None = None) -> list[dict[str, str]]:
    """The Hive tables a pipeline's sync creates: <db>_cow.<t>, <db>_mor.<t>_ro and <t>_rt (and the same
    for <t>_history, a table's history table)."""
    out = []
    every = [(name, tt) for name, tt in pipeline.targets(table)]
    every += [(history_name(name), tt) for name, tt in pipeline.targets(table) if pipeline.table(name).history]
    for name, tt in every:
        db = pipeline.hive_db(tt)
        if tt == "COPY_ON_WRITE":
            out.append({"table": name, "type": tt, "hive_table": f"{db}.{name}", "query": "snapshot"})
        else:
            out.append({"table": name, "type": tt, "hive_table": f"{db}.{name}_ro", "query": "read-optimized"})
            out.append({"table": name, "type": tt, "hive_table": f"{db}.{name}_rt", "query": "snapshot"})
    return out
