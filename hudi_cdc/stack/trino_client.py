"""A small Trino client over Trino's HTTP protocol (``POST /v1/statement``, then ``nextUri`` until the
query is done), stdlib only. Rows come back as dicts by column name with JSON's values (bigint and
integer as int, varchar as str, boolean as bool, dates and timestamps as Trino's text). A failed
query raises TrinoError with Trino's one-line message, error name and innermost cause.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from hudi_cdc.errors import JobError


class TrinoError(JobError):
    """A statement Trino refused or failed; the message is Trino's own."""

    def __init__(self, message: str, error_name: str = "", sql: str = "") -> None:
        super().__init__(message)
        self.error_name = error_name
        self.sql = sql


def _root_cause(info: dict[str, Any] | None) -> tuple[str, str]:
    """The innermost cause of a failure with a message: (exception class, message), or ('', '')."""
    last = ("", "")
    while info:
        text = " ".join(str(info.get("message") or "").split())
        if text:
            last = (str(info.get("type", "")).rsplit(".", 1)[-1], text)
        info = info.get("cause")
    return last


class TrinoClient:
    def __init__(self, url: str, user: str = "hudi-cdc", catalog: str | None = None, schema: str | None = None,
                 timeout: float = 600.0) -> None:
        self.url = url.rstrip("/")
        self.user, self.catalog, self.schema, self.timeout = user, catalog, schema, timeout

    def _request(self, url: str, data: bytes | None = None, method: str = "GET") -> dict[str, Any]:
        headers = {"X-Trino-User": self.user, "X-Trino-Time-Zone": "UTC", "User-Agent": "hudi-cdc"}
        if self.catalog:
            headers["X-Trino-Catalog"] = self.catalog
        if self.schema:
            headers["X-Trino-Schema"] = self.schema
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        for attempt in range(20):
            try:
                with urllib.request.urlopen(req, timeout=min(self.timeout, 60.0)) as resp:
                    return json.loads(resp.read() or b"{}")
            except urllib.error.HTTPError as exc:
                if exc.code in (502, 503, 504) and attempt < 19:  # the protocol says: retry
                    time.sleep(0.05 * (attempt + 1))
                    continue
                body = exc.read().decode(errors="replace").strip()
                raise TrinoError(f"Trino at {self.url} answered HTTP {exc.code}: {body[:300]}") from None
        raise TrinoError(f"Trino at {self.url} kept answering 503")

    def info(self) -> dict[str, Any]:
        return self._request(f"{self.url}/v1/info")

    def execute(self, sql: str) -> tuple[list[dict[str, str]], list[list[Any]], int | None]:
        """(columns [{name, type}], rows as lists, update count or None) of one statement."""
        deadline = time.monotonic() + self.timeout
        page = self._request(f"{self.url}/v1/statement", sql.encode(), "POST")
        columns: list[dict[str, str]] = []
        rows: list[list[Any]] = []
        while True:
            if page.get("columns") and not columns:
                columns = [{"name": c["name"], "type": c["type"]} for c in page["columns"]]
            rows.extend(page.get("data") or [])
            err = page.get("error")
            if err:
                msg = " ".join(str(err.get("message", "")).split())
                name = str(err.get("errorName", ""))
                kind, cause = _root_cause(err.get("failureInfo"))
                if cause and cause not in msg:
                    msg = f"{msg} (cause: {kind}: {cause})"
                raise TrinoError(f"Trino: {name}: {msg}", name, sql)
            nxt = page.get("nextUri")
            if not nxt:
                return columns, rows, page.get("updateCount")
            if time.monotonic() > deadline:
                self._request(nxt, method="DELETE")
                raise TrinoError(f"Trino: query did not finish within {int(self.timeout)}s", "TIMEOUT", sql)
            page = self._request(nxt)

    def query(self, sql: str) -> list[dict[str, Any]]:
        """The rows of one statement as dicts by column name."""
        columns, rows, _ = self.execute(sql)
        names = [c["name"] for c in columns]
        return [dict(zip(names, r, strict=True)) for r in rows]
