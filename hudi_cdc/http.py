"""One HTTP layer for hudi-cdc's REST clients (the schema registry, Kafka Connect).

- ``retrying_session``: one ``requests.Session`` whose adapters retry connection errors, read errors and
  the statuses a caller names, a bounded number of times with exponential backoff (urllib3's ``Retry``:
  none before the first retry, then ``backoff * 2**(n-1)`` seconds); the last answer comes back to the
  caller, who reports it in one line;
- ``redact``: a URL fit for messages and logs (user-info such as ``user:password@`` removed);
- ``error_body`` / ``one_line`` / ``short_reason``: what a server or a failed connection said, as one line.
requests is imported lazily: ``hudi-cdc --help`` must not pay for it.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

# what a failed connection's long urllib3 text boils down to
REASONS = ("Connection refused", "Name or service not known", "timed out", "Connection reset",
           "Remote end closed connection", "Max retries exceeded")


def retrying_session(retries: int, backoff: float, retry_status: frozenset[int] | set[int],
                     session: Any = None, status_retries: int | None = None) -> Any:
    """A requests.Session (the one given, or a new one) whose HTTP(S) adapters retry transient failures:
    connection and read errors (``retries`` times), and the answers whose status is in ``retry_status``
    (``status_retries`` times, default ``retries``: a server that answers but is busy may deserve more
    patience than one that does not answer). Backoff doubles from ``backoff`` seconds. Every method is
    retried (the callers' calls repeat safely), and the last answer is returned, not raised."""
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    status = retries if status_retries is None else status_retries
    retry = Retry(total=max(retries, status), connect=retries, read=retries, other=retries, redirect=retries,
                  status=status, backoff_factor=backoff, status_forcelist=frozenset(retry_status),
                  allowed_methods=None, raise_on_status=False)
    s = session or requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


def redact(url: str) -> str:
    """A URL fit for messages: user-info removed."""
    return re.sub(r"://[^/@]*@", "://", url)


def quote_part(part: str) -> str:
    """One path segment, every reserved character quoted (a subject or connector name with '/')."""
    return quote(str(part), safe="")


def short_reason(exc: BaseException, *, first_line: bool = False) -> str:
    """Why a request could not be made, in a few words: a known reason found in the exception's text,
    else its first line (``first_line``) or its type name."""
    text = str(exc)
    for reason in REASONS:
        if reason in text:
            return reason
    if first_line and text:
        return text.splitlines()[0][:200]
    return type(exc).__name__


def error_body(resp: Any, limit: int = 200) -> tuple[int | None, str]:
    """(error_code, message) of an error answer: a JSON body's ``error_code`` and ``message`` (or
    ``detail`` / ``title``); else (None, the first line of the text, at most ``limit`` characters)."""
    text = (resp.text or "").strip()
    if not text:
        return None, ""
    try:
        body = json.loads(text)
    except ValueError:
        return None, text.splitlines()[0][:limit]
    if not isinstance(body, dict):
        return None, text[:limit]
    code = body.get("error_code")
    msg = body.get("message") or body.get("detail") or body.get("title") or ""
    try:
        code = int(code) if code is not None else None
    except (TypeError, ValueError):
        code = None
    return code, str(msg)


def one_line(text: str, limit: int = 600) -> str:
    """A multi-line message as one line ('first | second'), at most ``limit`` characters."""
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return " | ".join(parts)[:limit]
